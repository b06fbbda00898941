"""Every construction path of a skimmed sketch against the hash sketch of the same real bytes
(issue 25): the skim decision at depth 1-3, and seeded flat, correlated and Zipf workloads with
interval coverage (the many-seed versions are slow; benchmarks/paths_conformance.py prints the
full per-path table, docs/defaults.md "Construction paths")."""

import math

import numpy as np
import pytest

import skimsketch as ss
from data.zipf import shifted_pair_frequencies
from skimsketch.sketch.hash_sketch import row_dots
from skimsketch.sketch.skim.search import JUSTIFY_Z, justified_factor
from skimsketch.stream import WindowedSketch


# -- the skim decision ----------------------------------------------------------------------------
def flat_with(heavy: dict, depth: int, width: int = 256, seed: int = 3, background: int = 2000):
    """A bounded sketch of ``background`` keys of weight 10 over [0, 4096) plus ``heavy`` {key: weight}."""
    sk = ss.SkimmedSketch(width, depth, seed, domain=4096)
    sk.update(np.arange(100, 100 + background), weights=np.full(background, 10))
    if heavy:
        sk.update(list(heavy), weights=list(heavy.values()))
    return sk


def noise(sk) -> float:
    """One table estimate's deviation on the final residual: sqrt(F2(residual) / width)."""
    r = sk.skim().residual
    return math.sqrt(float(np.mean(row_dots(r, r))) / sk.width)


def test_justified_factor_is_the_mean_of_depth_tables_at_justify_z_standard_errors():
    assert JUSTIFY_Z == 6.0
    for d in (1, 2, 3, 5, 7):
        assert justified_factor(d) == pytest.approx(6.0 / math.sqrt(d), rel=1e-12)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_flat_data_is_left_a_hash_sketch(depth):
    # 2000 keys of weight 10 in 256 buckets: every key is far below its justified threshold, so
    # nothing is skimmed and the estimate is the hash sketch's of the same counters, exactly
    f, g = flat_with({}, depth), flat_with({}, depth)
    assert len(f.skim().keys) == 0
    e = f.join_size(g)
    h = ss.HashSketch(256, depth, 3).update(np.arange(100, 2100), weights=np.full(2000, 10))
    assert e.value == h.join_size(h.copy()).value


@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("seed", [3, 4])
def test_a_key_below_the_justified_threshold_is_not_skimmed_one_above_is(depth, seed):
    # noise = sqrt(2000 * 100 / 256) ~ 28; the justified threshold is 6 / sqrt(depth) noises
    # (4.2 noises ~ 119 at depth 2, 3.5 noises ~ 98 at depth 3): a 2.5-noise key (70) is a real
    # key, but its estimate is mostly its colliders' and skimming it is not justified
    sk = flat_with({7: 5000, 8: 70}, depth, seed=seed)
    keys = sk.skim().keys.tolist()
    assert 7 in keys and 8 not in keys, keys
    assert 70 < justified_factor(depth) * noise(sk) < 5000


def test_depth_1_never_skims_a_key_it_cannot_tell_from_a_collision():
    # one table: any bucket may hold a collision, so the chance rules pass no key at all
    sk = flat_with({7: 5000}, 1)
    assert len(sk.skim().keys) == 0


# -- construction paths ----------------------------------------------------------------------------
COUNTER = 4


def explicit(depth, **kw):
    return lambda nb, seed, dom: ss.SkimmedSketch(nb // (COUNTER * depth), depth, seed, **kw)


PATHS = {
    "explicit_dom_d1": (lambda nb, seed, dom: ss.SkimmedSketch(nb // COUNTER, 1, seed, domain=dom), "int"),
    "explicit_dom_d2": (lambda nb, seed, dom: ss.SkimmedSketch(nb // (2 * COUNTER), 2, seed, domain=dom), "int"),
    "explicit_dom_d3": (lambda nb, seed, dom: ss.SkimmedSketch(nb // (3 * COUNTER), 3, seed, domain=dom), "int"),
    "explicit_d3": (explicit(3), "int"),
    "explicit_d3_str": (explicit(3), "str"),
    "for_bytes": (lambda nb, seed, dom: ss.SkimmedSketch.for_bytes(nb, seed=seed, exact=False), "str"),
    "for_error": (lambda nb, seed, dom: ss.SkimmedSketch.for_error(math.sqrt(44.34 / (nb // COUNTER)), 0.05,
                                                                   seed=seed), "int"),
}


def test_the_explicit_unbounded_constructor_defaults_to_the_virtual_layout():
    assert ss.SkimmedSketch(1365, 3, 1).search == "virtual"
    assert ss.SkimmedSketch(1365, 3, 1).virtual_lg == 20
    assert ss.SkimmedSketch(1365, 3, 1, hier_depth=4).search == "prefix"  # hierarchy parameters ask for it
    assert ss.SkimmedSketch(1365, 3, 1, search="prefix").search == "prefix"
    assert ss.SkimmedSketch.for_error(0.1, seed=1).search == "virtual"
    # the main counters take all the bytes: nothing is spent on a hierarchy
    assert ss.SkimmedSketch(1365, 3, 1).nbytes == ss.HashSketch(1365, 3, 1).nbytes


def test_old_prefix_blobs_keep_their_layout():
    sk = ss.SkimmedSketch(64, 3, 5, search="prefix").update([f"k{i % 40}" for i in range(500)])
    back = ss.SkimmedSketch.from_bytes(sk.to_bytes())
    assert back.search == "prefix" and back == sk
    assert back.join_size(back).value == sk.join_size(sk).value


def test_a_window_answers_with_its_templates_estimate():
    ids, f, g = flat_corr(0)
    proto = ss.SkimmedSketch(1365, 3, 11)
    a, b = WindowedSketch.tumbling(proto, 10), WindowedSketch.tumbling(proto, 10)
    ts = np.zeros(len(ids), dtype=np.int64)
    a.update(ids, ts, f)
    b.update(ids, ts, g)
    direct = proto.empty_like().update(ids, weights=f).join_size(proto.empty_like().update(ids, weights=g))
    got = a.join_size(b, t=0)
    assert (got.value, got.low, got.high) == (direct.value, direct.low, direct.high)


def flat_corr(seed, keys=3800):
    """Flat correlated tables (tests/core/sketch/skim/test_never_worse.py): index keys, lognormal shared rates."""
    rng = np.random.default_rng([seed, 4242])
    rate = np.clip(np.exp(rng.normal(0.0, 1.2, keys)) * 30.0, 4.0, 400.0)
    f, g = (rng.poisson(rate * np.exp(rng.normal(0.0, 0.3, keys))) for _ in range(2))
    return np.arange(keys, dtype=np.int64), f, g


def zipf(seed, m=1 << 16, z=1.5, shift=50):
    f, g = shifted_pair_frequencies(1_000_000, m, z, shift, seed=seed)
    nz = np.flatnonzero(f + g).astype(np.int64)
    return nz, f[nz], g[nz]


def as_str(ids):
    return np.char.add("key-", ids.astype(str)).astype(object)


def compare(path, workload, nbytes, seeds):
    """(ours, hash at equal real bytes, ours / own counters' hash estimate, coverage) over ``seeds``:
    mean relative errors; the paired ratio shares the hash functions, so it resolves the skim's effect."""
    build, ktype = PATHS[path]
    ours, theirs, own, covered = [], [], [], 0
    for seed in seeds:
        ids, f, g = workload(seed)
        keys = as_str(ids) if ktype == "str" else ids
        exact = float(np.dot(f.astype(float), g))
        proto = build(nbytes, 500 + seed, int(ids.max()) + 1)
        a, b = proto.empty_like().update(keys, weights=f), proto.empty_like().update(keys, weights=g)
        e = a.join_size(b)
        h = ss.HashSketch(proto.nbytes // (COUNTER * proto.depth), proto.depth, 500 + seed)
        he = h.empty_like().update(ids, weights=f).join_size(h.empty_like().update(ids, weights=g))
        ours.append(abs(e.value - exact) / exact)
        theirs.append(abs(he.value - exact) / exact)
        own.append(abs(ss.HashSketch.join_size(a, b).value - exact) / exact)
        covered += e.contains(exact)
    return float(np.mean(ours)), float(np.mean(theirs)), float(np.mean(ours) / np.mean(own)), covered / len(seeds)


def test_a_deep_partial_skim_of_flat_data_is_no_longer_taken():
    # the worst cell: a bounded d=3 sketch four times wider than the flat data needs (the
    # skim took ~900 keys whose values carried their colliders': 1.73x the hash sketch's error,
    # coverage 0.92 over 12 seeds on real ids). 6 seeds, paired with the same counters' hash estimate
    ours, _, paired, coverage = compare("explicit_dom_d3", flat_corr, 65532, range(6))
    assert paired <= 1.15, paired
    assert coverage >= 5 / 6


@pytest.mark.parametrize("path", ["explicit_dom_d3", "explicit_d3", "for_bytes"])
def test_every_path_keeps_its_gain_on_zipf_1_5(path):
    ours, theirs, _, coverage = compare(path, zipf, 16380, range(4))
    assert ours <= 0.5 * theirs, (ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("nbytes", [16380, 65532])
def test_every_path_is_within_1_1x_on_flat_correlated_data_over_many_seeds(path, nbytes):
    # paired with the path's own counters' hash estimate (same hash functions): 40 seeds resolve
    # 1.1x there, while against an independently hashed HashSketch the ratio's standard error is
    # ~0.17 at 40 seeds (docs/defaults.md, "Construction paths")
    ours, theirs, paired, coverage = compare(path, flat_corr, nbytes, range(40))
    assert paired <= 1.1, (paired, ours, theirs)
    assert coverage >= 0.85  # 95% nominal; 40 seeds: P[Bin(40, 0.95) < 35] = 0.05


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in PATHS if not p.endswith(("d1", "d2"))])
def test_every_path_gains_at_least_2x_on_zipf_1_5_over_many_seeds(path):
    ours, theirs, _, coverage = compare(path, zipf, 16380, range(40))
    assert ours <= 0.5 * theirs, (ours, theirs)
    assert coverage >= 0.85


@pytest.mark.parametrize("seed", [0, 1])
def test_the_kept_share_of_f2_depends_on_depth(seed):
    # flat correlated data at 64 KB: the bounded d=3 skim holds 0.77-0.85 of the F2 and is kept
    # (it gains), the d=2 one holds 0.73-0.80 and is dropped (measured 1.39x worse than none)
    from skimsketch.sketch.skim.skimdense import MIN_DENSE_SHARE, MIN_DENSE_SHARE_DEPTH_2

    ids, f, _ = flat_corr(seed)
    for depth, kept in ((3, True), (2, False)):
        sk = ss.SkimmedSketch(65532 // (COUNTER * depth), depth, 500 + seed, domain=3800).update(ids, weights=f)
        res = sk.skim()
        c = sk.counters.astype(float)
        assert (len(res.keys) > 0) == kept, depth
        if kept:
            assert float(res.values @ res.values) >= MIN_DENSE_SHARE * float(np.mean(row_dots(c, c)))
        else:
            assert np.array_equal(res.residual, c) and MIN_DENSE_SHARE_DEPTH_2 == 0.9
