"""The binary format of a sketch, versions 1 to 4 (``encode`` writes 4). Every byte offset lives here;
``docs/format.md`` explains the rules (canonical bytes, widths, compatibility).

All fields little-endian::

    offset size field
    0      4    magic b"SKSK"
    4      2    format version (4; 1, 2 and 3 (only the virtual layout) are still read)
    6      1    sketch kind (1 AGMS, 2 hash, 3 skimmed, 4 pair, 5 join sample; skimsketch.format.kinds maps it to a class)
    7      1    flags: bit0 empty, bit1 has domain, bit2 float counters, bit3 exact mode (version 2 on),
                bit4 the sign flag: frequencies known to be >= 0 (version 4 on; Sketch.nonnegative)
    8      4    width (u32; counters per table: a pair sketch's width_a * width_b)
    12     4    depth (u32)
    16     8    seed (u64; a pair sketch's seed_a)
    24     8    domain (u64; 0 = unbounded)
    32     1    counter type C: 1 int64, 2 float64, 3 int32 (version 2 only)
    33     1    key domain: 0 not recorded, 1 integers, 2 strings/bytes (version 2; zero in version 1)
    34     2    reserved, zero
    36     8    kind parameter (f64; skimmed: skim factor; others 0.0)
    44     8    total weight (i64, or f64 with float counters)
    52     8    null weight  (i64, or f64 with float counters)
    60     4    extension length E (u32; kind-specific extra state)
    64     E    extension
    64+E   s*depth*width counters, row-major, s = 4 (C=3) or 8 bytes (C=1, 2); none in exact mode
    ...    4    CRC-32 (zlib) of every byte before it

Canonical width (version 2): integer counters are written as int32 when every
counter (main and extension) fits in int32, else all as int64; ``from_bytes``
rejects an int64 blob whose values all fit in int32. So the bytes are a function
of the sketch's parameters, counters and weights only.

``decode`` rejects anything else with :class:`CorruptSketchError` naming the
problem; it checks sizes before allocating and never returns a partial sketch.

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
(:mod:`skimsketch.stats.exact_store`), any kind, offsets relative to the extension::

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

Kind 5, the join sample (:mod:`skimsketch.sample.join_sample`; version 4 only) has no counters.
Header: width = the byte budget B (148 <= B <= 2**30; layout 1: the capacity m), depth 1,
domain 0, kind parameter 0.0, flags bit0 (empty: no fingerprint with a non-zero total and a
zero null weight) and bit2 (float totals) only, counter type 1 (integer totals) or 2
(float64), the key domain, and the total and null weights of the whole table (every key,
kept or not). Its extension (layout 2), offsets relative to the extension::

    offset size field
    0      4    magic b"SMPL"
    4      1    layout version (2; layout 1 is read, see below)
    5      1    flags: bit0 partial (a piece of a key-hash partitioning: a bitmap follows),
                bit1 legacy (fingerprints h >> 12: a sample read from layout 1); not both
    6      2    reserved, zero
    8      4    n entries (u32)
    12     4    partition count P (u32): 1 for a whole sample, 2..4096 for a partial one
    16     8    tau (f64): the (n+1)-th smallest rank, +inf when every fingerprint is kept
    24     8    K: fingerprints with a non-zero total, kept or not (u64)
    32     Bm   partial only: Bm = ceil(P/8) bytes, bit (i & 7) of byte (i >> 3) set when
                partition i is covered; unused high bits zero; neither none nor all set
    32+Bm  1    Rice parameter r (0..51)
    33+Bm  4    L: fingerprint-section bytes (u32)
    37+Bm  L    the n fingerprints ascending, Rice-coded deltas (skimsketch.sample.codec)
    37+Bm+L T   totals in that order: zigzag LEB128 varints (integer) or f64 (float), none zero

Entries kept (``K`` fingerprints with a non-zero total, ``C`` = :func:`sample_max_entries`):
a whole sample keeps the longest prefix of its (rank, fp) order whose bytes fit B; a partial
sample keeps ``min(K, C)``. ``tau`` is infinite exactly when ``n == K``.

``decode_sample`` checks the layout (magic, version, flags, reserved bytes, the bitmap, the
budget, the codec's sections: :mod:`skimsketch.sample.codec`), the counts (``n <= K``, a
whole sample within B, a partial one within C, ``tau > 0`` and infinite exactly when
``n == K``), zero and non-finite totals, and the empty flag; the class checks what needs
the ranks (no entry above tau, the partitions). Layout 1 (the previous release: keys and
4- or 8-byte totals, width = the capacity m) is still read, whole samples only
(``SampleParts.layout == 1``, the keys in ``fps``); :mod:`skimsketch.sample.join_sample` converts it.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from ..sample import codec as sample_codec
from ..errors import CorruptSketchError
from ..kernels import fits_int32
from ..keys.hashing import MAX_DEPTH
from ..sketch.skim.hierarchy_shape import FANOUT_BITS, LEVELS, MAX_HIER_DEPTH, MAX_LG, MIN_HIER_DEPTH, MIN_LG, TOP_BITS

__all__ = ["KEY_DOMAINS", "MAGIC", "MAX_ROW_COUNTERS", "READ_VERSIONS", "SIGN_VERSION", "VERSION", "Header", "decode", "decode_exact",
           "decode_hierarchy", "decode_key_range", "decode_pair", "encode", "encode_exact", "encode_hierarchy",
           "encode_key_range", "encode_pair", "exact_hier_shape", "is_key_range", "KEY_RANGE_BYTES", "KEY_RANGE_MAGIC",
           "VIRTUAL_BYTES", "VIRTUAL_VERSION", "decode_virtual", "encode_virtual", "exact_virtual_lg", "is_virtual",
           "SAMPLE_KIND", "SAMPLE_HEADER_BYTES", "SAMPLE_MAX_BUDGET", "SAMPLE_MIN_BUDGET", "SAMPLE_OVERHEAD", "SampleParts",
           "decode_sample", "encode_sample", "sample_max_entries"]

MAGIC = b"SKSK"
VERSION = 4  # what encode writes, every layout: version 2 (3 for the virtual layout) plus the sign flag
VIRTUAL_VERSION = 3  # what encode wrote for a sketch in the virtual layout before version 4 (only for it)
SIGN_VERSION = 4  # the first version with the sign flag (FLAG_NONNEG)
READ_VERSIONS = (1, 2, 3, 4)  # what decode reads
COUNTER_TYPES = {1: np.dtype("<i8"), 2: np.dtype("<f8"), 3: np.dtype("<i4")}  # version 1: types 1 and 2 only
_INT_TYPE = {4: 3, 8: 1}  # integer counter width in bytes -> counter type
KEY_DOMAINS = {0: None, 1: "int", 2: "str"}  # unknown (no non-null key yet), integers, strings/bytes
MAX_ROW_COUNTERS = 1 << 26  # counters per table: a width (<= 2**24), or a pair sketch's width_a * width_b
FLAG_EMPTY, FLAG_DOMAIN, FLAG_FLOAT, FLAG_EXACT, FLAG_NONNEG = 1, 2, 4, 8, 16
SAMPLE_KIND = 5  # the join sample: no counters, its entries in the extension
_HEAD = struct.Struct("<4sHBBIIQQB3sd")  # up to the kind parameter: 44 bytes
_TAIL = struct.Struct("<8s8sI")  # weights and extension length: 20 bytes
HEADER_SIZE = _HEAD.size + _TAIL.size  # 64
_CRC = struct.Struct("<I")
FRAME_BYTES = HEADER_SIZE + _CRC.size  # serialised bytes beyond the counters and the extension


@dataclass
class Header:
    kind: int
    width: int
    depth: int
    seed: int
    domain: int | None
    float_counters: bool
    param: float
    total_weight: int | float
    null_weight: int | float
    empty: bool
    counter_width: int = 8  # bytes per counter as stored: 4 or 8 for integers, 8 for floats
    key_domain: str | None = None  # "int", "str" or None (unknown); always None in version 1
    version: int = VERSION  # of the bytes decoded
    exact: bool = False  # exact mode: entries in the extension, no counters
    nonnegative: bool = False  # the sign flag (version 4 on): every weight ever added was >= 0


def _scalar_bytes(x, float_counters: bool) -> bytes:
    return struct.pack("<d", float(x)) if float_counters else struct.pack("<q", int(x))


def counter_type(float_counters: bool, counter_width: int) -> int:
    """The counter type byte of float64, or of integer counters ``counter_width`` bytes wide."""
    return 2 if float_counters else _INT_TYPE[counter_width]


def encode(h: Header, counters: np.ndarray, extension: bytes = b"", counter_width: int = 8) -> bytes:
    """The bytes of a sketch in format version ``h.version`` (4 when written by this library); integer counters
    are written ``counter_width`` (4 or 8) bytes wide."""
    if h.nonnegative and h.version < SIGN_VERSION:
        raise ValueError(f"format version {h.version} has no sign flag (version {SIGN_VERSION} on)")
    flags = (FLAG_EMPTY if h.empty else 0) | (FLAG_DOMAIN if h.domain else 0) | (FLAG_FLOAT if h.float_counters else 0)
    flags |= (FLAG_EXACT if h.exact else 0) | (FLAG_NONNEG if h.nonnegative else 0)
    ctype = counter_type(h.float_counters, counter_width)
    kd = {v: k for k, v in KEY_DOMAINS.items()}[h.key_domain]
    head = _HEAD.pack(MAGIC, h.version, h.kind, flags, h.width, h.depth, h.seed, h.domain or 0, ctype,
                      bytes([kd, 0, 0]), h.param)
    tail = _TAIL.pack(
        _scalar_bytes(h.total_weight, h.float_counters), _scalar_bytes(h.null_weight, h.float_counters), len(extension)
    )
    body = head + tail + extension + np.ascontiguousarray(counters, dtype=COUNTER_TYPES[ctype]).tobytes()
    return body + _CRC.pack(zlib.crc32(body))


def decode(blob) -> tuple[Header, np.ndarray, bytes]:
    """Parse and validate ``blob`` -> (header, counters (depth, width); none in exact mode, extension)."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise CorruptSketchError(f"expected bytes, got {type(blob).__name__}")
    b = bytes(blob)
    if len(b) < HEADER_SIZE + _CRC.size:
        raise CorruptSketchError(f"truncated: {len(b)} bytes is shorter than the {HEADER_SIZE + 4}-byte minimum")
    magic, version, kind, flags, width, depth, seed, domain, ctype, reserved, param = _HEAD.unpack_from(b, 0)
    if magic != MAGIC:
        raise CorruptSketchError(f"bad magic {magic!r}: not a skimsketch sketch")
    if version not in READ_VERSIONS:
        raise CorruptSketchError(f"unknown format version {version} (this library reads versions {READ_VERSIONS})")
    if ctype not in COUNTER_TYPES or (version == 1 and ctype == 3):
        raise CorruptSketchError(f"unknown counter type {ctype} in format version {version}")
    kd = reserved[0] if version >= 2 else 0
    known_flags = FLAG_EMPTY | FLAG_DOMAIN | FLAG_FLOAT | (FLAG_EXACT if version >= 2 else 0)
    known_flags |= FLAG_NONNEG if version >= SIGN_VERSION else 0
    if reserved[1:] != b"\0\0" or (version == 1 and reserved[0]) or flags & ~known_flags:
        raise CorruptSketchError("reserved header bits are set")
    if kd not in KEY_DOMAINS:
        raise CorruptSketchError(f"unknown key domain {kd}")
    float_counters = ctype == 2
    if bool(flags & FLAG_FLOAT) != float_counters:
        raise CorruptSketchError("float-counter flag disagrees with the counter type")
    if bool(flags & FLAG_DOMAIN) != (domain != 0):
        raise CorruptSketchError("domain flag disagrees with the domain field")
    max_width = SAMPLE_MAX_BUDGET if kind == SAMPLE_KIND else MAX_ROW_COUNTERS  # a join sample's width: its budget
    if not (1 <= width <= max_width and 1 <= depth <= MAX_DEPTH):
        raise CorruptSketchError(f"shape {depth}x{width} out of range")
    if not math.isfinite(param):
        raise CorruptSketchError("kind parameter is not finite")
    tw_raw, nw_raw, ext_len = _TAIL.unpack_from(b, _HEAD.size)
    cw = COUNTER_TYPES[ctype].itemsize
    exact = bool(flags & FLAG_EXACT)
    n_counters = 0 if exact or kind == SAMPLE_KIND else width * depth
    expected = HEADER_SIZE + ext_len + cw * n_counters + _CRC.size
    if len(b) != expected:
        raise CorruptSketchError(f"size mismatch: {len(b)} bytes, header implies {expected}")
    (crc,) = _CRC.unpack_from(b, len(b) - _CRC.size)
    if zlib.crc32(b[: -_CRC.size]) != crc:
        raise CorruptSketchError("checksum mismatch: the bytes were altered or truncated")
    fmt = "<d" if float_counters else "<q"
    total, null = struct.unpack(fmt, tw_raw)[0], struct.unpack(fmt, nw_raw)[0]
    if float_counters and not (math.isfinite(total) and math.isfinite(null)):
        raise CorruptSketchError("total or null weight is not finite")
    ext = b[HEADER_SIZE : HEADER_SIZE + ext_len]
    counters = np.frombuffer(b, COUNTER_TYPES[ctype], n_counters, HEADER_SIZE + ext_len)
    counters = counters.reshape((depth, width) if n_counters else (0,))
    counters = counters.astype(counters.dtype.newbyteorder("="), copy=True)
    if float_counters and not np.isfinite(counters).all():
        raise CorruptSketchError("counters contain NaN or infinity")
    head = Header(kind, width, depth, seed, domain or None, float_counters, param, total, null,
                  bool(flags & FLAG_EMPTY), cw, KEY_DOMAINS[kd], version, exact, bool(flags & FLAG_NONNEG))
    if head.empty and (total != 0 or null != 0 or counters.any()):
        raise CorruptSketchError("sketch is flagged empty but has non-zero state")
    if head.nonnegative and not float_counters and total < 0:  # (float sums may round: not checked)
        raise CorruptSketchError("the sign flag says every weight was >= 0, but the total weight is negative")
    return head, counters, ext


# -- extension of the pair sketch (see the module docstring) -------------------
PAIR_MAGIC = b"PAIR"
PAIR_VERSION = 1
_PAIR = struct.Struct("<4sB3sIIQ")  # 24 bytes


def _check_extension(what: str, magic: bytes, want_magic: bytes, version: int, want_version: int,
                     reserved_ok: bool) -> None:
    """The checks every extension's head shares: magic, layout version, reserved bytes."""
    if magic != want_magic:
        raise CorruptSketchError(f"bad {what} extension magic {magic!r}")
    if version != want_version:
        raise CorruptSketchError(f"unknown {what} extension version {version}")
    if not reserved_ok:
        raise CorruptSketchError(f"reserved {what} extension bytes are set")


def encode_pair(width_a: int, width_b: int, seed_b: int) -> bytes:
    return _PAIR.pack(PAIR_MAGIC, PAIR_VERSION, b"\0\0\0", width_a, width_b, seed_b)


def decode_pair(ext: bytes) -> tuple[int, int, int]:
    """Parse a pair sketch's extension -> (width_a, width_b, seed_b); ranges are the class's to check."""
    if len(ext) != _PAIR.size:
        raise CorruptSketchError(f"pair extension size mismatch: {len(ext)} bytes, expected {_PAIR.size}")
    magic, version, reserved, width_a, width_b, seed_b = _PAIR.unpack(ext)
    _check_extension("pair", magic, PAIR_MAGIC, version, PAIR_VERSION, reserved == b"\0\0\0")
    return width_a, width_b, seed_b


# -- extension of the unbounded skimmed sketch (see the module docstring) ------
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
    _check_extension("key range", magic, KEY_RANGE_MAGIC, version, KEY_RANGE_VERSION,
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


# -- exact mode: the entries in the extension (see the module docstring) ------
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


# -- extension of a skimmed sketch in the virtual layout (see the module docstring) ---
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
    _check_extension("virtual-layout", magic, VIRTUAL_MAGIC, version, VIRTUAL_LAYOUT, reserved == b"\0\0")
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


# -- kind 5: the join sample's extension (see the module docstring) ------------
SAMPLE_MAGIC = b"SMPL"
SAMPLE_VERSION = 2  # what encode_sample writes; layout 1 (12-byte entries) is still read
_SAMPLE_HEAD = struct.Struct("<4sBB2sIIdQ")  # 32 bytes
_SAMPLE_CODE = struct.Struct("<BI")  # layout 2: Rice parameter, fingerprint-section bytes
SAMPLE_HEADER_BYTES = _SAMPLE_HEAD.size
SAMPLE_OVERHEAD = FRAME_BYTES + _SAMPLE_HEAD.size + _SAMPLE_CODE.size  # 105: a layout-2 sample's bytes beyond entries
SAMPLE_MIN_BUDGET, SAMPLE_MAX_BUDGET = 148, 1 << 30
SAMPLE_MAX_ENTRIES = 1 << 26
SAMPLE_PARTIAL, SAMPLE_LEGACY = 1, 2  # extension flags (layout 2): a partition piece; fingerprints h >> 12 (layout 1)
_MAX_PARTS = 4096


@dataclass
class SampleParts:
    """A join sample's decoded extension. Layout 2: ``fps`` are fingerprints in ascending order; layout 1
    (``layout == 1``, read only): ``fps`` holds the canonical int64 keys in sample order."""

    tau: float
    n_keys: int  # fingerprints (layout 1: keys) with a non-zero total, kept or not
    parts: int  # P: 1 for a whole sample
    covered: tuple  # the partitions covered (sorted); (0,) for a whole sample
    fps: np.ndarray  # int64
    totals: np.ndarray  # int64 or float64
    layout: int = SAMPLE_VERSION
    legacy: bool = False  # layout 2, flag bit 1: fingerprints h >> 12 of a sample read from layout 1


def sample_max_entries(budget: int, float_totals: bool) -> int:
    """``C(B)``: the entries a sample of budget ``B`` can hold at most (an integer entry costs at least 9 bits,
    a float one 65), never above ``2**26``."""
    return min(SAMPLE_MAX_ENTRIES, 8 * (budget - SAMPLE_OVERHEAD) // (65 if float_totals else 9))


def _bitmap(parts: int, covered) -> bytes:
    if parts == 1:
        return b""
    bits = np.zeros(-(-parts // 8) * 8, dtype=np.uint8)
    bits[list(covered)] = 1
    return np.packbits(bits, bitorder="little").tobytes()


def encode_sample(p: SampleParts, float_totals: bool) -> bytes:
    """Layout 2 of ``p`` (``p.fps`` ascending, ``p.totals`` in their order)."""
    flags = (SAMPLE_PARTIAL if p.parts > 1 else 0) | (SAMPLE_LEGACY if p.legacy else 0)
    head = _SAMPLE_HEAD.pack(SAMPLE_MAGIC, SAMPLE_VERSION, flags, b"\0\0", len(p.fps), p.parts, p.tau, p.n_keys)
    r, fps = sample_codec.rice_encode(p.fps)
    totals = np.ascontiguousarray(p.totals, "<f8").tobytes() if float_totals else sample_codec.varint_encode(p.totals)
    return head + _bitmap(p.parts, p.covered) + _SAMPLE_CODE.pack(r, len(fps)) + fps + totals


def _sample_claims(ext: bytes, flags: int, parts: int) -> tuple[int, tuple]:
    """(bitmap bytes, covered partitions) of a sample extension's head."""
    partial = bool(flags & SAMPLE_PARTIAL)
    if partial != (parts > 1) or not 1 <= parts <= _MAX_PARTS:
        raise CorruptSketchError(f"sample partition count {parts} disagrees with its partial flag {flags} "
                                 f"(1 for a whole sample, 2..{_MAX_PARTS} for a partial one)")
    if not partial:
        return 0, (0,)
    nb = -(-parts // 8)
    if len(ext) < _SAMPLE_HEAD.size + nb:
        raise CorruptSketchError("sample extension truncated inside its partition bitmap")
    bits = np.unpackbits(np.frombuffer(ext, np.uint8, nb, _SAMPLE_HEAD.size), bitorder="little")
    if bits[parts:].any():
        raise CorruptSketchError("sample partition bitmap has bits set beyond its partition count")
    covered = tuple(np.flatnonzero(bits).tolist())
    if not 0 < len(covered) < parts:
        raise CorruptSketchError(f"a partial sample covers {len(covered)} of its {parts} partitions "
                                 f"(at least one, not all)")
    return nb, covered


def _check_sample_state(head: Header, n: int, n_keys: int, tau: float, totals: np.ndarray) -> None:
    """The rules both layouts share: tau against the counts, totals, the empty flag, the key domain."""
    if math.isnan(tau) or not tau > 0:
        raise CorruptSketchError(f"sample threshold tau {tau!r} is not positive")
    if n > n_keys or math.isinf(tau) != (n == n_keys):
        raise CorruptSketchError(f"sample with {n} entries of {n_keys} keys and tau {tau!r} (format.py, kind 5: "
                                 "at most every key, and tau infinite exactly when all are kept)")
    if (totals == 0).any() or (head.float_counters and not np.isfinite(totals).all()):
        raise CorruptSketchError("sample entry with a zero or non-finite total")
    if head.empty != (n_keys == 0 and head.null_weight == 0):
        raise CorruptSketchError("the empty flag disagrees with the sample's state")
    if (head.key_domain is None) != (n_keys == 0):
        raise CorruptSketchError("the key domain disagrees with the sample's keys")
    if math.isinf(tau) and not head.float_counters and sum(totals.tolist()) != head.total_weight:
        raise CorruptSketchError("a sample that kept every key has totals that do not sum to the total weight")


def decode_sample(ext: bytes, head: Header) -> SampleParts:
    """Parse and validate a join sample's extension (module docstring; layout 1 or 2) -> :class:`SampleParts`."""
    if len(ext) < _SAMPLE_HEAD.size:
        raise CorruptSketchError(f"sample extension truncated: {len(ext)} bytes, need at least {_SAMPLE_HEAD.size}")
    magic, version, flags, reserved, n, parts, tau, n_keys = _SAMPLE_HEAD.unpack_from(ext, 0)
    _check_extension("sample", magic, SAMPLE_MAGIC, version, version if version in (1, 2) else SAMPLE_VERSION,
                     reserved == b"\0\0" and flags in ((0, 1) if version == 1 else (0, SAMPLE_PARTIAL, SAMPLE_LEGACY)))
    if version == 1:
        return _decode_sample_v1(ext, head, flags, n, parts, tau, n_keys)
    nb, covered = _sample_claims(ext, flags, parts)
    budget = head.width
    if not SAMPLE_MIN_BUDGET <= budget <= SAMPLE_MAX_BUDGET:
        raise CorruptSketchError(f"sample budget {budget} bytes outside [{SAMPLE_MIN_BUDGET}, {SAMPLE_MAX_BUDGET}]")
    if head.counter_width != 8:
        raise CorruptSketchError("a layout-2 join sample has int64 (type 1) or float64 (type 2) totals")
    size = FRAME_BYTES + len(ext)
    if parts > 1 and n > sample_max_entries(budget, head.float_counters):
        raise CorruptSketchError(f"a partial sample of budget {budget} holds {n} entries, more than "
                                 f"{sample_max_entries(budget, head.float_counters)}")
    if parts == 1 and size > budget:
        raise CorruptSketchError(f"a whole sample of {size} bytes exceeds its budget of {budget} bytes")
    at = _SAMPLE_HEAD.size + nb
    if len(ext) < at + _SAMPLE_CODE.size:
        raise CorruptSketchError("sample extension truncated before its fingerprint section")
    r, fp_bytes = _SAMPLE_CODE.unpack_from(ext, at)
    at += _SAMPLE_CODE.size
    if fp_bytes > len(ext) - at:
        raise CorruptSketchError(f"sample fingerprint section of {fp_bytes} bytes overruns the extension")
    if n > 8 * fp_bytes:
        raise CorruptSketchError(f"sample of {n} entries in a {fp_bytes}-byte fingerprint section")
    fps = sample_codec.rice_decode(ext[at:at + fp_bytes], n, r)
    rest = ext[at + fp_bytes:]
    if head.float_counters:
        if len(rest) != 8 * n:
            raise CorruptSketchError(f"sample totals section of {len(rest)} bytes, {n} float totals need {8 * n}")
        totals = np.frombuffer(rest, "<f8").astype(np.float64)
    else:
        totals = sample_codec.varint_decode(rest, n)
    _check_sample_state(head, n, n_keys, tau, totals)
    return SampleParts(tau, n_keys, parts, covered, fps, totals, legacy=bool(flags & SAMPLE_LEGACY))


def _decode_sample_v1(ext: bytes, head: Header, flags: int, n: int, parts: int, tau: float,
                      n_keys: int) -> SampleParts:
    """Layout 1 (12- or 16-byte entries, the header width the capacity m), whole samples only."""
    if flags or parts != 1:
        raise CorruptSketchError("a layout-1 partial join sample cannot be read by this version: rebuild the pieces")
    m, cw = head.width, head.counter_width
    if not 4 <= m <= SAMPLE_MAX_ENTRIES:
        raise CorruptSketchError(f"sample capacity {m} outside [4, {SAMPLE_MAX_ENTRIES}]")
    size = _SAMPLE_HEAD.size + (8 + cw) * n
    if len(ext) != size:
        raise CorruptSketchError(f"sample extension size mismatch: {len(ext)} bytes, {n} entries imply {size}")
    wide = not head.float_counters and cw == 8
    if n != min(n_keys, (3 * m) // 4 if wide else m):
        raise CorruptSketchError(f"sample of capacity {m} with {n} entries of {n_keys} keys (format.py, kind 5, "
                                 "layout 1: the entries kept)")
    keys = np.frombuffer(ext, "<i8", n, _SAMPLE_HEAD.size).astype(np.int64)
    totals = np.frombuffer(ext, COUNTER_TYPES[counter_type(head.float_counters, cw)], n, _SAMPLE_HEAD.size + 8 * n)
    totals = totals.astype(np.float64 if head.float_counters else np.int64)
    if wide and math.isinf(tau) and fits_int32(totals):
        raise CorruptSketchError("non-canonical total width: int64 totals that all fit in int32")
    _check_sample_state(head, n, n_keys, tau, totals)
    return SampleParts(tau, n_keys, 1, (0,), keys, totals, 1)
