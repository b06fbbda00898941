"""The sample's and the skimmed default's intervals through SQL on the shapes that broke the sample's fitted
allowances: accounts x events (0.40 through ``skim_join_size_bounds`` before) and signed totals; one estimator
for the core and the JVM."""

from __future__ import annotations

import numpy as np
import pytest

import skimsketch as ss
from benchmarks import adversarial_shapes as adv
from spark_udaf import native

pytestmark = pytest.mark.spark

SEEDS = range(20)
#: the default run keeps accounts x events for both summaries; signed totals run with ``-m slow``
SLOW_PARAMS = {"test_sql_bounds_cover_and_equal_the_core": {"signed_acct_b5-20-skim_sample_agg",
                                                            "signed_acct_b5-20-skim_sketch_agg"}}


@pytest.fixture(scope="module")
def jspark(spark):
    if not native.available():
        pytest.skip("no JDK: the native jar cannot be built here (javac not found)")
    assert native.loaded(spark), "the test session was built without spark_udaf.native.configure"
    return spark


@pytest.mark.parametrize("build", ["skim_sample_agg", "skim_sketch_agg"])
@pytest.mark.parametrize("name", ["acct_b5-20_n150", "signed_acct_b5-20"])
def test_sql_bounds_cover_and_equal_the_core(jspark, name, build):
    kf, wf, kg, wg = adv.SHAPES[name].make(np.random.default_rng(0), 0.05)
    ones = np.ones
    f = jspark.createDataFrame([(int(k), int(w)) for k, w in zip(kf, ones(len(kf), int) if wf is None else wf)],
                               "k long, w long").repartition(3)
    g = jspark.createDataFrame([(int(k), int(w)) for k, w in zip(kg, ones(len(kg), int) if wg is None else wg)],
                               "k long, w long").repartition(4)
    f.createOrReplaceTempView("adv_f")
    g.createOrReplaceTempView("adv_g")
    cols = ", ".join(f"{build}(k, w, 2048, {s}) AS s{s}" for s in SEEDS)
    a, b = (jspark.sql(f"SELECT {cols} FROM {t}").collect()[0] for t in ("adv_f", "adv_g"))
    exact = float(sum(x * y for x, y in _joined(kf, wf, kg, wg)))
    hits = 0
    for s in SEEDS:
        sa, sb = bytes(a[f"s{s}"]), bytes(b[f"s{s}"])
        core = ss.from_bytes(sa).join_size(ss.from_bytes(sb))
        got = jspark.sql("SELECT skim_join_size_bounds(unhex(?), unhex(?)) AS e",
                         args=[sa.hex(), sb.hex()]).collect()[0].e
        assert (got.value, got.low, got.high) == pytest.approx((core.value, core.low, core.high), rel=1e-9), s
        hits += core.low <= exact <= core.high
    assert hits / len(SEEDS) >= 0.85, hits  # 0.95 nominal; 20 draws


def _joined(kf, wf, kg, wg):
    tf, tg = {}, {}
    for k, w in zip(kf, np.ones(len(kf), int) if wf is None else wf):
        tf[int(k)] = tf.get(int(k), 0) + int(w)
    for k, w in zip(kg, np.ones(len(kg), int) if wg is None else wg):
        tg[int(k)] = tg.get(int(k), 0) + int(w)
    return [(v, tg[k]) for k, v in tf.items() if k in tg]
