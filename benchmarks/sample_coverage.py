"""Interval coverage of ``JoinSample.join_size`` on fixed data over many hash seeds.

Each workload of :mod:`benchmarks.sample_workloads` at data seed 0 (fixed tables), ``--seeds``
sample seeds, budgets 4/16/64 KB: the samples are built with the public API
(``JoinSample.for_bytes(nb, seed).update(keys, weights=freq)``), and the table reports the mean
relative error, the share of the 95 % intervals holding the exact join size (coverage) and the
median half-width ``(high - low) / 2`` over the median error; ``entries`` is the mean number of
entries a sample kept (the budget's capacity, unless the table has fewer keys).

    python -m benchmarks.sample_coverage --seeds 200 --shifted --out benchmarks/results/sample_coverage.txt
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss  # noqa: E402
from benchmarks import sample_workloads as sw  # noqa: E402



def sample_of(keys, freq, nbytes: int, seed: int) -> ss.JoinSample:
    nz = np.flatnonzero(freq)
    return ss.JoinSample.for_bytes(nbytes, seed=seed).update(keys[nz], weights=freq[nz])


def run(n, seeds, sizes, patterns, out, shifted=False):
    pairs = sw.selected(n, patterns, shifted=shifted)
    lines = [f"{'workload':26s} {'bytes':>6s} {'ARE':>9s} {'median':>9s} {'cover':>6s} {'hw/err':>7s} {'blob':>6s} {'entries':>8s}"]
    print(lines[0], flush=True)
    for w in pairs:
        J = sw.join_size(w)
        for nb in sizes:
            err, cover, half, blob, kept = [], [], [], 0, []
            for s in range(seeds):
                a, b = sample_of(w.keys, w.f, nb, s), sample_of(w.keys, w.g, nb, s)
                e = a.join_size(b)
                err.append(abs(e.value - J) / J)
                cover.append(e.contains(J))
                half.append((e.high - e.low) / 2 / J)
                blob = max(blob, len(a.to_bytes()), len(b.to_bytes()))
                kept += [len(a.sample_items()[0]), len(b.sample_items()[0])]
            med = float(np.median(err))
            hw = f"{np.median(half) / med:7.2f}" if med > 1e-12 else f"{'exact':>7s}"
            lines.append(f"{w.name:26s} {nb:6d} {np.mean(err):9.5f} {med:9.5f} {np.mean(cover):6.3f} {hw} {blob:6d} {np.mean(kept):8.0f}")
            print(lines[-1], flush=True)
    flag = " --shifted" if shifted else ""
    sw.write_results(out, f"python -m benchmarks.sample_coverage --n {n} --seeds {seeds}{flag}", lines)


def main(argv=None):
    a = sw.options(__doc__).parse_args(argv)
    run(a.n, a.seeds, a.sizes, a.workloads, a.out, a.shifted)


if __name__ == "__main__":
    main()
