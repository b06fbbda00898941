"""The streaming layer: windows, windowed joins, exactly-once checkpoints, exact windowed joins.

Modules, each with one job (the sketches never import this package):

* :mod:`.panes` — the window rules: panes, :class:`EventClock`, lateness, batches;
* :mod:`.windows` — :class:`WindowedSketch` (sliding / tumbling event-time window);
* :mod:`.joins` — :class:`WindowedJoin` (two streams, a window each, one clock);
* :mod:`.exact` — :class:`ExactWindowedJoin`, the exact reference;
* :mod:`.checkpoint` — :class:`StateFile`, :class:`ExactlyOnce` (batch ids,
  query identity, atomic commits), shared with ``spark_udaf.streaming``;
* :mod:`.sketch_stream` — :class:`SketchStream`, :class:`StreamTableJoin`.

Semantics, guarantees and binary layouts: ``docs/streaming.md``.
"""

from .checkpoint import (
    Commit,
    ExactlyOnce,
    ExactlyOnceError,
    StateFile,
    load_state,
    sketch_digest,
)
from .exact import ExactWindowedJoin
from .joins import WindowedJoin
from .panes import EventClock, LateElementError, pane_index
from .sketch_stream import SketchStream, StreamTableJoin
from .ingest import PaneBatch
from .windows import WindowedSketch

__all__ = [
    "Commit",
    "EventClock",
    "ExactWindowedJoin",
    "ExactlyOnce",
    "ExactlyOnceError",
    "LateElementError",
    "PaneBatch",
    "SketchStream",
    "StateFile",
    "StreamTableJoin",
    "WindowedJoin",
    "WindowedSketch",
    "load_state",
    "pane_index",
    "sketch_digest",
]
