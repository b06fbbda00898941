"""The join sample family: a bottom-k sample of key fingerprints with their totals.

:mod:`.join_sample` (the :class:`JoinSample`), :mod:`.rank` (fingerprints, ranks, partitions), :mod:`.codec`
(Rice and varint coding of its bytes), :mod:`.estimator` (the join estimate and its interval),
:mod:`.partner` (one-side keys' partner means).
"""
