"""The join sample's exact standard deviation against the published priority sampling's, at equal bytes.

Where rare keys dominate (a key kept by both sides with a tiny probability ``p`` adds ``f g / p``
in a few draws), a mean error over a few hundred draws moves with one draw (see
:mod:`benchmarks.sample_vs_published`). This computes the spread instead of sampling it: with the
threshold-sampling form of a priority sample of ``m`` entries (``tau`` solves
``sum_k min(1, tau f(k)^2) = m``, the expected size; the priority sample's ``tau`` is its
``(m+1)``-th rank, which concentrates there), the estimator ``sum f g / p`` over the keys both kept,
``p = min(1, tau_f f^2, tau_g g^2)``, has variance ``sum_k (f g)^2 (1/p - 1)``.

* ``ours``      -- the entries a ``JoinSample.for_bytes(B)`` keeps of each side (layout 2, measured: the
  mean over ``--seeds`` seeds; ``m ours`` shows the two sides' mean);
* ``published`` -- ``m = (B - 32) // 12`` (an 8-byte fingerprint and a 4-byte count an entry).

Reported: both standard deviations relative to ``J`` and their ratio (below 1: ours is more
accurate). Fixed data: each workload at data seed 0.

    PYTHONPATH=$PWD python -m benchmarks.sample_variance --out benchmarks/results/sample_variance.txt
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss  # noqa: E402
from benchmarks import sample_workloads as sw  # noqa: E402
from benchmarks.accuracy_per_byte import sketch_of  # noqa: E402
from benchmarks.sample_design import canonical  # noqa: E402


def threshold(x: np.ndarray, m: float) -> float:
    """``tau`` with ``sum min(1, tau x^2) = m`` over the nonzero ``x`` (``inf`` when they are ``m`` or fewer)."""
    x2 = x[x != 0].astype(np.float64) ** 2
    if len(x2) <= m:
        return np.inf
    lo, hi = 0.5 * m / x2.sum(), m / x2.min()  # sum(min(1, tau x2)) is at most m/2 at lo, at least m at hi
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if np.minimum(1.0, mid * x2).sum() < m else (lo, mid)
    return hi


def relative_sd(f: np.ndarray, g: np.ndarray, mf: float, mg: float) -> float:
    """The estimator's standard deviation over ``J`` with ``mf`` and ``mg`` entries (module docstring)."""
    ff, gg = f.astype(np.float64), g.astype(np.float64)
    both = (ff != 0) & (gg != 0)
    ff, gg = ff[both], gg[both]
    tf, tg = threshold(f, mf), threshold(g, mg)
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, np.minimum(np.where(np.isinf(tf), 1.0, tf * ff * ff), np.where(np.isinf(tg), 1.0, tg * gg * gg)))
    fg = ff * gg
    return float(np.sqrt(np.sum(fg * fg * (1.0 / p - 1.0)))) / float(fg.sum())


def run(n, seeds, sizes, patterns, out):
    pairs = sw.selected(n, patterns, lambda name: name.endswith(("planes", "airports", "h1xh2")))
    head = f"{'workload':24s} {'bytes':>6s} {'m ours':>7s} {'m pub':>6s} {'sd ours':>10s} {'sd pub':>10s} {'ratio':>6s}"
    lines = [head]
    print(head, flush=True)
    for w in pairs:
        keys = canonical(w.keys)
        for nb in sizes:
            mf, mg = (float(np.mean([len(sketch_of(ss.JoinSample.for_bytes(nb, seed=s), keys, x).sample_items()[0])
                                     for s in range(seeds)])) for x in (w.f, w.g))
            m_pub = (nb - 32) // 12
            a, b = relative_sd(w.f, w.g, mf, mg), relative_sd(w.f, w.g, m_pub, m_pub)
            m_ours = (mf + mg) / 2
            ratio = a / b if b > 0 else float("nan")
            lines.append(f"{w.name:24s} {nb:6d} {m_ours:7.0f} {m_pub:6d} {a:10.3g} {b:10.3g} {ratio:6.2f}")
            print(lines[-1], flush=True)
    sw.write_results(out, f"python -m benchmarks.sample_variance --n {n} --seeds {seeds}", lines)


def main(argv=None):
    a = sw.options(__doc__, seeds=3).parse_args(argv)
    run(a.n, a.seeds, a.sizes, a.workloads, a.out)


if __name__ == "__main__":
    main()
