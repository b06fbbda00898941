"""The in-memory demo: every sketch kind at the same memory on one Zipf join.

``python -m experiments.demo [--n N] [--domain M] [--z Z] [--shift S] [--kb KB]``
(``./dev demo``): two Zipf streams (G is F's distribution shifted right by S);
each sketch kind, sized for the same byte budget, estimates |F join G|; prints
the estimate, its interval, the exact answer and the error.
"""

from __future__ import annotations

import argparse
import sys
import time

import skimsketch as ss
from data.zipf import shifted_pair

__all__ = ["main"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.demo",
                                 description="Estimate a Zipf join size with every sketch kind.")
    ap.add_argument("--n", type=int, default=4_000_000, help="elements per stream (default 4M)")
    ap.add_argument("--domain", type=int, default=1 << 18, help="key domain size (default 2^18)")
    ap.add_argument("--z", type=float, default=1.0, help="Zipf skew (default 1.0)")
    ap.add_argument("--shift", type=int, default=100, help="right shift of G (default 100)")
    ap.add_argument("--kb", type=float, default=16.0, help="memory per sketch in KiB (default 16)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--confidence", type=float, default=0.95)
    a = ap.parse_args(argv)

    t = time.perf_counter()
    f, g = shifted_pair(a.n, a.domain, a.z, a.shift, seed=a.seed)
    exact = ss.exact_join_size(f, g)
    print(f"streams: 2 x {a.n:,} Zipf(z={a.z}) keys over [0, {a.domain:,}), shift {a.shift} "
          f"(generated in {time.perf_counter() - t:.2f} s)")
    print(f"exact join size: {exact:,}\n")
    nbytes = int(a.kb * 1024)
    shapes = [
        ("AGMS (paper grid)", ss.AGMSSketch, {"depth": 11}),
        ("hash sketch", ss.HashSketch, {}),
        ("skimmed (paper grid)", ss.SkimmedSketch, {"depth": 11, "domain": a.domain}),
        ("skimmed (default)", ss.SkimmedSketch, {"domain": a.domain}),
        ("skimmed (unbounded)", ss.SkimmedSketch, {}),
    ]
    head = (f"{'sketch':22} {'shape':>9} {'bytes':>7} {'update s':>8} {'estimate':>15} "
            f"{'interval (' + str(int(a.confidence * 100)) + '%)':>33} {'error':>7}")
    print(head)
    print("-" * len(head))
    for name, cls, kw in shapes:
        sketch_a = cls.for_bytes(nbytes, seed=a.seed, **kw)
        sketch_b = sketch_a.empty_like()
        t = time.perf_counter()
        sketch_a.update(f)
        sketch_b.update(g)
        upd = time.perf_counter() - t
        est = sketch_a.join_size(sketch_b, confidence=a.confidence)
        interval = f"[{est.low:,.0f}, {est.high:,.0f}]"
        print(f"{name:22} {sketch_a.depth:>3}x{sketch_a.width:<5} {sketch_a.nbytes:>7} {upd:>8.2f} "
              f"{est.value:>15,.0f} {interval:>33} {est.relative_error(exact):>7.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
