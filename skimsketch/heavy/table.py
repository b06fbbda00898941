"""The table of heavy keys: buckets of 8 slots, two bucket choices per key, randomised admission.

State (all numpy, the layout the bytes and the compiled kernel share, ``docs/heavy.md``):
``keys`` (int64, ``B * 8`` slots, bucket-major), ``counts`` (int64 or float64; 0 = empty
slot, whose key is 0), ``clean`` (uint8 per bucket, bit ``j``: slot ``j``'s key provably
has no residual), ``spilled`` (the spilled filter, ``S = F B`` bits, bit ``i & 7`` of byte
``i >> 3``: a key that ever sent weight to the residual has both its filter bits set) and
``draws`` (admission draws so far).

One arrival ``(k, w)``, ``w > 0`` (:func:`admit_reference`; the compiled kernel is the same loop):

1. ``b1, b2 = buckets(k)``; if a slot of ``b1`` (then ``b2``) holds ``k``, its count grows by ``w``;
2. else if either bucket has an empty slot: the first empty slot of ``b1`` when ``n1 <= n2``
   (occupied slots), else of ``b2``, takes ``(k, w)``, clean unless both of ``k``'s filter bits are set;
3. else the smaller of the two bucket minima (``b1``'s on a tie; the first slot holding it),
   ``m``, is replaced with probability ``w / (m + w)`` (draw ``u``: ``(u >> 11) * 2**-53 < p`` in
   double precision): its key and count ``m`` are *spilled* and ``(k, w)`` takes the slot (clean
   unless both its filter bits are set); otherwise ``(k, w)`` itself is spilled. A spilled key sets
   both of its filter bits.

Spills go to the residual Count-Sketch, so ``f = table + residual`` holds exactly after every
arrival. Invariants (tested): a key whose weight ever reached the residual has both filter bits
set; a clean slot's key has a zero residual. So a key is *provably without residual* on a side
when that side holds it clean, or when one of its filter bits there is unset (then, if the side
does not hold it, its frequency there is 0). Admission never reads the sketch's hashes: buckets
and filter bits come from ``y = mix(key ^ mix(seed ^ TABLE_SALT))`` and ``mix(y)``, the draws from
``mix(mix(seed ^ RNG_SALT) + (n + 1) G)``, so the residual is independent of the Count-Sketch's
signs given the stream.
"""

from __future__ import annotations

import numpy as np

from ..keys.hashing import mix
from ..kernels.heavy import admit as kernel_admit
from ..kernels.heavy import admit_reference, bucket_pairs, filter_pairs

__all__ = ["FILTER_PER_BUCKET", "SLOTS", "TABLE_SALT", "RNG_SALT", "HeavyTable", "admit", "admit_reference",
           "bucket_pairs", "filter_pairs", "merge_into"]

SLOTS = 8
TABLE_SALT = 0x48454156595F5442  # b"HEAVY_TB" read big-endian
RNG_SALT = 0x48454156595F524E  # b"HEAVY_RN"
FILTER_PER_BUCKET = 64  # spilled-filter bits per bucket (docs/heavy.md: measured)
_M64 = (1 << 64) - 1


def _mix1(z: int) -> int:
    return int(mix(np.array([z & _M64], dtype=np.uint64))[0])


def table_salt(seed: int) -> int:
    return _mix1(seed ^ TABLE_SALT)


def rng_state(seed: int) -> int:
    return _mix1(seed ^ RNG_SALT)


class HeavyTable:
    """The table's arrays (module docstring) and the queries the estimator needs."""

    __slots__ = ("buckets", "filter_bits", "float_counts", "salt", "rng", "keys", "counts", "clean", "spilled",
                 "draws")

    def __init__(self, buckets: int, seed: int, float_counts: bool, filter_per_bucket: int = FILTER_PER_BUCKET):
        self.buckets, self.float_counts = int(buckets), bool(float_counts)
        self.filter_bits = self.buckets * int(filter_per_bucket)
        self.salt, self.rng = table_salt(seed), rng_state(seed)
        self.keys = np.zeros(self.buckets * SLOTS, dtype=np.int64)
        self.counts = np.zeros(self.buckets * SLOTS, dtype=np.float64 if float_counts else np.int64)
        self.clean = np.zeros(self.buckets, dtype=np.uint8)
        self.spilled = np.zeros((self.filter_bits + 7) // 8, dtype=np.uint8)
        self.draws = 0

    def copy(self) -> HeavyTable:
        out = HeavyTable.__new__(HeavyTable)
        for name in ("buckets", "filter_bits", "float_counts", "salt", "rng", "draws"):
            setattr(out, name, getattr(self, name))
        for name in ("keys", "counts", "clean", "spilled"):
            setattr(out, name, getattr(self, name).copy())
        return out

    def same_state(self, other: HeavyTable) -> bool:
        return self.draws == other.draws and all(
            np.array_equal(getattr(self, n), getattr(other, n)) for n in ("keys", "counts", "clean", "spilled"))

    # -- views ----------------------------------------------------------------
    def occupied(self) -> np.ndarray:
        """Slot indices holding a key (count non-zero), ascending."""
        return np.flatnonzero(self.counts)

    def clean_slots(self) -> np.ndarray:
        """A bool per slot: its clean bit."""
        return np.unpackbits(self.clean, bitorder="little").astype(bool)

    def marked(self, keys: np.ndarray) -> np.ndarray:
        """Per int64 key: both of its spilled-filter bits are set (necessary for any residual)."""
        p1, p2 = filter_pairs(keys, self.filter_bits, self.salt)
        bits = np.unpackbits(self.spilled, bitorder="little").astype(bool)
        return bits[p1] & bits[p2]

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(keys, counts, clean) of the occupied slots, in slot order."""
        occ = self.occupied()
        return self.keys[occ], self.counts[occ], self.clean_slots()[occ]

    @property
    def mass(self):
        """The total count held by the table."""
        return float(self.counts.sum()) if self.float_counts else int(self.counts.sum(dtype=np.int64))

    def no_residual(self, keys: np.ndarray) -> np.ndarray:
        """Per int64 key: True when the key's residual on this side is provably 0 (module docstring:
        it is held clean, or one of its spilled-filter bits is unset)."""
        if len(keys) == 0:
            return np.zeros(0, dtype=bool)
        out = ~self.marked(keys)
        held, clean = self.lookup(keys)
        return out | (held & clean)

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(held, clean) per int64 key: whether the table holds it, and whether that slot is clean."""
        occ = self.occupied()
        tk = self.keys[occ]
        o = np.argsort(tk, kind="stable")
        pos = np.searchsorted(tk[o], keys)
        pos = np.minimum(pos, max(len(tk) - 1, 0))
        held = (tk[o][pos] == keys) if len(tk) else np.zeros(len(keys), dtype=bool)
        clean = np.zeros(len(keys), dtype=bool)
        if held.any():
            clean[held] = self.clean_slots()[occ[o][pos[held]]]
        return held, clean


def admit(t: HeavyTable, keys: np.ndarray, weights, dirty: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Admit the arrivals in order (module docstring; :func:`skimsketch.kernels.heavy.admit`: the compiled loop
    or the reference) -> the spilled ``(keys, weights)`` for the residual."""
    return kernel_admit(t, keys, weights, dirty)


def merge_into(t: HeavyTable, o: HeavyTable) -> tuple[np.ndarray, np.ndarray]:
    """Merge table ``o`` into ``t`` (same buckets and seed) -> the spilled ``(keys, weights)``.

    Keys both hold: counts add, clean if clean in both. ``t``'s other keys stay clean only if ``o``
    provably has none of them (one of the key's buckets not spilled in ``o``). Spilled bits are OR-ed.
    Then ``o``'s other keys, in slot order, are admitted with their counts by the admission rule, never
    clean unless clean in ``o`` (``dirty``)."""
    ko, co, clo = o.entries()
    occ = t.occupied()
    order = np.argsort(t.keys[occ], kind="stable")
    sorted_keys = t.keys[occ][order]
    pos = np.minimum(np.searchsorted(sorted_keys, ko), max(len(sorted_keys) - 1, 0))
    held = sorted_keys[pos] == ko if len(sorted_keys) else np.zeros(len(ko), dtype=bool)
    slots = occ[order][pos[held]]
    t.counts[slots] += co[held]
    bits = t.clean_slots()
    bits[slots] &= clo[held]
    mine = np.setdiff1d(occ, slots, assume_unique=True)
    if len(mine):
        bits[mine] &= ~o.marked(t.keys[mine])
    t.clean = np.packbits(bits, bitorder="little")
    t.spilled = t.spilled | o.spilled
    return admit(t, ko[~held], co[~held], ~clo[~held])
