"""The binary format of a sketch, versions 1 to 4 (``encode`` writes 4): the header every kind shares and its
frame. Every byte offset of the header lives here;
``docs/format.md`` explains the rules (canonical bytes, widths, compatibility).

All fields little-endian::

    offset size field
    0      4    magic b"SKSK"
    4      2    format version (4; 1, 2 and 3 (only the virtual layout) are still read)
    6      1    sketch kind (1 AGMS, 2 hash, 3 skimmed, 4 pair, 5 join sample, 6 heavy-key sketch;
                skimsketch.format.kinds maps it to a class)
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

Each family writes its extension in its own layout module: the linear sketches' in
:mod:`skimsketch.sketch.layout` (pair, hierarchy, key range, virtual layout, exact mode), the join
sample's in :mod:`skimsketch.sample.layout`, the heavy-key sketch's (kind 6: its table of heavy keys; its residual
Count-Sketch is the main counters) in :mod:`skimsketch.heavy.codec`; ``docs/format.md`` has them all.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from ..errors import CorruptSketchError
from ..keys.hashing import MAX_DEPTH

__all__ = ["COUNTER_TYPES", "FRAME_BYTES", "HEADER_SIZE", "KEY_DOMAINS", "MAGIC", "MAX_ROW_COUNTERS",
           "READ_VERSIONS", "SAMPLE_KIND", "SAMPLE_MAX_BUDGET", "SAMPLE_MIN_BUDGET", "SIGN_VERSION", "VERSION",
           "VIRTUAL_VERSION", "Header", "check_extension", "counter_type", "decode", "encode"]

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
SAMPLE_MIN_BUDGET, SAMPLE_MAX_BUDGET = 148, 1 << 30  # kind 5: the header width is the byte budget B, in this range
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


def check_extension(what: str, magic: bytes, want_magic: bytes, version: int, want_version: int,
                    reserved_ok: bool) -> None:
    """The checks every extension's head shares: magic, layout version, reserved bytes."""
    if magic != want_magic:
        raise CorruptSketchError(f"bad {what} extension magic {magic!r}")
    if version != want_version:
        raise CorruptSketchError(f"unknown {what} extension version {version}")
    if not reserved_ok:
        raise CorruptSketchError(f"reserved {what} extension bytes are set")
