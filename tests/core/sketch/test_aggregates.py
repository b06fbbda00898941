"""Join aggregates: SUM and AVG over F ⋈ G against exact answers; F2 and point frequencies."""

import math

import numpy as np
import pytest

import skimsketch as ss
from data.zipf import zipf_draws


KINDS = {
    "hash": lambda dtype="int64", seed=3: ss.HashSketch(512, 5, seed, dtype=dtype),
    "skimmed": lambda dtype="int64", seed=3: ss.SkimmedSketch(512, 5, seed, domain=1 << 12, dtype=dtype),
    "skimmed_unbounded": lambda dtype="int64", seed=3: ss.SkimmedSketch(512, 5, seed, dtype=dtype),
}


def data(seed, n=30_000):
    rng = np.random.default_rng(seed)
    f = zipf_draws(rng, n, 1 << 12, 1.1)
    g = zipf_draws(rng, n, 1 << 12, 1.1, 3)
    x = rng.gamma(2.0, 25.0, n)  # e.g. a price column
    return f, g, x


def exact_avg(f, g, x):
    return ss.exact_join_size(f, g, weights_f=x) / ss.exact_join_size(f, g)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_sum_and_avg_against_exact(kind):
    hits_sum = hits_avg = 0
    errs = []
    for seed in range(5):
        f, g, x = data(seed)
        mk = KINDS[kind]
        fs = mk("float64", seed).update(f, weights=x)
        fc = mk("int64", seed).update(f)
        gs = mk("int64", seed).update(g)
        exact_sum = ss.exact_join_size(f, g, weights_f=x)
        s = ss.join_sum(fs, gs)
        a = ss.join_avg(fs, fc, gs)
        hits_sum += s.contains(exact_sum)
        hits_avg += a.contains(exact_avg(f, g, x))
        errs.append((s.relative_error(exact_sum), a.relative_error(exact_avg(f, g, x))))
        assert a.detail["sum"].value == pytest.approx(s.value) and a.value == pytest.approx(s.value / a.detail["count"].value)
    e_sum, e_avg = np.mean(errs, axis=0)
    assert hits_sum >= 4 and hits_avg >= 4, (hits_sum, hits_avg)
    assert e_sum < 0.05 and e_avg < 0.05, f"mean relative errors: SUM {e_sum:.4f}, AVG {e_avg:.4f} (bound 0.05)"


def test_sum_of_integer_weights_is_exact_on_integer_counters():
    f, g = [1, 1, 2, 3], [1, 2, 2]
    fs = ss.HashSketch(4096, 3, seed=1).update(f, weights=[10, 20, 5, 7])
    gs = ss.HashSketch(4096, 3, seed=1).update(g)
    assert fs.counters.dtype.kind == "i" and fs.counter_width == 4  # exact integer counters (int32 here)
    assert ss.join_sum(fs, gs).value == ss.exact_join_size(f, g, weights_f=[10, 20, 5, 7]) == 40
    both = ss.HashSketch(4096, 3, seed=1, dtype="float64").update(g, weights=[0.5, 2.0, 2.0])
    assert ss.join_sum(fs, both).value == pytest.approx(30 * 0.5 + 5 * 4.0)  # SUM(F.x * G.y)


def test_avg_interval_is_the_union_bound_of_the_two():
    f, g, x = data(11, n=5000)
    fs = ss.HashSketch(256, 5, 2, dtype="float64").update(f, weights=x)
    fc, gs = ss.HashSketch(256, 5, 2).update(f), ss.HashSketch(256, 5, 2).update(g)
    a = ss.join_avg(fs, fc, gs, confidence=0.9)
    s, c = a.detail["sum"], a.detail["count"]
    assert s.confidence == c.confidence == pytest.approx(0.95)
    corners = [s.low / c.low, s.low / c.high, s.high / c.low, s.high / c.high]
    assert c.low > 0 and a.low == pytest.approx(min(corners)) and a.high == pytest.approx(max(corners))
    assert a.confidence == 0.9 and a.method == "avg"


def test_avg_of_a_possibly_empty_join_has_no_finite_interval():
    fs = ss.HashSketch(16, 3, 1, dtype="float64").update(list(range(200)), weights=np.ones(200))
    fc = ss.HashSketch(16, 3, 1).update(list(range(200)))
    gs = ss.HashSketch(16, 3, 1).update([1000])
    a = ss.join_avg(fs, fc, gs)
    assert a.low == -math.inf and a.high == math.inf
    empty = ss.join_avg(fs, fc, ss.HashSketch(16, 3, 1))
    assert math.isnan(empty.value) and empty.low == -math.inf


def test_avg_interval_coverage():
    trials, hits, conf = 40, 0, 0.9
    for t in range(trials):
        f, g, x = data(200 + t, n=4000)
        fs = ss.HashSketch(64, 5, t, dtype="float64").update(f, weights=x)
        fc, gs = ss.HashSketch(64, 5, t).update(f), ss.HashSketch(64, 5, t).update(g)
        hits += ss.join_avg(fs, fc, gs, confidence=conf).contains(exact_avg(f, g, x))
    assert hits / trials >= conf - 3 * math.sqrt(conf * (1 - conf) / trials), f"coverage {hits}/{trials}"


def test_self_join_and_point_frequency_on_every_kind():
    f, _, _ = data(4, n=10_000)
    uniq, counts = np.unique(f, return_counts=True)
    for kind, mk in KINDS.items():
        sk = mk().update(f)
        f2 = ss.exact_self_join_size(f)
        e = sk.self_join_size()
        assert e.contains(f2) and e.relative_error(f2) < 0.05, (kind, e.value, f2)
        top = uniq[np.argmax(counts)]
        fe = sk.frequency(int(top))
        assert fe.contains(counts.max()) and abs(fe.value - counts.max()) < 0.02 * counts.max(), (kind, fe)


def test_aggregate_rejects():
    fs = ss.HashSketch(64, 3, 1, dtype="float64").update([1], weights=[2.5])
    fc = ss.HashSketch(64, 3, 1).update([1])
    gs = ss.HashSketch(64, 3, 1).update([1])
    with pytest.raises(ss.IncompatibleSketchError, match="seed"):
        ss.join_avg(fs, ss.HashSketch(64, 3, 2).update([1]), gs)
    with pytest.raises(ss.IncompatibleSketchError, match="width"):
        ss.join_avg(fs, fc, ss.HashSketch(32, 3, 1))
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        ss.join_avg(fs, ss.AGMSSketch(64, 3, 1), gs)
    with pytest.raises(ss.IncompatibleSketchError, match="type"):
        ss.join_sum(fs, [1, 2])
    with pytest.raises(ss.IncompatibleSketchError, match="type"):
        ss.join_avg("f", fc, gs)
    with pytest.raises(ValueError, match="confidence"):
        ss.join_avg(fs, fc, gs, confidence=1.5)
    with pytest.raises(ss.KeyTypeError, match="dtype='float64'"):
        ss.HashSketch(64, 3, 1).update([1], weights=[2.5])
