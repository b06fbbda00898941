"""Windowed sketch maintenance vs plain updates. Not a test.

Prints, for depth 3 and 11 in the same run:
  * events/s of the plain sketch update (``HashSketch.update`` per micro-batch);
  * events/s of windowed maintenance (``WindowedSketch.update``: per-pane
    deltas, running total, pane expiry by subtraction) on the same stream,
    for a sliding window and a tumbling window; ratio windowed / plain
    (target >= 0.5);
  * events/s of a two-stream ``WindowedJoin`` (both sides updated), against
    plain updates of the same two streams;
  * memory (bytes) versus window length: bounded by the number of panes.

Run: ``./dev py benchmarks/bench_windows.py [--n 2000000 --batch 10000 --width 1024]``.
The stream is Zipf(1.1) keys over 2**18 values, ``rate`` elements per time
unit, in-order timestamps with a small jitter (``--jitter``) inside the
allowed lateness; seeds are fixed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

import skimsketch as ss
from skimsketch.stream import WindowedJoin, WindowedSketch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
from benchmarks.workloads import best_time  # noqa: E402


def stream(n, rate, jitter, seed):
    rng = np.random.default_rng(seed)
    keys = (rng.zipf(1.1, n) - 1) % (1 << 18)
    ts = np.arange(n, dtype=np.int64) // rate
    if jitter:
        ts = np.maximum(ts - rng.integers(0, jitter + 1, n), 0)
    return keys.astype(np.int64), ts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000, help="elements per run")
    ap.add_argument("--batch", type=int, default=10_000, help="elements per micro-batch")
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--rate", type=int, default=1000, help="elements per time unit")
    ap.add_argument("--slide", type=int, default=10, help="pane length (time units)")
    ap.add_argument("--window", type=int, default=100, help="sliding window length (time units)")
    ap.add_argument("--jitter", type=int, default=2, help="max out-of-orderness (time units)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)

    keys, ts = stream(args.n, args.rate, args.jitter, seed=1)
    keys_b, ts_b = stream(args.n, args.rate, args.jitter, seed=2)
    bounds = list(range(0, args.n, args.batch))
    lateness = args.jitter
    results = {"config": vars(args) | {"python": platform.python_version(), "numpy": np.__version__}, "rates": [], "memory": []}
    print(f"# n={args.n} batch={args.batch} width={args.width} rate={args.rate}/unit slide={args.slide} "
          f"window={args.window} jitter={args.jitter} (best of {args.repeats}, interleaved)")
    print(f"{'depth':>5} {'mode':<24} {'events/s':>12} {'vs plain':>9}")
    for depth in (3, 11):
        tmpl = ss.HashSketch(width=args.width, depth=depth, seed=7)

        def plain():
            s = tmpl.empty_like()
            for i in bounds:
                s.update(keys[i : i + args.batch])

        def plain2():
            s, s2 = tmpl.empty_like(), tmpl.empty_like()
            for i in bounds:
                s.update(keys[i : i + args.batch])
                s2.update(keys_b[i : i + args.batch])

        def windowed(window):
            def run():
                w = WindowedSketch(tmpl, window=window, slide=args.slide, allowed_lateness=lateness)
                for i in bounds:
                    w.update(keys[i : i + args.batch], ts[i : i + args.batch])
                assert w.late_count == 0 and w.expired_panes > 0

            return run

        def join():
            # the streams arrive in alternating batches, so B's batch is up to one batch span behind A's:
            # the lateness must cover it, or most of B would be (cheaply) rejected as late
            span = -(-args.batch // args.rate) + lateness
            j = WindowedJoin(tmpl, args.window, args.window // 2, slide=args.slide, allowed_lateness=span)
            for i in bounds:
                j.update_a(keys[i : i + args.batch], ts[i : i + args.batch])
                j.update_b(keys_b[i : i + args.batch], ts_b[i : i + args.batch])
            assert j.a.late_count == 0 and j.b.late_count == 0, (j.a.late_count, j.b.late_count)

        # (name, function, events, baseline): the join is compared with plain updates of its two streams
        modes = [("plain update", plain, args.n, None),
                 (f"sliding {args.window}/{args.slide}", windowed(args.window), args.n, "plain update"),
                 (f"tumbling {args.slide}", windowed(args.slide), args.n, "plain update"),
                 ("plain update, 2 streams", plain2, 2 * args.n, None),
                 (f"join {args.window}&{args.window // 2}/{args.slide}", join, 2 * args.n, "plain update, 2 streams")]
        best = {name: float("inf") for name, _, _, _ in modes}
        for _ in range(args.repeats):  # interleaved, so load changes hit every mode alike
            for name, fn, _, _ in modes:
                best[name] = min(best[name], best_time(fn, 1))
        rates = {name: n / best[name] for name, _, n, _ in modes}
        rows = [(name, rates[name], rates[base or name]) for name, _, _, base in modes]
        for mode, rate, base_rate in rows:
            ratio = rate / base_rate
            print(f"{depth:>5} {mode:<24} {rate:>12,.0f} {ratio:>9.2f}")
            results["rates"].append({"depth": depth, "mode": mode, "events_per_s": rate, "ratio_vs_plain": ratio})

    print("\n# memory vs window length (depth 5, lateness = jitter); one sketch =", end=" ")
    tmpl = ss.HashSketch(width=args.width, depth=5, seed=7)
    print(f"{tmpl.nbytes} bytes")
    print(f"{'window':>7} {'panes':>6} {'max_panes':>9} {'nbytes':>10} {'elements in window':>19}")
    n_mem = args.n
    for window in (args.slide, 5 * args.slide, 10 * args.slide, 50 * args.slide, 100 * args.slide):
        w = WindowedSketch(tmpl, window=window, slide=args.slide, allowed_lateness=lateness)
        peak = 0
        for i in range(0, n_mem, args.batch):
            w.update(keys[i : i + args.batch], ts[i : i + args.batch])
            peak = max(peak, w.nbytes)
        in_window = int(w.sketch_at().total_weight)
        print(f"{window:>7} {len(w.retained_panes):>6} {w.max_panes:>9} {peak:>10,} {in_window:>19,}")
        results["memory"].append({"window": window, "panes": len(w.retained_panes), "max_panes": w.max_panes,
                                  "peak_nbytes": peak, "elements_in_window": in_window})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
