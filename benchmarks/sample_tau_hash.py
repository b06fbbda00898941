"""Two details of the published priority sampling, measured: the threshold rule and the hash.

On ``zipf1.0_s100`` and ``zipf1.0_s200`` (data seed 0, 4 million rows a side), m = 333, 150 hash
seeds: the mean relative error and the bias (with its standard error) of the estimate
``sum f g / min(1, tau_f f^2, tau_g g^2)`` with ``tau`` the ``(m+1)``-th smallest rank (the
library's rule: unbiased) or the ``m``-th with the keys of rank ``<= tau`` kept (the authors'
``src/priority_sampling.py``: the boundary key then gets ``p = u(k)``, which can be tiny), under
the library's tabulation hash (``tab``) or a splitmix64 finaliser of the key XOR a salt
(``splitmix``).

    PYTHONPATH=$PWD python -m benchmarks.sample_tau_hash
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from data.zipf import shifted_pair_frequencies  # noqa: E402
from skimsketch.keys.hashing import mix  # noqa: E402
from skimsketch.sample.estimator import inclusion  # noqa: E402
from skimsketch.sample.rank import unit_hashes  # noqa: E402

M = 333


def sample(u, f, m, mth: bool):
    nz = np.flatnonzero(f)
    r = u[nz] / (f[nz].astype(float) ** 2)
    kept = np.zeros(len(f), bool)
    part = np.argpartition(r, m)
    if mth:
        tau = r[part[m - 1]]
        kept[nz[r <= tau]] = True
    else:
        kept[nz[part[:m]]] = True
        tau = r[part[m]]
    return kept, tau


def estimate(u, f, g, m, mth: bool) -> float:
    ka, ta = sample(u, f, m, mth)
    kb, tb = sample(u, g, m, mth)
    both = ka & kb
    fb, gb = f[both].astype(float), g[both].astype(float)
    return float((fb * gb / inclusion(fb, gb, ta, tb)).sum())


def main():
    keys = np.arange(1 << 18, dtype=np.int64)
    for shift in (100, 200):
        f, g = shifted_pair_frequencies(4_000_000, 1 << 18, 1.0, shift, seed=0)
        J = float(np.dot(f.astype(float), g.astype(float)))
        res = {}
        for seed in range(150):
            tab = unit_hashes(keys, seed)
            spl = (mix(keys.view(np.uint64) ^ np.uint64(0x5DEECE66D + seed)) >> np.uint64(11)).astype(float) * 2.0**-53
            for hname, u in (("tab", tab), ("splitmix", spl)):
                for mth in (False, True):
                    res.setdefault((hname, "m-th" if mth else "(m+1)-th"), []).append(estimate(u, f, g, M, mth))
        for (hname, rule), v in res.items():
            v = np.array(v)
            print(f"zipf1.0_s{shift} {hname:9s} tau={rule:9s} ARE {np.mean(np.abs(v - J)) / J:.5f} "
                  f"bias {(v.mean() - J) / J:+.5f} +- {v.std() / J / math.sqrt(len(v)):.5f}")


if __name__ == "__main__":
    main()
