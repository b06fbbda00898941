"""Candidate interval rules for the join sample, measured on fixed data over many hash seeds.

For each workload of :mod:`benchmarks.sample_workloads` (data seed 0) and budget, ``--seeds`` hash
seeds, the coverage of 95 % intervals and the median half-width over the median error of:

* ``mass``     -- the previous rule: ``[J - z s, J + z s + M]``, ``s^2 = V_HT + V0``, ``M`` the
  missing mass of the keys one side kept;
* ``min``      -- the previous library rule: ``[J - z s, J + z s + min(M, z r)]``, ``r^2 = sum f^2 / tau_g``
  over the same keys (their variance bound);
* ``add0``     -- ``min`` plus the keys neither side kept (``M0``, ``r0`` at the dropped means): the
  allowance ``A = min(min(M, z r) + min(M0, z r0), min(M + M0, z sqrt(r^2 + r0^2)))``;
* ``prev``     -- the previous library rule: ``add0`` with the upper end
  ``J + min(z s + A, z sqrt(s^2 + r^2 + r0^2))`` (many missed keys: variances add);
* ``lib``      -- the library's rule (``skimsketch/sample/estimator.py``): ``prev`` with each one-side key's
  partner at its estimate from the certain keys (``skimsketch/sample/partner.py``) instead of the
  dropped mean;
* ``quad``     -- ``[J - z s, J + sqrt((z s)^2 + min(M, z r)^2)]`` (narrower: under-covers);
* ``rho``      -- ``mass`` with ``M`` scaled by an estimated overlap rate (the share of the kept keys whose
  membership in the other table is decided, ``u(k) < tau_other``, that are in it);
* ``q95/med``  -- no rule: the 95th percentile of the realised ``|error|`` over its median. A
  95 % interval of fixed width needs a half-width of at least the 95th percentile, so where this
  exceeds 3.5 no such interval has a median half-width under 3.5 median errors.

The samples here are a fast model of the library's (``argpartition``, ties unordered) with
``m = scale * (B - 100) // 12`` entries (``--scale``: layout 1 is 1; the compact layout 2 keeps
about 1.6-1.9x, ``docs/sample.md``); the library's own rule is measured by
``benchmarks/sample_coverage.py``.

    PYTHONPATH=$PWD python -m benchmarks.sample_interval_rules --seeds 200 --scale 1.7 --shifted --out benchmarks/results/sample_interval_rules_compact.txt
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks import sample_workloads as sw  # noqa: E402
from benchmarks.sample_design import canonical, priority  # noqa: E402
from skimsketch.sample.estimator import inclusion  # noqa: E402
from skimsketch.sample.partner import partner_means  # noqa: E402
from skimsketch.sample.rank import unit_hashes  # noqa: E402

Z = 1.959963984540054
REAL = ("nyc_tailnum_h1xh2", "nyc_tailnum_x_planes", "nyc_carrflight_h1xh2", "nyc_dest_x_airports", "nyc_flight_h1xh2")


def _dropped_mean(x, kept, tau) -> float:
    if math.isinf(tau):
        return 0.0
    rest = (x != 0) & ~kept
    return float(np.abs(x[rest]).sum()) / max(1, int(rest.sum()))


def _missing(u, x, kx, ky, tau_x, tau_y, y_mean, y):
    """(missing mass of the keys x kept and y did not, the same with each partner at its estimate from the
    certain keys, their variance bound, the estimated share of x's keys in y)."""
    if math.isinf(tau_y):
        return 0.0, 0.0, 0.0, 1.0
    only = kx & ~ky & (u >= tau_y)
    decided = kx & (u < tau_y)
    rho = float((y[decided] != 0).mean()) if decided.any() else 1.0
    xo = x[only].astype(float)
    certain = kx & ((x.astype(float) ** 2 * tau_x >= 1.0) if not math.isinf(tau_x) else True)
    partner = np.where(ky[certain], np.abs(y[certain]).astype(float), np.nan)
    means = partner_means(np.sqrt(u[certain] / tau_y), partner, np.sqrt(u[only] / tau_y), y_mean)
    return float(np.abs(xo).sum()) * y_mean, float(np.dot(np.abs(xo), means)), float(np.dot(xo, xo)) / tau_y, rho


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
    dma, dmb = _dropped_mean(f, ka, ta), _dropped_mean(g, kb, tb)
    ma, pa, va, ra = _missing(u, f, ka, kb, ta, tb, dmb, g)
    mb, pb, vb, rb = _missing(u, g, kb, ka, tb, ta, dma, f)
    m0 = r0 = 0.0
    if not (math.isinf(ta) or math.isinf(tb)):  # the keys neither kept
        n0 = min(int(((f != 0) & ~ka).sum()), int(((g != 0) & ~kb).sum()))
        m0, r0 = n0 * dma * dmb, n0 * max(dmb * dmb / ta, dma * dma / tb)
    return float(t.sum()), float(var.sum()), v0, ma + mb, va + vb, ma * ra + mb * rb, m0, r0, pa + pb


def _add0(M, R2, M0, R0):
    """The allowance ``A = min(min(M, z r) + min(M0, z r0), min(M + M0, z sqrt(r^2 + r0^2)))``."""
    return np.minimum(np.minimum(M, Z * np.sqrt(R2)) + np.minimum(M0, Z * np.sqrt(R0)),
                      np.minimum(M + M0, Z * np.sqrt(R2 + R0)))


def run(n, seeds, sizes, out, scale=1.0, shifted=False):
    pairs = sw.selected(n, real_names=lambda name: name in REAL, shifted=shifted)
    lines = []
    for w in pairs:
        keys = canonical(w.keys)
        J = sw.join_size(w)
        us = [unit_hashes(keys, s) for s in range(seeds)]
        for nb in sizes:
            m = int(scale * ((nb - 100) // 12))
            e, v, v0, M, R2, Mr, M0, R0, P = np.array([estimate(u, w.f, w.g, m) for u in us]).T
            err = np.abs(e - J) / J
            med = float(np.median(err))
            if med < 1e-12:
                lines.append(f"{w.name:22s} {nb:6d} m {m:6d} exact or nearly (median error {med:.1e})")
                print(lines[-1], flush=True)
                continue
            s = np.sqrt(v + v0) * Z
            allow = np.minimum(M, Z * np.sqrt(R2))
            add0 = _add0(M, R2, M0, R0)
            prev = np.minimum(s + add0, Z * np.sqrt(v + v0 + R2 + R0))
            lib = np.minimum(s + _add0(P, R2, M0, R0), Z * np.sqrt(v + v0 + R2 + R0))
            res = []
            for name, lo, hi in (("mass", s, s + M), ("min", s, s + allow), ("add0", s, s + add0), ("prev", s, prev),
                                 ("lib", s, lib),
                                 ("quad", s, np.sqrt(s * s + allow * allow)),
                                 ("rho", s, s + Mr)):
                cover = np.mean((e - lo <= J * (1 + 1e-12)) & (J * (1 - 1e-12) <= e + hi))
                res.append(f"{name} {cover:.3f}/{np.median((lo + hi) / 2) / J / med:6.2f}")
            lines.append(f"{w.name:22s} {nb:6d} m {m:6d} err {err.mean():.5f} q95/med {np.quantile(err, 0.95) / med:5.2f} | "
                         + " | ".join(res))
            print(lines[-1], flush=True)
    flag = " --shifted" if shifted else ""
    sw.write_results(out, f"python -m benchmarks.sample_interval_rules --n {n} --seeds {seeds} --scale {scale}{flag} "
                     "(coverage/hw-over-err)", lines)


def main(argv=None):
    ap = sw.options(__doc__, seeds=60, workloads=False)
    ap.add_argument("--scale", type=float, default=1.0, help="entries per layout-1 entry (module docstring)")
    a = ap.parse_args(argv)
    run(a.n, a.seeds, a.sizes, a.out, a.scale, a.shifted)


if __name__ == "__main__":
    main()
