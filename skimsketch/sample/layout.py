"""The join sample's extension of the format (kind 5; :mod:`skimsketch.format.header` has the header; every
byte offset of this layout lives here, ``docs/format.md`` explains it).

Kind 5, the join sample (:mod:`skimsketch.sample.join_sample`; version 4 only) has no counters.
Header: width = the byte budget B (148 <= B <= 2**30; layout 1: the capacity m), depth 1,
domain 0, kind parameter 0.0, flags bit0 (empty: no fingerprint with a non-zero total and a
zero null weight) and bit2 (float totals) only, counter type 1 (integer totals) or 2
(float64), the key domain, and the total and null weights of the whole table (every key,
kept or not). Its extension (layout 2), offsets relative to the extension::

    offset size field
    0      4    magic b"SMPL"
    4      1    layout version (2, or 3 when the scale exponent is not 0; layout 1 is read, see below)
    5      1    flags: bit0 partial (a piece of a key-hash partitioning: a bitmap follows),
                bit1 legacy (fingerprints h >> 12: a sample read from layout 1; with bit0, a layout-1
                piece, whose partitions came from another hash word and are not checked)
    6      2    layout 2: reserved, zero; layout 3: the scale exponent sigma (i16, not 0; skimsketch.sample.scale)
    8      4    n entries (u32)
    12     4    partition count P (u32): 1 for a whole sample, 2..4096 for a partial one
    16     8    tau (f64): the (n+1)-th smallest rank at totals times 2**sigma, +inf when every fingerprint is kept
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
``n == K``), zero and non-finite totals, the empty flag, and a scale exponent (layout 3) only with
float totals; the class checks what needs the ranks (no entry above tau, the partitions, the scale
exponent the sample's own: :func:`skimsketch.sample.scale.storage`). Layout 1 (the previous release: keys and
4- or 8-byte totals, width = the capacity m) is still read, whole samples and partial pieces
(``SampleParts.layout == 1``, the keys in ``fps``); :mod:`skimsketch.sample.join_sample` converts it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import CorruptSketchError
from ..format.header import (COUNTER_TYPES, FRAME_BYTES, SAMPLE_MAX_BUDGET, SAMPLE_MIN_BUDGET, Header, check_extension,
                             counter_type)
from ..kernels import fits_int32
from . import codec as sample_codec

__all__ = ["SAMPLE_HEADER_BYTES", "SAMPLE_OVERHEAD", "SampleParts", "decode_sample", "encode_sample",
           "sample_max_entries"]

# -- kind 5: the join sample's extension (module docstring) ------------
SAMPLE_MAGIC = b"SMPL"
SAMPLE_VERSION = 2  # what encode_sample writes at scale exponent 0; layout 1 (12-byte entries) is still read
SAMPLE_SCALED = 3  # layout 2 with the scale exponent (i16, not 0) in the reserved bytes
_SCALE = struct.Struct("<h")
_SAMPLE_HEAD = struct.Struct("<4sBB2sIIdQ")  # 32 bytes
_SAMPLE_CODE = struct.Struct("<BI")  # layout 2: Rice parameter, fingerprint-section bytes
SAMPLE_HEADER_BYTES = _SAMPLE_HEAD.size
SAMPLE_OVERHEAD = FRAME_BYTES + _SAMPLE_HEAD.size + _SAMPLE_CODE.size  # 105: a layout-2 sample's bytes beyond entries
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
    scale: int = 0  # sigma: tau is the rank at totals times 2**sigma (layout 3 when not 0)


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
    """Layout 2 of ``p`` (``p.fps`` ascending, ``p.totals`` in their order), layout 3 when ``p.scale`` is not 0."""
    flags = (SAMPLE_PARTIAL if p.parts > 1 else 0) | (SAMPLE_LEGACY if p.legacy else 0)
    version = SAMPLE_SCALED if p.scale else SAMPLE_VERSION
    head = _SAMPLE_HEAD.pack(SAMPLE_MAGIC, version, flags, _SCALE.pack(p.scale), len(p.fps), p.parts, p.tau, p.n_keys)
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
    if version == SAMPLE_SCALED and reserved == b"\0\0":
        raise CorruptSketchError("a layout-3 join sample has a scale exponent of 0 (layout 2 writes that sample)")
    check_extension("sample", magic, SAMPLE_MAGIC, version, version if version in (1, 2, 3) else SAMPLE_VERSION,
                     (reserved != b"\0\0") == (version == SAMPLE_SCALED)
                     and flags in ((0, 1) if version == 1 else (0, SAMPLE_PARTIAL, SAMPLE_LEGACY,
                                                                SAMPLE_PARTIAL | SAMPLE_LEGACY)))
    if version == 1:
        return _decode_sample_v1(ext, head, flags, n, parts, tau, n_keys)
    nb, covered = _sample_claims(ext, flags, parts)
    if version == SAMPLE_SCALED and not head.float_counters:
        raise CorruptSketchError("a layout-3 join sample (a scale exponent) has float totals")
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
    rest = ext[at + fp_bytes:]
    # every size check before the allocations it guards: n is bounded by the bytes present
    if head.float_counters and len(rest) != 8 * n:
        raise CorruptSketchError(f"sample totals section of {len(rest)} bytes, {n} float totals need {8 * n}")
    if not head.float_counters and not n <= len(rest) <= 10 * n:
        raise CorruptSketchError(f"sample totals section of {len(rest)} bytes does not hold exactly {n} varints "
                                 "(1 to 10 bytes each)")
    fps = sample_codec.rice_decode(ext[at:at + fp_bytes], n, r)
    if head.float_counters:
        totals = np.frombuffer(rest, "<f8").astype(np.float64)
    else:
        totals = sample_codec.varint_decode(rest, n)
    _check_sample_state(head, n, n_keys, tau, totals)
    return SampleParts(tau, n_keys, parts, covered, fps, totals, legacy=bool(flags & SAMPLE_LEGACY),
                       scale=_SCALE.unpack(reserved)[0])


def _decode_sample_v1(ext: bytes, head: Header, flags: int, n: int, parts: int, tau: float,
                      n_keys: int) -> SampleParts:
    """Layout 1 (12- or 16-byte entries, the header width the capacity m): whole samples and partial pieces
    (their bitmap as in layout 2; a piece keeps ``min(m, K)`` entries at any total width)."""
    nb, covered = _sample_claims(ext, flags, parts)
    m, cw = head.width, head.counter_width
    if not 4 <= m <= SAMPLE_MAX_ENTRIES:
        raise CorruptSketchError(f"sample capacity {m} outside [4, {SAMPLE_MAX_ENTRIES}]")
    size = _SAMPLE_HEAD.size + nb + (8 + cw) * n
    if len(ext) != size:
        raise CorruptSketchError(f"sample extension size mismatch: {len(ext)} bytes, {n} entries imply {size}")
    partial, wide = parts > 1, not head.float_counters and cw == 8
    if n != min(n_keys, (3 * m) // 4 if wide and not partial else m):
        raise CorruptSketchError(f"sample of capacity {m} with {n} entries of {n_keys} keys (format.py, kind 5, "
                                 "layout 1: the entries kept)")
    at = _SAMPLE_HEAD.size + nb
    keys = np.frombuffer(ext, "<i8", n, at).astype(np.int64)
    totals = np.frombuffer(ext, COUNTER_TYPES[counter_type(head.float_counters, cw)], n, at + 8 * n)
    totals = totals.astype(np.float64 if head.float_counters else np.int64)
    if wide and (partial or math.isinf(tau)) and fits_int32(totals):
        raise CorruptSketchError("non-canonical total width: int64 totals that all fit in int32")
    _check_sample_state(head, n, n_keys, tau, totals)
    return SampleParts(tau, n_keys, parts, covered, keys, totals, 1)
