"""``LinearState``: the named counter arrays of a linear sketch, with its total and null weights.

Every sketch here is a linear function of its input: its state is a few arrays
(the main counters; an unbounded skimmed sketch's prefix hierarchy; a pair
sketch's 3-d table) plus the net weight of the non-null and of the null keys.
Updates, merges and subtractions are all "add a delta to every array and to the
two weights"; this class does that in one place, with one rule:

* integer counters are exact and compact: int32 (:data:`INT_COUNTER_BYTES`
  = 4 bytes) while every value fits, widened exactly to int64 (all arrays
  at once) by the first addition that needs it, never wrapped; an addition
  that would overflow int64 raises :class:`CounterOverflowError`. The width
  only grows in memory (:attr:`LinearState.counter_width`); the format
  writes the narrowest width that holds the values
  (:meth:`LinearState.narrowest_width`), so bytes depend on values only;
* float64 state stays finite: an addition that would give inf or NaN raises
  :class:`CounterOverflowError`;
* all or nothing: every new array is computed before any is stored, so a
  failed addition leaves the state unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import CounterOverflowError
from ..kernels import I64, checked_add, fits_int32

__all__ = ["INT_COUNTER_BYTES", "LinearState"]

INT_COUNTER_BYTES = 4  # default integer counter size (int32), widened to 8 (int64) when a value needs it


class LinearState:
    """Named counter arrays (exact integers, or float64) plus total and null weights."""

    __slots__ = ("_arrays", "_float", "_null", "_total")

    def __init__(self, shapes: dict, dtype: str):
        """All-zero arrays of the given ``{name: shape}``; ``dtype`` "int64" (exact integers,
        stored as int32 until a value needs more) or "float64"."""
        self._float = dtype == "float64"
        dt = np.float64 if self._float else np.int32
        self._arrays = {name: np.zeros(shape, dtype=dt) for name, shape in shapes.items()}
        self._total = 0.0 if self._float else 0
        self._null = 0.0 if self._float else 0

    @classmethod
    def of(cls, arrays: dict, total, null, float_counters: bool) -> LinearState:
        """A state holding ``arrays``' values (integers at the narrowest width holding them all)."""
        out = cls({}, "float64" if float_counters else "int64")
        if float_counters:
            out._arrays = {name: np.asarray(a, dtype=np.float64) for name, a in arrays.items()}
        else:
            out._arrays = _narrowest({name: np.asarray(a) for name, a in arrays.items()})
        out._total = float(total) if float_counters else int(total)
        out._null = float(null) if float_counters else int(null)
        return out

    # -- reading ----------------------------------------------------------
    @property
    def names(self) -> tuple:
        return tuple(self._arrays)

    @property
    def float_counters(self) -> bool:
        return self._float

    @property
    def counter_width(self) -> int:
        """Bytes per counter in memory: 4 (int32), 8 (int64 after widening, or float64)."""
        if self._float:
            return 8
        return max((a.itemsize for a in self._arrays.values()), default=INT_COUNTER_BYTES)

    def narrowest_width(self) -> int:
        """Bytes per counter of the narrowest type holding every value (what the format writes)."""
        if self._float:
            return 8
        return 4 if all(fits_int32(a) for a in self._arrays.values()) else 8

    def array(self, name: str) -> np.ndarray:
        """The array itself (for the owning sketch's computations; never write to it)."""
        return self._arrays[name]

    def view(self, name: str) -> np.ndarray:
        """A read-only view of one array."""
        v = self._arrays[name].view()
        v.flags.writeable = False
        return v

    @property
    def total(self):
        return self._total

    @property
    def null(self):
        return self._null

    @property
    def nbytes(self) -> int:
        return int(sum(a.nbytes for a in self._arrays.values()))

    @property
    def is_empty(self) -> bool:
        return self._total == 0 and self._null == 0 and not any(a.any() for a in self._arrays.values())

    def copy(self) -> LinearState:
        out = LinearState({}, "float64" if self._float else "int64")
        out._arrays = {k: a.copy() for k, a in self._arrays.items()}  # same widths
        out._total, out._null = self._total, self._null
        return out

    def scaled(self, e: int) -> LinearState:
        """A float state with every counter and weight times ``2^e`` (exact barring underflow)."""
        if not self._float:
            raise TypeError("only float counters scale by a power of two")
        out = LinearState({}, "float64")
        out._arrays = {k: np.ldexp(a, e) for k, a in self._arrays.items()}
        out._total, out._null = math.ldexp(self._total, e), math.ldexp(self._null, e)
        return out

    def magnitude(self) -> float:
        """The largest ``|counter|`` or ``|weight|`` (0 for an empty state)."""
        top = max((float(np.abs(a).max()) for a in self._arrays.values() if a.size), default=0.0)
        return max(top, abs(float(self._total)), abs(float(self._null)))

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, LinearState)
            and other._float == self._float
            and other._arrays.keys() == self._arrays.keys()
            and other._total == self._total
            and other._null == self._null
            and all(np.array_equal(a, other._arrays[k]) for k, a in self._arrays.items())
        )

    __hash__ = None  # mutable

    # -- changing (all or nothing) -------------------------------------------
    def add(self, deltas: dict, d_total, d_null, what: str) -> None:
        """Add ``deltas[name]`` to each named array (missing names: zero) and the weights."""
        unknown = set(deltas) - set(self._arrays)
        if unknown:
            raise KeyError(f"unknown state arrays {sorted(unknown)}")
        new = {}
        if self._float:
            with np.errstate(over="ignore", invalid="ignore"):
                for name, d in deltas.items():
                    new[name] = self._arrays[name] + np.asarray(d, dtype=np.float64).reshape(self._arrays[name].shape)
                total, null = float(self._total) + float(d_total), float(self._null) + float(d_null)
            if not (math.isfinite(total) and math.isfinite(null)) or not all(np.isfinite(a).all() for a in new.values()):
                raise CounterOverflowError(
                    f"{what} would overflow the float64 counters to infinity or NaN; the sketch is unchanged"
                )
        else:
            for name, d in deltas.items():
                cur = self._arrays[name]
                d = np.asarray(d).astype(np.int64, copy=False).reshape(cur.shape)
                new[name] = checked_add(cur.astype(np.int64, copy=False), d, what)
            total, null = int(self._total) + int(d_total), int(self._null) + int(d_null)
            if not (I64.min <= total <= I64.max and I64.min <= null <= I64.max):
                raise CounterOverflowError(f"{what} would overflow the int64 total weight; the sketch is unchanged")
            if self.counter_width == 4:
                if all(fits_int32(a) for a in new.values()):
                    new = {k: a.astype(np.int32) for k, a in new.items()}
                else:  # widen every array exactly, all at once
                    new = {k: self._arrays[k].astype(np.int64) for k in self._arrays} | new
        self._arrays.update(new)
        self._total, self._null = total, null

    def merge(self, other: LinearState, what: str = "merge") -> None:
        """Add ``other`` (same array names and shapes) into this state."""
        self.add(other._arrays, other._total, other._null, what)

    def subtract(self, other: LinearState, what: str = "subtract") -> None:
        """Subtract ``other``; int64 ``-min`` is an overflow like any other."""
        if not self._float and (
            other._total == I64.min or other._null == I64.min or any((a == I64.min).any() for a in other._arrays.values())
        ):
            raise CounterOverflowError(f"{what} would overflow the int64 counters; the sketch is unchanged")
        neg = {k: -a if self._float else -a.astype(np.int64) for k, a in other._arrays.items()}
        self.add(neg, -other._total, -other._null, what)


def _narrowest(arrays: dict) -> dict:
    dt = np.int32 if all(fits_int32(a) for a in arrays.values()) else np.int64
    return {k: a.astype(dt) for k, a in arrays.items()}
