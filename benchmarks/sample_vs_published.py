"""The library's join sample against the published priority sampling, paired, at equal bytes.

Fixed data (each workload of :mod:`benchmarks.sample_workloads` at data seed 0) and ``--seeds``
hash seeds. For every seed both methods rank the keys with the *same* uniform hash (the
library's ``u`` of that seed), so the comparison is paired: the difference between the columns
is the design, not the draw.

* ``ours``      -- ``JoinSample.for_bytes(B, seed)`` built from the table and finished
  (``from_bytes(to_bytes())``): layout 2, as many entries as fit ``B`` (``m`` is their mean);
* ``published`` -- Daliri et al.'s priority sampling (VLDB 2024) as their code computes it
  (:func:`benchmarks.accuracy_per_byte.published_join`): ``m = (B - 32) // 12`` entries (an
  8-byte fingerprint and a 4-byte count), ``tau`` the ``m``-th smallest rank, the keys of rank
  ``<= tau`` kept;
* ``hash``      -- ``HashSketch.for_bytes(B, seed)`` (the linear reference at equal bytes).

Reported per cell: the mean relative error of each, ours and the published one with their
standard errors (``+-``); ``ours/pub``, the ratio of the means, ``med o/p``, the ratio of the
medians, and ``rms o/p``, the ratio of the root-mean-square errors; ``wins``, the share of seeds
where ours is at least as close as the published estimate on the same hash.

The errors are heavy-tailed where rare keys dominate the variance (a term ``f g / p`` with a tiny
``p`` appears in a few draws): there a mean over 100 draws moves with one draw, so read a mean
ratio above 1 against its standard errors, and the median and RMS ratios beside it.

    PYTHONPATH=$PWD python -m benchmarks.sample_vs_published --seeds 100 --out benchmarks/results/sample_vs_published.txt
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss  # noqa: E402
from benchmarks import sample_workloads as sw  # noqa: E402
from benchmarks.accuracy_per_byte import published_join, published_sample, sketch_of  # noqa: E402
from benchmarks.sample_design import canonical  # noqa: E402



def _mean_se(x: np.ndarray) -> str:
    """``mean+-standard error`` of the relative errors ``x``."""
    return f"{x.mean():.5f}+-{x.std(ddof=1) / np.sqrt(len(x)):.5f}"


def run(n, seeds, sizes, patterns, out):
    pairs = sw.selected(n, patterns, lambda name: name.endswith(("planes", "airports", "h1xh2")))
    head = (f"{'workload':24s} {'bytes':>6s} {'m':>6s} {'ours':>18s} {'published':>18s} {'hash':>9s} "
            f"{'ours/pub':>8s} {'med o/p':>8s} {'rms o/p':>8s} {'wins':>5s}")
    lines = [head]
    print(head, flush=True)
    for w in pairs:
        keys = canonical(w.keys)
        J = sw.join_size(w)
        for nb in sizes:
            e_o, e_p, e_h, kept = [], [], [], []
            for seed in range(seeds):
                sample, hashed = ss.JoinSample.for_bytes(nb, seed=seed), ss.HashSketch.for_bytes(nb, seed=seed)
                a, b = sketch_of(sample, keys, w.f), sketch_of(sample, keys, w.g)  # finished, as users ship them
                kept += [len(a.sample_items()[0]), len(b.sample_items()[0])]
                e_o.append(abs(a.join_size(b).value - J) / J)
                pa, pb = (published_sample(keys, x, nb, seed, hash_seed=seed) for x in (w.f, w.g))  # JoinSample's hash
                e_p.append(abs(published_join(pa, pb) - J) / J)
                e_h.append(abs(sketch_of(hashed, keys, w.f).join_size(sketch_of(hashed, keys, w.g)).value - J) / J)
            o, p, h = np.array(e_o), np.array(e_p), np.array(e_h)
            ratio = o.mean() / p.mean() if p.mean() > 0 else float("nan")
            med = np.median(o) / np.median(p) if np.median(p) > 0 else float("nan")
            rms = np.sqrt(np.mean(o * o) / np.mean(p * p)) if p.any() else float("nan")
            lines.append(f"{w.name:24s} {nb:6d} {np.mean(kept):6.0f} {_mean_se(o):>18s} {_mean_se(p):>18s} "
                         f"{h.mean():9.5f} {ratio:8.2f} {med:8.2f} {rms:8.2f} {np.mean(o <= p):5.2f}")
            print(lines[-1], flush=True)
    sw.write_results(out, f"python -m benchmarks.sample_vs_published --n {n} --seeds {seeds}", lines)


def main(argv=None):
    a = sw.options(__doc__).parse_args(argv)
    run(a.n, a.seeds, a.sizes, a.workloads, a.out)


if __name__ == "__main__":
    main()
