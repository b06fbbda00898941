"""Update throughput and query time, with the datasketches Count-Min sketch as
the peer measured in the same run (absolute timings vary between machines and
runs; the ratios are what to compare).

    ./dev bench [--n 4000000] [--repeat 3]

For each workload (4M int64 keys: uniform and Zipf 1.0 over [0, 2^18), where an update
hashes each distinct key once with its count, and uniform over all int64 values, where
it hashes every key):
* keys/s of ``update`` for HashSketch / SkimmedSketch at depth 3, 5, 11
  (width 1024) and AGMSSketch at depth 3, 5, 11 (2750 counters, the paper's
  scale — its cost is width x depth per distinct key);
* Count-Min (datasketches, 3 hashes, 1024 buckets) fed one key per call, the
  only way its Python API takes items, and "bulk": np.unique + one weighted
  call per distinct key (the unique step is timed too);
* skim + join estimate time over the 2^18 domain at depth 11.
Best of ``--repeat`` runs for each.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import skimsketch as ss

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
from benchmarks.workloads import best_time, zipf_draws  # noqa: E402

DOMAIN = 1 << 18


def countmin_rates(keys, repeat):
    try:
        import datasketches
    except ImportError:
        return None, None
    def per_call():
        cm = datasketches.count_min_sketch(3, 1024, 9001)
        for k in keys.tolist():
            cm.update(k)
    def bulk():
        cm = datasketches.count_min_sketch(3, 1024, 9001)
        u, c = np.unique(keys, return_counts=True)
        for k, w in zip(u.tolist(), c.tolist()):
            cm.update(k, w)
    return len(keys) / best_time(per_call, 1), len(keys) / best_time(bulk, repeat)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(42)
    workloads = {"uniform": rng.integers(0, DOMAIN, a.n), "zipf1.0": zipf_draws(rng, a.n, DOMAIN, 1.0),
                 "spread": rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, a.n)}
    for name, keys in workloads.items():
        dense = name != "spread"
        print(f"\n== {name}: {a.n:,} int64 keys over " + ("[0, 2^18) ==" if dense else "all int64 values =="))
        cm_call, cm_bulk = countmin_rates(keys, a.repeat)
        rows = []
        for d in (3, 5, 11):
            for label, make in (
                ("HashSketch", lambda d=d: ss.HashSketch(1024, d, 1)),
                ("SkimmedSketch", lambda d=d: ss.SkimmedSketch(1024, d, 1, domain=DOMAIN)),
                ("AGMSSketch", lambda d=d: ss.AGMSSketch(2750 // d, d, 1)),
            ):
                if label == "SkimmedSketch" and not dense:
                    continue
                make().update(keys[:1000])  # warm the hash tables
                rep = 1 if label == "AGMSSketch" else a.repeat
                rows.append((f"{label} d={d}", a.n / best_time(lambda: make().update(keys), rep)))
        if cm_call:
            rows.append(("Count-Min (datasketches) per-call", cm_call))
            rows.append(("Count-Min (datasketches) bulk", cm_bulk))
        print(f"{'sketch':36} {'keys/s':>14} {'vs CM per-call':>15} {'vs CM bulk':>11}")
        for label, rate in rows:
            r1 = f"{rate / cm_call:14.1f}x" if cm_call else "-"
            r2 = f"{rate / cm_bulk:10.1f}x" if cm_bulk else "-"
            print(f"{label:36} {rate:14,.0f} {r1:>15} {r2:>11}")
        if not dense:
            continue
        f = ss.SkimmedSketch(1024, 11, 1, domain=DOMAIN).update(keys)
        g = ss.SkimmedSketch(1024, 11, 1, domain=DOMAIN).update(keys[::-1][: len(keys) // 2])

        def query():  # fresh copies: no cached skim (copying the counters is part of the time)
            f.copy().join_size(g.copy())

        print(f"skim + estimate, depth 11, 2^18 domain: {best_time(query, a.repeat):.3f} s")


if __name__ == "__main__":
    main()
