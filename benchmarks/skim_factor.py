"""Measure the skimmed sketch's error against the skim factor, the shape and the
plain hash sketch, over the workloads of ``workloads.py``. Writes
``benchmarks/results/skim_factor.csv`` and prints mean errors.

    ./dev py benchmarks/skim_factor.py [--n 1000000] [--reps 5]
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
import skimsketch as ss  # noqa: E402
from benchmarks.workloads import paper_error, workloads  # noqa: E402

FACTORS = (0.5, 1.0, 2.0, 4.0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--counters", type=int, nargs="+", default=[2750, 11000])
    ap.add_argument("--depths", type=int, nargs="+", default=[3, 5, 7, 11])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "skim_factor.csv"))
    a = ap.parse_args(argv)
    errs = defaultdict(list)
    t0 = time.time()
    for rep in range(a.reps):
        for name, m, f, g in workloads(a.n, seed=rep):
            exact = ss.exact_join_size(f, g)
            for counters in a.counters:
                for d in a.depths:
                    w = counters // d
                    seed = 1000 * rep + d
                    hf = ss.HashSketch(w, d, seed).update(f)
                    hg = ss.HashSketch(w, d, seed).update(g)
                    errs[(name, counters, d, "hash")].append(paper_error(exact, hf.join_size(hg).value))
                    for c in FACTORS:
                        sf = ss.SkimmedSketch(w, d, seed, domain=m, skim_factor=c).update(f)
                        sg = ss.SkimmedSketch(w, d, seed, domain=m, skim_factor=c).update(g)
                        errs[(name, counters, d, f"skim{c}")].append(paper_error(exact, sf.join_size(sg).value))
        print(f"rep {rep + 1}/{a.reps} done at {time.time() - t0:.0f}s", file=sys.stderr)
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w", newline="") as fh:
        wr = csv.writer(fh)
        wr.writerow(["workload", "counters", "depth", "method", "reps", "mean_error", "std_error"])
        for (name, counters, d, meth), v in sorted(errs.items()):
            wr.writerow([name, counters, d, meth, len(v), f"{np.mean(v):.5f}", f"{np.std(v):.5f}"])
    # summary: mean over workloads of each method, per counters and depth
    methods = ["hash"] + [f"skim{c}" for c in FACTORS]
    names = sorted({k[0] for k in errs})
    for counters in a.counters:
        print(f"\n== {counters} counters: mean paper error over {a.reps} reps ==")
        print("workload".ljust(26) + "d".rjust(3) + "".join(m.rjust(10) for m in methods))
        for name in names:
            for d in a.depths:
                row = [np.mean(errs[(name, counters, d, m)]) for m in methods]
                print(name.ljust(26) + str(d).rjust(3) + "".join(f"{x:10.4f}" for x in row))
        print("geo-mean over workloads:")
        for d in a.depths:
            row = [np.exp(np.mean([np.log(max(np.mean(errs[(nm, counters, d, m)]), 1e-6)) for nm in names])) for m in methods]
            print("ALL".ljust(26) + str(d).rjust(3) + "".join(f"{x:10.4f}" for x in row))


if __name__ == "__main__":
    main()
