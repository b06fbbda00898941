"""Update throughput and query time, against peers measured in the same run: a C reference
of the same work (built here from benchmarks/c_reference.c) and the datasketches Count-Min
sketch (absolute timings vary between machines and runs; the ratios are what to compare).

    ./dev bench [--n 4000000] [--repeat 3] [--section kernels|countmin|all]

Section "kernels" (docs/kernels.md): updates of the default shape (``for_bytes(16384)``:
HashSketch and SkimmedSketch 815 x 5, the skimmed one in the virtual layout, whose C reference
maps each key to its virtual id and sign first) against the C reference doing the same hash and
scatter-adds in C (the plain loop, and the same loop tuned: rows prefetched, words read once),
for spread int64 keys, pyarrow strings, numpy object strings
and keys of 1-10 MB (MB/s against a C MurmurHash3 and a C read of the same bytes), each
with the compiled kernels and the numpy reference; then the query (skim + join of two
SkimmedSketch(4096, 5, domain=2**20)), compiled against the numpy reference. Library and C runs alternate; each line
gives the best of ``--repeat`` and the range of the per-pair ratios (the machine's noise).

Section "countmin":

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
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import skimsketch as ss
from skimsketch.sketch.skim.virtual import virtual_salt
from skimsketch.keys.hashing import family

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
from benchmarks.workloads import best_time, zipf_draws  # noqa: E402

DOMAIN = 1 << 18
HERE = os.path.dirname(os.path.abspath(__file__))


# -- the C reference ---------------------------------------------------------------------
class RefFamily(ctypes.Structure):
    _fields_ = [("t0", ctypes.c_void_p), ("t1", ctypes.c_void_p), ("t2", ctypes.c_void_p), ("n_words", ctypes.c_int64),
                ("a", ctypes.c_uint64), ("b", ctypes.c_uint64), ("width", ctypes.c_int64), ("depth", ctypes.c_int64),
                ("salt", ctypes.c_uint64), ("lg", ctypes.c_int64)]


def build_reference(folder: str):
    """Compile benchmarks/c_reference.c (gcc -O3, the extension's optimisation) and load it."""
    lib = os.path.join(folder, "libskimref.so")
    subprocess.run(["gcc", "-O3", "-std=c11", "-shared", "-fPIC", "-o", lib, os.path.join(HERE, "c_reference.c")],
                   check=True)
    ref = ctypes.CDLL(lib)
    ref.ref_murmur.restype = ctypes.c_uint64
    ref.ref_read.restype = ctypes.c_uint64
    return ref


def ptr(a: np.ndarray):
    return ctypes.c_void_p(a.ctypes.data)


def ref_family(seed: int, width: int, depth: int, virtual_lg: int | None = None):
    """The C reference's view of a sketch's hash family (and virtual map, for search='virtual')."""
    fam = family(seed)
    nw = (depth + 1) // 2
    tables = fam.tables(nw)
    a, b = fam.fold_constants
    salt = virtual_salt(seed) if virtual_lg else 0
    return RefFamily(*(t.ctypes.data for t in tables), nw, a, b, width, depth, salt, virtual_lg or 0), tables


def timed_pairs(lib_fn, ref_fn, repeat: int):
    """Alternate ``lib_fn`` and ``ref_fn`` ``repeat`` times -> (best lib s, best ref s, min and max of lib/ref)."""
    pairs = []
    for _ in range(repeat):
        t = time.perf_counter()
        lib_fn()
        t_lib = time.perf_counter() - t
        t = time.perf_counter()
        ref_fn()
        pairs.append((t_lib, time.perf_counter() - t))
    lib, ref = min(p[0] for p in pairs), min(p[1] for p in pairs)
    ratios = [r / lb for lb, r in pairs]  # speed ratio lib/ref of each pair
    return lib, ref, min(ratios), max(ratios)


def kernels_section(n: int, repeat: int) -> None:
    from skimsketch import kernels

    print(f"== kernels: updates at the default shape vs the C reference (load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores; best of {repeat}, ratio range over alternating runs) ==")
    backends = [name for name, why in kernels.available().items() if why is None]
    rng = np.random.default_rng(7)
    spread = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, n)
    ns = max(n // 4, 1)
    words = [f"user-{i}" for i in rng.integers(0, 10 * ns, ns).tolist()]
    try:
        import pyarrow as pa
    except ImportError:
        pa = None
    objects = np.array(words, dtype=object)
    with tempfile.TemporaryDirectory() as tmp:
        ref = build_reference(tmp)
        print(f"{'workload':44} {'kernels':9} {'keys/s':>13} {'reference':10} {'C keys/s':>13} {'ratio':>7} "
              f"{'range':>11}")
        cases = [("spread int64, HashSketch 815x5", lambda: ss.HashSketch.for_bytes(16384, seed=1), spread, None),
                 ("spread int64, SkimmedSketch.for_bytes(16384)", lambda: ss.SkimmedSketch.for_bytes(16384, seed=1),
                  spread, None)]
        offsets = data = None
        if pa is not None:
            arr = pa.array(words, type=pa.string())
            bufs = arr.buffers()
            offsets = np.frombuffer(bufs[1], dtype=np.int32, count=len(arr) + 1)
            data = np.frombuffer(bufs[2], dtype=np.uint8)
            cases.append(("pyarrow strings, SkimmedSketch.for_bytes", lambda: ss.SkimmedSketch.for_bytes(16384, seed=1),
                          arr, "str"))
            cases.append(("object strings, SkimmedSketch.for_bytes", lambda: ss.SkimmedSketch.for_bytes(16384, seed=1),
                          objects, "str"))
        for label, make, keys, kind in cases:
            sk = make()
            fam, _tables = ref_family(1, sk.width, sk.depth, sk.params.get("virtual_lg"))
            out = np.zeros(sk.depth * sk.width, dtype=np.int64)
            refs = {}
            for variant, suffix in (("C plain", ""), ("C tuned", "_prefetch")):
                fn = getattr(ref, ("ref_int_keys" if kind is None else "ref_string_keys") + suffix)
                if kind is None:
                    def run_ref(fn=fn):
                        out[:] = 0
                        fn(ctypes.byref(fam), ptr(keys), len(keys), ptr(out))
                else:
                    def run_ref(fn=fn):
                        out[:] = 0
                        fn(ctypes.byref(fam), ptr(offsets), ptr(data), len(offsets) - 1, ptr(out))
                run_ref()
                if not np.array_equal(out.reshape(sk.depth, sk.width), make().update(keys).counters):
                    raise SystemExit(f"{label}: the {variant} reference's counters differ from the library's")
                refs[variant] = run_ref
            for name in backends:
                for variant, run_ref in refs.items():
                    with kernels.use(name):
                        make().update(keys[:1000])  # warm the tables
                        lib, cref, lo, hi = timed_pairs(lambda: make().update(keys), run_ref, repeat)
                    print(f"{label:44} {name:9} {len(keys) / lib:13,.0f} {variant:10} {len(keys) / cref:13,.0f} "
                          f"{cref / lib:6.2f}x {lo:5.2f}-{hi:4.2f}x")
        long_keys_section(ref, repeat, backends)
    query_section(repeat, backends)


def query_section(repeat: int, backends) -> None:
    """skim + join estimate of two SkimmedSketch(4096, 5, domain=2**20) over 4M Zipf keys (80 KB of counters each),
    compiled kernels against the numpy reference, alternating (no C reference of the whole skim)."""
    from skimsketch import kernels

    rng = np.random.default_rng(5)
    m = 1 << 20
    for z, shift in ((1.0, 100), (1.5, 30)):
        f = ss.SkimmedSketch(4096, 5, 1, domain=m).update(zipf_draws(rng, 4_000_000, m, z))
        g = ss.SkimmedSketch(4096, 5, 1, domain=m).update(zipf_draws(rng, 4_000_000, m, z, shift))
        f.copy().join_size(g.copy())  # the candidates' hashes and bucket index are cached per shape and seed
        times = {name: [] for name in backends}
        for _ in range(repeat):
            for name in backends:
                with kernels.use(name):
                    t = time.perf_counter()
                    f.copy().join_size(g.copy())  # fresh copies: no cached skim
                    times[name].append(time.perf_counter() - t)
        line = ", ".join(f"{name} {min(ts):.3f} s" for name, ts in times.items())
        if len(times) == 2:
            pairs = [n / c for n, c in zip(times["numpy"], times["compiled"])]
            line += f" (compiled {min(times['numpy']) / min(times['compiled']):.2f}x faster, {min(pairs):.2f}-{max(pairs):.2f}x)"
        print(f"query: skim + join, SkimmedSketch(4096, 5, domain=2**20), Zipf {z} shift {shift}: {line}")


def long_keys_section(ref, repeat: int, backends) -> None:
    """Keys of 1-10 MB: MB/s of canonicalising + sketching vs C MurmurHash3 and a C read of the same bytes."""
    from skimsketch import kernels

    rng = np.random.default_rng(3)
    blob = rng.integers(0, 256, 10 << 20, dtype=np.uint8)
    for label, keys in (("10 keys of 1 MB (bytes)", [blob[i << 20 : (i + 1) << 20].tobytes() for i in range(10)]),
                        ("1 key of 10 MB (str)", ["k" * (10 << 20)])):
        nbytes = sum(len(k) for k in keys)
        bufs = [np.frombuffer(k.encode() if isinstance(k, str) else k, dtype=np.uint8) for k in keys]
        def run_murmur():
            for b in bufs:
                ref.ref_murmur(ptr(b), len(b))
        def run_read():
            for b in bufs:
                ref.ref_read(ptr(b), len(b) // 8)
        for name in backends:
            with kernels.use(name):
                lib, cref, lo, hi = timed_pairs(lambda: ss.HashSketch.for_bytes(16384, seed=1).update(keys), run_murmur,
                                                repeat)
                _, read, _, _ = timed_pairs(lambda: None, run_read, repeat)
            mb = nbytes / 1e6
            print(f"long keys, {label:33} {name:9} {mb / lib:9,.0f} MB/s; C MurmurHash3 {mb / cref:7,.0f} MB/s "
                  f"({cref / lib:.2f}x, {lo:.2f}-{hi:.2f}x); C read {mb / read:7,.0f} MB/s")


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
    ap.add_argument("--section", choices=["all", "kernels", "countmin"], default="all")
    a = ap.parse_args(argv)
    if a.section in ("all", "kernels"):
        kernels_section(a.n, a.repeat)
    if a.section == "kernels":
        return
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
