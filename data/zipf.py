"""Zipf streams and right-shifted Zipf streams (the paper's synthetic workload).

Ganguly, Garofalakis and Rastogi (EDBT 2004, section 5.1) join a Zipfian stream F
with a *right-shifted* Zipfian stream G of the same skew: G's distribution is F's
moved right by ``shift`` domain values, so shift 0 is a self-join and a larger
shift gives a smaller join.

Conventions used here (all deterministic for a seed):

* **Domain and ranks.** Values are the integers ``[0, domain)``. Value ``v`` has
  Zipf rank ``v + 1``: ``P(v) = (v + 1) ** -z / H(domain, z)``. The most frequent
  value is 0, then 1, 2, ... (no random permutation of the values; the shift is
  only meaningful if "G is F shifted").
* **Shift.** The shifted stream maps every element ``v`` of an unshifted sample
  to ``v + shift``. Values pushed past the domain's end are treated according to
  ``overflow``:

  - ``"wrap"`` (default): ``(v + shift) mod domain``. The stream keeps exactly
    ``n`` elements and G's frequency vector is a cyclic rotation of an unshifted
    one, so G has the same self-join size distribution as F. The wrapped mass is
    the Zipf tail (the ``shift`` least frequent values), which lands on values
    ``0 .. shift-1``.
  - ``"drop"``: elements with ``v + shift >= domain`` are removed, so the stream
    is shorter than ``n`` by the (small) tail mass.

* **Sampling.** The frequency vector of ``n`` i.i.d. draws is multinomial; it is
  drawn directly with ``Generator.multinomial`` (exact in law, and fast: 4M
  elements over 2^18 values in about 0.3 s with the stream materialised), then
  the stream is the values repeated by their counts in a seeded random order.
  Hence ``np.bincount(zipf_stream(...)) == zipf_frequencies(...)`` exactly.
* **Seeds.** ``seed`` and ``stream`` select the generator
  ``numpy.random.Generator(PCG64(SeedSequence(seed, spawn_key=(stream,))))`` — the
  same as ``SeedSequence(seed).spawn(...)[stream]``. Different ``stream`` numbers
  give statistically independent samples from one seed; :func:`shifted_pair`
  uses stream 0 for F and stream 1 for G.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "OVERFLOW_MODES",
    "generator",
    "zipf_probabilities",
    "zipf_frequencies",
    "zipf_stream",
    "zipf_draws",
    "shift_frequencies",
    "shift_keys",
    "shifted_pair",
    "shifted_pair_frequencies",
    "join_size_from_frequencies",
]

OVERFLOW_MODES = ("wrap", "drop")


def generator(seed: int, stream: int = 0) -> np.random.Generator:
    """The seeded PCG64 generator for ``(seed, stream)``.

    Equivalent to ``SeedSequence(seed).spawn(stream + 1)[stream]``; distinct
    ``stream`` values give independent generators.
    """
    if int(seed) < 0 or int(stream) < 0:
        raise ValueError(f"seed and stream must be >= 0, got seed={seed}, stream={stream}")
    seq = np.random.SeedSequence(int(seed), spawn_key=(int(stream),))
    return np.random.Generator(np.random.PCG64(seq))


def _check(n: int, domain: int, z: float) -> None:
    if int(domain) < 1:
        raise ValueError(f"domain must be >= 1, got {domain}")
    if int(n) < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not np.isfinite(z) or z < 0:
        raise ValueError(f"z must be a finite number >= 0, got {z}")


def zipf_probabilities(domain: int, z: float) -> np.ndarray:
    """``p[v] = (v + 1) ** -z / sum_r r ** -z`` for ``v`` in ``[0, domain)``.

    >>> [round(float(x), 4) for x in zipf_probabilities(4, 1.0)]
    [0.48, 0.24, 0.16, 0.12]
    """
    _check(0, domain, z)
    p = np.arange(1, int(domain) + 1, dtype=np.float64) ** (-float(z))
    return p / p.sum()


def _check_shift(shift: int, domain: int, overflow: str) -> None:
    if overflow not in OVERFLOW_MODES:
        raise ValueError(f"overflow must be one of {OVERFLOW_MODES}, got {overflow!r}")
    if not 0 <= int(shift) < int(domain):
        raise ValueError(f"shift must be in [0, domain={domain}), got {shift}")


def shift_frequencies(freq: np.ndarray, shift: int, overflow: str = "wrap") -> np.ndarray:
    """Frequency vector of the right shift by ``shift`` of a stream with ``freq``.

    ``out[v] = freq[v - shift]``; the last ``shift`` entries of ``freq`` wrap to
    the front (``"wrap"``) or are dropped (``"drop"``).

    >>> shift_frequencies(np.array([5, 3, 2, 1]), 1).tolist()
    [1, 5, 3, 2]
    >>> shift_frequencies(np.array([5, 3, 2, 1]), 1, overflow="drop").tolist()
    [0, 5, 3, 2]
    """
    freq = np.asarray(freq)
    _check_shift(shift, len(freq), overflow)
    if overflow == "wrap":
        return np.roll(freq, int(shift))
    out = np.zeros_like(freq)
    s = int(shift)
    out[s:] = freq[: len(freq) - s]
    return out


def shift_keys(keys: np.ndarray, shift: int, domain: int, overflow: str = "wrap") -> np.ndarray:
    """Right-shift a stream of values in ``[0, domain)`` (order preserved).

    >>> shift_keys(np.array([0, 3, 1]), 2, 4).tolist()
    [2, 1, 3]
    >>> shift_keys(np.array([0, 3, 1]), 2, 4, overflow="drop").tolist()
    [2, 3]
    """
    keys = np.asarray(keys, dtype=np.int64)
    _check_shift(shift, domain, overflow)
    moved = keys + int(shift)
    if overflow == "wrap":
        return moved % int(domain)
    return moved[moved < int(domain)]


def _unshifted_counts(n, domain, z, seed, shift, overflow, stream):
    """Validate, then draw the unshifted counts: (the generator, for what follows; counts)."""
    _check(n, domain, z)
    _check_shift(shift, domain, overflow)
    rng = generator(seed, stream)
    return rng, rng.multinomial(int(n), zipf_probabilities(domain, z)).astype(np.int64)


def zipf_frequencies(
    n: int,
    domain: int,
    z: float,
    seed: int = 0,
    *,
    shift: int = 0,
    overflow: str = "wrap",
    stream: int = 0,
) -> np.ndarray:
    """Frequency vector (int64, length ``domain``) of a Zipf(z) sample of ``n`` values.

    The unshifted counts are one multinomial draw from generator ``(seed,
    stream)``; ``shift``/``overflow`` then apply :func:`shift_frequencies`.
    """
    _, counts = _unshifted_counts(n, domain, z, seed, shift, overflow, stream)
    return shift_frequencies(counts, shift, overflow)


def zipf_stream(
    n: int,
    domain: int,
    z: float,
    seed: int = 0,
    *,
    shift: int = 0,
    overflow: str = "wrap",
    stream: int = 0,
) -> np.ndarray:
    """A Zipf(z) stream (int64 values in ``[0, domain)``) in seeded random order.

    Its frequencies are exactly ``zipf_frequencies(n, domain, z, seed, ...)``
    with the same arguments: the counts are drawn first, then the stream is
    those values repeated by their counts and permuted with the same generator.
    With ``overflow="drop"`` it has ``n`` minus the dropped tail elements.
    """
    rng, counts = _unshifted_counts(n, domain, z, seed, shift, overflow, stream)
    keys = np.repeat(np.arange(int(domain), dtype=np.int64), counts)
    keys = rng.permutation(keys)
    if shift:
        keys = shift_keys(keys, shift, domain, overflow)
    return keys


def zipf_draws(rng: np.random.Generator, n: int, domain: int, z: float, shift: int = 0) -> np.ndarray:
    """``n`` i.i.d. Zipf(z) draws from ``rng`` (value ``v`` with weight ``(v + 1) ** -z``), in draw
    order, each shifted right by ``shift`` modulo ``domain`` (int64).

    The sampler for callers that hold their own generator (tests, benchmarks):
    inverse-CDF draws, so the result for a given generator state is fixed.
    """
    _check(n, domain, z)
    cdf = np.cumsum(1.0 / np.arange(1, domain + 1, dtype=np.float64) ** z)
    v = np.searchsorted(cdf / cdf[-1], rng.random(n), side="right")
    return ((np.minimum(v, domain - 1) + shift) % domain).astype(np.int64)


def shifted_pair(
    n: int, domain: int, z: float, shift: int, seed: int = 0, *, overflow: str = "wrap"
) -> tuple[np.ndarray, np.ndarray]:
    """The paper's pair of streams: F ~ Zipf(z), G ~ Zipf(z) right-shifted.

    F uses generator stream 0 and G stream 1, so they are independent samples.
    """
    f = zipf_stream(n, domain, z, seed, stream=0)
    g = zipf_stream(n, domain, z, seed, shift=shift, overflow=overflow, stream=1)
    return f, g


def shifted_pair_frequencies(
    n: int, domain: int, z: float, shift: int, seed: int = 0, *, overflow: str = "wrap"
) -> tuple[np.ndarray, np.ndarray]:
    """Frequency vectors of :func:`shifted_pair` (same seeds, same values)."""
    f = zipf_frequencies(n, domain, z, seed, stream=0)
    g = zipf_frequencies(n, domain, z, seed, shift=shift, overflow=overflow, stream=1)
    return f, g


def join_size_from_frequencies(freq_f: np.ndarray, freq_g: np.ndarray) -> int:
    """Exact join size ``sum_v f(v) g(v)`` as a Python int (no overflow).

    >>> join_size_from_frequencies(np.array([2, 1, 0]), np.array([3, 0, 5]))
    6
    """
    a = np.asarray(freq_f, dtype=np.int64)
    b = np.asarray(freq_g, dtype=np.int64)
    if a.shape != b.shape:
        raise ValueError(f"frequency vectors differ in shape: {a.shape} vs {b.shape}")
    # Guard int64 overflow: max|a| * sum|b| bounds every partial sum.
    if a.size and int(np.abs(a).max()) * int(np.abs(b).sum()) >= 2**63:
        return sum(int(x) * int(y) for x, y in zip(a.tolist(), b.tolist()))
    return int(np.dot(a, b))
