"""Numeric kernels shared by several sketches: cell accumulation, string fingerprints, exact int64 sums.

Every sketch's update is "add each key's weight, times a sign, to one cell per
table"; :func:`accumulate_cells` does that for any cell layout. Integer state
is exact: :func:`checked_add` raises :class:`CounterOverflowError` instead of
wrapping (:class:`skimsketch.sketch.state.LinearState` applies it all or nothing), and
:func:`exact_int_sum` sums int64 weights without wrapping.

The hot loops sit behind one small interface, :class:`Kernels` (docs/kernels.md):
:func:`hash_delta` (a hash/skimmed sketch's counter delta), :func:`fingerprints`
(MurmurHash3 of Arrow-style string buffers) and :func:`object_fingerprints` (an
object array of ``str``/``bytes``) for updates; :func:`hot_candidates` (the skim's
candidate scan) and :func:`estimates` (the candidates' table estimates) for queries. :class:`NumpyKernels` is the written-down
reference and the fallback; :class:`CompiledKernels` runs the C extension
``skimsketch.kernels._ckernels`` built by the package's setuptools build, with the same
bytes (tests/core/kernels/test_kernels.py). :func:`backend` is the active one: compiled
when the extension is importable and current, unless the environment variable
``SKIMSKETCH_KERNELS=numpy`` asks for the reference; :func:`use` switches it.

This package's modules: :mod:`.arith` (exact arithmetic, cell accumulation), :mod:`.reference` (the
interface and the numpy reference), :mod:`.compiled` (the C extension: ``_ckernels.c``, ``ck_*.c``,
``ckernels.h``); this module chooses the backend and exports the names every family uses.
"""

from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np

from .arith import (FLOAT_EXACT, I64, accumulate_cells, as_counter_delta, checked_add, exact_int_sum, fits_int32,
                    key_counts, scale_batch, weight_total)
from .compiled import CompiledKernels, compiled_problem, extension, extension_built
from .reference import Kernels, NumpyKernels, bucket_members

__all__ = ["FLOAT_EXACT", "I64", "CompiledKernels", "Kernels", "NumpyKernels", "accumulate_cells",
           "as_counter_delta", "available", "backend", "checked_add", "exact_int_sum", "fingerprints",
           "fits_int32", "hash_delta", "active_extension", "key_counts", "object_fingerprints", "scale_batch", "use", "weight_total",
           "bucket_members", "estimates", "hot_candidates", "virtual_counts", "virtual_hash_delta"]

_PROBLEM = compiled_problem()
_REFERENCE = NumpyKernels()
_BACKENDS = {"numpy": _REFERENCE, "compiled": CompiledKernels() if _PROBLEM is None else None}


def _initial() -> Kernels:
    want = os.environ.get("SKIMSKETCH_KERNELS", "auto")
    if want not in ("auto", "numpy", "compiled"):
        raise ValueError(f"SKIMSKETCH_KERNELS={want!r}: use 'auto', 'compiled' or 'numpy'")
    if want == "numpy":
        return _REFERENCE
    if _PROBLEM is not None:
        if want == "compiled" or extension_built():  # asked for, or built but stale: say so
            warnings.warn(f"using the numpy reference kernels: {_PROBLEM}", RuntimeWarning, stacklevel=2)
        return _REFERENCE
    return _BACKENDS["compiled"]


_active = [_initial()]


def available() -> dict:
    """``{name: why not, or None}`` for the two implementations."""
    return {"numpy": None, "compiled": _PROBLEM}


def backend() -> Kernels:
    """The active implementation."""
    return _active[0]


def active_extension():
    """The compiled extension when the compiled kernels are active, else None (loops kept outside this interface,
    e.g. :mod:`skimsketch.kernels.heavy`, call it directly and fall back to their reference)."""
    return extension() if _active[0] is _BACKENDS["compiled"] else None


@contextlib.contextmanager
def use(name: str):
    """Run a block with the ``"numpy"`` or ``"compiled"`` kernels (tests, benchmarks)."""
    if name not in _BACKENDS:
        raise ValueError(f"kernels {name!r}: use 'numpy' or 'compiled'")
    if _BACKENDS[name] is None:
        raise RuntimeError(f"the compiled kernels are unavailable: {_PROBLEM}")
    before, _active[0] = _active[0], _BACKENDS[name]
    try:
        yield _active[0]
    finally:
        _active[0] = before


def hash_delta(family, keys, weights, width: int, depth: int, float_counters: bool) -> np.ndarray:
    """:meth:`Kernels.hash_delta` of the active kernels."""
    return _active[0].hash_delta(family, keys, weights, width, depth, float_counters)


def fingerprints(offsets, data) -> np.ndarray:
    """:meth:`Kernels.fingerprints` of the active kernels.

    >>> fingerprints(np.array([0, 4]), np.frombuffer(b"skim", np.uint8)).tolist()
    [815987628662419427]
    """
    return _active[0].fingerprints(offsets, data)


def object_fingerprints(arr: np.ndarray):
    """:meth:`Kernels.object_fingerprints` of the active kernels."""
    return _active[0].object_fingerprints(arr)


def hot_candidates(order, starts, hot, exclude, need: int) -> np.ndarray:
    """:meth:`Kernels.hot_candidates` of the active kernels."""
    return _active[0].hot_candidates(order, starts, hot, exclude, need)


def estimates(residual, buckets, signs, idx) -> np.ndarray:
    """:meth:`Kernels.estimates` of the active kernels."""
    return _active[0].estimates(residual, buckets, signs, idx)


def virtual_hash_delta(family, keys, weights, salt: int, lg: int, width: int, depth: int,
                       float_counters: bool) -> np.ndarray:
    """:meth:`Kernels.virtual_hash_delta` of the active kernels (the virtual-id map fused into the update)."""
    return _active[0].virtual_hash_delta(family, keys, weights, salt, lg, width, depth, float_counters)


def virtual_counts(keys, salt: int, lg: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Kernels.virtual_counts` of the active kernels."""
    return _active[0].virtual_counts(keys, salt, lg)
