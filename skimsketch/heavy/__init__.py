"""The append-only family: :class:`HeavyKeySketch` (heavy keys exactly, the rest in a Count-Sketch).

Modules: :mod:`.table` (the table of heavy keys and its admission rule), :mod:`.residual` (the
Count-Sketch of the rest), :mod:`.estimator` (the join estimate and its interval), :mod:`.codec`
(kind 6 of the sketch format), :mod:`.sketch` (the public class). ``docs/heavy.md`` has the design,
the interval's argument, the byte layout and the measurements.
"""

from .sketch import HeavyKeySketch, shape_for_bytes

__all__ = ["HeavyKeySketch", "shape_for_bytes"]
