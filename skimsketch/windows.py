"""Compatibility alias: the windows now live in :mod:`skimsketch.stream` (``windows``, ``joins``, ``panes``)."""

from .stream.joins import WindowedJoin
from .stream.panes import EventClock, LateElementError, pane_index
from .stream.windows import WindowedSketch

__all__ = ["EventClock", "LateElementError", "WindowedJoin", "WindowedSketch", "pane_index"]
