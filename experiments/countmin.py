"""Count-Min (Apache DataSketches' ``count_min_sketch``) as a join-size estimator.

Count-Min keeps ``num_hashes x num_buckets`` non-negative counters,
``CM[r][h_r(v)] += w``. For two sketches with the same seed and shape, every
row's inner product ``sum_q CMf[r][q] * CMg[r][q]`` is ``f·g`` plus the
collision terms, which are ``>= 0`` for non-negative frequencies; the join
estimate is the minimum over rows (Cormode and Muthukrishnan's inner-product
estimate). It never underestimates on insert-only data.

The Python binding updates one item per call, so we feed it each distinct key
once with its count as the weight (``update(key, weight)``), which gives the
same counters as feeding the stream element by element (the sketch is linear)
at a tiny fraction of the cost.

The binding exposes no counters, so they are read from ``serialize()``. The
datasketches-cpp layout (``count/include/count_min_impl.hpp``, serial version 1,
little-endian) is::

    byte 0       preamble longs (2)        byte 8..11   num_buckets (uint32)
    byte 1       serial version (1)        byte 12      num_hashes (uint8)
    byte 2       family id (18)            byte 13..14  seed hash (uint16)
    byte 3       flags (bit 0: empty)      byte 15      unused
    byte 4..7    unused
    byte 16..23  total weight (double; absent when empty)
    byte 24..    num_hashes * num_buckets counters (double), row-major by hash

The parser is checked against ``get_estimate`` (the minimum of the item's cells)
in the tests.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["CM_FAMILY_ID", "build", "counters", "join_size", "state_bytes"]

CM_FAMILY_ID = 18
_HEADER = 16


def build(keys: np.ndarray, weights: np.ndarray, num_hashes: int, num_buckets: int, seed: int):
    """A ``datasketches.count_min_sketch`` of the multiset ``{key: weight}``."""
    from datasketches import count_min_sketch

    cm = count_min_sketch(int(num_hashes), int(num_buckets), int(seed))
    upd = cm.update
    for k, w in zip(np.asarray(keys, dtype=np.int64).tolist(), np.asarray(weights).tolist()):
        upd(k, float(w))
    return cm


def counters(cm) -> np.ndarray:
    """The ``(num_hashes, num_buckets)`` float64 counters, parsed from ``cm.serialize()``."""
    blob = cm.serialize()
    if len(blob) < _HEADER:
        raise ValueError(f"count-min image too short: {len(blob)} bytes")
    pre, ver, fam, flags = blob[0], blob[1], blob[2], blob[3]
    if (pre, ver, fam) != (2, 1, CM_FAMILY_ID):
        raise ValueError(f"not a count-min v1 image: preamble={pre}, version={ver}, family={fam}")
    (nbuckets,) = struct.unpack_from("<I", blob, 8)
    nhashes = blob[12]
    if flags & 1:
        return np.zeros((nhashes, nbuckets), dtype=np.float64)
    need = _HEADER + 8 * (1 + nhashes * nbuckets)
    if len(blob) != need:
        raise ValueError(f"count-min image has {len(blob)} bytes, expected {need}")
    return np.frombuffer(blob, dtype="<f8", offset=_HEADER + 8).reshape(nhashes, nbuckets).astype(np.float64)


def join_size(cm_f, cm_g) -> float:
    """``min_r sum_q CMf[r][q] * CMg[r][q]``; both sketches need the same seed and shape."""
    a, b = counters(cm_f), counters(cm_g)
    if a.shape != b.shape:
        raise ValueError(f"count-min shapes differ: {a.shape} vs {b.shape}")
    if cm_f.serialize()[13:15] != cm_g.serialize()[13:15]:
        raise ValueError("count-min seed hashes differ")
    return float(np.einsum("rq,rq->r", a, b).min())


COUNTER_BYTES = 4  # integer counts up to the stream length (4M < 2**31): what an int32 Count-Min keeps


def state_bytes(num_hashes: int, num_buckets: int) -> int:
    """Bytes of the counter array at 4 bytes per counter, comparable to the sketches' ``nbytes``.

    datasketches stores doubles, but the counters hold integer counts no larger than the
    stream length, which int32 holds exactly on every workload here; 4 bytes is what an
    integer Count-Min of this shape keeps (the library's own counters are int32 too).
    """
    return COUNTER_BYTES * int(num_hashes) * int(num_buckets)
