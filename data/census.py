"""Census-style *synthetic* data: weekly wage and weekly overtime pay, in cents.

**This is a synthetic model, not Census data.** The paper (Ganguly, Garofalakis,
Rastogi, EDBT 2004, section 5.1) joined two numeric attributes of the Current
Population Survey for September 2002 — weekly wage and weekly wage overtime,
159,434 records without missing values, domain size 288,416. That file cannot be
fetched here, so this module generates data with the features that make such a
join hard for sketches, with parameters *chosen by us* (not fitted to the CPS):

* most overtime values are exactly zero (a huge spike at one value);
* values are heaped on round amounts (whole dollars, $10, $50, $100) because
  people report rounded figures;
* a long right tail (lognormal amounts);
* a spike at the top code, because every amount above it is recorded as it.

Domain and top code. Values are integers in ``[0, CPS_DOMAIN)`` with
``CPS_DOMAIN = 288_416`` (the paper's domain size). The CPS weekly-earnings top
code is $2,884.61 = 288,461 cents — the paper's 288,416 looks like those digits
transposed. We keep the paper's domain size and put the top code at the last
domain value, ``TOP_CODE = 288_415`` cents ($2,884.15).

The mixture, per record (independently for the two attributes; see
:data:`WAGE` and :data:`OVERTIME` for the numbers):

1. with probability ``zero_share`` the amount is 0;
2. otherwise draw dollars ``x ~ LogNormal(ln(median_dollars), sigma)``;
3. pick a reporting unit from ``heaping`` (unit in cents -> probability) and round
   ``100 x`` to the nearest multiple of it (a non-zero amount that rounds to 0
   becomes one unit); unit 1 means exact cents (e.g. hourly rate x hours);
4. amounts ``>= TOP_CODE`` before or after rounding are recorded as
   ``TOP_CODE`` (top coding; rounding never moves an amount above the top code
   back below it).

Everything is deterministic for a seed: wage uses generator stream 0 and
overtime stream 1 of :func:`data.zipf.generator`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .zipf import generator

__all__ = [
    "CPS_RECORDS",
    "CPS_DOMAIN",
    "TOP_CODE",
    "SYNTHETIC_NOTE",
    "AmountModel",
    "WAGE",
    "OVERTIME",
    "census_attribute",
    "census_wage",
    "census_overtime",
    "census_pair",
]

CPS_RECORDS = 159_434
CPS_DOMAIN = 288_416
TOP_CODE = CPS_DOMAIN - 1

SYNTHETIC_NOTE = (
    "Census-style data is SYNTHETIC: a documented mixture (zeros, lognormal amounts "
    "heaped on round dollar values, top-coded) modelled on CPS weekly wage / overtime; "
    "it is not the CPS September 2002 file used in the paper."
)


@dataclass(frozen=True)
class AmountModel:
    """A zero-inflated, heaped, top-coded lognormal model of a money amount.

    ``heaping`` maps a reporting unit in cents to its probability (they sum to 1).
    """

    zero_share: float
    median_dollars: float
    sigma: float
    heaping: tuple[tuple[int, float], ...] = field(default=())

    def __post_init__(self) -> None:
        if not 0.0 <= self.zero_share <= 1.0:
            raise ValueError(f"zero_share must be in [0, 1], got {self.zero_share}")
        if self.median_dollars <= 0 or self.sigma < 0:
            raise ValueError("median_dollars must be > 0 and sigma >= 0")
        if not self.heaping:
            raise ValueError("heaping needs at least one (unit_cents, probability) pair")
        units = [u for u, _ in self.heaping]
        probs = [p for _, p in self.heaping]
        if any(int(u) < 1 for u in units) or any(p < 0 for p in probs):
            raise ValueError("heaping units must be >= 1 cent and probabilities >= 0")
        if abs(sum(probs) - 1.0) > 1e-9:
            raise ValueError(f"heaping probabilities must sum to 1, got {sum(probs)}")


#: Weekly wage: few zeros, median $620, a tail reaching the top code
#: (P(x > $2,884.15) = P(Z > ln(2884.15/620)/0.75) ~ 2.0%), 70% reported in whole
#: dollars of which many on $50 / $100 multiples.
WAGE = AmountModel(
    zero_share=0.02,
    median_dollars=620.0,
    sigma=0.75,
    heaping=((10_000, 0.20), (5_000, 0.15), (100, 0.35), (1, 0.30)),
)

#: Weekly overtime pay: 88% zero; the rest small amounts (median $90) heaped on
#: $50, $10 and whole dollars.
OVERTIME = AmountModel(
    zero_share=0.88,
    median_dollars=90.0,
    sigma=0.85,
    heaping=((5_000, 0.10), (1_000, 0.25), (100, 0.40), (1, 0.25)),
)


def census_attribute(model: AmountModel, n: int, seed: int = 0, *, stream: int = 0) -> np.ndarray:
    """``n`` int64 amounts in cents in ``[0, CPS_DOMAIN)`` drawn from ``model``."""
    if int(n) < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    n = int(n)
    rng = generator(seed, stream)
    zero = rng.random(n) < model.zero_share
    dollars = rng.lognormal(np.log(model.median_dollars), model.sigma, size=n)
    units = np.array([int(u) for u, _ in model.heaping], dtype=np.int64)
    probs = np.array([p for _, p in model.heaping], dtype=np.float64)
    unit = units[rng.choice(len(units), size=n, p=probs / probs.sum())]
    cents = np.minimum(dollars * 100.0, float(TOP_CODE) + 1.0)  # keep rint in int64 range
    amount = np.rint(cents / unit).astype(np.int64) * unit
    amount = np.where(amount <= 0, unit, amount)
    # Top coding applies to the true amount (before rounding) and to rounded ones.
    amount = np.minimum(amount, TOP_CODE)
    amount[cents >= TOP_CODE] = TOP_CODE
    amount[zero] = 0
    return amount


def census_wage(n: int = CPS_RECORDS, seed: int = 0) -> np.ndarray:
    """Synthetic weekly wage in cents (model :data:`WAGE`, generator stream 0)."""
    return census_attribute(WAGE, n, seed, stream=0)


def census_overtime(n: int = CPS_RECORDS, seed: int = 0) -> np.ndarray:
    """Synthetic weekly overtime pay in cents (model :data:`OVERTIME`, stream 1)."""
    return census_attribute(OVERTIME, n, seed, stream=1)


def census_pair(n: int = CPS_RECORDS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(wage, overtime)`` for ``n`` synthetic records — the paper's join inputs.

    See :data:`SYNTHETIC_NOTE`: this is a model of the CPS file, not the file.
    """
    return census_wage(n, seed), census_overtime(n, seed)
