"""String fingerprints: the int64 canonical key of a ``str``/``bytes`` key (docs/inputs.md).

``fingerprint64(b)`` is MurmurHash3 x64-128 (seed 0) of the bytes, first 64 bits,
signed (``mmh3.hash64(b, 0, True, True)[0]``); a ``str`` is hashed as its UTF-8 bytes.
This module holds the scalar definition and the *numpy reference* of the vectorised
form over Arrow-style ``(offsets, data)`` buffers. The compiled kernel computes the same
values (:mod:`skimsketch.kernels` picks one; tests check they agree byte for byte).

Cost is linear in the bytes: strings of up to :data:`LONG_KEY_BYTES` are hashed column by
column in numpy, longer ones one call each to ``mmh3`` (memory speed).
"""

from __future__ import annotations

import mmh3
import numpy as np

__all__ = ["LONG_KEY_BYTES", "fingerprint64", "fingerprints_reference"]

# strings longer than this are hashed one by one by mmh3: the block-by-block numpy form
# costs a numpy call per 16 bytes of the longest string in a group
LONG_KEY_BYTES = 256


def fingerprint64(data: bytes) -> int:
    """Signed 64-bit fingerprint of canonical key bytes (MurmurHash3 x64-128, seed 0).

    >>> fingerprint64(b"skim") == fingerprint64("skim".encode("utf-8"))
    True
    """
    return mmh3.hash64(data, 0, True, True)[0]


_C1 = np.uint64(0x87C37B91114253D5)
_C2 = np.uint64(0x4CF5AD432745937F)
_FM1 = np.uint64(0xFF51AFD7ED558CCD)
_FM2 = np.uint64(0xC4CEB9FE1A85EC53)
_N1 = np.uint64(0x52DCE729)
_N2 = np.uint64(0x38495AB5)
_U5 = np.uint64(5)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(k: np.ndarray) -> np.ndarray:
    k ^= k >> np.uint64(33)
    k *= _FM1
    k ^= k >> np.uint64(33)
    k *= _FM2
    k ^= k >> np.uint64(33)
    return k


_GATHER_BYTES = 1 << 21  # bytes gathered per step (bounds the index temporaries)
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _murmur_rows(word, nblocks: int, lens: np.ndarray) -> np.ndarray:
    """h1 of MurmurHash3_x64_128 (seed 0) for strings of ``nblocks`` full 16-byte blocks plus a tail.

    ``word(k)`` returns the k-th little-endian 8-byte word of every string,
    zero beyond its end. A zero tail word contributes nothing (0 * c = 0), so
    the tail is mixed unconditionally."""
    h1 = np.zeros(len(lens), dtype=np.uint64)
    h2 = np.zeros(len(lens), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(nblocks + 1):
            k1 = word(2 * j) * _C1
            k1 = _rotl(k1, 31)
            k1 *= _C2
            h1 ^= k1
            k2 = word(2 * j + 1) * _C2
            k2 = _rotl(k2, 33)
            k2 *= _C1
            if j == nblocks:  # tail: no rounds after the xor
                h2 ^= k2
                break
            h1 = _rotl(h1, 27)
            h1 += h2
            h1 = h1 * _U5 + _N1
            h2 ^= k2
            h2 = _rotl(h2, 31)
            h2 += h1
            h2 = h2 * _U5 + _N2
        ln = lens.astype(np.uint64)
        h1 ^= ln
        h2 ^= ln
        h1 += h2
        h2 += h1
        h1 = _fmix(h1)
        h2 = _fmix(h2)
        h1 += h2
    return h1.view(np.int64)


def fingerprints_reference(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``fingerprint64`` of every byte string ``data[offsets[i]:offsets[i+1]]`` -> int64 array (numpy).

    Strings are grouped by their number of 16-byte blocks, gathered into a zero-padded
    byte matrix viewed as little-endian words (masked past each string's end) and hashed
    column by column; strings longer than :data:`LONG_KEY_BYTES` go to ``mmh3`` one by one.

    >>> b = [b"skim", b"", "héllo".encode(), b"x" * 40, b"y" * 1000]
    >>> offs = np.cumsum([0] + [len(x) for x in b])
    >>> fingerprints_reference(offs, np.frombuffer(b"".join(b), np.uint8)).tolist() == [fingerprint64(x) for x in b]
    True
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    out = np.empty(n, dtype=np.int64)
    if n <= 0:
        return out
    data = np.asarray(data, dtype=np.uint8)
    lens = np.diff(offsets)
    long = lens > LONG_KEY_BYTES
    for i in np.flatnonzero(long).tolist():
        out[i] = fingerprint64(data[offsets[i] : offsets[i + 1]].tobytes())
    short = np.flatnonzero(~long)
    if not len(short):
        return out
    buf = np.concatenate([data[: int(offsets[-1])], np.zeros(16, dtype=np.uint8)])
    nblocks = lens // 16
    uniq = np.unique(nblocks[short])
    for nb in uniq.tolist():
        rows = short if len(uniq) == 1 else short[nblocks[short] == nb]
        width = 16 * (nb + 1)
        step = max(1, _GATHER_BYTES // width)
        cols = np.arange(width)
        for s in range(0, len(rows), step):
            r = rows[s : s + step]
            ln = lens[r]
            # every string's bytes, zero-padded on the right: one byte gather, viewed as words
            words = buf[offsets[r][:, None] + cols[None, :]].view("<u8")

            def word(k, words=words, ln=ln):
                return words[:, k].astype(np.uint64) & _MASKS[np.clip(ln - 8 * k, 0, 8)]

            out[r] = _murmur_rows(word, nb, ln)
    return out
