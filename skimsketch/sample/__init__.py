"""The join sample family: a bottom-k sample of key fingerprints with their totals (docs/sample.md).

:mod:`.join_sample` (the :class:`JoinSample`), :mod:`.selection` (the entries it keeps, tau), :mod:`.rank`
(fingerprints, ranks, partitions), :mod:`.codec`
(Rice and varint coding of its bytes), :mod:`.layout` (its extension of the format, kind 5),
:mod:`.estimator` (the join estimate), :mod:`.interval` (its interval: sure bounds and a Chernoff bound).

This package's names are the family's public API.
"""

from .join_sample import JoinSample, SampleMergeError, sample_max_entries

__all__ = ["JoinSample", "SampleMergeError", "sample_max_entries"]
