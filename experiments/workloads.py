"""Run configurations (quick / full) and the paper's workloads.

A *figure* is one group of workloads that share the F stream: Figure 5(a)
joins one Zipf(1.0) stream F with three shifted streams G (shifts 100, 200,
300), Figure 5(b) one Zipf(1.5) F with shifts 30 and 50, and the Census study
joins synthetic weekly wage (F) with synthetic weekly overtime (G).

Repetition ``r`` of a figure draws fresh data with seed ``DATA_SEEDS[figure] + r``
and uses sketch seed ``SKETCH_SEED + r`` for every method, so all methods see the
same streams and the F and G sketches of a method share their hash functions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from data.census import CPS_DOMAIN, CPS_RECORDS, SYNTHETIC_NOTE, census_pair
from data.zipf import join_size_from_frequencies, zipf_frequencies

from .metrics import PAPER_DEPTHS, PAPER_WIDTHS

__all__ = [
    "METHODS",
    "METHOD_LABELS",
    "FIGURES",
    "DATA_SEEDS",
    "SKETCH_SEED",
    "Config",
    "QUICK",
    "FULL",
    "Workload",
    "FigureData",
    "figure_data",
]

#: Estimators compared, in plotting order.
METHODS = ("agms", "hash", "skimmed", "skimmed_default", "countmin")
METHOD_LABELS = {
    "agms": "basic AGMS (s1 x s2)",
    "hash": "hash sketch (s1 x s2)",
    "skimmed": "skimmed sketch (s1 x s2)",
    "skimmed_default": "skimmed, library default shape (for_bytes)",
    "countmin": "Count-Min, datasketches (s2 x s1)",
}

#: figure -> (title, kind, Zipf z, shifts)
FIGURES = {
    "5a": ("Figure 5(a): Zipf z = 1.0", "zipf", 1.0, (100, 200, 300)),
    "5b": ("Figure 5(b): Zipf z = 1.5", "zipf", 1.5, (30, 50)),
    "census": ("Census-style study (SYNTHETIC data)", "census", None, ()),
}
DATA_SEEDS = {"5a": 0, "5b": 1000, "census": 2000}
SKETCH_SEED = 7_000


@dataclass(frozen=True)
class Config:
    """Everything a run depends on; written next to its results."""

    mode: str
    zipf_n: int
    zipf_domain: int
    census_n: int
    reps: int
    widths: tuple[int, ...] = PAPER_WIDTHS
    depths: tuple[int, ...] = PAPER_DEPTHS
    figures: tuple[str, ...] = ("5a", "5b", "census")
    methods: tuple[str, ...] = METHODS
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict:
        return asdict(self)


#: The paper's setting (docs/algorithms.md): 4M elements, domain 2^18, all 25 shapes, 5 repetitions
#: (the paper used 5-10).
FULL = Config(mode="full", zipf_n=4_000_000, zipf_domain=1 << 18, census_n=CPS_RECORDS, reps=5)

#: CI-sized: 10x shorter Zipf streams over a 4x smaller domain, 9 of the 25 shapes
#: (widths 50/150/250 x depths 11/35/59), 3 repetitions. Census keeps its real size.
QUICK = Config(
    mode="quick",
    zipf_n=400_000,
    zipf_domain=1 << 16,
    census_n=CPS_RECORDS,
    reps=3,
    widths=(50, 150, 250),
    depths=(11, 35, 59),
)


@dataclass(frozen=True)
class Workload:
    """One join: its name, G's frequency vector and the exact join size."""

    name: str
    shift: int | None
    freq_g: np.ndarray
    join_size: int


@dataclass(frozen=True)
class FigureData:
    """The data of one repetition of a figure: F and every G joined with it."""

    figure: str
    domain: int
    n_f: int
    freq_f: np.ndarray
    workloads: tuple[Workload, ...]
    z: float | None
    synthetic_note: str | None


def workload_name(figure: str, shift: int | None) -> str:
    if FIGURES[figure][1] == "census":
        return "census_SYNTHETIC_wage_x_overtime"
    return f"zipf{FIGURES[figure][2]}_shift{shift}"


def figure_data(figure: str, config: Config, rep: int) -> FigureData:
    """Generate repetition ``rep`` of ``figure`` (deterministic)."""
    _, kind, z, shifts = FIGURES[figure]
    seed = DATA_SEEDS[figure] + rep
    if kind == "zipf":
        m = config.zipf_domain
        f = zipf_frequencies(config.zipf_n, m, z, seed, stream=0)
        wls = []
        for i, s in enumerate(shifts):
            # G of shift s: stream i+1 of the seed, shifted (wrap-around, see data.zipf);
            # for the first shift this is exactly data.zipf.shifted_pair_frequencies.
            g = zipf_frequencies(config.zipf_n, m, z, seed, shift=s, stream=i + 1)
            wls.append(Workload(workload_name(figure, s), s, g, join_size_from_frequencies(f, g)))
        return FigureData(figure, m, config.zipf_n, f, tuple(wls), z, None)
    m = CPS_DOMAIN
    wage, overtime = census_pair(config.census_n, seed)
    f = np.bincount(wage, minlength=m).astype(np.int64)
    g = np.bincount(overtime, minlength=m).astype(np.int64)
    wl = Workload(workload_name(figure, None), None, g, join_size_from_frequencies(f, g))
    return FigureData(figure, m, config.census_n, f, (wl,), None, SYNTHETIC_NOTE)


def sparse(freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct keys, counts) of a frequency vector: what the sketches are fed."""
    keys = np.flatnonzero(freq).astype(np.int64)
    return keys, freq[keys].astype(np.int64)

