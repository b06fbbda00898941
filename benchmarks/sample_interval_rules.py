"""Candidate interval rules for the join sample, measured on fixed data over many hash seeds.

For each workload of :mod:`benchmarks.sample_workloads` (data seed 0) and budget, ``--seeds`` hash
seeds, the coverage of 95 % intervals and the median half-width over the median error of:

* ``cur``      -- the library's rule (``skimsketch/sample_estimate.py``): ``[J - z s, J + z s + M]``,
  ``s^2 = V_HT + V0``, ``M`` the missing mass of the keys one side kept;
* ``rho``      -- ``M`` scaled by an estimated overlap rate (the share of the kept keys whose
  membership in the other table is decided, ``u(k) < tau_other``, that are in it);
* ``rho+neff`` -- also ``s^2 (1 + 4 / n_eff)``, ``n_eff = (sum t)^2 / sum t^2`` over the random terms;
* ``rho+2v0``  -- also ``V_HT + 3 V0``.

The samples here are a fast model of the library's (``argpartition``, ties unordered); the
library's own rule is measured by ``benchmarks/sample_coverage.py``.

    PYTHONPATH=$PWD python -m benchmarks.sample_interval_rules --seeds 60 --out benchmarks/results/sample_interval_rules.txt
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import sample_workloads as sw  # noqa: E402
from benchmarks.sample_design import canonical, priority  # noqa: E402
from skimsketch.sample_estimate import inclusion  # noqa: E402
from skimsketch.sample_rank import unit_hashes  # noqa: E402

Z = 1.959963984540054
REAL = ("nyc_tailnum_x_planes", "nyc_carrflight_h1xh2", "nyc_dest_x_airports")


def _dropped_mean(x, kept, tau) -> float:
    if math.isinf(tau):
        return 0.0
    rest = (x != 0) & ~kept
    return float(np.abs(x[rest]).sum()) / max(1, int(rest.sum()))


def _missing(u, x, kx, ky, tau_y, y_mean, y):
    """(missing mass of the keys x kept and y did not, the estimated share of x's keys in y)."""
    if math.isinf(tau_y):
        return 0.0, 1.0
    only = kx & ~ky & (u >= tau_y)
    decided = kx & (u < tau_y)
    rho = float((y[decided] != 0).mean()) if decided.any() else 1.0
    return float(np.abs(x[only]).sum()) * y_mean, rho


def estimate(u, f, g, m):
    ka, ta = priority(u, f, m)
    kb, tb = priority(u, g, m)
    both = ka & kb
    fb, gb = f[both].astype(float), g[both].astype(float)
    p = inclusion(fb, gb, ta, tb)
    t = fb * gb / p
    var = t * t * (1 - p)
    rnd = p < 1
    v0 = float(var[rnd].max()) if rnd.any() else 0.0
    neff = float(t[rnd].sum() ** 2 / (t[rnd] ** 2).sum()) if rnd.any() else math.inf
    ma, ra = _missing(u, f, ka, kb, tb, _dropped_mean(g, kb, tb), g)
    mb, rb = _missing(u, g, kb, ka, ta, _dropped_mean(f, ka, ta), f)
    return float(t.sum()), float(var.sum()), v0, ma + mb, ma * ra + mb * rb, neff


def run(n, seeds, sizes, out):
    pairs = sw.paper(n, 0) + sw.lake(n, 0) + [p for p in sw.real() if p.name in REAL]
    lines = []
    for w in pairs:
        keys = canonical(w.keys)
        J = float(np.dot(w.f.astype(float), w.g.astype(float)))
        us = [unit_hashes(keys, s) for s in range(seeds)]
        for nb in sizes:
            e, v, v0, M, Mr, neff = np.array([estimate(u, w.f, w.g, (nb - 100) // 12) for u in us]).T
            err = np.abs(e - J) / J
            med = max(float(np.median(err)), 1e-300)
            res = []
            for name, lo, hi in (("cur", np.sqrt(v + v0) * Z, np.sqrt(v + v0) * Z + M),
                                 ("rho", np.sqrt(v + v0) * Z, np.sqrt(v + v0) * Z + Mr),
                                 ("rho+neff", np.sqrt((v + v0) * (1 + 4 / neff)) * Z,
                                  np.sqrt((v + v0) * (1 + 4 / neff)) * Z + Mr),
                                 ("rho+2v0", np.sqrt(v + 3 * v0) * Z, np.sqrt(v + 3 * v0) * Z + Mr)):
                cover = np.mean((e - lo <= J) & (J <= e + hi))
                res.append(f"{name} {cover:.3f}/{np.median((lo + hi) / 2) / J / med:6.2f}")
            lines.append(f"{w.name:22s} {nb:6d} err {err.mean():.5f} neff {np.median(neff):7.1f} | " + " | ".join(res))
            print(lines[-1], flush=True)
    if out:
        with open(out, "w") as fh:
            fh.write(f"# python -m benchmarks.sample_interval_rules --n {n} --seeds {seeds} (coverage/hw-over-err)\n"
                     + "\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--seeds", type=int, default=60)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 16384, 65536])
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    run(a.n, a.seeds, a.sizes, a.out)


if __name__ == "__main__":
    main()
