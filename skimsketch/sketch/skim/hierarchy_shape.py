"""Geometry of the unbounded skimmed sketch's prefix hierarchy (see :mod:`skimsketch.sketch.skim.hierarchy`).

These constants fix the hierarchy's layout; the binary format
(:mod:`skimsketch.format.header`) records and checks them.
"""

__all__ = ["LEVELS", "TOP_BITS", "FANOUT_BITS", "BOTTOM_BITS", "MIN_LG", "MAX_LG", "MIN_HIER_DEPTH", "MAX_HIER_DEPTH"]

LEVELS = 6
TOP_BITS = 12
FANOUT_BITS = 8
BOTTOM_BITS = 64 - TOP_BITS - FANOUT_BITS * (LEVELS - 1)  # the last step, on the main counters: 12 bits
MIN_LG, MAX_LG = 4, 24  # hierarchy widths 16 .. 2**24
MAX_HIER_DEPTH = 32
MIN_HIER_DEPTH = 2  # one table per level cannot tell a heavy prefix from chance at fan-out 256
