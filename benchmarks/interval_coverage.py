"""Interval coverage: how often the default sketch's 95 % interval holds the exact join size.

The interval's guarantee is over the sketch's random hash functions for a given input, so
each workload's data is drawn once (seed 0 of ``benchmarks.accuracy_per_byte``'s
workloads) and only the sketch seed varies over ``--seeds`` trials. For each workload,
budget and kind (the unbounded default ``SkimmedSketch.for_bytes(n)``, the bounded one on
integer workloads, and ``HashSketch.for_bytes(n)``) it prints the coverage with its Wilson
95 % interval, the median half-width over the median realised error (2.91 for an exactly
known normal error) and the mean relative error. A benchmark, not a test: it prints and
never gates. Usage::

    python -m benchmarks.interval_coverage --seeds 200 --workloads 'nyc_*' 'zipf1.0_s100' \\
        --out benchmarks/results/interval_coverage.txt
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import skimsketch as ss

from .accuracy_per_byte import real, selected, sketch_of, synthetic
from .real_keys import data_dir, load_pairs

__all__ = ["main", "wilson"]


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``hits / n``."""
    p = hits / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


KINDS = ("unbounded", "hash", "bounded")


def kinds(nb: int, seed: int, domain, wanted=KINDS):
    """The sketches compared, by kind name (``wanted`` selects; "bounded" only for small integer domains)."""
    out = {}
    if "unbounded" in wanted:
        out["unbounded"] = ss.SkimmedSketch.for_bytes(nb, seed=seed)
    if "hash" in wanted:
        out["hash"] = ss.HashSketch.for_bytes(nb, seed=seed)
    if "bounded" in wanted and domain is not None and domain <= (1 << 22):
        out["bounded"] = ss.SkimmedSketch.for_bytes(nb, seed=seed, domain=domain)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4_000_000, help="elements per stream of the synthetic workloads")
    ap.add_argument("--seeds", type=int, default=200, help="sketch seeds per cell")
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 16384])
    ap.add_argument("--workloads", nargs="+", default=None, metavar="PATTERN")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS, help="sketches to compare")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    args = ap.parse_args(argv)

    folder = data_dir()
    jobs = synthetic(args.n, 0) + (real(load_pairs(folder), args.n, 0) if folder else [])
    lines = [f"# {args.seeds} sketch seeds per cell; data fixed (seed 0); 95% intervals; Wilson 95% interval of "
             "the coverage in brackets; hw/err = median half-width / median |error|"]
    head = f"{'workload':28s} {'bytes':>6s} {'kind':9s} {'cover':>6s} {'(Wilson 95%)':>16s} {'hw/err':>7s} {'ARE':>8s}"
    lines.append(head)
    print("\n".join(lines), flush=True)
    for name, build in jobs:
        if name not in selected([name], args.workloads):
            continue
        w = build()
        exact = float(np.dot(w.f.astype(np.float64), w.g.astype(np.float64)))
        for nb in args.sizes:
            cells = {}
            for seed in range(args.seeds):
                for kind, proto in kinds(nb, 10_000 + seed, w.domain, args.kinds).items():
                    a, b = sketch_of(proto, w.keys, w.f), sketch_of(proto, w.keys, w.g)
                    e = a.join_size(b)
                    c = cells.setdefault(kind, {"hits": 0, "half": [], "err": []})
                    c["hits"] += e.contains(exact)
                    c["half"].append((e.high - e.low) / 2)
                    c["err"].append(abs(e.value - exact))
            for kind, c in cells.items():
                lo, hi = wilson(c["hits"], args.seeds)
                med_err = float(np.median(c["err"]))
                ratio = f"{np.median(c['half']) / med_err:7.2f}" if med_err > 0 else "  exact"
                line = (f"{name:28s} {nb:6d} {kind:9s} {c['hits'] / args.seeds:6.3f} [{lo:.3f}, {hi:.3f}]   "
                        f"{ratio} {np.mean(c['err']) / exact:8.5f}")
                lines.append(line)
                print(line, flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
