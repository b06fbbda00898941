"""Kind 6, the heavy-key sketch, in the sketch format (``docs/format.md``, ``docs/heavy.md``: every byte).

The common 64-byte header (:mod:`skimsketch.format`): kind 6, width ``W`` and depth ``d`` of the
residual Count-Sketch, the seed, domain 0, kind parameter 0.0, flags bit0 (empty) and bit2 (float
counts) only, counter type 1 (int64), 3 (int32: every residual counter and table count fits) or 2
(float64), the key domain, the total and null weights. The main counters are the residual's
``d x W``, row-major. The extension (offsets relative to it)::

    offset     size       field
    0          4          magic b"HEVY"
    4          1          layout version (1)
    5          1          slots per bucket (8)
    6          1          F: spilled-filter bits per bucket (1 <= F <= 64)
    7          1          reserved, zero
    8          4          buckets B (u32, 2 <= B <= 2**24)
    12         4          reserved, zero
    16         8          draws: admission draws so far (u64)
    24         64 B       slot keys (i64), bucket-major (slot j of bucket b at index 8 b + j)
    24+64B     8 s B      slot counts, counter type (0: empty slot, whose key is 0)
    24+64B+8sB B          clean bits: byte b, bit j = slot 8 b + j's key has no residual
    ...        ceil(FB/8) the spilled filter, S = F B bits: byte i >> 3, bit i & 7 = bit i; bits past S zero

:func:`decode` rejects everything else with :class:`CorruptSketchError` (sizes are checked before
anything is allocated).
"""

from __future__ import annotations

import struct

import numpy as np

from ..format import header as fmt
from ..errors import CorruptSketchError
from ..kernels import fits_int32
from .table import SLOTS, HeavyTable, bucket_pairs

__all__ = ["HEAVY_KIND", "EXT_HEAD", "MAX_BUCKETS", "MAX_DEPTH", "MAX_FILTER", "decode", "encode", "serialised_size"]

HEAVY_KIND = 6
MAGIC = b"HEVY"
LAYOUT = 1
_HEAD = struct.Struct("<4sBBBxIIQ")  # 24 bytes (x: the reserved byte 7, written and checked zero)
EXT_HEAD = _HEAD.size
MAX_BUCKETS = 1 << 24
MAX_DEPTH = 64
MAX_FILTER = 64


def serialised_size(buckets: int, width: int, depth: int, counter_bytes: int, filter_per_bucket: int) -> int:
    """Bytes of a sketch of this shape whose counters are ``counter_bytes`` wide."""
    return fmt.FRAME_BYTES + EXT_HEAD + buckets * SLOTS * (8 + counter_bytes) + buckets \
        + (buckets * filter_per_bucket + 7) // 8 + counter_bytes * depth * width


def encode(head: fmt.Header, table: HeavyTable, residual: np.ndarray) -> bytes:
    """The bytes of a heavy-key sketch (``head.kind == 6``); counter width chosen canonically."""
    if table.float_counts:
        cw = 8
    else:
        cw = 4 if fits_int32(residual) and fits_int32(table.counts) else 8
    dt = fmt.COUNTER_TYPES[fmt.counter_type(table.float_counts, cw)]
    ext = b"".join([
        _HEAD.pack(MAGIC, LAYOUT, SLOTS, table.filter_bits // table.buckets, table.buckets, 0, table.draws),
        np.ascontiguousarray(table.keys, dtype="<i8").tobytes(),
        np.ascontiguousarray(table.counts, dtype=dt).tobytes(),
        table.clean.tobytes(), table.spilled.tobytes()])
    head.counter_width = cw
    return fmt.encode(head, residual, ext, cw)


def decode(head: fmt.Header, residual: np.ndarray, ext: bytes, seed: int) -> HeavyTable:
    """Validate a kind-6 blob's header, extension and counters -> its table (module docstring)."""
    if head.version != fmt.VERSION or head.domain is not None or struct.pack("<d", head.param) != bytes(8) \
            or head.exact or head.nonnegative:
        raise CorruptSketchError("a heavy-key sketch is format version 4 with no domain, kind parameter, exact-mode "
                                 "or sign flag")
    if head.depth > MAX_DEPTH:
        raise CorruptSketchError(f"heavy-key sketch depth {head.depth} above {MAX_DEPTH}")
    if len(ext) < EXT_HEAD:
        raise CorruptSketchError(f"heavy-key extension truncated: {len(ext)} bytes, need at least {EXT_HEAD}")
    magic, layout, slots, per_bucket, buckets, reserved, draws = _HEAD.unpack_from(ext, 0)
    if magic != MAGIC:
        raise CorruptSketchError(f"bad heavy-key extension magic {magic!r}")
    if layout != LAYOUT or slots != SLOTS:
        raise CorruptSketchError(f"unknown heavy-key layout {layout} with {slots} slots a bucket (this library "
                                 f"reads layout {LAYOUT}, {SLOTS} slots)")
    if ext[7] or reserved:
        raise CorruptSketchError("reserved heavy-key extension bytes are set")
    if not 1 <= per_bucket <= MAX_FILTER:
        raise CorruptSketchError(f"heavy-key spilled filter of {per_bucket} bits a bucket (1 to {MAX_FILTER})")
    if not 2 <= buckets <= MAX_BUCKETS:
        raise CorruptSketchError(f"heavy-key bucket count {buckets} outside [2, {MAX_BUCKETS}]")
    cw = head.counter_width
    n = buckets * SLOTS
    nf = (buckets * per_bucket + 7) // 8
    want = EXT_HEAD + n * (8 + cw) + buckets + nf
    if len(ext) != want:
        raise CorruptSketchError(f"heavy-key extension size mismatch: {len(ext)} bytes, {buckets} buckets imply {want}")
    dt = fmt.COUNTER_TYPES[fmt.counter_type(head.float_counters, cw)]
    t = HeavyTable(buckets, seed, head.float_counters, per_bucket)
    t.draws = draws
    at = EXT_HEAD
    t.keys = np.frombuffer(ext, "<i8", n, at).astype(np.int64)
    at += 8 * n
    t.counts = np.frombuffer(ext, dt, n, at).astype(np.float64 if head.float_counters else np.int64)
    at += cw * n
    t.clean = np.frombuffer(ext, np.uint8, buckets, at).copy()
    t.spilled = np.frombuffer(ext, np.uint8, nf, at + buckets).copy()
    _check(head, t, residual)
    return t


def _check(head: fmt.Header, t: HeavyTable, residual: np.ndarray) -> None:
    c = t.counts
    if head.float_counters and not np.isfinite(c).all():
        raise CorruptSketchError("heavy-key table counts contain NaN or infinity")
    if (c < 0).any():
        raise CorruptSketchError("a heavy-key table count is negative (the sketch takes no deletes)")
    empty = c == 0
    if (t.keys[empty] != 0).any() or t.clean_slots()[empty].any():
        raise CorruptSketchError("an empty heavy-key slot has a key or a clean bit")
    if t.filter_bits % 8 and t.spilled[-1] >> (t.filter_bits % 8):
        raise CorruptSketchError("heavy-key spilled-filter bits are set past its last bit")
    occ = np.flatnonzero(~empty)
    keys = t.keys[occ]
    if len(np.unique(keys)) != len(keys):
        raise CorruptSketchError("a key is held by two heavy-key slots")
    b1, b2 = bucket_pairs(keys, t.buckets, t.salt)
    home = occ // SLOTS
    if not ((home == b1) | (home == b2)).all():
        raise CorruptSketchError("a heavy-key slot holds a key of other buckets: altered bytes or another seed")
    if not head.float_counters:
        if head.counter_width == 8 and fits_int32(residual) and fits_int32(c):
            raise CorruptSketchError("non-canonical counter width: int64 counters that all fit in int32")
        rest = int(head.total_weight) - int(c.sum(dtype=np.int64)) if len(c) else int(head.total_weight)
        if rest < 0:
            raise CorruptSketchError("heavy-key table counts exceed the total weight")
        parity = (residual.sum(axis=1, dtype=np.uint64) & np.uint64(1)).astype(np.int64)
        if (parity != rest % 2).any():
            raise CorruptSketchError("heavy-key residual counters are inconsistent with the total weight (parity)")
        if rest == 0 and residual.any():
            raise CorruptSketchError("heavy-key residual counters are non-zero but no weight was spilled")
        if rest and not t.spilled.any():
            raise CorruptSketchError("heavy-key weight was spilled but the spilled filter is empty")
    if not t.spilled.any() and residual.any():
        raise CorruptSketchError("heavy-key residual counters are non-zero but the spilled filter is empty")
    nothing = not occ.size and not residual.any() and head.total_weight == 0
    if head.empty != (nothing and head.null_weight == 0):
        raise CorruptSketchError("the empty flag disagrees with the heavy-key sketch's state")
    if (head.key_domain is None) != (not occ.size and head.total_weight == 0):
        raise CorruptSketchError("the key domain disagrees with the heavy-key sketch's keys")
