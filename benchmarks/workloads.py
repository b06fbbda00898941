"""Workloads for choosing defaults: several skews, shapes of join and domain sizes.

Deliberately broader than the paper's Zipf setting so defaults are not tuned
to one distribution: Zipf at z = 0.5..2.0 (shifted joins), a few heavy keys over
a uniform background, uniform keys, and a sparse stream over a huge domain
(m >> n, the setting where false dense keys appear).
"""

from __future__ import annotations

import time

import numpy as np


def zipf_stream(rng, m: int, z: float, n: int, shift: int = 0) -> np.ndarray:
    """n keys in [0, m) with P(v) proportional to 1/(v+1)^z, shifted right by ``shift`` (mod m)."""
    p = 1.0 / np.arange(1, m + 1, dtype=np.float64) ** z
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    keys = np.searchsorted(cdf, rng.random(n), side="right")
    return (np.minimum(keys, m - 1) + shift) % m


def heavy_plus_uniform(rng, m: int, n: int, heavy: int = 20, share: float = 0.5) -> np.ndarray:
    hk = rng.choice(m, heavy, replace=False)
    nh = int(n * share)
    return np.concatenate([rng.choice(hk, nh), rng.integers(0, m, n - nh)])


def workloads(n: int, seed: int):
    """Yield (name, domain, keys_f, keys_g) for one repetition."""
    rng = np.random.default_rng(seed)
    m = 1 << 18
    for z, shift in ((0.5, 0), (1.0, 100), (1.5, 30), (2.0, 10)):
        f = zipf_stream(rng, m, z, n)
        g = zipf_stream(rng, m, z, n, shift)
        yield f"zipf{z}_s{shift}", m, f, g
    r2 = np.random.default_rng(seed + 1000)
    hk = r2.choice(m, 20, replace=False)
    f = np.concatenate([r2.choice(hk, n // 2), r2.integers(0, m, n - n // 2)])
    g = np.concatenate([r2.choice(hk, n // 2), r2.integers(0, m, n - n // 2)])
    yield "heavy20+uniform", m, f, g
    yield "uniform", m, rng.integers(0, m, n), rng.integers(0, m, n)
    big = 1 << 22  # m >> n: sparse, many absent keys
    ns = n // 20
    yield "sparse_zipf1.2_bigdomain", big, zipf_stream(rng, big, 1.2, ns), zipf_stream(rng, big, 1.2, ns, 5)


def paper_error(exact: float, est: float) -> float:
    """SPEC §6 error: |J - Ĵ| / min(J, Ĵ); an estimate <= J/10 counts as 10."""
    if est <= exact / 10:
        return 10.0
    return abs(exact - est) / min(exact, est)


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best
