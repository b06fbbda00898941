"""skimsketch: join-size and join-aggregate estimation from small mergeable sketches.

>>> import skimsketch as ss
>>> a = ss.SkimmedSketch(width=128, depth=5, seed=7, domain=1000).update([1, 2, 2, 3])
>>> b = ss.SkimmedSketch(width=128, depth=5, seed=7, domain=1000).update([2, 3, 3])
>>> round(float(ss.join_size(a, b))), ss.exact_join_size([1, 2, 2, 3], [2, 3, 3])
(4, 4)
"""

from .errors import (
    CorruptSketchError,
    CounterOverflowError,
    IncompatibleSketchError,
    KeyDomainError,
    KeyTypeError,
    SketchError,
)
from .estimate import Estimate
from .exact import exact_frequencies, exact_join_size, exact_self_join_size
from .format.serde import from_bytes
from .keys.canonical import CanonicalBatch, canonical_key, canonicalize, fingerprint64
from .sample import JoinSample, SampleMergeError, sample_max_entries
from .heavy.sketch import HeavyKeySketch
from .sketch import (
    AGMSSketch, HashSketch, PairSketch, Sketch, SkimmedSketch, chain_join_size, exact_chain_join_size, join_avg,
    join_sum,
)
from .stream import (
    EventClock, ExactWindowedJoin, LateElementError, SketchStream, StateFile, StreamTableJoin, WindowedJoin,
    WindowedSketch, pane_index,
)

__all__ = [
    "WindowedSketch", "WindowedJoin", "EventClock", "LateElementError", "pane_index", "ExactWindowedJoin",
    "SketchStream", "StateFile", "StreamTableJoin",
    "AGMSSketch", "HashSketch", "SkimmedSketch", "JoinSample", "SampleMergeError", "sample_max_entries",
    "HeavyKeySketch", "Sketch", "Estimate",
    "join_size", "from_bytes", "union",
    "exact_join_size", "exact_self_join_size", "exact_frequencies",
    "canonicalize", "canonical_key", "fingerprint64", "CanonicalBatch",
    "SketchError", "IncompatibleSketchError", "CorruptSketchError", "CounterOverflowError",
    "KeyTypeError", "KeyDomainError",
    "join_sum", "join_avg", "PairSketch", "chain_join_size", "exact_chain_join_size",
]
__version__ = "0.1.0"


def join_size(a, b, confidence: float = 0.95) -> Estimate:
    """Estimated join size of the streams summarised by sketches ``a`` and ``b``."""
    return a.join_size(b, confidence)


def union(*sketches):
    """A new sketch of the union of the inputs (all must be compatible)."""
    if not sketches:
        raise ValueError("union() needs at least one sketch")
    out = sketches[0].copy()
    for s in sketches[1:]:
        out.merge(s)
    return out
