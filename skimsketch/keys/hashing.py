"""The one seeded hash family of skimsketch (docs/algorithms.md, "Keys").

Every bucket and sign in every sketch, on every code path (in-memory numpy,
Spark executors, SQL functions), is computed here, from the canonical int64
key (see :mod:`skimsketch.keys.canonical`) and the sketch's ``seed`` (0 <= seed < 2**64).
The definition is fixed by the format version; changing it is a format change.

Definition (all arithmetic on unsigned 64-bit words, modulo 2**64)::

    mix(z)     = splitmix64 finaliser: z ^= z>>30; z *= 0xBF58476D1CE4E5B9;
                 z ^= z>>27; z *= 0x94D049BB133111EB; z ^= z>>31
    G          = 0x9E3779B97F4A7C15
    state(s)   = mix(seed + (s+1)*G)                      (stream s of the seed)
    a, b       = state(0), mix(state(0) + G)
    fold(x)    = lo32(x) XOR hi32(a*hi32(x) + b)          (64 -> 32 bit keys)
    c0, c1, c2 = fold & 0xFFFF, fold >> 16, c0 + c1       (Thorup-Zhang chars)
    T_i[c][j]  = mix(state(i+1) + (j*2**18 + c + 1)*G)    (i = 0, 1, 2)
    word_j(x)  = T_0[c0][j] XOR T_1[c1][j] XOR T_2[c2][j]

* Hash / skimmed sketches, table p: ``u = 32-bit half (p & 1) of word_{p>>1}``;
  bucket ``((u & 0x7FFFFFFF) * width) >> 31``; sign ``+1`` if bit 31 of ``u``
  is 0 else ``-1``.
* AGMS counter (p, q): sign from bit ``q & 63`` of ``word_{2**20 + p*2**12 + (q>>6)}``,
  so an AGMS sketch's counters do not depend on its shape: a smaller sketch
  with the same seed is a sub-grid of a larger one.
* The prefix hierarchy of unbounded-key skimmed sketches draws its tables
  from ``T_0`` at word indices ``>= 2**22`` (definition in
  :mod:`skimsketch.sketch.skim.hierarchy`); no other sketch uses those words.

Guarantees. ``word_j`` is Thorup and Zhang's tabulation hash for two 16-bit
characters with the derived character ``c0 + c1`` (SODA 2004), which is
4-wise independent over distinct 32-bit folded keys when the tables are
random; disjoint bit fields of one word are independent, so every table's
sign is 4-wise and every bucket pairwise independent, and tables are mutually
independent. ``fold`` is injective on keys sharing their high 32 bits (all
keys in [0, 2**32), and all small negative keys) and otherwise collides two
given keys with probability 2**-32 (``a*hi + b`` is Dietzfelbinger's strongly
universal multiply-add-shift). The tables come from a splitmix64 stream, so
they are reproducible on every platform and never use Python's ``hash()``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["HashFamily", "family", "mix", "unmix", "signed_virtual_ids", "MAX_WIDTH", "MAX_DEPTH", "AGMS_WORD_BASE"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
# their modular inverses (for unmix)
_M1_INV = np.uint64(pow(int(_M1), -1, 1 << 64))
_M2_INV = np.uint64(pow(int(_M2), -1, 1 << 64))
_G = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1
MAX_WIDTH = 1 << 24
MAX_DEPTH = 255
AGMS_WORD_BASE = 1 << 20
_TABLE_SIZES = (1 << 16, 1 << 16, (1 << 17) - 1)
_CHUNK = 1 << 16


def mix(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (in place where possible): a bijection of 64-bit words."""
    z = z ^ (z >> np.uint64(30))
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


def signed_virtual_ids(keys: np.ndarray, salt: int, lg: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, signs) of int64 keys in the virtual layout (skimsketch/sketch/skim/virtual.py): ``y = mix(key ^ salt)``,
    id ``y >> (64 - lg)`` in ``[0, 2**lg)``, sign ``-1`` when ``y`` is odd else ``+1`` (both int64)."""
    y = mix(np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64) ^ np.uint64(salt))
    return (y >> np.uint64(64 - lg)).astype(np.int64), 1 - 2 * (y & np.uint64(1)).astype(np.int64)


def unmix(z: np.ndarray) -> np.ndarray:
    """Inverse of :func:`mix` on a uint64 array.

    >>> z = np.array([0, 1, 2**64 - 1], dtype=np.uint64)
    >>> bool((unmix(mix(z.copy())) == z).all())
    True
    """
    z = z ^ (z >> np.uint64(31)) ^ (z >> np.uint64(62))
    z = z * _M2_INV
    z = z ^ (z >> np.uint64(27)) ^ (z >> np.uint64(54))
    z = z * _M1_INV
    return z ^ (z >> np.uint64(30)) ^ (z >> np.uint64(60))


def _mix_int(z: int) -> int:
    return int(mix(np.array([z & _MASK64], dtype=np.uint64))[0])


class HashFamily:
    """Buckets and signs for one seed. Obtain instances with :func:`family`."""

    def __init__(self, seed: int):
        if not 0 <= seed < 1 << 64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        self.seed = seed
        self._states = [_mix_int(seed + (s + 1) * _G) for s in range(4)]
        self._a = np.uint64(self._states[0])
        self._b = np.uint64(_mix_int(self._states[0] + _G))
        self._tables: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    # -- building blocks -------------------------------------------------
    def fold(self, keys: np.ndarray) -> np.ndarray:
        """64-bit keys -> 32-bit folded keys (uint32)."""
        halves = np.ascontiguousarray(keys, dtype=np.int64).view(np.uint32).reshape(-1, 2)
        g = halves[:, 1].astype(np.uint64)
        g *= self._a
        g += self._b
        return halves[:, 0] ^ g.view(np.uint32).reshape(-1, 2)[:, 1]

    def chars(self, keys: np.ndarray):
        """The three tabulation characters (c0, c1, c0 + c1) as intp arrays."""
        f = self.fold(keys)
        c0 = (f & np.uint32(0xFFFF)).astype(np.intp)
        c1 = (f >> np.uint32(16)).astype(np.intp)
        return c0, c1, c0 + c1

    def table_entries(self, i: int, chars: np.ndarray, words: np.ndarray) -> np.ndarray:
        """``T_i[chars][words]`` as a (len(chars), len(words)) uint64 array."""
        j = words.astype(np.uint64)[None, :] * np.uint64(1 << 18)
        c = chars.astype(np.uint64)[:, None] + np.uint64(1)
        return mix(np.uint64(self._states[i + 1]) + (j + c) * np.uint64(_G))

    def _hash_tables(self, n_words: int):
        """T_0, T_1, T_2 with ``n_words`` words per entry (uint64, one row per character)."""
        t = self._tables.get(n_words)
        if t is None:
            words = np.arange(n_words, dtype=np.uint64)
            t = tuple(
                np.ascontiguousarray(self.table_entries(i, np.arange(size), words))
                for i, size in enumerate(_TABLE_SIZES)
            )
            self._tables[n_words] = t
        return t

    def tables(self, n_words: int):
        """``(T_0, T_1, T_2)``, each C-contiguous uint64 of shape (characters, ``n_words``): the
        tables of ``word_0 .. word_{n_words-1}`` (cached; read-only use, for the compiled kernels)."""
        return self._hash_tables(n_words)

    @property
    def fold_constants(self) -> tuple[int, int]:
        """``(a, b)`` of ``fold`` as Python ints."""
        return int(self._a), int(self._b)

    def words(self, keys: np.ndarray, n_words: int) -> np.ndarray:
        """``word_0 .. word_{n_words-1}`` of every key -> (n, n_words) uint64."""
        # gathers of 4-word rows are much faster than of 3-word rows: fetch the extra word
        fetch = 4 if n_words == 3 else n_words
        t0, t1, t2 = self._hash_tables(fetch)
        c0, c1, c2 = self.chars(keys)
        out = np.take(t0, c0, axis=0)
        out ^= np.take(t1, c1, axis=0)
        out ^= np.take(t2, c2, axis=0)
        return out if fetch == n_words else out[:, :n_words]

    # -- hash / skimmed sketch --------------------------------------------
    def row_hashes(self, keys: np.ndarray, depth: int) -> np.ndarray:
        """The 32-bit row hash ``u`` of every key in tables 0..depth-1 -> (n, depth) uint32."""
        n_words = (depth + 1) // 2
        w = np.ascontiguousarray(self.words(keys, n_words))
        return w.view(np.uint32).reshape(len(keys), 2 * n_words)[:, :depth]

    def buckets_signs(self, keys: np.ndarray, width: int, depth: int):
        """(buckets int64 (depth, n), signs int8 (depth, n)) for the hash sketch layout."""
        u = self.row_hashes(np.ascontiguousarray(keys, dtype=np.int64), depth).T
        buckets = ((u & np.uint32(0x7FFFFFFF)).astype(np.uint64) * np.uint64(width)) >> np.uint64(31)
        signs = 1 - 2 * (u >> np.uint32(31)).astype(np.int8)
        return buckets.astype(np.int64), signs

    def signed_cells(self, keys: np.ndarray, width: int, depth: int) -> np.ndarray:
        """Flat cell ids ``p*2*width + 2*bucket + (sign < 0)`` -> (n, depth) int64.

        A bincount of these ids over ``depth*2*width`` cells gives, for every
        counter, the weight added with sign +1 (even cells) and -1 (odd cells).
        """
        u = self.row_hashes(keys, depth)
        cells = (u & np.uint32(0x7FFFFFFF)).astype(np.uint64)
        cells *= np.uint64(width)
        cells >>= np.uint64(31)
        cells <<= np.uint64(1)  # 2 * bucket
        cells |= u >> np.uint32(31)
        cells += self._row_offsets(width, depth)
        return cells.view(np.int64)

    @staticmethod
    @lru_cache(maxsize=256)
    def _row_offsets(width: int, depth: int) -> np.ndarray:
        return np.arange(depth, dtype=np.uint64) * np.uint64(2 * width)

    # -- AGMS -------------------------------------------------------------
    def agms_sign_bits(self, keys: np.ndarray, row: int, width: int) -> np.ndarray:
        """Bits ``b[x, q]`` with AGMS sign ``xi_{row,q}(x) = 1 - 2 b`` -> (n, width) uint8."""
        n_words = (width + 63) // 64
        words = np.arange(n_words, dtype=np.uint64) + np.uint64(AGMS_WORD_BASE + (row << 12))
        out = None
        for i, chars in enumerate(self.chars(keys)):
            uniq, inv = np.unique(chars, return_inverse=True)
            part = self.table_entries(i, uniq, words)[inv]
            out = part if out is None else out ^ part
        bits = np.unpackbits(out.view(np.uint8).reshape(len(keys), -1), axis=1, bitorder="little")
        return bits[:, :width]


@lru_cache(maxsize=64)
def family(seed: int) -> HashFamily:
    """The (cached) hash family of ``seed``."""
    return HashFamily(seed)
