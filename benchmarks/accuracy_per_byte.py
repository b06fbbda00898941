"""Accuracy per byte: the default skimmed sketch against the hash sketch and the published peers.

For each workload and nominal budget (4, 16, 64 KB per sketch) and ``--seeds``
independent draws: the average relative error ``|est - J| / J`` of

* ``bounded``   -- ``SkimmedSketch.for_bytes(nbytes, domain=m)``
* ``unbounded`` -- ``SkimmedSketch.for_bytes(nbytes)`` (keys found by the prefix search)
* ``hash``      -- ``HashSketch.for_bytes(nbytes)`` (Fast-AGMS at equal bytes)

the sketches' actual ``nbytes`` and ``len(to_bytes())``, the coverage of the
default 95 % intervals and their median half-width over the median realised
error, and on the paper's Zipf cells the peers' figures from
``--peers`` with the ratio ours / peer. Sketches are updated with each
distinct key once, weighted by its frequency (the same counters as the
element-by-element stream: the sketches are linear).

    python -m benchmarks.accuracy_per_byte --quick          # small n, 2 seeds (development)
    python -m benchmarks.accuracy_per_byte --seeds 5 --out benchmarks/results/accuracy_per_byte.txt
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss
from data.zipf import shifted_pair_frequencies, zipf_frequencies

PAPER = [(1.0, 100), (1.0, 200), (1.0, 300), (1.5, 30), (1.5, 50)]
SIZES = (4096, 16384, 65536)
PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peers",
                     "join_sketches_zipf.json")


def workloads(n: int, seed: int, paper_only: bool = False):
    """Yield (name, domain, f, g) frequency vectors for one seed."""
    m = 1 << 18
    for z, s in PAPER:
        f, g = shifted_pair_frequencies(n, m, z, s, seed=seed)
        yield f"zipf{z}_s{s}", m, f, g
    if paper_only:
        return
    for z, s in ((0.5, 0), (0.8, 50), (1.2, 50), (2.0, 10)):
        f, g = shifted_pair_frequencies(n, m, z, s, seed=seed)
        yield f"zipf{z}_s{s}", m, f, g
    rng = np.random.default_rng(seed + 7000)
    heavy = rng.choice(m, 20, replace=False)
    f = np.bincount(np.concatenate([rng.choice(heavy, n // 2), rng.integers(0, m, n - n // 2)]), minlength=m)
    g = np.bincount(np.concatenate([rng.choice(heavy, n // 2), rng.integers(0, m, n - n // 2)]), minlength=m)
    yield "heavy20+uniform", m, f, g
    yield "uniform", m, rng.multinomial(n, np.full(m, 1.0 / m)), rng.multinomial(n, np.full(m, 1.0 / m))
    big = 1 << 22  # sparse: n/20 elements over 2**22 values, most of them absent
    perm = rng.permutation(big)
    fz = zipf_frequencies(n // 20, big, 1.2, seed, stream=0)
    gz = zipf_frequencies(n // 20, big, 1.2, seed, stream=1)
    yield "sparse_zipf1.2_2^22", big, fz[perm], np.roll(gz, 5)[perm]


def sketch_of(proto, freq):
    keys = np.flatnonzero(freq)
    return proto.empty_like().update(keys.astype(np.int64), weights=freq[keys])


def run(n: int, seeds: int, sizes, depth, paper_only: bool):
    rows = {}
    for seed in range(seeds):
        for name, m, f, g in workloads(n, seed, paper_only):
            J = float(np.dot(f.astype(np.float64), g.astype(np.float64)))
            for nb in sizes:
                protos = {
                    "hash": ss.HashSketch.for_bytes(nb, seed=seed + 1, depth=depth),
                    "bounded": ss.SkimmedSketch.for_bytes(nb, seed=seed + 1, depth=depth, domain=m)
                    if m <= (1 << 22) else None,
                    "unbounded": ss.SkimmedSketch.for_bytes(nb, seed=seed + 1, depth=depth),
                }
                for kind, proto in protos.items():
                    if proto is None:
                        continue
                    a, b = sketch_of(proto, f), sketch_of(proto, g)
                    t = time.perf_counter()
                    e = a.join_size(b)
                    dt = time.perf_counter() - t
                    r = rows.setdefault((name, nb, kind), {"err": [], "cover": [], "half": [], "time": []})
                    r["err"].append(abs(e.value - J) / J)
                    r["cover"].append(e.contains(J))
                    r["half"].append((e.high - e.low) / 2 / J)
                    r["time"].append(dt)
                    r["nbytes"], r["blob"], r["shape"] = a.nbytes, len(a.to_bytes()), f"{a.width}x{a.depth}"
        print(f"seed {seed + 1}/{seeds} done", file=sys.stderr, flush=True)
    return rows


def report(rows, peers, sizes, out):
    names = list(dict.fromkeys(k[0] for k in rows))
    lines = []
    hdr = (f"{'workload':22s} {'bytes':>6s} {'kind':9s} {'shape':>9s} {'nbytes':>7s} {'blob':>7s} {'ARE':>9s} "
           f"{'/hash':>6s} {'cover':>6s} {'hw/err':>7s} {'time':>6s}  peers (ours/peer)")
    lines.append(hdr)
    for name in names:
        for nb in sizes:
            h = rows.get((name, nb, "hash"))
            for kind in ("bounded", "unbounded", "hash"):
                r = rows.get((name, nb, kind))
                if r is None:
                    continue
                are = float(np.mean(r["err"]))
                ratio = are / max(float(np.mean(h["err"])), 1e-300) if h else float("nan")
                med_err = float(np.median(r["err"]))
                hw = float(np.median(r["half"])) / med_err if med_err > 0 else float("inf")
                peer = peers.get(f"{name}@{nb}", {})
                ptxt = " ".join(f"{p}={v:.4g}({are / v:.2f}x)" for p, v in sorted(peer.items())
                                if p in ("JoinSketch", "FAGMS")) if kind != "hash" else ""
                lines.append(f"{name:22s} {nb:6d} {kind:9s} {r['shape']:>9s} {r['nbytes']:7d} {r['blob']:7d} "
                             f"{are:9.5f} {ratio:6.2f} {np.mean(r['cover']):6.2f} {hw:7.2f} "
                             f"{np.median(r['time']):6.3f}  {ptxt}")
    text = "\n".join(lines)
    print(text)
    if out:
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with open(out, "w") as fh:
            fh.write(text + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4_000_000, help="elements per stream (paper: 4M)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--depth", type=int, default=None, help="override the default depth")
    ap.add_argument("--paper-only", action="store_true")
    ap.add_argument("--quick", action="store_true", help="n=400K, 2 seeds")
    ap.add_argument("--peers", default=PEERS)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    if a.quick:
        a.n, a.seeds = 400_000, 2
    peers = {}
    if os.path.exists(a.peers):
        with open(a.peers) as fh:
            peers = json.load(fh)["are"]
    else:
        print(f"peers file {a.peers} not found (--peers): no peer columns", file=sys.stderr)
    if a.n != 4_000_000:
        peers = {}  # the peers' figures are for 4M elements per stream
    rows = run(a.n, a.seeds, a.sizes, a.depth, a.paper_only)
    report(rows, peers, a.sizes, a.out)


if __name__ == "__main__":
    main()
