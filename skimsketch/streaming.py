"""Compatibility alias: stream maintenance now lives in :mod:`skimsketch.stream`."""

from .stream.checkpoint import StateFile
from .stream.sketch_stream import SketchStream, StreamTableJoin

__all__ = ["SketchStream", "StateFile", "StreamTableJoin"]
