"""The linear family: sketches whose counters add (AGMS, hash, skimmed, chain-join pairs).

:mod:`.base` (the :class:`Sketch` every kind extends), :mod:`.state` (the counters), :mod:`.agms`,
:mod:`.hash_sketch`, :mod:`.skim` (the skimmed sketch and its dense part), :mod:`.multiway` (pairs),
:mod:`.layout` (their extensions of the format), :mod:`.exact_mode` (exact entries below a capacity),
:mod:`.sizing` (shape from a byte budget or an error target), :mod:`.aggregates` (SUM and AVG over a join).

This package's names are the family's public API: the only names another family (the stream) may import.
"""

from .aggregates import join_avg, join_sum
from .agms import AGMSSketch
from .base import Sketch
from .hash_sketch import HashSketch
from .multiway import PairSketch, chain_join_size, exact_chain_join_size
from .skim.skimmed import SkimmedSketch

__all__ = ["AGMSSketch", "HashSketch", "PairSketch", "Sketch", "SkimmedSketch", "chain_join_size",
           "exact_chain_join_size", "join_avg", "join_sum"]
