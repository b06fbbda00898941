"""The linear sketches' extensions of the format (:mod:`skimsketch.format.header` has the header; every
byte offset of these layouts lives here, ``docs/format.md`` explains them).

Extensions. AGMS, hash and bounded skimmed sketches have none (E = 0). A
pair sketch (kind 4, :mod:`skimsketch.sketch.multiway`) stores its second attribute's
shape and family there, and its ``depth x width_a x width_b`` table is the
main counters (``width = width_a * width_b``, row-major)::

    offset size field
    0      4    magic b"PAIR"
    4      1    layout version (1)
    5      3    reserved, zero
    8      4    width_a (u32)
    12     4    width_b (u32)
    16     8    seed_b (u64)

``decode_pair`` rejects a wrong magic, version, size or reserved bytes. An
unbounded-key skimmed sketch (kind 3, domain 0) stores its prefix hierarchy
(:mod:`skimsketch.sketch.skim.hierarchy`) there, offsets relative to the extension::

    offset size field
    0      4    magic b"HIER"
    4      1    layout version (1)
    5      1    levels L (6)
    6      1    top prefix bits (12)
    7      1    fan-out bits (8)
    8      1    lg: hierarchy width = 2**lg (4 <= lg <= 24)
    9      1    hierarchy depth h (2 <= h <= 32)
    10     2    reserved, zero
    12     s*L*h*2**lg counters, level-major, then table, then bucket
                (the main counters' type C and size s)

``decode_hierarchy`` rejects a wrong magic, version, geometry, size, reserved
bytes, non-finite float counters, non-zero counters in a sketch flagged empty,
and integer counters whose per-table sum has the wrong parity (every update
adds its weight to one counter per table, so each table's sum is congruent to
the total weight modulo 2).

An unbounded-key skimmed sketch that finds its dense keys by scanning its key
range (``search="range"``, the ``for_bytes`` default) stores that range instead
(24 bytes)::

    offset size field
    0      4    magic b"KRNG"
    4      1    layout version (1)
    5      1    has range: 1 if the sketch has seen an integer key, else 0
    6      2    reserved, zero
    8      8    smallest integer key seen (i64; 0 when has range is 0)
    16     8    largest integer key seen (i64, >= the smallest; 0 when has range is 0)

``decode_key_range`` rejects a wrong magic, version, size, reserved bytes, a
has-range byte other than 0/1, a range with low > high, non-zero bounds without
a range, a range in a sketch flagged empty, and a range with string keys.

A skimmed sketch in the virtual layout (``search="virtual"``, the ``for_bytes``
default from version 3 on: every key skimmed as a signed id in ``[0, 2**lg)``,
:mod:`skimsketch.sketch.skim.virtual`) was written as version 3, and only it: its counters are
the hash sketch of the signed virtual ids, so a version-2 reader must not take them
for a hash sketch of the keys. Version 4 (every layout) keeps that: no version-2
reader reads it. Its extension (8 bytes)::

    offset size field
    0      4    magic b"VIRT"
    4      1    layout version (1)
    5      1    lg: the virtual domain has 2**lg ids (10 <= lg <= 22)
    6      2    reserved, zero

``decode_virtual`` rejects a wrong magic, layout version, size, reserved bytes, a
``VIRT`` block in version-1 or -2 bytes, and version-3 bytes without it.

Version 4 is version 2 (or, for the virtual layout, 3) plus flag bit 4, the sign flag
(``docs/format.md``, "Version 4: the sign flag"): set exactly when the sketch knows its
frequencies are >= 0 (:attr:`skimsketch.Sketch.nonnegative`: no weight of a non-null key
was ever negative, no non-empty sketch was subtracted); bit 4 is reserved (rejected) in
versions 1 to 3, whose bytes are read with their old meaning. ``decode`` returns it as
``Header.nonnegative``.

Exact mode (flag bit 3): no counters; the extension holds the exact entries
(:mod:`skimsketch.sketch.exact_mode`), any kind, offsets relative to the extension::

    offset size field
    0      4    magic b"EXCT"
    4      1    layout version (1)
    5      1    hierarchy lg (unbounded skimmed sketch with a hierarchy: 4..24; otherwise 0)
    6      1    hierarchy depth (unbounded skimmed sketch with a hierarchy: 2..32; otherwise 0;
                an unbounded skimmed sketch with 0, 0 scans its key range, which in exact
                mode is the smallest and largest key held)
    7      1    virtual lg (the virtual layout, versions 3 and 4: 10..22; otherwise zero)
    8      4    n entries (u32)
    12     8*n  keys, int64, strictly ascending
    12+8n  s*n  weights, counter type C (narrowest integer width, or float64), none zero

``decode_exact`` checks the layout, order, zeros, canonical width, float
finiteness, the integer weights' sum against the total weight, and the empty
flag; the sketch checks the capacity and its key domain.
"""

from __future__ import annotations

import struct

import numpy as np

from ..errors import CorruptSketchError
from ..format.header import COUNTER_TYPES, VIRTUAL_VERSION, Header, check_extension, counter_type
from ..kernels import fits_int32
from .skim.hierarchy_shape import FANOUT_BITS, LEVELS, MAX_HIER_DEPTH, MAX_LG, MIN_HIER_DEPTH, MIN_LG, TOP_BITS

__all__ = ["EXACT_HEADER_BYTES", "HIER_HEADER_BYTES", "KEY_RANGE_BYTES", "KEY_RANGE_MAGIC", "VIRTUAL_BYTES",
           "decode_exact", "decode_hierarchy", "decode_key_range", "decode_pair", "decode_virtual", "encode_exact",
           "encode_hierarchy", "encode_key_range", "encode_pair", "encode_virtual", "exact_hier_shape",
           "exact_virtual_lg", "is_key_range", "is_virtual"]

# -- extension of the pair sketch (module docstring) ----------------------
PAIR_MAGIC = b"PAIR"
PAIR_VERSION = 1
_PAIR = struct.Struct("<4sB3sIIQ")  # 24 bytes


def encode_pair(width_a: int, width_b: int, seed_b: int) -> bytes:
    return _PAIR.pack(PAIR_MAGIC, PAIR_VERSION, b"\0\0\0", width_a, width_b, seed_b)


def decode_pair(ext: bytes) -> tuple[int, int, int]:
    """Parse a pair sketch's extension -> (width_a, width_b, seed_b); ranges are the class's to check."""
    if len(ext) != _PAIR.size:
        raise CorruptSketchError(f"pair extension size mismatch: {len(ext)} bytes, expected {_PAIR.size}")
    magic, version, reserved, width_a, width_b, seed_b = _PAIR.unpack(ext)
    check_extension("pair", magic, PAIR_MAGIC, version, PAIR_VERSION, reserved == b"\0\0\0")
    return width_a, width_b, seed_b


# -- extension of the unbounded skimmed sketch (module docstring) ------
HIER_MAGIC = b"HIER"
HIER_VERSION = 1
_HIER_HEAD = struct.Struct("<4sBBBBBB2s")  # 12 bytes
HIER_HEADER_BYTES = _HIER_HEAD.size


def encode_hierarchy(lg: int, depth: int, counters: np.ndarray, float_counters: bool, counter_width: int = 8) -> bytes:
    head = _HIER_HEAD.pack(HIER_MAGIC, HIER_VERSION, LEVELS, TOP_BITS, FANOUT_BITS, lg, depth, b"\0\0")
    return head + np.ascontiguousarray(counters, dtype=COUNTER_TYPES[counter_type(float_counters, counter_width)]).tobytes()


def decode_hierarchy(ext: bytes, head: Header) -> tuple[int, int, np.ndarray]:
    """Parse and validate an unbounded skimmed sketch's extension -> (lg, depth, counters (L, depth, 2**lg))."""
    if len(ext) < _HIER_HEAD.size:
        raise CorruptSketchError(f"hierarchy extension truncated: {len(ext)} bytes, need at least {_HIER_HEAD.size}")
    magic, version, levels, top, fanout, lg, depth, reserved = _HIER_HEAD.unpack_from(ext, 0)
    if magic != HIER_MAGIC:
        raise CorruptSketchError(f"bad hierarchy extension magic {magic!r}")
    if version != HIER_VERSION:
        raise CorruptSketchError(f"unknown hierarchy extension version {version}")
    if (levels, top, fanout) != (LEVELS, TOP_BITS, FANOUT_BITS):
        raise CorruptSketchError(f"unsupported hierarchy geometry: {levels} levels, {top} top bits, fan-out 2**{fanout}")
    if not (MIN_LG <= lg <= MAX_LG and MIN_HIER_DEPTH <= depth <= MAX_HIER_DEPTH):
        raise CorruptSketchError(f"hierarchy shape {depth}x2**{lg} out of range")
    if reserved != b"\0\0":
        raise CorruptSketchError("reserved hierarchy extension bytes are set")
    n = LEVELS * depth * (1 << lg)
    dt = COUNTER_TYPES[counter_type(head.float_counters, head.counter_width)]  # the main counters' type
    if len(ext) != _HIER_HEAD.size + dt.itemsize * n:
        raise CorruptSketchError(
            f"hierarchy extension size mismatch: {len(ext)} bytes, its header implies {_HIER_HEAD.size + dt.itemsize * n}")
    counters = np.frombuffer(ext, dt, n, _HIER_HEAD.size).astype(dt.newbyteorder("="), copy=True)
    counters = counters.reshape(LEVELS, depth, 1 << lg)
    if head.float_counters:
        if not np.isfinite(counters).all():
            raise CorruptSketchError("hierarchy counters contain NaN or infinity")
    else:
        parity = (counters.sum(axis=2, dtype=np.uint64) & np.uint64(1)).astype(np.int64)
        if (parity != int(head.total_weight) % 2).any():
            raise CorruptSketchError("hierarchy counters are inconsistent with the total weight (parity)")
    if head.empty and counters.any():
        raise CorruptSketchError("sketch is flagged empty but its hierarchy has non-zero state")
    return lg, depth, counters


# -- extension of the range-scanning unbounded skimmed sketch (module docstring) --
KEY_RANGE_MAGIC = b"KRNG"
KEY_RANGE_VERSION = 1
_KEY_RANGE = struct.Struct("<4sBB2sqq")  # 24 bytes
KEY_RANGE_BYTES = _KEY_RANGE.size


def encode_key_range(key_range: tuple[int, int] | None) -> bytes:
    """The ``KRNG`` extension of a key range ``(low, high)`` (``None``: no integer key seen)."""
    if key_range is None:
        return _KEY_RANGE.pack(KEY_RANGE_MAGIC, KEY_RANGE_VERSION, 0, b"\0\0", 0, 0)
    return _KEY_RANGE.pack(KEY_RANGE_MAGIC, KEY_RANGE_VERSION, 1, b"\0\0", int(key_range[0]), int(key_range[1]))


def is_key_range(ext: bytes) -> bool:
    """Whether an unbounded skimmed sketch's extension is a key range (else a hierarchy)."""
    return ext[:4] == KEY_RANGE_MAGIC


def decode_key_range(ext: bytes, head: Header) -> tuple[int, int] | None:
    """Parse and validate a ``KRNG`` extension -> ``(low, high)`` or ``None``."""
    if len(ext) != _KEY_RANGE.size:
        raise CorruptSketchError(f"key range extension has {len(ext)} bytes, expected {_KEY_RANGE.size}")
    magic, version, has, reserved, low, high = _KEY_RANGE.unpack(ext)
    check_extension("key range", magic, KEY_RANGE_MAGIC, version, KEY_RANGE_VERSION,
                     reserved == b"\0\0" and has in (0, 1))
    if not has:
        if low or high:
            raise CorruptSketchError("key range bounds are set but the sketch has no range")
        return None
    if low > high:
        raise CorruptSketchError(f"key range [{low}, {high}] is empty")
    if head.empty:
        raise CorruptSketchError("sketch is flagged empty but has a key range")
    if head.key_domain == "str":
        raise CorruptSketchError("a sketch of string keys cannot have an integer key range")
    return low, high


# -- exact mode: the entries in the extension (module docstring) ------
EXACT_MAGIC = b"EXCT"
EXACT_VERSION = 1
_EXACT_HEAD = struct.Struct("<4sBBBBI")  # 12 bytes
EXACT_HEADER_BYTES = _EXACT_HEAD.size


def encode_exact(layout: tuple[int, int, int], keys: np.ndarray, weights: np.ndarray, float_counters: bool,
                 counter_width: int) -> bytes:
    """The extension of a sketch in exact mode; ``layout`` = (hierarchy lg, hierarchy depth, virtual lg),
    zeros where the sketch has no hierarchy / no virtual domain."""
    dt = COUNTER_TYPES[counter_type(float_counters, counter_width)]
    head = _EXACT_HEAD.pack(EXACT_MAGIC, EXACT_VERSION, *layout, len(keys))
    return head + np.ascontiguousarray(keys, dtype="<i8").tobytes() + np.ascontiguousarray(weights, dtype=dt).tobytes()


# -- extension of a skimmed sketch in the virtual layout (module docstring) ---
VIRTUAL_MAGIC = b"VIRT"
VIRTUAL_LAYOUT = 1
_VIRTUAL = struct.Struct("<4sBB2s")  # 8 bytes
VIRTUAL_BYTES = _VIRTUAL.size


def encode_virtual(lg: int) -> bytes:
    """The ``VIRT`` extension of a virtual domain of ``2**lg`` ids."""
    return _VIRTUAL.pack(VIRTUAL_MAGIC, VIRTUAL_LAYOUT, lg, b"\0\0")


def is_virtual(ext: bytes) -> bool:
    """Whether a skimmed sketch's extension is the ``VIRT`` block."""
    return ext[:4] == VIRTUAL_MAGIC


def decode_virtual(ext: bytes, head: Header) -> int:
    """Parse and validate a ``VIRT`` extension -> ``lg`` (only in version-3 and version-4 bytes)."""
    if head.version < VIRTUAL_VERSION:
        raise CorruptSketchError(f"a virtual-layout extension in format version {head.version} (it needs version 3 "
                                 f"or later)")
    if len(ext) != _VIRTUAL.size:
        raise CorruptSketchError(f"virtual-layout extension has {len(ext)} bytes, expected {_VIRTUAL.size}")
    magic, version, lg, reserved = _VIRTUAL.unpack(ext)
    check_extension("virtual-layout", magic, VIRTUAL_MAGIC, version, VIRTUAL_LAYOUT, reserved == b"\0\0")
    return lg


def exact_virtual_lg(ext: bytes, head: Header) -> int:
    """The virtual domain's ``lg`` recorded in an exact-mode extension (versions 3 and 4), 0 for none."""
    if len(ext) < _EXACT_HEAD.size:
        raise CorruptSketchError(f"exact-mode extension truncated: {len(ext)} bytes, need at least {_EXACT_HEAD.size}")
    lg = ext[7] if head.version >= VIRTUAL_VERSION else 0
    if head.version == VIRTUAL_VERSION and lg == 0:
        raise CorruptSketchError(f"format version {head.version} with an exact-mode virtual domain lg of {lg}"
                                 " (version 3 exactly when the layout is virtual)")
    return lg


def exact_hier_shape(ext: bytes) -> tuple[int, int]:
    """(hierarchy lg, hierarchy depth) recorded in an exact-mode extension (0, 0 when none)."""
    if len(ext) < _EXACT_HEAD.size:
        raise CorruptSketchError(f"exact-mode extension truncated: {len(ext)} bytes, need at least {_EXACT_HEAD.size}")
    return ext[5], ext[6]


def decode_exact(ext: bytes, head: Header, layout: tuple[int, int, int], capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Parse and validate an exact-mode extension -> (keys int64, weights); ``layout`` is
    what the sketch of the header expects in bytes 5, 6 and 7, ``capacity`` its most entries."""
    if len(ext) < _EXACT_HEAD.size:
        raise CorruptSketchError(f"exact-mode extension truncated: {len(ext)} bytes, need at least {_EXACT_HEAD.size}")
    magic, version, lg, depth, reserved, n = _EXACT_HEAD.unpack_from(ext, 0)
    if magic != EXACT_MAGIC:
        raise CorruptSketchError(f"bad exact-mode extension magic {magic!r}")
    if version != EXACT_VERSION:
        raise CorruptSketchError(f"unknown exact-mode extension version {version}")
    if (lg, depth, reserved) != tuple(layout):
        raise CorruptSketchError(f"exact-mode hierarchy shape and virtual lg (bytes 5-7, the last reserved before "
                                 f"version 3) ({lg}, {depth}, {reserved}) do not match the sketch's {tuple(layout)}")
    if n > capacity:
        raise CorruptSketchError(f"{n} exact entries exceed the sketch's capacity of {capacity}")
    dt = COUNTER_TYPES[counter_type(head.float_counters, head.counter_width)]
    size = _EXACT_HEAD.size + (8 + dt.itemsize) * n
    if len(ext) != size:
        raise CorruptSketchError(f"exact-mode extension size mismatch: {len(ext)} bytes, {n} entries imply {size}")
    keys = np.frombuffer(ext, "<i8", n, _EXACT_HEAD.size).astype(np.int64)
    weights = np.frombuffer(ext, dt, n, _EXACT_HEAD.size + 8 * n).astype(dt.newbyteorder("="))
    if not (keys[1:] > keys[:-1]).all():  # (np.diff would wrap on keys of opposite signs)
        raise CorruptSketchError("exact-mode keys are not strictly ascending")
    if (weights == 0).any():
        raise CorruptSketchError("exact-mode entry with a zero weight")
    if head.float_counters:
        if not np.isfinite(weights).all():
            raise CorruptSketchError("exact-mode weights contain NaN or infinity")
    else:
        if dt.itemsize == 8 and n and fits_int32(weights):
            raise CorruptSketchError("non-canonical weight width: int64 weights that all fit in int32")
        if sum(weights.tolist()) != head.total_weight:
            raise CorruptSketchError("exact-mode weights do not sum to the total weight")
    zero = n == 0 and head.total_weight == 0
    if head.empty != (zero and head.null_weight == 0):
        raise CorruptSketchError("the empty flag disagrees with the exact-mode state")
    if head.version >= 2 and (head.key_domain is None) != zero:
        raise CorruptSketchError("the key domain disagrees with the exact-mode entries")
    return keys, weights
