"""Twins: inputs the summaries cannot tell apart from a documented workload, with another join size.

For a workload of :mod:`benchmarks.sample_workloads` and a budget, the *twin* gives the first table's 100
heaviest keys the total ``frac / sqrt(tau_g)`` in the second table (``tau_g`` of the second table's sample
at that budget, hash seed 12345): the second sample keeps each with probability about ``frac^2``, so it
rarely sees the change, yet ``J`` moves. A valid 95 % interval must cover both; an interval narrowed to the
original's error misses the twin. Prints coverage, median error and median half-width over ``J`` for
the original and its twin (``docs/sample.md``, "Why the documented target ... cannot hold"). A benchmark:
it prints, never gates::

    python -m benchmarks.interval_twins [--seeds 40] [--nbytes 4096] [--frac 0.15] [zipf1.0_s100 ...]
"""

from __future__ import annotations

import argparse

import numpy as np

import skimsketch as ss
from benchmarks.sample_workloads import selected

__all__ = ["main", "twin"]


def twin(keys, f, g, nbytes: int, frac: float):
    """``(g2, c)``: the second table's totals with the first table's 100 heaviest keys set to ``c``."""
    probe = ss.JoinSample.for_bytes(nbytes, seed=12345).update(keys[g != 0], weights=g[g != 0])
    c = max(1, int(frac / np.sqrt(probe.tau)))
    g2 = g.copy()
    g2[np.argsort(-f, kind="stable")[:100]] = c
    return g2, c


def _cells(keys, f, g, nbytes: int, seeds: int):
    J = float(np.dot(f.astype(float), g.astype(float)))
    rows = []
    for s in range(seeds):
        a = ss.JoinSample.for_bytes(nbytes, seed=s).update(keys[f != 0], weights=f[f != 0])
        b = ss.JoinSample.for_bytes(nbytes, seed=s).update(keys[g != 0], weights=g[g != 0])
        e = a.join_size(b)
        rows.append((e.low <= J <= e.high, abs(e.value - J) / J, (e.high - e.low) / 2 / J))
    r = np.array(rows, dtype=float)
    return J, r[:, 0].mean(), np.median(r[:, 1]), np.median(r[:, 2])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workloads", nargs="*", default=["zipf1.0_s100", "zipf1.5_s50", "lake_indep_heavy"])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--nbytes", type=int, default=4096)
    ap.add_argument("--frac", type=float, default=0.15)
    a = ap.parse_args(argv)
    print(f"{'workload':24s} {'input':9s} {'J':>12s} {'cover':>6s} {'err/J':>9s} {'hw/J':>9s}")
    for p in selected(1_000_000, a.workloads):
        g2, c = twin(p.keys, p.f, p.g, a.nbytes, a.frac)
        for label, g in (("original", p.g), (f"twin g={c}", g2)):
            J, cover, err, hw = _cells(p.keys, p.f, g, a.nbytes, a.seeds)
            print(f"{p.name:24s} {label:9s} {J:12.4g} {cover:6.3f} {err:9.2e} {hw:9.2e}", flush=True)


if __name__ == "__main__":
    main()
