"""Factories shared by the core tests: one entry per sketch class.

``update(sk, keys, weights)`` feeds any of them one key column: a :class:`PairSketch`
takes it as both of its columns (rows ``(k, k)``; its two hash families differ, so
this exercises the whole table). ``point(sk, key)`` is the estimated weight of ``key``
(of the row ``(key, key)`` for a pair sketch, through a chain join).
"""

import struct
import zlib

import numpy as np

import skimsketch as ss

DOMAIN = 1 << 12
PAIR_WIDTH_B = 8  # the pair factory's b-side width (its a-side width is the width argument)

FACTORIES = {
    "agms": lambda width=16, depth=3, seed=5, **kw: ss.AGMSSketch(width, depth, seed, **kw),
    "hash": lambda width=64, depth=5, seed=5, **kw: ss.HashSketch(width, depth, seed, **kw),
    "skimmed": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, domain=DOMAIN, **kw),
    # unbounded keys: main counters plus the prefix hierarchy (skimsketch.sketch.skim.hierarchy)
    "skimmed_unbounded": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, **kw),
    # unbounded keys found by a scan of the inserted integer key range (format version 2's for_bytes default)
    "skimmed_range": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, search="range", **kw),
    # every key type as a signed id in a virtual domain (the for_bytes default; 2**12 ids keep queries quick)
    "skimmed_virtual": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, search="virtual",
                                                                              virtual_lg=kw.pop("virtual_lg", 12), **kw),
    # exact mode (skimsketch.stats.exact_store): exact frequencies until the distinct keys outgrow the capacity
    # (width 512 x depth 5: 639 keys, 1023 with the unbounded sketch's hierarchy; AGMS 64 x 3: 47)
    "agms_exact": lambda width=64, depth=3, seed=5, **kw: ss.AGMSSketch(width, depth, seed, exact=True, **kw),
    "hash_exact": lambda width=512, depth=5, seed=5, **kw: ss.HashSketch(width, depth, seed, exact=True, **kw),
    "skimmed_exact": lambda width=512, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, domain=DOMAIN,
                                                                             exact=True, **kw),
    "skimmed_unbounded_exact": lambda width=512, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed,
                                                                                       exact=True, **kw),
    "skimmed_range_exact": lambda width=512, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, search="range",
                                                                                    exact=True, **kw),
    "skimmed_virtual_exact": lambda width=512, depth=5, seed=5, **kw: ss.SkimmedSketch(
        width, depth, seed, search="virtual", virtual_lg=kw.pop("virtual_lg", 12), exact=True, **kw),
    # two key columns: a chain join's middle relation S(a, b) (skimsketch.sketch.multiway)
    "pair": lambda width=64, depth=5, seed=5, **kw: ss.PairSketch(width, PAIR_WIDTH_B, depth, seed,
                                                                   (seed + 1) % 2**64, **kw),
}
KINDS = sorted(FACTORIES)
QUERY_KINDS = [k for k in KINDS if k != "pair"]  # single-column sketches: join_size, frequency, key domain


def update(sk, keys, weights=None):
    """``sk`` updated with one key column (both columns of a pair sketch); returns ``sk``."""
    if isinstance(sk, ss.PairSketch):
        return sk.update(keys, keys, weights=weights)
    return sk.update(keys, weights=weights)


def point(sk, key) -> float:
    """Estimated weight of ``key`` (of the row ``(key, key)`` in a pair sketch)."""
    if isinstance(sk, ss.PairSketch):
        f = ss.HashSketch(sk.width_a, sk.depth, sk.seed_a).update([key])
        g = ss.HashSketch(sk.width_b, sk.depth, sk.seed_b).update([key])
        return ss.chain_join_size(f, sk, g).value
    return sk.frequency(key).value


def base_kind(kind: str) -> str:
    """The counter-mode factory a kind's sketches share a class and shape rules with."""
    return kind.removesuffix("_exact")


def keys(n=2000, seed=0, m=DOMAIN):
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) - 1) % m


M64 = (1 << 64) - 1


def forget_signs(sk):
    """A copy of ``sk`` that no longer knows its frequencies are >= 0 (:attr:`skimsketch.Sketch.nonnegative`),
    as a sketch of the same data that saw a delete: through the public API, a null weight added and
    subtracted (a subtract clears the sign flag). A pair sketch (no sign flag) is returned as is."""
    if not isinstance(sk, ss.Sketch):
        return sk
    x = sk.empty_like().update([None])
    out = sk.copy().merge(x).subtract(x)
    assert not out.nonnegative and np.array_equal(out.counters, sk.counters)
    return out


def fix_crc(b: bytes) -> bytes:
    """Recompute a serialised sketch's trailing CRC-32 (to test checks behind it)."""
    return b[:-4] + struct.pack("<I", zlib.crc32(b[:-4]))


def ref_mix(z):
    """splitmix64 finaliser in plain Python ints (reference for the hashing tests)."""
    z &= M64
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)
