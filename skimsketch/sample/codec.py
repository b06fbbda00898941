"""The join sample's entry codec (format kind 5, layout 2; ``docs/format.md``): Rice-coded sorted
fingerprints and zigzag LEB128 integer totals, vectorised with numpy, exact.

*Fingerprints* (strictly increasing, in ``[0, 2**52)``): deltas ``d_0 = fp_0``,
``d_i = fp_i - fp_{i-1} - 1``; each delta is ``d >> r`` one-bits, a zero-bit, then the low
``r`` bits of ``d`` (most significant first); bits packed MSB-first, the last byte padded with
zeros. ``r`` in ``0..51`` minimises the total bits ``sum((d >> r) + 1 + r)``, ties to the
smallest (``r = 0`` for no entries). The total is convex in ``r`` (its step
``n - sum(ceil((d >> r) / 2))`` never decreases), so :func:`rice_parameter` binary-searches
the first ``r`` whose step is ``>= 0``.

*Integer totals*: ``z = (t << 1) ^ (t >> 63)`` as u64, 7 bits a byte, low groups first, the
high bit set on every byte but the last; canonical (no overlong varint, at most 10 bytes).

Decoders raise :class:`~skimsketch.errors.CorruptSketchError` naming the fault; they never
read beyond their section.
"""

from __future__ import annotations

import numpy as np

from ..errors import CorruptSketchError

__all__ = ["MAX_RICE", "rice_bits", "rice_decode", "rice_encode", "rice_parameter", "varint_decode",
           "varint_encode", "varint_sizes"]

MAX_RICE = 51
_U = np.uint64


def _deltas(fp: np.ndarray) -> np.ndarray:
    """The gaps of strictly increasing fingerprints (uint64)."""
    d = np.diff(np.asarray(fp, dtype=np.int64), prepend=np.int64(-1)) - 1
    return d.astype(np.uint64)


def rice_parameter(d: np.ndarray) -> int:
    """The ``r`` minimising the bits of the deltas ``d`` (module docstring; ties to the smallest)."""
    n = len(d)
    if n == 0:
        return 0
    lo, hi = 0, MAX_RICE  # the answer: the first r < 51 with a step >= 0, else 51
    while lo < hi:
        r = (lo + hi) // 2
        x = d >> _U(r)
        if n - int(((x + _U(1)) >> _U(1)).sum()) >= 0:
            hi = r
        else:
            lo = r + 1
    return lo


def rice_bits(d: np.ndarray, r: int) -> int:
    """Bits of the deltas ``d`` at parameter ``r``."""
    return int((d >> _U(r)).sum()) + len(d) * (1 + r)


def rice_size(fp: np.ndarray) -> int:
    """Bytes of the fingerprint section of sorted ``fp`` at its best parameter."""
    d = _deltas(fp)
    return -(-rice_bits(d, rice_parameter(d)) // 8)


def rice_encode(fp: np.ndarray) -> tuple[int, bytes]:
    """``(r, section)`` of strictly increasing fingerprints."""
    d = _deltas(fp)
    r = rice_parameter(d)
    n = len(d)
    if n == 0:
        return 0, b""
    q = (d >> _U(r)).astype(np.int64)
    step = q + 1 + r
    start = np.cumsum(step) - step
    total = int(step.sum())
    mark = np.zeros(total + 1, dtype=np.int64)  # +1 at each run of ones' start, -1 at its end
    mark[start] += 1  # (the starts are distinct, and so are the ends)
    mark[start + q] -= 1
    bits = (np.cumsum(mark[:-1]) > 0).astype(np.uint8)
    low = start + q + 1
    for j in range(r):
        bits[low + j] = ((d >> _U(r - 1 - j)) & _U(1)).astype(np.uint8)
    return r, np.packbits(bits).tobytes()


def rice_decode(section: bytes, n: int, r: int) -> np.ndarray:
    """The ``n`` fingerprints of a section (int64, strictly increasing), or :class:`CorruptSketchError`."""
    if r > MAX_RICE:
        raise CorruptSketchError(f"sample Rice parameter {r} above {MAX_RICE}")
    if n == 0:
        if section or r:
            raise CorruptSketchError("sample with no entries has a fingerprint section or a Rice parameter")
        return np.zeros(0, dtype=np.int64)
    bits = np.unpackbits(np.frombuffer(section, np.uint8))
    size = len(bits)
    if n * (1 + r) > size:
        raise CorruptSketchError(f"sample fingerprint section of {len(section)} bytes is too short for {n} entries")
    zeros = np.flatnonzero(bits == 0)
    nxt = np.full(size + 1, size, dtype=np.int64)  # the first zero bit at or after each position
    nxt[zeros] = zeros
    first_zero = np.minimum.accumulate(nxt[::-1])[::-1].item
    ends = [0] * n  # the terminating zero bit of each delta
    p = 0
    for i in range(n):
        z = first_zero(p)
        if z >= size or z + r >= size:
            raise CorruptSketchError("sample fingerprint section ends inside a delta")
        ends[i] = z
        p = z + 1 + r
    e = np.asarray(ends, dtype=np.int64)
    starts = np.concatenate([[0], e[:-1] + 1 + r])
    used = p
    if -(-used // 8) != len(section) or bits[used:].any():
        raise CorruptSketchError(f"sample fingerprint section is {len(section)} bytes, its {n} deltas use {used} "
                                 "bits (extra bytes or non-zero padding)")
    q = (e - starts).astype(np.uint64)
    if (q > _U((1 << 52) >> r)).any():
        raise CorruptSketchError("sample fingerprint at or above 2**52")
    d = q << _U(r)
    for j in range(r):
        d |= bits[e + 1 + j].astype(np.uint64) << _U(r - 1 - j)
    if rice_parameter(d) != r:
        raise CorruptSketchError(f"sample Rice parameter {r} is not the best one for its fingerprints")
    with np.errstate(over="ignore"):  # every step is below 2**53: a sum that wraps passes [2**52, 2**64) first
        fp = np.cumsum(d + _U(1)) - _U(1)
    if (fp >= _U(1 << 52)).any():
        raise CorruptSketchError("sample fingerprint at or above 2**52")
    return fp.astype(np.int64)


def _zigzag(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, dtype=np.int64)
    return ((t << np.int64(1)) ^ (t >> np.int64(63))).view(np.uint64)


def varint_sizes(t: np.ndarray) -> np.ndarray:
    """Bytes of each integer total's zigzag LEB128 varint (int64, 1..10)."""
    z = _zigzag(t)
    size = np.ones(len(z), dtype=np.int64)
    for j in range(1, 10):
        size += z >= _U(1 << (7 * j))
    return size


def varint_encode(t: np.ndarray) -> bytes:
    """The zigzag LEB128 varints of integer totals, concatenated."""
    z = _zigzag(t)
    size = varint_sizes(t)
    start = np.cumsum(size) - size
    out = np.zeros(int(size.sum()), dtype=np.uint8)
    for j in range(10):
        has = size > j
        if not has.any():
            break
        more = np.where(size[has] > j + 1, 0x80, 0).astype(np.uint8)
        out[start[has] + j] = ((z[has] >> _U(7 * j)) & _U(0x7F)).astype(np.uint8) | more
    return out.tobytes()


def varint_decode(section: bytes, n: int) -> np.ndarray:
    """``n`` integer totals (int64) filling ``section`` exactly, or :class:`CorruptSketchError`."""
    b = np.frombuffer(section, np.uint8)
    last = np.flatnonzero(b < 0x80)
    if len(last) != n or (n and last[-1] != len(b) - 1) or (n == 0 and len(b)):
        raise CorruptSketchError(f"sample totals section of {len(b)} bytes does not hold exactly {n} varints")
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.concatenate([[0], last[:-1] + 1])
    size = last - start + 1
    if (size > 10).any() or ((size == 10) & (b[last] > 1)).any():
        raise CorruptSketchError("sample total varint longer than 64 bits")
    if ((size > 1) & (b[last] == 0)).any():
        raise CorruptSketchError("sample total varint is overlong (not canonical)")
    pos = np.arange(len(b)) - np.repeat(start, size)
    parts = (b & 0x7F).astype(np.uint64) << (pos * 7).astype(np.uint64)
    z = np.bitwise_or.reduceat(parts, start)
    return ((z >> _U(1)) ^ (np.uint64(0) - (z & _U(1)))).view(np.int64)
