"""The linear family: sketches whose counters add (AGMS, hash, skimmed, chain-join pairs).

:mod:`.base` (the :class:`Sketch` every kind extends), :mod:`.state` (the counters), :mod:`.agms`,
:mod:`.hash_sketch`, :mod:`.skim` (the skimmed sketch and its dense part), :mod:`.multiway` (pairs),
:mod:`.sizing` (shape from a byte budget or an error target), :mod:`.aggregates` (SUM and AVG over a join).
"""
