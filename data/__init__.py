"""Data generators for skimsketch's experiments (no dependency on the core).

* :mod:`data.zipf` — Zipf and right-shifted Zipf streams (the paper's Figure 5).
* :mod:`data.census` — a *synthetic* Census-style model of CPS weekly wage and
  weekly overtime pay (the real September 2002 file is not reachable offline).
* :mod:`data.dram` — the six attribute distributions of the DRAM thesis' Tab. 8.

Every generator is deterministic for a seed (numpy PCG64, see
:func:`data.zipf.generator`). See ``data/README.md``.
"""

from .census import CPS_DOMAIN, CPS_RECORDS, SYNTHETIC_NOTE, TOP_CODE, census_pair
from .dram import dram_attribute, dram_relation
from .zipf import (
    generator,
    join_size_from_frequencies,
    shifted_pair,
    shifted_pair_frequencies,
    zipf_frequencies,
    zipf_probabilities,
    zipf_stream,
)

__all__ = [
    "CPS_DOMAIN",
    "CPS_RECORDS",
    "SYNTHETIC_NOTE",
    "TOP_CODE",
    "census_pair",
    "dram_attribute",
    "dram_relation",
    "generator",
    "join_size_from_frequencies",
    "shifted_pair",
    "shifted_pair_frequencies",
    "zipf_frequencies",
    "zipf_probabilities",
    "zipf_stream",
]
