"""Factories shared by the core tests: one entry per sketch class."""

import struct
import zlib

import numpy as np

import skimsketch as ss

DOMAIN = 1 << 12

FACTORIES = {
    "agms": lambda width=16, depth=3, seed=5, **kw: ss.AGMSSketch(width, depth, seed, **kw),
    "hash": lambda width=64, depth=5, seed=5, **kw: ss.HashSketch(width, depth, seed, **kw),
    "skimmed": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, domain=DOMAIN, **kw),
    # unbounded keys: main counters plus the prefix hierarchy (skimsketch.hierarchy)
    "skimmed_unbounded": lambda width=64, depth=5, seed=5, **kw: ss.SkimmedSketch(width, depth, seed, **kw),
}
KINDS = sorted(FACTORIES)


def keys(n=2000, seed=0, m=DOMAIN):
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) - 1) % m


def zipf_keys(rng, m, z, n, shift=0):
    """n keys in [0, m), P(v) proportional to 1/(v+1)^z, shifted right by ``shift`` mod m."""
    cdf = np.cumsum(1.0 / np.arange(1, m + 1, dtype=np.float64) ** z)
    v = np.searchsorted(cdf / cdf[-1], rng.random(n), side="right")
    return (np.minimum(v, m - 1) + shift) % m


def paper_error(exact, est):
    """SPEC §6: |J - Ĵ| / min(J, Ĵ), an estimate <= J/10 counts as 10."""
    return 10.0 if est <= exact / 10 else abs(exact - est) / min(exact, est)


M64 = (1 << 64) - 1


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
