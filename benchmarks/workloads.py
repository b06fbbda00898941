"""Workloads for choosing defaults: several skews, shapes of join and domain sizes.

Deliberately broader than the paper's Zipf setting so defaults are not tuned
to one distribution: Zipf at z = 0.5..2.0 (shifted joins), a few heavy keys over
a uniform background, uniform keys, and a sparse stream over a huge domain
(m >> n, the setting where false dense keys appear).
"""

from __future__ import annotations

import time

import numpy as np

from data.zipf import zipf_draws
from experiments.metrics import paper_error

__all__ = ["best_time", "paper_error", "workloads", "zipf_draws"]


def workloads(n: int, seed: int):
    """Yield (name, domain, keys_f, keys_g) for one repetition."""
    rng = np.random.default_rng(seed)
    m = 1 << 18
    for z, shift in ((0.5, 0), (1.0, 100), (1.5, 30), (2.0, 10)):
        f = zipf_draws(rng, n, m, z)
        g = zipf_draws(rng, n, m, z, shift)
        yield f"zipf{z}_s{shift}", m, f, g
    r2 = np.random.default_rng(seed + 1000)
    hk = r2.choice(m, 20, replace=False)
    f = np.concatenate([r2.choice(hk, n // 2), r2.integers(0, m, n - n // 2)])
    g = np.concatenate([r2.choice(hk, n // 2), r2.integers(0, m, n - n // 2)])
    yield "heavy20+uniform", m, f, g
    yield "uniform", m, rng.integers(0, m, n), rng.integers(0, m, n)
    big = 1 << 22  # m >> n: sparse, many absent keys
    ns = n // 20
    yield "sparse_zipf1.2_bigdomain", big, zipf_draws(rng, ns, big, 1.2), zipf_draws(rng, ns, big, 1.2, 5)


def best_time(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best
