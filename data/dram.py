"""Synthetic relations of the DRAM thesis (Kruse, Univ. Rostock 1994, Tab. 7 and 8).

The thesis ("Entwurf und Implementierung einer relationalen Algebramaschine",
section 7) measured its join operators on six relations R1..R6 whose tuples have
six integer attributes (24 bytes per tuple: R1 has 17 tuples and 408 bytes), each
with its own value distribution. Tab. 8 gives, per attribute, only the
distribution's name and its range; the missing details are our choices, listed
here:

=========  ==============================  ===========  ============================
attribute  Tab. 8 (distribution, range)    generated    our choices
=========  ==============================  ===========  ============================
PK         discrete uniform, 0..card(R)-1  permutation  a key: every value once, in
                                                        seeded random order
A1         negative exponential, 0..inf,   rint(Exp)    mean 100, rounded to the
           mean 100                                     nearest integer
A2         Poisson, 0..inf, mean 100       Poisson      lambda = 100
A3         discrete uniform, 10..1000      uniform      both ends included
A4         normal, 4090..5010              trunc. N     mean 4550 (mid-range), sd
                                                        (5010-4090)/6 = 153.33,
                                                        rounded, redrawn until in range
A5         normal, 3000..7000              trunc. N     mean 5000, sd 4000/6 = 666.67,
                                                        rounded, redrawn until in range
=========  ==============================  ===========  ============================

Honest caveat: the thesis' Tab. 9 reports 89,171 result tuples for the self-join
``R4.A4 = R4'.A4`` (1,007 tuples), i.e. sum_v p(v)^2 ~ 0.088 — as if A4 took
only about a dozen distinct values. A normal over 4090..5010 with the sd above
gives a self-join of about 2,850 for 1,007 tuples (1,007 of them each tuple
matching itself; seeds 0-2 give 2,805 / 2,847 / 2,877); the thesis does not give the
sd or the discretisation, so we do not pretend to reproduce that number.
``R4.A5 = R4'.PK`` giving 0 tuples is consistent with this model (A5 >= 3000 >
max PK = 1006).

Each attribute uses its own generator stream of :func:`data.zipf.generator`
(PK 0, A1 1, ..., A5 5), so attributes are independent and a relation is
deterministic for a seed.
"""

from __future__ import annotations

import numpy as np

from .zipf import generator

__all__ = [
    "ATTRIBUTES",
    "CARDINALITIES",
    "ATTRIBUTE_RANGES",
    "dram_attribute",
    "dram_relation",
]

#: Tab. 7: tuple counts of the thesis' relations.
CARDINALITIES = {"R1": 17, "R2": 57, "R3": 507, "R4": 1007, "R5": 5007, "R6": 10007}

#: Tab. 8 attribute names, in order (their generator stream is their index).
ATTRIBUTES = ("PK", "A1", "A2", "A3", "A4", "A5")

#: Closed value ranges that hold for every generated value (None = unbounded above).
ATTRIBUTE_RANGES = {
    "PK": (0, None),  # upper end is card(R) - 1
    "A1": (0, None),
    "A2": (0, None),
    "A3": (10, 1000),
    "A4": (4090, 5010),
    "A5": (3000, 7000),
}

_NORMAL = {"A4": (4090, 5010), "A5": (3000, 7000)}


def _truncated_normal(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    mean = (lo + hi) / 2.0
    sd = (hi - lo) / 6.0
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:  # ~0.3% rejected per round (3-sigma range)
        draw = np.rint(rng.normal(mean, sd, size=max(16, 2 * (n - filled)))).astype(np.int64)
        draw = draw[(draw >= lo) & (draw <= hi)][: n - filled]
        out[filled : filled + len(draw)] = draw
        filled += len(draw)
    return out


def dram_attribute(name: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` int64 values of Tab. 8 attribute ``name`` (``"PK"``, ``"A1"`` .. ``"A5"``).

    >>> sorted(dram_attribute("PK", 5, seed=1).tolist())
    [0, 1, 2, 3, 4]
    """
    if name not in ATTRIBUTES:
        raise ValueError(f"unknown attribute {name!r}; expected one of {ATTRIBUTES}")
    if int(n) < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    n = int(n)
    rng = generator(seed, ATTRIBUTES.index(name))
    if name == "PK":
        return rng.permutation(n).astype(np.int64)
    if name == "A1":
        return np.rint(rng.exponential(100.0, size=n)).astype(np.int64)
    if name == "A2":
        return rng.poisson(100.0, size=n).astype(np.int64)
    if name == "A3":
        return rng.integers(10, 1000, size=n, endpoint=True, dtype=np.int64)
    lo, hi = _NORMAL[name]
    return _truncated_normal(rng, n, lo, hi)


def dram_relation(card: int | str, seed: int = 0) -> dict[str, np.ndarray]:
    """A relation with columns PK, A1..A5; ``card`` is a tuple count or ``"R1"``..``"R6"``.

    >>> r = dram_relation("R1", seed=0)
    >>> list(r), len(r["PK"])
    (['PK', 'A1', 'A2', 'A3', 'A4', 'A5'], 17)
    """
    if isinstance(card, str):
        if card not in CARDINALITIES:
            raise ValueError(f"unknown relation {card!r}; expected one of {list(CARDINALITIES)}")
        card = CARDINALITIES[card]
    return {name: dram_attribute(name, card, seed) for name in ATTRIBUTES}
