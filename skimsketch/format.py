"""The binary format (SPEC §5), version 1. Every byte offset lives here.

All fields little-endian::

    offset size field
    0      4    magic b"SKSK"
    4      2    format version (1)
    6      1    sketch kind (1 AGMS, 2 hash, 3 skimmed)
    7      1    flags: bit0 empty, bit1 has domain, bit2 float counters
    8      4    width (u32)
    12     4    depth (u32)
    16     8    seed (u64)
    24     8    domain (u64; 0 = unbounded)
    32     1    counter type (1 int64, 2 float64)
    33     3    reserved, zero
    36     8    kind parameter (f64; skimmed: skim factor; others 0.0)
    44     8    total weight (i64 or f64, as the counters)
    52     8    null weight  (i64 or f64, as the counters)
    60     4    extension length E (u32; kind-specific extra state)
    64     E    extension
    64+E   8*depth*width counters, row-major (i64 or f64)
    ...    4    CRC-32 (zlib) of every byte before it

``decode`` rejects anything else with :class:`CorruptSketchError` naming the
problem; it checks sizes before allocating and never returns a partial sketch.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from .errors import CorruptSketchError
from .hashing import MAX_DEPTH, MAX_WIDTH

__all__ = ["MAGIC", "VERSION", "KINDS", "Header", "encode", "decode"]

MAGIC = b"SKSK"
VERSION = 1
KINDS = {1: "agms", 2: "hash", 3: "skimmed"}
COUNTER_TYPES = {1: np.dtype("<i8"), 2: np.dtype("<f8")}
FLAG_EMPTY, FLAG_DOMAIN, FLAG_FLOAT = 1, 2, 4
_HEAD = struct.Struct("<4sHBBIIQQB3sd")  # up to the kind parameter: 44 bytes
_TAIL = struct.Struct("<8s8sI")  # weights and extension length: 20 bytes
HEADER_SIZE = _HEAD.size + _TAIL.size  # 64
_CRC = struct.Struct("<I")


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


def _scalar_bytes(x, float_counters: bool) -> bytes:
    return struct.pack("<d", float(x)) if float_counters else struct.pack("<q", int(x))


def encode(h: Header, counters: np.ndarray, extension: bytes = b"") -> bytes:
    flags = (FLAG_EMPTY if h.empty else 0) | (FLAG_DOMAIN if h.domain else 0) | (FLAG_FLOAT if h.float_counters else 0)
    ctype = 2 if h.float_counters else 1
    head = _HEAD.pack(MAGIC, VERSION, h.kind, flags, h.width, h.depth, h.seed, h.domain or 0, ctype, b"\0\0\0", h.param)
    tail = _TAIL.pack(
        _scalar_bytes(h.total_weight, h.float_counters), _scalar_bytes(h.null_weight, h.float_counters), len(extension)
    )
    body = head + tail + extension + np.ascontiguousarray(counters, dtype=COUNTER_TYPES[ctype]).tobytes()
    return body + _CRC.pack(zlib.crc32(body))


def decode(blob) -> tuple[Header, np.ndarray, bytes]:
    """Parse and validate ``blob`` -> (header, counters (depth, width), extension)."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise CorruptSketchError(f"expected bytes, got {type(blob).__name__}")
    b = bytes(blob)
    if len(b) < HEADER_SIZE + _CRC.size:
        raise CorruptSketchError(f"truncated: {len(b)} bytes is shorter than the {HEADER_SIZE + 4}-byte minimum")
    magic, version, kind, flags, width, depth, seed, domain, ctype, reserved, param = _HEAD.unpack_from(b, 0)
    if magic != MAGIC:
        raise CorruptSketchError(f"bad magic {magic!r}: not a skimsketch sketch")
    if version != VERSION:
        raise CorruptSketchError(f"unknown format version {version} (this library reads version {VERSION})")
    if kind not in KINDS:
        raise CorruptSketchError(f"unknown sketch kind {kind}")
    if ctype not in COUNTER_TYPES:
        raise CorruptSketchError(f"unknown counter type {ctype}")
    if reserved != b"\0\0\0" or flags & ~(FLAG_EMPTY | FLAG_DOMAIN | FLAG_FLOAT):
        raise CorruptSketchError("reserved header bits are set")
    float_counters = ctype == 2
    if bool(flags & FLAG_FLOAT) != float_counters:
        raise CorruptSketchError("float-counter flag disagrees with the counter type")
    if bool(flags & FLAG_DOMAIN) != (domain != 0):
        raise CorruptSketchError("domain flag disagrees with the domain field")
    if not (1 <= width <= MAX_WIDTH and 1 <= depth <= MAX_DEPTH):
        raise CorruptSketchError(f"shape {depth}x{width} out of range")
    if not math.isfinite(param):
        raise CorruptSketchError("kind parameter is not finite")
    tw_raw, nw_raw, ext_len = _TAIL.unpack_from(b, _HEAD.size)
    expected = HEADER_SIZE + ext_len + 8 * width * depth + _CRC.size
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
    counters = np.frombuffer(b, COUNTER_TYPES[ctype], width * depth, HEADER_SIZE + ext_len).reshape(depth, width)
    counters = counters.astype(counters.dtype.newbyteorder("="), copy=True)
    if float_counters and not np.isfinite(counters).all():
        raise CorruptSketchError("counters contain NaN or infinity")
    head = Header(kind, width, depth, seed, domain or None, float_counters, param, total, null, bool(flags & FLAG_EMPTY))
    if head.empty and (total != 0 or null != 0 or counters.any()):
        raise CorruptSketchError("sketch is flagged empty but has non-zero state")
    return head, counters, ext
