"""The compiled kernels: the C extension ``skimsketch.kernels._ckernels`` (the ``*.c`` files and ``ckernels.h``
beside this file, built by the package's setuptools build) behind :class:`CompiledKernels`, with the same bytes
as the reference. :func:`compiled_problem` says why they cannot serve: not built, or built from another version
of the C sources (their SHA-1, :func:`source_sha`, is compiled in)."""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path

import numpy as np

from .arith import CHUNK, as_counter_delta
from .reference import Kernels

__all__ = ["CompiledKernels", "compiled_problem", "extension", "extension_built", "source_sha"]


def _load_extension():
    """``skimsketch.kernels._ckernels``, or None when it was not built (no C compiler at install time:
    the numpy reference serves). Loaded by name because it is optional: an ``import``
    statement cannot be."""
    try:
        return importlib.import_module(f"{__package__}._ckernels")
    except ImportError:
        return None


_ckernels = _load_extension()


class CompiledKernels(Kernels):
    """The C extension ``skimsketch.kernels._ckernels``: the reference's loops, one pass per batch."""

    name = "compiled"

    def hash_delta(self, family, keys, weights, width, depth, float_counters):
        return self._delta(family, keys, weights, width, depth, float_counters, (0, 0))

    @staticmethod
    def _delta(family, keys, weights, width, depth, float_counters, virtual):
        """hash_delta, with the keys first mapped to virtual ids and signs when ``virtual`` = (salt, lg > 0)."""
        n_words = (depth + 1) // 2
        t0, t1, t2 = family.tables(n_words)
        a, b = family.fold_constants
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        signed = virtual[1] > 0  # virtual signs make unit weights a weight column (float sums on float counters)
        if (weights is None and not (signed and float_counters)) or \
                (weights is not None and weights.dtype.kind != "f" and not float_counters):
            out = np.zeros(depth * width, dtype=np.int64)
            w = None if weights is None else np.ascontiguousarray(weights, dtype=np.int64)
            _ckernels.hash_counts(keys, w, t0, t1, t2, n_words, a, b, width, depth, out, *virtual)
            return out.reshape(depth, width)
        # float counters: the reference's float64 sums, in its order (chunks of CHUNK keys)
        w = np.ones(len(keys)) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        acc = np.zeros(2 * depth * width)
        scratch = np.zeros_like(acc)
        cells = np.empty(CHUNK * depth, dtype=np.int64)
        _ckernels.hash_float_cells(keys, w, t0, t1, t2, n_words, a, b, width, depth, CHUNK, acc, scratch, cells,
                                   *virtual)
        return as_counter_delta((acc[0::2] - acc[1::2]).reshape(depth, width), float_counters)

    def virtual_hash_delta(self, family, keys, weights, salt, lg, width, depth, float_counters):
        if not 1 <= lg <= 62:
            raise ValueError(f"lg={lg} is outside [1, 62]")
        return self._delta(family, keys, weights, width, depth, float_counters, (salt, lg))

    def virtual_counts(self, keys, salt, lg):
        if not 1 <= lg <= 62:
            raise ValueError(f"lg={lg} is outside [1, 62]")
        net = np.zeros(1 << lg, dtype=np.int64)
        _ckernels.virtual_counts(np.ascontiguousarray(keys, dtype=np.int64), salt, lg, net)
        present = np.flatnonzero(net)
        return present.astype(np.int64), net[present]

    def fingerprints(self, offsets, data):
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        data = np.ascontiguousarray(data, dtype=np.uint8)
        out = np.empty(max(len(offsets) - 1, 0), dtype=np.int64)
        if len(out):
            _ckernels.fingerprints(offsets, data if len(data) else np.zeros(1, np.uint8), out)
        return out

    def object_fingerprints(self, arr):
        arr = np.ascontiguousarray(arr, dtype=object)
        out = np.empty(len(arr), dtype=np.int64)
        null = np.empty(len(arr), dtype=np.uint8)
        if not _ckernels.object_fingerprints(arr, _extra_nulls(), out, null):
            return None
        null = null.view(bool)
        return out, (null if null.any() else None)


    def hot_candidates(self, order, starts, hot, exclude, need):
        d, n = order.shape
        out = np.empty(n, dtype=np.int64)
        k = _ckernels.hot_candidates(np.ascontiguousarray(order, dtype=np.int64),
                                     np.ascontiguousarray(starts, dtype=np.int64), np.ascontiguousarray(hot, dtype=bool),
                                     np.ascontiguousarray(exclude, dtype=bool), d, hot.shape[1], n, need,
                                     np.zeros(n, dtype=np.uint8), out)
        return np.sort(out[:k])

    def estimates(self, residual, buckets, signs, idx):
        d, n = buckets.shape
        out = np.empty((d, len(idx)))
        res = np.ascontiguousarray(residual, dtype=np.float64)
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        b, s = buckets.astype(np.int64, copy=False), signs.astype(np.float64, copy=False)
        if b.flags.f_contiguous and s.flags.f_contiguous and not (b.flags.c_contiguous and s.flags.c_contiguous):
            _ckernels.gather_estimates(res, b.T, s.T, idx, d, res.shape[1], n, 1, d, out)  # key-major buffers
        else:
            _ckernels.gather_estimates(res, np.ascontiguousarray(b), np.ascontiguousarray(s), idx, d, res.shape[1], n,
                                       n, 1, out)
        return out


def _extra_nulls() -> tuple:
    """``pandas.NA`` and ``pandas.NaT`` when pandas is loaded (an object array can hold them only then)."""
    pd = sys.modules.get("pandas")
    return (pd.NA, pd.NaT) if pd is not None and hasattr(pd, "NA") else ()


def extension():
    """The C extension module (None when it was not built); :func:`skimsketch.kernels.active_extension` says
    whether it is the active implementation."""
    return _ckernels


def source_sha(paths) -> str:
    """SHA-1 over the kernels' C sources in name order (each file's name, a NUL, its bytes, a NUL); setup.py
    compiles the same digest in as ``SOURCE_SHA``."""
    h = hashlib.sha1()
    for path in sorted(paths, key=lambda p: p.name):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def compiled_problem() -> str | None:
    """Why the compiled kernels cannot serve (None: they can)."""
    if _ckernels is None:
        return "skimsketch.kernels._ckernels is not built (no C compiler when the package was installed)"
    here = Path(__file__).parent
    sources = [*here.glob("*.c"), *here.glob("*.h")]  # none in an installed wheel: nothing to compare
    if sources and source_sha(sources) != _ckernels.SOURCE_SHA:
        return ("skimsketch.kernels._ckernels was built from another version of its C sources "
                "(skimsketch/kernels/*.c, *.h): reinstall the package (pip install -e .) to rebuild it")
    return None


def extension_built() -> bool:
    """Whether the extension imports (current or not)."""
    return _ckernels is not None
