"""Float totals of any finite magnitude: exact ranks beyond the doubles, and the scale a sample is written at.

Scaling every total of a table by ``2^e`` scales every rank ``u / w^2`` by exactly ``2^-2e`` while nothing
under- or overflows (powers of two are exact), so the ``(rank, fp)`` order, the kept entries and ``tau`` do not
depend on ``e``: the sample is defined by the exact ranks. :func:`ext_ranks` computes them as pairs
``rank = q 2^X``, ``q`` in ``[0.5, 1)``, for any finite ``w`` (``w = m 2^E``, ``m`` in ``[0.5, 1)``:
``rank = RN(u / RN(m m)) 2^-2E``, the double ``u / (w w)`` of :mod:`.rank` wherever that is a normal double).

A sample stores ``tau`` at its *scale exponent* ``sigma`` (``tau_stored = tau 2^-2 sigma``, the rank at totals
times ``2^sigma``; its entries keep the true totals). :func:`storage` chooses it from what the sample keeps:

* ``sigma = 0`` when every kept ``|total|`` is in ``[2^-511, 2^511)`` and ``tau`` is a normal double or
  infinite: layout 2 of the format, the bytes of every earlier release;
* else ``sigma = 484 - E_K`` (``E_K``: the ``frexp`` exponent of the largest kept ``|total|``, which scales into
  ``[2^483, 2^484)``): every kept rank at ``sigma`` is a normal double (``>= 2^-53 / 2^968``), and so is ``tau``
  (at least every kept rank) when it is finite; written as layout 3. The smallest kept total must scale to at
  least ``2^-511`` (kept totals within about ``2^994`` of each other) and ``tau`` to a finite double, else
  :class:`~skimsketch.errors.CounterOverflowError` names the values and the remedy.

The choice depends only on the sample (kept totals and ``tau``), so one build and any merge of pieces that
give the same sample write the same bytes.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import CorruptSketchError, CounterOverflowError
from .rank import units

__all__ = ["FAST", "check_span", "check_stored", "ext_of", "ext_ranks", "storage"]

LOW, OLD_HIGH, TOP = math.ldexp(1.0, -511), math.ldexp(1.0, 511), 484
#: float totals whose double rank ``u / (w w)`` at scale 1 is exact and normal: ``2^-511 .. 2^484``
FAST = (LOW, math.ldexp(1.0, TOP))
_NORMAL = (-1021, 1024)  # frexp exponents of the normal finite doubles


def ext_ranks(fps: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X, q)``: the exact rank ``q 2^X`` (``q`` in ``[0.5, 1)``) of every fingerprint with a finite non-zero
    total (module docstring)."""
    m, e = np.frexp(np.abs(np.asarray(totals).astype(np.float64)))
    q, x = np.frexp(units(fps) / (m * m))
    return x.astype(np.int64) - 2 * e.astype(np.int64), q


def ext_of(tau: float, sigma: int) -> tuple[int, float]:
    """``(X, q)`` of a finite threshold stored at scale exponent ``sigma``."""
    q, x = math.frexp(tau)
    return x + 2 * sigma, q


def storage(kept: np.ndarray, tau_ext: tuple | None) -> tuple[int, float]:
    """``(sigma, tau stored at sigma)`` of a sample keeping float totals ``kept`` with the exact threshold
    ``tau_ext = (X, q)`` (None: infinite), or :class:`CounterOverflowError` (module docstring)."""
    w = np.abs(np.asarray(kept, dtype=np.float64))
    x, q = tau_ext if tau_ext is not None else (0, math.inf)
    if not len(w):  # no entry (a defensive case: a sample with keys keeps one)
        if tau_ext is None or _NORMAL[0] <= x <= _NORMAL[1]:
            return 0, math.ldexp(q, x)
        return x // 2, math.ldexp(q, x - 2 * (x // 2))
    top, low = float(w.max()), float(w.min())
    if low >= LOW and top < OLD_HIGH and (tau_ext is None or _NORMAL[0] <= x <= _NORMAL[1]):
        return 0, math.ldexp(q, x)
    sigma = TOP - math.frexp(top)[1]
    if math.ldexp(low, sigma) < LOW or (tau_ext is not None and not _NORMAL[0] <= x - 2 * sigma <= _NORMAL[1]):
        check_span(low, top, x if tau_ext is not None else None)
    return sigma, math.ldexp(q, x - 2 * sigma)


def check_span(low: float, top: float, tau_exp) -> None:
    """The error of a sample whose kept totals (or threshold) span more than one scale of doubles can rank."""
    tau = "" if tau_exp is None else f" and its threshold tau about 2**{tau_exp} at totals of scale 1"
    raise CounterOverflowError(
        f"a JoinSample of float totals keeps totals from {low!r} to {top!r} in magnitude{tau}: more than the "
        "doubles can rank at one scale (the kept totals, and the first dropped key's, within about 2**994 of the "
        "largest kept one); drop or clip the negligible totals (below 2**-990 times the largest), or sample the "
        "extreme keys separately and add their join answers")


def check_stored(kept: np.ndarray, tau: float, sigma: int) -> None:
    """A layout-3 sample's scale exponent must be the one :func:`storage` gives its entries and threshold (the
    format is canonical: one sample, one byte string), else :class:`CorruptSketchError`."""
    try:
        want = storage(kept, None if math.isinf(tau) else ext_of(tau, sigma))[0]
    except CounterOverflowError:
        want = None
    if want != sigma:
        raise CorruptSketchError(f"sample scale exponent {sigma} is not its entries' and threshold's ({want}): "
                                 "altered bytes")
