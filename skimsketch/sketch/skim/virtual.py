"""The virtual key domain: every canonical key as a signed id in ``[0, 2**lg)``.

Skimming needs candidates to scan. Keys of any type -- strings, bytes,
64-bit ids spread over the whole range -- are mapped to a *virtual id* in a
domain small enough to scan, with an independent random sign::

    y     = mix(key XOR salt)          (the seed's splitmix64 bijection, salt = T_0[0][2**22],
                                        the same as the prefix hierarchy's: skimsketch/sketch/skim/hierarchy.py)
    id    = y >> (64 - lg)             (top lg bits)
    sigma = +1 if y & 1 == 0 else -1   (bottom bit: independent of the id)

A sketch in the virtual layout is the hash sketch of the signed virtual
frequencies ``F(v) = sum over keys k with id(k) = v of sigma(k) f(k)``. For two
such sketches ``F.G = f.g + sum_{k != l, id(k) = id(l)} sigma(k) sigma(l) f(k) g(l)``:
unbiased (the signs are independent of everything else), with variance at most
``(F2(f) F2(g) + (f.g)^2) / 2**lg`` -- the variance of a hash-sketch table
``2**lg / width`` times wider than the counters, so far below their own error.
SKIMDENSE then scans ``[0, 2**lg)`` exactly as it scans a bounded domain.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...keys.hashing import family, signed_virtual_ids
from .hierarchy import HIER_WORD_BASE

__all__ = ["DEFAULT_VIRTUAL_LG", "MAX_VIRTUAL_LG", "MIN_VIRTUAL_LG", "virtual_salt", "virtual_ids"]

MIN_VIRTUAL_LG = 10
MAX_VIRTUAL_LG = 22  # the largest domain a query scans (skimdense.MAX_SCAN_DOMAIN)
DEFAULT_VIRTUAL_LG = 20  # measured against 12-22 (docs/defaults.md, "Virtual domain")


@lru_cache(maxsize=64)
def virtual_salt(seed: int) -> int:
    """The seed's salt ``T_0[0][2**22]`` (a uint64 as a Python int)."""
    return int(family(seed).table_entries(0, np.array([0]), np.array([HIER_WORD_BASE]))[0, 0])


def virtual_ids(keys: np.ndarray, seed: int, lg: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids int64 in ``[0, 2**lg)``, signs int64 of +-1) of canonical int64 keys
    (:func:`skimsketch.keys.hashing.signed_virtual_ids` with the seed's salt).

    >>> ids, signs = virtual_ids(np.array([0, 1, -5], dtype=np.int64), seed=7, lg=20)
    >>> bool(((ids >= 0) & (ids < 2**20)).all()), sorted(set(signs.tolist())) <= [-1, 1]
    (True, True)
    """
    return signed_virtual_ids(keys, virtual_salt(seed), lg)
