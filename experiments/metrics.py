"""The paper's error metric and its space grid (EDBT 2004, section 5.1; docs/algorithms.md).

Error: ``|J - Ĵ| / min(J, Ĵ)``, symmetric in under- and overestimates; an
estimate ``Ĵ <= J / 10`` (including zero and negative ones) counts as error
``10`` — the paper's "sanity bound". Overestimates are not capped (the paper
caps only small estimates).

Space grid: widths ``s1 in {50, 100, ..., 250}`` and depths
``s2 in {11, 23, 35, 47, 59}``. The paper averages, "for a given amount of space",
over all pairs with ``s1 * s2`` equal to it — but those 25 products are all
distinct, so read literally every space has a single pair. We group pairs whose
products are within ``LEVEL_TOLERANCE`` (8%) of the smallest product of the group
into one *memory level* (13 levels for the full grid; e.g. 100x11 = 1100 and
50x23 = 1150) and average over the group; the level's memory is the mean product.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PAPER_WIDTHS",
    "PAPER_DEPTHS",
    "ERROR_CAP",
    "LEVEL_TOLERANCE",
    "MemoryLevel",
    "paper_error",
    "memory_levels",
]

PAPER_WIDTHS = (50, 100, 150, 200, 250)
PAPER_DEPTHS = (11, 23, 35, 47, 59)
ERROR_CAP = 10.0
LEVEL_TOLERANCE = 0.08


def paper_error(exact: float, estimate: float) -> float:
    """``|J - Ĵ| / min(J, Ĵ)``, or ``10`` when ``Ĵ <= J / 10``.

    >>> paper_error(100, 120), paper_error(100, 80), paper_error(100, 10), paper_error(100, -5)
    (0.2, 0.25, 10.0, 10.0)
    """
    j, e = float(exact), float(estimate)
    if j <= 0:
        raise ValueError(f"the metric needs a positive exact join size, got {exact}")
    if e <= j / 10.0:
        return ERROR_CAP
    return abs(j - e) / min(j, e)


@dataclass(frozen=True)
class MemoryLevel:
    """A group of ``(width, depth)`` shapes with (nearly) the same number of counters."""

    shapes: tuple[tuple[int, int], ...]

    @property
    def counters(self) -> float:
        """Mean ``width * depth`` over the shapes."""
        return sum(w * d for w, d in self.shapes) / len(self.shapes)

    @property
    def label(self) -> str:
        """``"100x11;50x23"`` (width x depth, i.e. s1 x s2)."""
        return ";".join(f"{w}x{d}" for w, d in self.shapes)


def memory_levels(widths=PAPER_WIDTHS, depths=PAPER_DEPTHS, tolerance=LEVEL_TOLERANCE):
    """Group all ``(width, depth)`` pairs into memory levels, smallest first.

    >>> [lv.label for lv in memory_levels((50, 100), (11, 23))]
    ['50x11', '100x11;50x23', '100x23']
    """
    pairs = sorted(((w, d) for w in widths for d in depths), key=lambda p: (p[0] * p[1], -p[0]))
    levels, group = [], []
    for w, d in pairs:
        if group and w * d > (1.0 + tolerance) * group[0][0] * group[0][1]:
            levels.append(MemoryLevel(tuple(group)))
            group = []
        group.append((w, d))
    if group:
        levels.append(MemoryLevel(tuple(group)))
    return levels
