"""The heavy-key table's admission loop (:mod:`skimsketch.heavy.table`, ``docs/heavy.md``): its hashes, the
written-down reference (plain Python, one arrival at a time) and the dispatch to the compiled loop
(``heavy_admit`` in ``ck_heavy.c``), which gives the same state, draws and spills
(``tests/core/heavy/test_table.py``).

The loop works on a table object with the arrays ``keys`` (int64), ``counts`` (int64 or float64),
``clean`` and ``spilled`` (uint8 bit arrays) and the scalars ``buckets``, ``filter_bits``, ``salt``,
``rng``, ``draws`` and ``float_counts``; it updates them in place.
"""

from __future__ import annotations

import numpy as np

from ..keys.hashing import mix
from . import active_extension

__all__ = ["admit", "admit_reference", "bucket_pairs", "filter_pairs"]

_G = 0x9E3779B97F4A7C15
_M64 = (1 << 64) - 1
SLOTS = 8


def _halves(y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    hi, lo = y >> np.uint64(32), y & np.uint64(0xFFFFFFFF)
    return (hi * np.uint64(n)) >> np.uint64(32), lo


def bucket_pairs(keys: np.ndarray, buckets: int, salt: int) -> tuple[np.ndarray, np.ndarray]:
    """``(b1, b2)`` (int64) of int64 keys: ``y = mix(key ^ salt)``, ``b1 = (hi32(y) B) >> 32``,
    ``b2 = (b1 + 1 + ((lo32(y) (B - 1)) >> 32)) mod B`` (two distinct buckets, ``B >= 2``)."""
    y = mix(np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64) ^ np.uint64(salt))
    b1, lo = _halves(y, buckets)
    b2 = (b1 + np.uint64(1) + ((lo * np.uint64(buckets - 1)) >> np.uint64(32))) % np.uint64(buckets)
    return b1.astype(np.int64), b2.astype(np.int64)


def filter_pairs(keys: np.ndarray, bits: int, salt: int) -> tuple[np.ndarray, np.ndarray]:
    """The key's two bits ``(p1, p2)`` (int64) in the spilled filter of ``bits`` bits: ``z = mix(mix(key ^ salt))``,
    ``p1 = (hi32(z) S) >> 32``, ``p2 = (lo32(z) S) >> 32`` (they may coincide)."""
    z = mix(mix(np.ascontiguousarray(keys, dtype=np.int64).view(np.uint64) ^ np.uint64(salt)))
    p1, lo = _halves(z, bits)
    return p1.astype(np.int64), ((lo * np.uint64(bits)) >> np.uint64(32)).astype(np.int64)


def _mix_py(z: int) -> int:
    """``mix`` on one Python int (the reference loop's, without numpy per key)."""
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & _M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _filter_py(key: int, bits: int, salt: int) -> tuple[int, int]:
    z = _mix_py(_mix_py((key & _M64) ^ salt))
    return ((z >> 32) * bits) >> 32, ((z & 0xFFFFFFFF) * bits) >> 32


def admit_reference(t, keys: np.ndarray, weights, spill_keys: list, spill_weights: list,
                    dirty: np.ndarray | None = None) -> None:
    """Admit each ``(keys[i], weights[i])`` in order (weights >= 0, zeros skipped; None: 1 each), appending
    every spilled ``(key, weight)`` to the lists: the written-down definition (module docstring), one key
    at a time in plain Python. ``dirty[i]`` (merges): the arrival may have a residual elsewhere, so its slot
    is never clean."""
    b1s, b2s = bucket_pairs(keys, t.buckets, t.salt)
    p1s, p2s = filter_pairs(keys, t.filter_bits, t.salt)
    tk, tc = t.keys.tolist(), t.counts.tolist()
    clean = t.clean_slots().tolist()
    spilled = bytearray(t.spilled.tobytes())
    one = 1.0 if t.float_counts else 1
    kl, b1l, b2l, p1l, p2l = keys.tolist(), b1s.tolist(), b2s.tolist(), p1s.tolist(), p2s.tolist()
    wl = [one] * len(kl) if weights is None else weights.tolist()
    dl = [False] * len(kl) if dirty is None else dirty.tolist()
    draws, rng, bits, salt = t.draws, t.rng, t.filter_bits, t.salt
    for k, w, b1, b2, p1, p2, d in zip(kl, wl, b1l, b2l, p1l, p2l, dl):
        if w == 0:
            continue
        s1, s2 = b1 * SLOTS, b2 * SLOTS
        r1, r2 = range(s1, s1 + SLOTS), range(s2, s2 + SLOTS)
        hit = next((s for s in (*r1, *r2) if tc[s] != 0 and tk[s] == k), -1)
        if hit >= 0:
            tc[hit] += w
            continue
        n1 = sum(1 for s in r1 if tc[s] != 0)
        n2 = sum(1 for s in r2 if tc[s] != 0)
        if n1 < SLOTS or n2 < SLOTS:
            slot = next(s for s in (r1 if n1 <= n2 else r2) if tc[s] == 0)
        else:
            j1 = min(r1, key=lambda s: (tc[s], s))
            j2 = min(r2, key=lambda s: (tc[s], s))
            slot = j1 if tc[j1] <= tc[j2] else j2
            m = tc[slot]
            draws += 1
            u = _mix_py((rng + draws * _G) & _M64) >> 11
            if u * 2.0**-53 < float(w) / (float(m) + float(w)):
                spill_keys.append(tk[slot])
                spill_weights.append(m)
                for q in _filter_py(tk[slot], bits, salt):
                    spilled[q >> 3] |= 1 << (q & 7)
            else:
                spill_keys.append(k)
                spill_weights.append(w)
                spilled[p1 >> 3] |= 1 << (p1 & 7)
                spilled[p2 >> 3] |= 1 << (p2 & 7)
                continue
        tk[slot], tc[slot] = k, w
        clean[slot] = not d and not (spilled[p1 >> 3] >> (p1 & 7) & 1 and spilled[p2 >> 3] >> (p2 & 7) & 1)
    t.keys[:] = tk
    t.counts[:] = tc
    t.clean = np.packbits(np.asarray(clean, dtype=bool), bitorder="little")
    t.spilled = np.frombuffer(bytes(spilled), dtype=np.uint8).copy()
    t.draws = draws


def admit(t, keys: np.ndarray, weights, dirty: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Admit ``(keys[i], weights[i])`` in order (weights >= 0; None: 1 each) -> the spilled ``(keys, weights)``:
    the compiled loop when the compiled kernels are active, else :func:`admit_reference`."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    dt = np.float64 if t.float_counts else np.int64
    if weights is not None:
        weights = np.ascontiguousarray(weights, dtype=dt)
    if dirty is not None:
        dirty = np.ascontiguousarray(dirty, dtype=bool)
    ext = active_extension()
    if ext is not None and hasattr(ext, "heavy_admit"):
        sk, sw = np.empty(len(keys), dtype=np.int64), np.empty(len(keys), dtype=dt)
        ns, t.draws = ext.heavy_admit(keys, weights, None if dirty is None else dirty.view(np.uint8), t.keys,
                                            t.counts, t.clean, t.spilled, t.buckets, t.filter_bits, t.salt, t.rng,
                                            t.draws, sk, sw, t.float_counts)
        return sk[:ns], sw[:ns]
    sk, sw = [], []
    admit_reference(t, keys, weights, sk, sw, dirty)
    return np.asarray(sk, dtype=np.int64), np.asarray(sw, dtype=dt)
