"""Update speed: HeavyKeySketch against the skimmed default on the same keys (issue 37: within 2x).

For each key set (a shuffled Zipf stream over 2**18 values, as integers, and the same keys as
strings) and budget: the best of ``--repeat`` timings of ``for_bytes(nbytes).update(keys)`` (one
batch), for the heavy-key sketch (compiled admission loop) and ``SkimmedSketch.for_bytes``, and
the ratio heavy / skimmed. With ``--kernels numpy`` the heavy sketch runs its plain-Python
reference loop (the fallback without a C compiler; expect it far slower).

    python -m benchmarks.heavy_update --n 2000000 --out benchmarks/results/heavy_update.txt
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import skimsketch as ss  # noqa: E402
from skimsketch import kernels  # noqa: E402
from data.zipf import zipf_frequencies  # noqa: E402


def keys_of(n: int, z: float, seed: int) -> np.ndarray:
    f = zipf_frequencies(n, 1 << 18, z, seed, stream=0)
    k = np.repeat(np.arange(len(f), dtype=np.int64), f)
    np.random.default_rng(seed).shuffle(k)
    return k


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 16384, 65536])
    ap.add_argument("--skews", type=float, nargs="+", default=[1.0, 1.5])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kernels", choices=("compiled", "numpy"), default="compiled")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    lines = [f"update of {a.n} keys in one batch, best of {a.repeat}; kernels: {a.kernels}",
             f"{'keys':12s} {'bytes':>6s} {'heavy s':>9s} {'skimmed s':>9s} {'ratio':>6s} {'heavy Mkeys/s':>13s}"]
    with kernels.use(a.kernels):
        for z in a.skews:
            ints = keys_of(a.n, z, 1)
            strs = np.char.add("key-", ints.astype(str)).astype(object)
            for name, keys in ((f"zipf{z} int", ints), (f"zipf{z} str", strs)):
                for nb in a.sizes:
                    th = best(lambda: ss.HeavyKeySketch.for_bytes(nb, seed=1).update(keys), a.repeat)
                    ts = best(lambda: ss.SkimmedSketch.for_bytes(nb, seed=1).update(keys), a.repeat)
                    lines.append(f"{name:12s} {nb:6d} {th:9.3f} {ts:9.3f} {th / ts:6.2f} {a.n / th / 1e6:13.1f}")
                    print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
