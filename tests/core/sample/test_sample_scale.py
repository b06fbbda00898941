"""Float totals of any finite magnitude (skimsketch/sample/scale.py, issue 36): a table's sample does not depend
on a power-of-two scale of its totals, is written at its own scale exponent (layout 3) and read back, merges
across exponents give the one-build bytes, and a sample its doubles cannot hold at one scale is refused."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import skimsketch as ss
from benchmarks import adversarial_shapes as adv
from skimsketch.sample.scale import ext_of, ext_ranks
from skimsketch.sample.rank import fingerprints, ranks
from ..sketches import fix_crc

KEYS = np.arange(3000)


def _table(magnitude: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.pareto(1.2, len(KEYS)) + 1.0) * magnitude * rng.choice([-1.0, 1.0], len(KEYS))


def _build(totals, nbytes=1024, seed=3, partition=None, keys=KEYS):
    return ss.JoinSample.for_bytes(nbytes, seed, "float64", partition).update(keys, weights=totals)


def test_exact_ranks_are_the_double_ranks_where_those_are_normal():
    fps = fingerprints(KEYS, 1)
    t = _table(1e30)
    x, q = ext_ranks(fps, t)
    assert np.array_equal(np.ldexp(q, x), ranks(fps, t))
    x2, q2 = ext_ranks(fps, np.ldexp(t, -700))  # 2^-700 times: every rank times exactly 2^1400
    assert np.array_equal(q2, q) and np.array_equal(x2, x + 1400)


@pytest.mark.parametrize("magnitude, partner", [(1e-160, 1e150), (1e200, 1e-190), (5e-324 * 2**40, 1e290)])
def test_a_sample_of_extreme_totals_keeps_the_keys_of_the_table_times_a_power_of_two(magnitude, partner):
    t = _table(magnitude)
    shift = 600 if magnitude < 1 else -600
    tiny, plain = _build(t), _build(np.ldexp(t, shift))
    assert plain.scale == 0 and tiny.scale != 0
    fa, ta = tiny.sample_items()
    fb, tb = plain.sample_items()
    assert np.array_equal(fa, fb) and np.array_equal(np.ldexp(ta, shift), tb) and tiny.n_keys == plain.n_keys
    x, q = ext_of(tiny.tau, tiny.scale)
    assert (x - 2 * shift, q) == ext_of(plain.tau, 0)  # the same threshold, 2^-2 shift times
    blob = tiny.to_bytes()
    assert blob[68] == 3 and struct.unpack_from("<h", blob, 70)[0] == tiny.scale  # layout 3, sigma in bytes 6-7
    assert plain.to_bytes()[68] == 2  # the old layout, byte for byte, at scale 0
    back = ss.from_bytes(blob)
    assert back.to_bytes() == blob and (back.tau, back.scale) == (tiny.tau, tiny.scale)
    # the estimates do not depend on the scale: one side times 2^shift, the other times 2^-shift
    other = _build(_table(partner, 1)[:2000], keys=KEYS[1000:])
    other_plain = _build(np.ldexp(_table(partner, 1)[:2000], -shift), keys=KEYS[1000:])
    e, p = back.join_size(ss.from_bytes(other.to_bytes())), plain.join_size(other_plain)
    assert (e.value, e.low, e.high) == (p.value, p.low, p.high) and e.low < e.value < e.high
    f = back.frequency(int(KEYS[np.argmax(np.abs(t))]))
    assert f.value == float(np.abs(t).max()) * np.sign(t[np.argmax(np.abs(t))])


def test_merges_across_scale_exponents_give_the_one_build_bytes():
    """Pieces of one key-hash partitioning whose totals differ by 2^230 and 2^1160: each piece at its own
    exponent; the union's sample (the 1e170 keys) is exact though the table spans more than one scale."""
    parts = ss.JoinSample.partition_of(KEYS, 3, seed=3)
    mag = np.array([1e-250, 1e-180, 1e170])[parts]
    t = _table(1.0) * mag
    whole = _build(t, 2048).to_bytes()[64:-4]  # the extension (the header's float total weight is a sum in
    # the order of the merges: equal up to rounding)
    pieces = [_build(t[parts == i], 2048, partition=(i, 3), keys=KEYS[parts == i]) for i in range(3)]
    assert len({p.scale for p in pieces}) == 3
    finished = [ss.from_bytes(p.to_bytes()) for p in pieces]
    for order in ((0, 1, 2), (2, 0, 1), (1, 2, 0)):
        acc = finished[order[0]].copy()
        for i in order[1:]:
            acc.merge(finished[i])
        assert acc.to_bytes()[64:-4] == whole
        building = pieces[order[0]].copy()
        for i in order[1:]:
            building.merge(pieces[i])
        assert building.to_bytes()[64:-4] == whole
    # a table whose totals are 1e-200 and 1: one piece at scale 0, the other not
    t2 = _table(1.0) * np.where(parts == 0, 1e-200, 1.0)
    two = [_build(t2[parts == i], 2048, partition=(i, 3), keys=KEYS[parts == i]) for i in range(3)]
    assert [p.scale == 0 for p in two] == [False, True, True]
    acc = ss.from_bytes(two[1].to_bytes()).merge(ss.from_bytes(two[0].to_bytes())).merge(two[2])
    assert acc.to_bytes()[64:-4] == _build(t2, 2048).to_bytes()[64:-4]


def test_a_sample_beyond_one_scale_is_refused_naming_its_totals_and_keeps_them():
    s = ss.JoinSample.for_bytes(1024, dtype="float64").update([1, 2], weights=[1.0, 1e-300])
    with pytest.raises(ss.CounterOverflowError, match=r"keeps totals from 1e-300 to 1\.0 .*2\*\*-990 times"):
        s.to_bytes()
    assert s.update([2], weights=[-1e-300]).join_size(s).value == 1.0  # the sample kept its totals
    ok = ss.JoinSample.for_bytes(1024, dtype="float64").update([1, 2], weights=[1.0, 1e-290])
    assert ss.from_bytes(ok.to_bytes()).sample_items()[1].tolist() == [1.0, 1e-290]


def test_a_layout3_scale_that_is_not_the_samples_own_is_refused():
    blob = _build(_table(1e-160)).to_bytes()
    sigma = struct.unpack_from("<h", blob, 70)[0]
    for bad in (sigma + 1, sigma - 1, 0):
        with pytest.raises(ss.CorruptSketchError, match="scale exponent"):
            ss.from_bytes(fix_crc(blob[:70] + struct.pack("<h", bad) + blob[72:]))
    ints = ss.JoinSample.for_bytes(1024).update(KEYS).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="layout-3 join sample"):
        ss.from_bytes(fix_crc(ints[:68] + b"\x03" + ints[69:70] + struct.pack("<h", 5) + ints[72:]))


def _totals(keys, weights):
    order, starts = adv.group(np.asarray(keys))
    return np.asarray(keys)[order][starts], np.add.reduceat(np.asarray(weights)[order], starts)


@pytest.mark.parametrize("nbytes", [1024, 16384])
def test_the_interval_covers_tiny_float_totals(nbytes):
    """``float_f1e-160_g1e00`` (refused before issue 36), 100 hash seeds through bytes: coverage >= 0.93."""
    kf, wf, kg, wg = adv.SHAPES["float_f1e-160_g1e00"].make(np.random.default_rng(0), 0.1)
    (kf, tf), (kg, tg) = _totals(kf, wf), _totals(kg, wg)
    common, i, j = np.intersect1d(kf, kg, return_indices=True)
    J = math.fsum((tf[i].astype(object) * tg[j].astype(object)).tolist())
    hits = 0
    for s in range(100):
        a = ss.JoinSample.for_bytes(nbytes, seed=s, dtype="float64").update(kf, weights=tf)
        b = ss.JoinSample.for_bytes(nbytes, seed=s, dtype="float64").update(kg, weights=tg)
        e = ss.from_bytes(a.to_bytes()).join_size(ss.from_bytes(b.to_bytes()))
        assert all(math.isfinite(x) for x in (e.value, e.low, e.high)) and e.low <= e.value <= e.high
        hits += e.low <= J <= e.high
    assert hits >= 93, hits
