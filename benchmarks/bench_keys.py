"""Update rates for string keys and for unbounded-key skimmed sketches, beside the
bounded-domain ones, measured in the same run (absolute numbers vary between
machines and with load; compare the ratios), plus the query time of the
unbounded skimmed sketch and, with ``--accuracy``, its error at equal memory.

    ./dev py benchmarks/bench_keys.py [--n 2000000] [--repeat 3] [--bytes 65536] [--accuracy --acc-n 300000 --reps 5]

Rates (keys/s, best of ``--repeat``, sketches from ``for_bytes(--bytes)``):
* int64 keys, Zipf 1.0 over [0, 2**18): HashSketch, bounded SkimmedSketch
  (domain 2**18), unbounded SkimmedSketch; ratio unbounded / bounded;
* 64-bit ids (random int64, Zipf 1.0 over 2**20 of them): HashSketch, unbounded;
* str keys (``"user-<id>"``) as a list, a pyarrow array and a pandas Series:
  canonicalisation alone, HashSketch and unbounded SkimmedSketch updates.
Query: SKIMDENSE + join estimate of two unbounded sketches (best of
``--repeat``) on Zipf 0.5-2.0, heavy keys + uniform, uniform, ids and strings.
Accuracy: mean paper error (experiments.metrics) of hash, bounded and unbounded skimmed sketches
of equal memory over ``benchmarks/workloads.py`` at 16 KB and 64 KB.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
import skimsketch as ss  # noqa: E402
from benchmarks.workloads import best_time, paper_error, workloads, zipf_draws  # noqa: E402

DOMAIN = 1 << 18


def rate(make, keys, repeat):
    return len(keys) / best_time(lambda: make().update(keys), repeat)


def interleaved_rates(cases, repeat):
    """{name: keys/s} with the cases timed in turn within each repetition (best of ``repeat``):
    a burst of load from other jobs then hits every case alike instead of one."""
    best = {name: float("inf") for name in cases}
    for _ in range(repeat):
        for name, (make, keys) in cases.items():
            t = time.perf_counter()
            make().update(keys)
            best[name] = min(best[name], time.perf_counter() - t)
    return {name: len(cases[name][1]) / best[name] for name in cases}


def load_average() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bytes", type=int, default=65536)
    ap.add_argument("--accuracy", action="store_true")
    ap.add_argument("--acc-n", type=int, default=300_000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    nb = a.bytes
    print(f"# bench_keys n={a.n} repeat={a.repeat} bytes={nb}")
    hash_ = lambda: ss.HashSketch.for_bytes(nb, seed=3)  # noqa: E731
    bounded = lambda: ss.SkimmedSketch.for_bytes(nb, seed=3, domain=DOMAIN)  # noqa: E731
    unb = lambda: ss.SkimmedSketch.for_bytes(nb, seed=3)  # noqa: E731
    u = unb()
    print(f"# unbounded shape: width={u.width} depth={u.depth} hier={u.hier_depth}x{u.hier_width} "
          f"x6 levels, nbytes={u.nbytes}; bounded/hash width={bounded().width} depth={bounded().depth}")

    ints = zipf_draws(rng, a.n, DOMAIN, 1.0)
    id_pool = rng.integers(-(2**63), 2**63 - 1, 1 << 20, dtype=np.int64)
    ids = id_pool[zipf_draws(rng, a.n, 1 << 20, 1.0)]
    ns = min(a.n, 500_000)
    strs_list = [f"user-{i}" for i in ids[:ns].tolist()]
    containers = {"list": strs_list}
    try:
        import pyarrow as pa

        containers["pyarrow"] = pa.array(strs_list)
    except ImportError:
        pass
    try:
        import pandas as pd

        containers["pandas"] = pd.Series(strs_list)
    except ImportError:
        pass
    print(f"# load average before: {load_average()}")
    r = interleaved_rates({"hash": (hash_, ints), "bounded": (bounded, ints), "unbounded": (unb, ints),
                           "hash_id": (hash_, ids), "unbounded_id": (unb, ids)}, a.repeat)
    print(f"int64 keys   hash {r['hash']:,.0f}/s  bounded skimmed {r['bounded']:,.0f}/s  unbounded skimmed "
          f"{r['unbounded']:,.0f}/s  ratio unbounded/bounded {r['unbounded'] / r['bounded']:.2f}  "
          f"(hierarchy adds {1e9 / r['unbounded'] - 1e9 / r['bounded']:.0f} ns/key)")
    print(f"64-bit ids   hash {r['hash_id']:,.0f}/s  unbounded skimmed {r['unbounded_id']:,.0f}/s"
          f"  ratio unbounded/bounded(int) {r['unbounded_id'] / r['bounded']:.2f}")

    class _Canon:  # canonicalisation alone, timed like an update
        def __init__(self):
            pass

        def update(self, keys):
            ss.canonicalize(keys)

    cases = {}
    for name, c in containers.items():
        cases[f"canon_{name}"] = (_Canon, c)
        cases[f"hash_{name}"] = (hash_, c)
        cases[f"unb_{name}"] = (unb, c)
    r2 = interleaved_rates(cases, a.repeat)
    for name in containers:
        print(f"str keys ({name:7s}) canonicalize {r2['canon_' + name]:,.0f}/s  hash {r2['hash_' + name]:,.0f}/s  "
              f"unbounded skimmed {r2['unb_' + name]:,.0f}/s  ratio unbounded/hash {r2['unb_' + name] / r2['hash_' + name]:.2f}"
              f"  ratio unbounded/bounded(int) {r2['unb_' + name] / r['bounded']:.2f}")
    print(f"# load average after rates: {load_average()}")

    # query time: skim both sides and estimate (cache cleared each time)
    qrng = np.random.default_rng(7)
    qn = min(a.n, 1_000_000)
    cases = {}
    for z in (0.5, 1.0, 1.5, 2.0):
        cases[f"zipf{z}"] = (zipf_draws(qrng, qn, DOMAIN, z), zipf_draws(qrng, qn, DOMAIN, z, 50))
    hk = qrng.choice(DOMAIN, 20, replace=False)
    heavy = lambda: np.concatenate([qrng.choice(hk, qn // 2), qrng.integers(0, DOMAIN, qn - qn // 2)])  # noqa: E731
    cases["heavy20+uniform"] = (heavy(), heavy())
    cases["uniform"] = (qrng.integers(0, DOMAIN, qn), qrng.integers(0, DOMAIN, qn))
    cases["ids"] = (id_pool[zipf_draws(qrng, qn, 1 << 20, 1.1)], id_pool[zipf_draws(qrng, qn, 1 << 20, 1.1)])
    cases["strings"] = (containers.get("pyarrow", strs_list), containers.get("pyarrow", strs_list))
    worst = 0.0
    for name, (f, g) in cases.items():
        sf, sg = unb().update(f), unb().update(g)

        def query():  # fresh copies: no cached skim (copying the counters is part of the time)
            return sf.copy().join_size(sg.copy())

        t = best_time(query, a.repeat)
        worst = max(worst, t)
        e = query()
        print(f"query {name:16s} {t * 1000:7.1f} ms  dense f/g {e.detail['dense_f']}/{e.detail['dense_g']}")
    print(f"query worst {worst * 1000:.1f} ms at {nb} bytes")

    if a.accuracy:
        errs = {}
        for rep in range(a.reps):
            for name, m, f, g in workloads(a.acc_n, seed=rep):
                exact = ss.exact_join_size(f, g)
                for size in (16384, 65536):
                    for meth, mk in (("hash", lambda: ss.HashSketch.for_bytes(size, seed=rep)),
                                     ("bounded", lambda: ss.SkimmedSketch.for_bytes(size, seed=rep, domain=m)),
                                     ("unbounded", lambda: ss.SkimmedSketch.for_bytes(size, seed=rep))):
                        s = mk()
                        est = s.copy().update(f).join_size(s.copy().update(g)).value
                        errs.setdefault((size, name, meth), []).append(paper_error(exact, est))
            print(f"# accuracy rep {rep + 1}/{a.reps}", file=sys.stderr)
        for size in (16384, 65536):
            print(f"accuracy at {size} bytes (mean paper error over {a.reps} reps, n={a.acc_n})")
            names = sorted({k[1] for k in errs})
            for name in names + ["MEAN"]:
                row = []
                for meth in ("hash", "bounded", "unbounded"):
                    if name == "MEAN":
                        v = np.mean([np.mean(errs[(size, nm, meth)]) for nm in names])
                    else:
                        v = np.mean(errs[(size, name, meth)])
                    row.append(f"{meth} {v:.4f}")
                print(f"  {name:26s} " + "  ".join(row))


if __name__ == "__main__":
    main()
