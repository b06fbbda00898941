"""Compatibility alias: the exact windowed join now lives in :mod:`skimsketch.stream.exact`."""

from .stream.exact import ExactWindowedJoin

__all__ = ["ExactWindowedJoin"]
