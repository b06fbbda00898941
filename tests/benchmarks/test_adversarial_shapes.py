"""The adversarial shapes (benchmarks/adversarial_shapes.py) and their coverage runner: determinism per data
seed, the properties each shape claims (checked by counting rows independently), exact answers computed
independently of the runner, and the runner's bookkeeping of failures."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

import skimsketch as ss
from benchmarks import adversarial_shapes as adv
from benchmarks import interval_coverage_adversarial as run

SCALE = 0.02  # events: 16k rows over 8k ranks
GENERATED = [s for s in adv.SHAPES.values() if s.family != "doc"]


def make(name, seed=0, scale=SCALE):
    return adv.SHAPES[name].make(np.random.default_rng(seed), scale)


def totals(keys, weights):
    """Every key's exact total, by a dictionary (weights None: 1 a row; floats as fractions)."""
    out = Counter()
    for i, k in enumerate(keys.tolist()):
        out[k] += 1 if weights is None else (Fraction(float(weights[i])) if weights.dtype.kind == "f"
                                             else int(weights[i]))
    return out


def join(rows):
    f, g = totals(*rows[:2]), totals(*rows[2:])
    return sum(v * g[k] for k, v in f.items() if k in g)


@pytest.mark.parametrize("shape", GENERATED, ids=lambda s: s.name)
def test_rows_are_well_formed_and_deterministic_per_seed(shape):
    a = shape.make(np.random.default_rng(5), SCALE)
    b = shape.make(np.random.default_rng(5), SCALE)
    c = shape.make(np.random.default_rng(6), SCALE)
    for k, w in (a[:2], a[2:]):
        assert len(k) > 0
        assert w is None or (len(w) == len(k) and w.dtype.kind in "if")
    for x, y in zip(a, b):
        assert (x is None and y is None) or np.array_equal(x, y)
    assert any(x is not None and not np.array_equal(x, y) for x, y in zip(a, c))


@pytest.mark.parametrize("name", ["acct_b5-20_n150", "signed_acct_b2-5_both", "heavydiff_absent_z0.8",
                                  "factdim_cover30_str", "fewheavy_r200_top100", "float_f1e-160_g1e00",
                                  "float_f1e100_g1e100"])
def test_runner_exact_join_matches_a_dictionary_count(name):
    rows = make(name)
    tf, tg = run.aggregate(*rows[:2]), run.aggregate(*rows[2:])
    assert run.exact_join(tf, tg) == float(join(rows))
    assert dict(zip(tf.keys.tolist(), tf.totals.tolist())) == {k: v for k, v in totals(*rows[:2]).items() if v}


@pytest.mark.parametrize("name, lo, hi", [("acct_b2-5_n60", 2, 5), ("acct_b5-20_n150", 5, 20),
                                          ("acct_b20-100_n300", 20, 100), ("ids_b5-20_n200", 5, 20)])
def test_accounts_have_the_band_of_events_they_claim(name, lo, hi):
    kf, _, kg, _ = make(name)
    events = Counter(kg.tolist())
    acc = Counter(kf.tolist())
    assert acc and all(lo <= events[k] <= hi for k in acc)
    if name.startswith("ids"):
        assert set(acc.values()) == {1}  # one row per key
    else:
        assert min(acc.values()) >= 100  # hundreds of rows per account


def test_half_absent_accounts_and_string_keys():
    kf, _, kg, _ = make("acct_b5-20_n200_half_absent")
    present = set(kg.tolist())
    assert sum(k in present for k in set(kf.tolist())) == 100
    ints, strs = make("acct_b5-20_n150"), make("acct_b5-20_n150_str")
    assert strs[0][0] == f"user{ints[0][0]}" and join(ints) == join(strs)


def test_signed_shapes_have_negative_totals_and_joins():
    rows = make("signed_acct_b5-20", scale=1.0)
    f = totals(*rows[:2])
    assert rows[3] is None and sum(v < 0 for v in f.values()) > len(f) // 2
    assert -600_000 < join(rows) < -100_000  # about -300,000
    kf, wf, kg, wg = make("signed_acct_b2-5_both")
    assert (wf < 0).any() and (wg < 0).any() and min(totals(kg, wg).values()) < 0
    assert join(make("signed_big_z1.0")) < 0


def test_heavy_keys_differ():
    kf, _, kg, _ = make("heavydiff_absent_z1.0")
    f, g = Counter(kf.tolist()), Counter(kg.tolist())
    assert not {k for k, _ in f.most_common(20)} & set(g) and not {k for k, _ in g.most_common(20)} & set(f)
    kf, _, kg, _ = make("heavydiff_reversed_z1.3")
    f, g = Counter(kf.tolist()), Counter(kg.tolist())
    top_f = {k for k, _ in f.most_common(10)}
    assert max(g[k] for k in top_f) <= 2


@pytest.mark.parametrize("name, share", [("factdim_cover30", 0.3), ("factdim_cover70_light", 0.7)])
def test_dimension_covers_the_claimed_share_of_fact_keys(name, share):
    kf, _, kg, _ = make(name)
    fact, dim = set(kf.tolist()), Counter(kg.tolist())
    assert set(dim.values()) == {1}
    assert abs(len(fact & set(dim)) / len(fact) - share) < 0.01
    assert len(set(dim) - fact) > 0  # dimension keys the fact never uses
    if "light" in name:
        rows = Counter(kf.tolist())
        boundary = sorted(rows.values(), reverse=True)[len(fact) // 100]
        assert max(rows[k] for k in fact & set(dim)) <= boundary


def test_few_rows_land_on_heavy_keys_and_small_tables_are_small():
    kf, _, kg, _ = make("fewheavy_r20_top10")
    top = {k for k, _ in Counter(kf.tolist()).most_common(12)}
    assert len(kg) == 20 and set(kg.tolist()) <= top
    for name, n in (("complete_n30_random", 30), ("complete_n20_heavy", 20)):
        kf = make(name)[0]
        assert len(set(kf.tolist())) <= n


@pytest.mark.parametrize("name, sf, sg", [("float_f1e-160_g1e00", 1e-160, 1.0), ("float_f1e100_g1e100", 1e100, 1e100),
                                         ("float_f1e30_g1e30", 1e30, 1e30)])
def test_float_shapes_have_the_claimed_magnitudes(name, sf, sg):
    kf, wf, kg, wg = make(name)
    assert wf.min() >= sf and np.median(wf) < 10 * sf and wg.min() >= sg and np.median(wg) < 10 * sg
    assert len(set(kf.tolist())) == len(kf)  # one row per key: totals are the weights exactly


def test_documented_shape_wraps_sample_workloads():
    kf, wf, kg, wg = adv.SHAPES["doc_zipf1.0_s100"].make(None, 0.0025)
    p = {q.name: q for q in adv.sw.paper(10_000, 0)}["zipf1.0_s100"]
    assert int(wf.sum()) == int(p.f.sum()) == 10_000
    assert run.exact_join(run.aggregate(kf, wf), run.aggregate(kg, wg)) == float(np.dot(p.f, p.g))


@pytest.mark.parametrize("cls", [ss.JoinSample, ss.SkimmedSketch])
def test_one_row_per_key_feed_gives_the_bytes_of_the_row_feed(cls):
    """The runner feeds each table's distinct keys weighted by their totals: the summaries must not differ."""
    for name in ("acct_b5-20_n150", "signed_acct_b2-5_both"):
        kf, wf, kg, wg = make(name)
        for keys, w in ((kf, wf), (kg, wg)):
            t = run.aggregate(keys, w)
            rows = cls.for_bytes(1024, seed=3).update(keys, weights=w)
            agg = cls.for_bytes(1024, seed=3).update(t.keys, weights=t.totals)
            assert rows.to_bytes() == agg.to_bytes()


def test_summarise_counts_failures():
    draws = [(10.0, 9.0, 11.0, None), (10.0, 10.0, 10.0, None), (np.nan, 0.0, 1.0, None),
             (np.nan, np.nan, np.nan, "join:ValueError"), (10.0, -1.0, 12.0, None)]
    c = run.summarise(10.5, draws, count_like=True)
    assert (c["hits"], c["exc"], c["nan"], c["zw"], c["neg"]) == (2, 1, 1, 1, 1)
    assert c["err"] == pytest.approx(0.5 / 10.5) and not c["incompatible"]
    inc = run.summarise(1.0, [(np.nan,) * 3 + ("join:IncompatibleSketchError",)] * 3, count_like=True)
    assert inc["incompatible"] and inc["hits"] == 0


def test_runner_end_to_end_on_a_tiny_scale(tmp_path):
    out = tmp_path / "cov.txt"
    run.main(["--seeds", "2", "--nbytes", "1024", "--asym", "148:4096", "--kinds", "sample,hash", "--scale", "0.01",
              "--shapes", "complete_n30", "float_f1e30", "--procs", "1", "--roundtrip", "all", "--cache", "", "--out", str(out)])
    text = out.read_text()
    for needle in ("complete_n30_random", "float_f1e30_g1e30", "148:4096", "coverage", "hash"):
        assert needle in text
    with pytest.raises(SystemExit, match="not a budget"):
        run.main(["--nbytes", "1k", "--out", ""])


def test_prepared_tables_are_cached_exactly(tmp_path):
    shapes = [adv.SHAPES["ids_any_n5000_str"], adv.SHAPES["float_f1e-160_g1e140"]]
    first = run.prepare(shapes, SCALE, 1, False, str(tmp_path))
    assert len(list(tmp_path.iterdir())) == 2
    again = run.prepare(shapes, SCALE, 1, False, str(tmp_path))
    fresh = run.prepare(shapes, SCALE, 1, False, None)
    assert first[1] == again[1] == fresh[1]  # names, table digests, exact answers
    for d, t in fresh[0].items():
        assert np.array_equal(again[0][d].keys, t.keys) and np.array_equal(again[0][d].totals, t.totals)
        assert again[0][d].totals.dtype == t.totals.dtype and again[0][d].keys.dtype == t.keys.dtype
