"""Design measurements for the join sample: sampling scheme, entry size and interval rule.

Fixed data (each workload of :mod:`benchmarks.sample_workloads` at data seed 0), ``--seeds``
hash seeds. For each budget (4, 16, 64 KB) the variants, all with the library's rank
hash (:func:`skimsketch.sample.rank.unit_hashes`) of the canonical keys:

* ``compact`` -- the library itself (``JoinSample.for_bytes(B, seed)``, layout 2: Rice-coded 52-bit
  fingerprints and varint totals, as many entries as fit B; ``m_c`` is their mean number), on the
  same hash seeds as the variants below (its ``u`` is theirs);
* ``prio12`` -- l2 priority sampling, m = (B - 100) // 12 (layout 1: an int64 key and an int32 total);
* ``prio16`` -- the same with 16-byte entries (int64 totals), m = (B - 100) // 16;
* ``thr12``  -- l2 threshold sampling with the expected sample size m of ``prio12``
  (``sum_k min(1, tau f^2) = m``; its size is random, so it cannot promise the budget);
* ``prio8``  -- priority with 8-byte entries (a 4-byte fingerprint and a 4-byte count), for the
  accuracy side of the fingerprint-width trade (false matches are analysed, not simulated).

Reported: mean relative error; for ``prio12`` also the coverage of the 95 % intervals of three
symmetric rules (``naive``: z sqrt(V_HT); ``v0``: z sqrt(V_HT + V0), the library's spread without its
missing-mass term; ``cheb``: Chebyshev's 4.47 sqrt(V_HT + V0)) and the median half-width of ``v0`` over the
median error. The library's interval (``skimsketch/sample/estimator.py``) is measured by
``benchmarks/sample_coverage.py``.

    python -m benchmarks.sample_design --seeds 200 --out benchmarks/results/sample_design.txt
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss  # noqa: E402
from benchmarks import sample_workloads as sw  # noqa: E402
from skimsketch.sample.estimator import inclusion  # noqa: E402
from skimsketch.sample.rank import unit_hashes  # noqa: E402

Z = 1.959963984540054


def canonical(keys: np.ndarray) -> np.ndarray:
    return ss.canonicalize(keys).keys if keys.dtype.kind not in "iu" else keys.astype(np.int64)


def priority(u, f, m):
    """(mask kept, tau) of an l2 priority sample of size m (ties: whatever argpartition does)."""
    nz = np.flatnonzero(f)
    r = u[nz] / (f[nz].astype(np.float64) ** 2)
    kept = np.zeros(len(f), bool)
    if len(nz) <= m:
        kept[nz] = True
        return kept, math.inf
    part = np.argpartition(r, m)
    kept[nz[part[:m]]] = True
    return kept, float(r[part[m]])


def threshold(u, f, m):
    """(mask kept, tau) of l2 threshold sampling with expected size m."""
    f2 = f.astype(np.float64) ** 2
    nz = f2 > 0
    if nz.sum() <= m:
        return nz, math.inf
    lo, hi = 0.0, 1.0 / f2[nz].min()
    for _ in range(100):
        mid = (lo + hi) / 2
        if np.minimum(1.0, mid * f2[nz]).sum() > m:
            hi = mid
        else:
            lo = mid
    return nz & (u < lo * f2), lo


def estimate(u, f, g, m, scheme):
    ka, ta = scheme(u, f, m)
    kb, tb = scheme(u, g, m)
    both = ka & kb
    fb, gb = f[both].astype(np.float64), g[both].astype(np.float64)
    p = inclusion(fb, gb, ta, tb)
    terms = fb * gb / p
    var = terms * terms * (1 - p)
    rnd = p < 1
    v0 = float(var[rnd].max() / 1.0) if rnd.any() else 0.0
    return float(terms.sum()), float(var.sum()), v0


def run(n, seeds, sizes, patterns, out, overflow="wrap"):
    pairs = sw.selected(n, patterns, lambda name: name.endswith(("planes", "h1xh2")), overflow)
    lines = [f"{'workload':26s} {'bytes':>6s} {'compact':>9s} {'m_c':>6s} {'prio12':>9s} {'prio16':>9s} {'thr12':>9s} "
             f"{'prio8':>9s} "
             f"{'naive':>6s} {'v0':>6s} {'cheb':>6s} {'hw/err':>7s}"]
    for w in pairs:
        keys = canonical(w.keys)
        J = sw.join_size(w)
        us = [unit_hashes(keys, s) for s in range(seeds)]
        for nb in sizes:
            m12, m16, m8 = (nb - 100) // 12, (nb - 100) // 16, (nb - 100) // 8
            err = {k: [] for k in ("compact", "prio12", "prio16", "thr12", "prio8")}
            kept = []
            cover = {k: [] for k in ("naive", "v0", "cheb")}
            half = []
            for s, u in enumerate(us):
                a, b = (ss.JoinSample.for_bytes(nb, seed=s).update(w.keys[x > 0], weights=x[x > 0]) for x in (w.f, w.g))
                err["compact"].append(abs(a.join_size(b).value - J) / J)
                kept += [len(a.sample_items()[0]), len(b.sample_items()[0])]
                e, v, v0 = estimate(u, w.f, w.g, m12, priority)
                err["prio12"].append(abs(e - J) / J)
                cover["naive"].append(abs(e - J) <= Z * math.sqrt(v))
                cover["v0"].append(abs(e - J) <= Z * math.sqrt(v + v0))
                cover["cheb"].append(abs(e - J) <= 4.47 * math.sqrt(v + v0))
                half.append(Z * math.sqrt(v + v0) / J)
                for name, mm, sch in (("prio16", m16, priority), ("thr12", m12, threshold), ("prio8", m8, priority)):
                    err[name].append(abs(estimate(u, w.f, w.g, mm, sch)[0] - J) / J)
            med = float(np.median(err["prio12"]))
            hw = f"{np.median(half) / med:7.2f}" if med > 1e-12 else f"{'exact':>7s}"
            lines.append(f"{w.name:26s} {nb:6d} {np.mean(err['compact']):9.5f} {np.mean(kept):6.0f} "
                         + " ".join(f"{np.mean(err[k]):9.5f}" for k in err if k != "compact") + " "
                         + " ".join(f"{np.mean(cover[k]):6.3f}" for k in cover) + f" {hw}")
            print(lines[-1], flush=True)
    sw.write_results(out, f"python -m benchmarks.sample_design --n {n} --seeds {seeds} --overflow {overflow}", lines)


def main(argv=None):
    ap = sw.options(__doc__)
    ap.add_argument("--overflow", choices=("wrap", "drop"), default="wrap",
                    help="how the paper's second stream shifts (data/zipf.py; the issue's model dropped)")
    a = ap.parse_args(argv)
    run(a.n, a.seeds, a.sizes, a.workloads, a.out, a.overflow)


if __name__ == "__main__":
    main()
