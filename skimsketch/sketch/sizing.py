"""Shapes from targets: ``for_error(eps, delta)`` and ``for_bytes(n)``.

``shape_for_error``: the median of ``depth`` tables, each off by more than
``eps * sqrt(F2(f) F2(g))`` with probability at most ``q = 2 / (width eps^2)``
(Chebyshev with ``Var <= 2 F2(f) F2(g) / width``), fails with probability
``P[Bin(depth, q) >= ceil(depth/2)]``; among odd depths from 3 to 99 we return
the ``(width, depth)`` with the fewest counters that keeps this at most ``delta``
(at least 3 tables, so that no single table decides the answer).

``shape_for_bytes``: ``DEFAULT_DEPTH`` tables sharing the counter budget, counted
in ``COUNTER_BYTES``-byte counters. The default depth was chosen by measurement
at equal bytes over several workloads (see docs/defaults.md and
``benchmarks/accuracy_per_byte.py``): 5 tables were the most robust for the
skimmed sketch at 4-64 KB (depth 3 fails at 4 KB, where too few keys can be
told from collisions; 7 narrows the tables for no gain).

A budget is counted in ``COUNTER_BYTES``-byte counters whatever the counter
type, so the shape depends on the budget only: a SUM sketch (float counters,
8 bytes each, up to twice the budget) has the shape of the count sketch of the
same budget and joins it (docs/aggregates.md). ``budget_range`` is the range of
budgets whose shape exists (at least one counter, at most ``MAX_WIDTH`` a table).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..stats.bounds import chebyshev_k
from ..keys.hashing import MAX_DEPTH, MAX_WIDTH
from .state import INT_COUNTER_BYTES

__all__ = ["COUNTER_BYTES", "DEFAULT_DEPTH", "budget_range", "framed_budget", "shape_for_bytes", "shape_for_error"]

DEFAULT_DEPTH = 5
# Budgets are counted in 4-byte counters: integer counters are int32 by default (widened exactly
# when a value outgrows them, skimsketch.sketch.state), as the published sketches in docs/defaults.md.
COUNTER_BYTES = INT_COUNTER_BYTES


def shape_for_error(eps: float, delta: float = 0.05) -> tuple[int, int]:
    """(width, depth) with error <= eps * sqrt(F2(f) F2(g)) w.p. >= 1 - delta.

    >>> shape_for_error(0.1, 0.05)
    (1478, 3)
    >>> shape_for_error(0.05, 0.001)
    (7804, 9)
    """
    if not (isinstance(eps, (int, float)) and 0 < eps < 1):
        raise ValueError(f"eps must be in (0, 1), got {eps!r}")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    best = None
    for depth in range(3, 100, 2):
        q = 1.0 / chebyshev_k(depth, 1.0 - delta) ** 2
        width = math.ceil(2.0 / (q * eps * eps) - 1e-9)
        if best is None or width * depth < best[0] * best[1]:
            best = (width, depth)
    return best


def budget_range(frame: int, depth=None) -> tuple[int, int]:
    """``(lo, hi)``: the budgets whose shape exists behind a ``frame``-byte serialised frame, from one
    counter to ``MAX_WIDTH`` counters in each of ``depth`` (``DEFAULT_DEPTH``) tables.

    >>> budget_range(76)
    (80, 335544415)
    """
    d = DEFAULT_DEPTH if depth is None else depth
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= MAX_DEPTH:
        d = DEFAULT_DEPTH  # a bad depth is refused by the constructor, naming depth
    return frame + COUNTER_BYTES, frame + COUNTER_BYTES * int(d) * (MAX_WIDTH + 1) - 1


def framed_budget(nbytes: int, frame: int, depth=None) -> int:
    """Bytes left for counters once the serialised frame (header, checksum) is paid; a budget outside
    :func:`budget_range` is a ValueError naming nbytes, its range and the remedy."""
    lo, hi = budget_range(frame, depth)
    integral = not isinstance(nbytes, bool) and isinstance(nbytes, (int, np.integer))
    if not integral or not lo <= nbytes <= hi:
        d = DEFAULT_DEPTH if depth is None else depth
        remedy = "give a smaller budget" if integral and nbytes > hi else "give a larger budget"
        raise ValueError(
            f"nbytes must be an int in [{lo}, {hi}] (the {frame}-byte serialised frame and one counter, up to "
            f"{MAX_WIDTH} counters a table at depth {d}), got {nbytes!r}: {remedy}"
        )
    return int(nbytes) - frame


def shape_for_bytes(nbytes: int, depth: int | None = None, per_counter: int = COUNTER_BYTES) -> tuple[int, int]:
    """(width, depth) whose counters, ``per_counter`` bytes each, fit in ``nbytes`` bytes.

    >>> shape_for_bytes(65536)
    (3276, 5)
    >>> shape_for_bytes(65536, per_counter=8)
    (1638, 5)
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < per_counter:
        raise ValueError(f"nbytes must be an int >= {per_counter}, got {nbytes!r}")
    counters = nbytes // per_counter
    d = DEFAULT_DEPTH if depth is None else int(depth) if isinstance(depth, np.integer) else depth
    d = max(1, min(d, counters))
    return counters // d, d


#: The smallest byte budget the user-facing interfaces accept (the CLI's ``--nbytes``, the Spark API's
#: ``nbytes=``, SQL's ``nbytes``, and the JVM's SkimFunctions.MIN_NBYTES): below it a sketch's errors swamp
#: its estimates. The constructors (``for_bytes``) go lower, down to one counter per table.
MIN_NBYTES = 1024
__all__ += ["MIN_NBYTES", "check_nbytes"]


def check_nbytes(nbytes) -> int:
    """A user's byte budget as an int, at least :data:`MIN_NBYTES` (numpy integers accepted) -> ValueError
    with one message for every interface otherwise.

    >>> check_nbytes(np.int64(8192))
    8192
    >>> check_nbytes(100)
    Traceback (most recent call last):
    ...
    ValueError: nbytes must be at least 1024 (smaller sketches' errors swamp their estimates), got 100
    """
    if isinstance(nbytes, (bool, np.bool_)) or not isinstance(nbytes, numbers.Integral):
        raise ValueError(f"nbytes must be an integer number of bytes (at least {MIN_NBYTES}), got {nbytes!r}")
    if nbytes < MIN_NBYTES:
        raise ValueError(f"nbytes must be at least {MIN_NBYTES} (smaller sketches' errors swamp their estimates), "
                         f"got {int(nbytes)}")
    return int(nbytes)


#: The narrowest table the user-facing interfaces accept (the CLI's ``--width``, SQL's ``width``, and the
#: JVM's SkimFunctions.MIN_WIDTH); the constructors go lower.
MIN_WIDTH = 16
__all__ += ["MIN_WIDTH", "check_width"]


def check_width(width) -> int:
    """A user's explicit width, at least :data:`MIN_WIDTH` -> ValueError with one message for every interface.

    >>> check_width(8)
    Traceback (most recent call last):
    ...
    ValueError: width must be at least 16 (narrower tables' errors swamp their estimates), got 8
    """
    if width < MIN_WIDTH:
        raise ValueError(f"width must be at least {MIN_WIDTH} (narrower tables' errors swamp their estimates), "
                         f"got {width}")
    return width
