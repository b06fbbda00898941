"""Chain joins F(a) ⋈ S(a, b) ⋈ G(b): PairSketch, chain_join_size, exact answers, rejects."""

import math
import struct

import numpy as np
import pytest

import skimsketch as ss
from data.zipf import zipf_draws

from ..sketches import fix_crc



def tables(seed, n=20_000, m_a=500, m_b=400):
    rng = np.random.default_rng(seed)
    f = zipf_draws(rng, n, m_a, 1.0)
    g = [f"b{v}" for v in zipf_draws(rng, n, m_b, 1.0)]
    sa = zipf_draws(rng, n, m_a, 0.8)
    sb = [f"b{v}" for v in rng.integers(0, m_b, n)]
    return f, sa, sb, g


def sketches(seed, width_a=128, width_b=128, depth=5, f=None, sa=None, sb=None, g=None):
    fs = ss.HashSketch(width_a, depth, seed=2 * seed + 1).update(f)
    gs = ss.HashSketch(width_b, depth, seed=2 * seed + 2).update(g)
    s = ss.PairSketch.for_chain(fs, gs).update(sa, sb)
    return fs, s, gs


def test_exact_chain_join_size_small():
    f, sa, sb, g = [1, 1, 2, None], [1, 2, 2, 3, None], ["x", "y", "z", "x", "y"], ["x", "y", "y", None]
    # f(1) g(x) + f(2) g(y) + f(2) g(z) = 2*1 + 1*2 + 0
    assert ss.exact_chain_join_size(f, sa, sb, g) == 4
    assert ss.exact_chain_join_size(f, sa, sb, g, weights_s=[2, 1, 1, 1, 1]) == 6
    assert ss.exact_chain_join_size(f, sa, sb, g, weights_f=[0.5, 0.5, 3.0, 1.0]) == pytest.approx(1 * 1 + 3 * 2)
    # brute force over the rows
    rng = np.random.default_rng(0)
    f2, g2 = rng.integers(0, 5, 30), rng.integers(0, 5, 30)
    a2, b2 = rng.integers(0, 5, 40), rng.integers(0, 5, 40)
    brute = sum(int((f2 == a).sum()) * int((g2 == b).sum()) for a, b in zip(a2, b2))
    assert ss.exact_chain_join_size(f2, a2, b2, g2) == brute


def test_exact_when_no_collisions():
    f, sa, sb, g = [1, 1, 2], [1, 2, 2], ["x", "y", "z"], ["x", "y", "y"]
    fs, s, gs = sketches(3, 512, 512, 3, f, sa, sb, g)
    assert ss.chain_join_size(fs, s, gs).value == 4


def bound_sd(f, sa, sb, g, width_a, width_b, weights_f=None):
    """sqrt of the documented per-table variance bound, from exact self-join sizes."""
    pairs = [f"{a}|{b}" for a, b in zip(np.asarray(sa).tolist(), sb)]
    f2 = ss.exact_self_join_size(f, weights_f) * ss.exact_self_join_size(pairs) * ss.exact_self_join_size(g)
    return math.sqrt(2 * f2 * (1 / width_a + 1 / width_b + 2 / (width_a * width_b)))


@pytest.mark.parametrize("seed", range(6))
def test_chain_join_against_exact(seed):
    f, sa, sb, g = tables(seed)
    exact = ss.exact_chain_join_size(f, sa, sb, g)
    fs, s, gs = sketches(seed, f=f, sa=sa, sb=sb, g=g)
    e = ss.chain_join_size(fs, s, gs)
    sd = bound_sd(f, sa, sb, g, 128, 128)
    # the median of 5 tables is beyond 2 sd (Chebyshev: 1/4 per table) with probability < 0.11
    assert abs(e.value - exact) <= 2 * sd, (e.value, exact, sd)
    assert e.contains(exact), (e, exact)


def test_chain_tables_are_unbiased():
    """Over 40 seeds the mean per-table estimate is within 4 standard errors of the exact size."""
    f, sa, sb, g = tables(77, n=5000, m_a=200, m_b=200)
    exact = ss.exact_chain_join_size(f, sa, sb, g)
    rows = []
    for seed in range(40):
        fs, s, gs = sketches(1000 + seed, 32, 32, 3, f, sa, sb, g)
        rows.extend(ss.chain_join_size(fs, s, gs).detail["tables"].tolist())
    se = np.std(rows) / math.sqrt(len(rows))
    assert abs(np.mean(rows) - exact) <= 4 * se, (np.mean(rows), exact, se)
    assert np.std(rows) <= bound_sd(f, sa, sb, g, 32, 32), "per-table spread above the variance bound"


def test_chain_interval_coverage():
    trials, hits, conf = 30, 0, 0.9
    for t in range(trials):
        f, sa, sb, g = tables(100 + t, n=3000, m_a=200, m_b=200)
        fs, s, gs = sketches(100 + t, 32, 32, 5, f, sa, sb, g)
        hits += ss.chain_join_size(fs, s, gs, confidence=conf).contains(ss.exact_chain_join_size(f, sa, sb, g))
    floor = conf - 3 * math.sqrt(conf * (1 - conf) / trials)
    assert hits / trials >= floor, f"coverage {hits}/{trials} below {floor:.3f}"


def test_weighted_chain_is_a_sum_aggregate():
    f, sa, sb, g = tables(7, n=5000)
    x = np.random.default_rng(1).random(len(f)) * 10
    fs = ss.HashSketch(256, 5, seed=11, dtype="float64").update(f, weights=x)
    gs = ss.HashSketch(256, 5, seed=12).update(g)
    s = ss.PairSketch.for_chain(fs, gs).update(sa, sb)
    exact = ss.exact_chain_join_size(f, sa, sb, g, weights_f=x)
    e = ss.chain_join_size(fs, s, gs)
    assert e.contains(exact) and abs(e.value - exact) <= 2 * bound_sd(f, sa, sb, g, 256, 256, x), (e.value, exact)


def test_skimmed_sketches_join_through_their_main_counters():
    f, sa, sb, g = tables(5, n=5000)
    fs = ss.SkimmedSketch(128, 5, seed=21, search="prefix").update(f)  # counters of the keys themselves
    gs = ss.SkimmedSketch(128, 5, seed=22, domain=1 << 22).update([int(v[1:]) for v in g])
    s = ss.PairSketch.for_chain(fs, gs).update(sa, [int(v[1:]) for v in sb])
    hf, hg = ss.HashSketch(128, 5, seed=21).update(f), ss.HashSketch(128, 5, seed=22).update([int(v[1:]) for v in g])
    assert ss.chain_join_size(fs, s, gs).value == ss.chain_join_size(hf, s, hg).value


def test_pair_sketch_linearity_merge_deletes_and_nulls():
    f, sa, sb, g = tables(9, n=3000)
    fs, s, gs = sketches(9, 32, 16, 3, f, sa, sb, g)
    parts = [ss.PairSketch.for_chain(fs, gs).update(sa[i::3], sb[i::3]) for i in range(3)]
    merged = parts[0].copy().merge(parts[1]).merge(parts[2])
    assert merged == s and np.array_equal(merged.counters, s.counters)
    assert merged.total_weight == len(sa)
    back = s.copy().update(sa[:100], sb[:100], weights=-1)
    assert back == ss.PairSketch.for_chain(fs, gs).update(sa[100:], sb[100:])
    assert s.copy().subtract(s).is_empty
    n = ss.PairSketch(8, 8, 2, 1, 2).update([1, None, 3, 4], ["a", "b", None, "d"], weights=[1, 5, 7, 2])
    assert n.null_weight == 12 and n.total_weight == 3
    assert np.array_equal(n.counters, ss.PairSketch(8, 8, 2, 1, 2).update([1, 4], ["a", "d"], weights=[1, 2]).counters)


def test_unsound_combinations_are_errors():
    f, sa, sb, g = tables(2, n=1000)
    fs, s, gs = sketches(2, 64, 32, 5, f, sa, sb, g)
    cases = [
        (lambda: ss.chain_join_size(gs, s, fs), "seed_a"),  # swapped attributes
        (lambda: ss.chain_join_size(ss.HashSketch(64, 5, seed=99).update(f), s, gs), "seed_a"),
        (lambda: ss.chain_join_size(fs, s, ss.HashSketch(32, 5, seed=99).update(g)), "seed_b"),
        (lambda: ss.chain_join_size(ss.HashSketch(32, 5, seed=fs.seed), s, gs), "width_a"),
        (lambda: ss.chain_join_size(fs, s, ss.HashSketch(64, 5, seed=gs.seed)), "width_b"),
        (lambda: ss.chain_join_size(ss.HashSketch(64, 3, seed=fs.seed), s, gs), "depth"),
        (lambda: ss.chain_join_size(ss.AGMSSketch(64, 5, seed=fs.seed), s, gs), "kind"),
        (lambda: ss.chain_join_size(fs, gs, gs), "kind"),
        (lambda: s.merge(ss.PairSketch(64, 32, 5, fs.seed, gs.seed + 1)), "seed_b"),
        (lambda: s.merge(ss.PairSketch(64, 32, 5, fs.seed, gs.seed, dtype="float64")), "dtype"),
        (lambda: s.merge(fs), "kind"),
        (lambda: ss.PairSketch.for_chain(fs, ss.HashSketch(32, 3, seed=5)), "depth"),
        (lambda: ss.PairSketch.for_chain(fs, ss.AGMSSketch(32, 5, seed=5)), "kind"),
    ]
    for op, field in cases:
        with pytest.raises(ss.IncompatibleSketchError, match=field):
            op()
    with pytest.raises(ss.IncompatibleSketchError, match="swapped"):
        ss.chain_join_size(gs, s, fs)


@pytest.mark.parametrize("kw,msg", [
    ({"seed_b": 1}, "seed_a and seed_b must differ"), ({"width_a": 0}, "width_a"), ({"width_b": 2**25}, "width_b"),
    ({"depth": 0}, "depth"), ({"seed_a": -1}, "seed_a"), ({"width_a": 4096, "width_b": 4096, "depth": 5}, "exceeds"),
    ({"dtype": "int32"}, "dtype"), ({"width_a": 2.5}, "width_a"),
])
def test_bad_pair_parameters_rejected(kw, msg):
    args = dict(width_a=8, width_b=8, depth=3, seed_a=1, seed_b=2) | kw
    with pytest.raises((ValueError, TypeError), match=msg):
        ss.PairSketch(**args)


def test_bad_pair_updates_rejected_and_sketch_unchanged():
    s = ss.PairSketch(8, 8, 3, 1, 2).update([1, 2], ["a", "b"])
    before = s.copy()
    for a, b, w, err in (([1, 2], ["a"], None, "same length"), ([1.5], ["a"], None, "not integral"),
                         ([1], ["a"], [0.5], "non-integral"), ([1], [True], None, "bool"), ([1, 2], ["a", "b"], [1], "shape")):
        with pytest.raises(ss.KeyTypeError, match=err):
            s.update(a, b, weights=w)
    assert s == before
    with pytest.raises(ValueError, match="confidence"):
        ss.chain_join_size(ss.HashSketch(8, 3, 1), s, ss.HashSketch(8, 3, 2), confidence=1.0)
    big = ss.PairSketch(8, 8, 3, 1, 2).update([1], ["a"], weights=2**62)
    with pytest.raises(ss.CounterOverflowError):
        big.merge(big.copy())
    assert big.total_weight == 2**62


def test_pair_sketch_pickle_copy_and_overflow():
    import copy
    import pickle

    s = ss.PairSketch(8, 4, 3, 1, 2).update([1, 2, None], ["x", "y", "z"], weights=[3, -1, 4])
    for back in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
        assert back == s and back.null_weight == 4 and back.total_weight == 2
        back.update([5], ["q"])
        assert back != s  # independent state
    big = ss.PairSketch(8, 4, 3, 1, 2).update([1], ["x"], weights=2**62)
    before = pickle.dumps(big)
    with pytest.raises(ss.CounterOverflowError):
        big.merge(big.copy())
    with pytest.raises(ss.CounterOverflowError):
        big.update([1], ["x"], weights=2**62)
    assert pickle.dumps(big) == before


def test_pair_sketch_bytes_layout():
    """Kind 4: header width = width_a * width_b, seed = seed_a; the extension holds the b side."""
    from skimsketch.format import header as fmt
    from skimsketch.sketch.multiway import MAX_PAIR_COUNTERS

    assert MAX_PAIR_COUNTERS <= fmt.MAX_ROW_COUNTERS  # every valid pair sketch's table fits the format
    s = ss.PairSketch(8, 4, 3, seed_a=1, seed_b=2**64 - 1).update([1, 2, None], ["x", "y", "z"], weights=[3, -1, 4])
    b = s.to_bytes()
    assert struct.unpack_from("<4sHBBIIQQBB", b, 0) == (b"SKSK", 4, 4, 0, 32, 3, 1, 0, 3, 0)
    assert struct.unpack_from("<dqqI", b, 36) == (0.0, 2, 4, 24)
    assert b[64:88] == b"PAIR" + bytes([1, 0, 0, 0]) + struct.pack("<IIQ", 8, 4, 2**64 - 1)
    assert np.array_equal(np.frombuffer(b, "<i4", 96, 88).reshape(3, 8, 4), s.counters)
    assert len(b) == 64 + 24 + 4 * 96 + 4
    back = ss.from_bytes(b)
    assert type(back) is ss.PairSketch and back == s and back.params == s.params
    assert ss.PairSketch.from_bytes(b) == s
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        ss.HashSketch.from_bytes(b)
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        ss.PairSketch.from_bytes(ss.HashSketch(8, 3).to_bytes())


@pytest.mark.parametrize("offset,value,msg", [
    (64, b"PAIX", "pair extension magic"), (68, b"\x02", "pair extension version"), (69, b"\x01", "reserved pair"),
    (72, (9).to_bytes(4, "little"), "disagree"), (80, (1).to_bytes(8, "little"), "seed_a and seed_b must differ"),
    (33, b"\x01", "key domain"), (36, struct.pack("<d", 1.0), "kind parameter"),
])
def test_corrupt_pair_bytes_rejected(offset, value, msg):
    b = ss.PairSketch(8, 4, 3, 1, 2).update([1, 2], ["x", "y"]).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match=msg):
        ss.from_bytes(fix_crc(b[:offset] + value + b[offset + len(value):]))
    head = b[:60] + (12).to_bytes(4, "little") + b[64:76] + b[88:]  # a 12-byte extension: size is checked
    with pytest.raises(ss.CorruptSketchError, match="pair extension size"):
        ss.from_bytes(fix_crc(head))


def test_version_1_pair_blob_and_empty_flag_rejected():
    b = ss.PairSketch(8, 4, 3, 1, 2).update([1], ["x"], weights=2**40).to_bytes()  # int64: a version-1 type
    with pytest.raises(ss.CorruptSketchError, match="version 2"):  # version 1 never wrote pair sketches
        ss.from_bytes(fix_crc(b[:4] + (1).to_bytes(2, "little") + b[6:]))
    empty = ss.PairSketch(8, 4, 3, 1, 2).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="empty flag"):
        ss.from_bytes(fix_crc(empty[:7] + bytes([empty[7] & ~1]) + empty[8:]))


def test_null_weights_skip_their_row_in_sketch_and_exact_answer():
    f, g = [1, 2, 2], ["x", "y", "y"]
    fs, gs = ss.HashSketch(512, 3, seed=1).update(f), ss.HashSketch(512, 3, seed=2).update(g)
    s = ss.PairSketch.for_chain(fs, gs).update([1, 2, 2, None], ["x", "y", "z", "y"], weights=[3, None, 1, 7])
    assert s == ss.PairSketch.for_chain(fs, gs).update([1, 2, None], ["x", "z", "y"], weights=[3, 1, 7])
    assert (s.total_weight, s.null_weight) == (4, 7)
    # f(1) g(x) 3 + (row (2, y) skipped) + f(2) g(z) 1 = 3
    assert ss.exact_chain_join_size(f, [1, 2, 2, None], ["x", "y", "z", "y"], g, weights_s=[3, None, 1, 7]) == 3
    assert ss.chain_join_size(fs, s, gs).value == 3


def test_a_virtual_layout_sketch_is_refused_by_name():
    # its counters hold signed virtual ids (the explicit constructor's default without a domain):
    # a pair sketch of keys cannot meet them, so the chain join refuses instead of answering noise
    f, sa, sb, g = tables(5, n=500)
    fs = ss.SkimmedSketch(128, 5, seed=21).update(f)
    gs = ss.SkimmedSketch(128, 5, seed=22, domain=1 << 22).update([int(v[1:]) for v in g])
    with pytest.raises(ss.IncompatibleSketchError, match="virtual ids.*search differs"):
        ss.PairSketch.for_chain(fs, gs)
    s = ss.PairSketch(128, 128, 5, 21, 22).update(sa, [int(v[1:]) for v in sb])
    with pytest.raises(ss.IncompatibleSketchError, match="virtual ids.*search differs"):
        ss.chain_join_size(fs, s, gs)
