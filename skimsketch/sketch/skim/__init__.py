"""The skimmed sketch: a hash sketch whose dense keys are found and counted apart.

:mod:`.skimmed` (the :class:`SkimmedSketch`: parameters, state, update, bytes), :mod:`.search` (the skim,
heavy hitters, reports), :mod:`.estimator` (ESTSKIMJOINSIZE and its interval), :mod:`.skimdense` (peeling
the dense keys off the counters), :mod:`.candidates` (the keys a skim tests), :mod:`.hierarchy` and
:mod:`.hierarchy_shape` (the prefix search of unbounded keys), :mod:`.virtual` (the virtual-id layout).
"""
