"""Interval coverage and width on the adversarial shapes (issue 36), through the public API only.

For every shape of :mod:`benchmarks.adversarial_shapes` (data drawn once, data seed ``--data-seed``), kind
(``sample``: ``ss.JoinSample.for_bytes(n, seed=s)``; ``skimmed``: ``ss.SkimmedSketch.for_bytes(n, seed=s)``;
also ``hash``, ``agms`` and ``heavy`` (``ss.HeavyKeySketch``: append-only, so signed shapes are refused), and
``skimnorm``: the skimmed sketches' ``bound="normal"`` interval;
``dtype="float64"`` for float weights), budget (``--nbytes``; ``A:B`` gives
side f ``A`` bytes and side g ``B``) and hash seed ``s`` (``--seeds`` of them, from ``--seed0``), both
tables are summarised (tables of float totals are also written with ``to_bytes`` and read back with
``ss.from_bytes``: ``--roundtrip``), and ``join_size`` (95 %) is compared with the exact join computed
here (integers exactly, floats as fractions). Asymmetric budgets run for the sample only (sketches of two
budgets have two shapes, and cannot be joined by design). A cell prints:

* ``cover`` -- share of seeds with ``low <= J <= high`` (failures count as misses) and its Wilson 95 %
  interval; ``err/J`` and ``hw/J`` -- median ``|value - J|`` and median half-width over ``|J|``;
  ``hw/err`` -- their ratio (``-`` where the median error is below 1e-5 of ``|J|``: read ``hw/J``);
* ``exc`` (an exception building, serialising or joining), ``nan`` (a non-finite value or end),
  ``zw`` (a zero-width interval that misses), ``neg`` (COUNT-like joins: a negative lower end);
  ``incompatible`` when every seed raised IncompatibleSketchError.

Each table is fed as one row per distinct key weighted by its exact total (byte-identical summaries to
feeding the rows, checked by tests/benchmarks/test_adversarial_shapes.py; ``--rows`` feeds the rows).
Work is spread over at most 2 processes; a table's summary is built once per (kind, budget, seed) and
serves every shape using it. A benchmark: it prints, never gates. Usage::

    python -m benchmarks.interval_coverage_adversarial --seeds 200 --nbytes 1024,4096,16384,65536 \\
        --kinds sample,skimmed [--shapes acct signed] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing as mp
import os
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

import skimsketch as ss
from benchmarks import adversarial_shapes as adv

__all__ = ["Table", "aggregate", "exact_join", "main", "summarise", "wilson"]

KINDS = ("sample", "skimmed", "skimnorm", "hash", "agms", "heavy")
#: labels that read another kind's summaries with other ``join_size`` arguments (the same sketches, so the
#: two intervals of a label pair are compared draw by draw): ``skimnorm`` is the skimmed sketch's normal
#: approximation (``bound="normal"``) beside its default distribution-free one
VARIANTS = {"skimnorm": ("skimmed", {"bound": "normal"})}
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "interval_coverage_adversarial.txt")
TINY = 1e-5  # below this median |error| / |J| the width is reported as hw/J only


@dataclass
class Table:
    """One side: distinct keys, their exact totals (int64, or float64 for float weights), optional rows."""

    keys: np.ndarray
    totals: np.ndarray
    rows: tuple | None = None

    @property
    def floating(self) -> bool:
        return self.totals.dtype.kind == "f"

    def digest(self) -> str:
        h = hashlib.sha1(str(self.keys.dtype).encode() + self.keys.tobytes())
        h.update(str(self.totals.dtype).encode() + self.totals.tobytes())
        return h.hexdigest()


def aggregate(keys, weights, keep_rows: bool = False) -> Table:
    """The table of rows ``keys`` (weights None: 1 each): every distinct key with a nonzero exact total."""
    keys = np.asarray(keys)
    order, starts = adv.group(keys)
    u = keys[order][starts]
    if weights is None:
        t = np.diff(np.append(starts, len(keys))).astype(np.int64)
    else:
        w = np.asarray(weights)
        w = w.astype(np.float64 if w.dtype.kind == "f" else np.int64)[order]
        t = np.add.reduceat(w, starts) if len(w) else w
    nz = t != 0
    return Table(u[nz], t[nz], (keys, weights) if keep_rows else None)


def exact_join(a: Table, b: Table) -> float:
    """``J = sum_k f(k) g(k)`` over the common keys: integers exactly, floats as exact fractions, rounded once."""
    _, i, j = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
    x, y = a.totals[i], b.totals[j]
    if a.floating or b.floating:
        return float(sum((Fraction(float(p)) * Fraction(float(q)) for p, q in zip(x, y)), Fraction(0)))
    return float(int(np.dot(x.astype(object), y.astype(object))) if len(x) else 0)


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``hits / n``."""
    p = hits / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def summary(kind: str, t: Table, nbytes: int, seed: int, roundtrip: str):
    """The ``kind`` summary of table ``t`` at budget ``nbytes`` and hash seed ``seed``, read back from its bytes
    when ``roundtrip`` is ``all``, or ``float`` and ``t`` has float totals."""
    kw = {"dtype": "float64"} if t.floating else {}
    cls = {"sample": ss.JoinSample, "skimmed": ss.SkimmedSketch, "hash": ss.HashSketch, "agms": ss.AGMSSketch,
           "heavy": ss.HeavyKeySketch}[kind]
    s = cls.for_bytes(nbytes, seed=seed, **kw)
    if t.rows is not None:
        s.update(t.rows[0], weights=t.rows[1])
    else:
        s.update(t.keys, weights=t.totals)
    return ss.from_bytes(s.to_bytes()) if roundtrip == "all" or (roundtrip == "float" and t.floating) else s


# -- the worker: globals set before the pool forks (data generated once, shared copy-on-write) --
_TABLES: dict[str, Table] = {}
_PAIRS: list[tuple[str, str]] = []
_ROUNDTRIP = "float"


def _task(job):
    """All shapes at every budget pair of one (kind, seed), for each label reading that kind's summaries:
    ``{(label, (f bytes, g bytes)): [(value, low, high, error or None)] in shape order}``. A table's summary
    at a budget is built once and serves every pair and label using it."""
    kind, labels, pairs, seed = job
    cpu = time.process_time()
    built, out = {}, {}
    last = {nb: i for i, pair in enumerate(pairs) for nb in pair}  # free a budget's summaries after its last use

    def get(tid, nb):
        key = (tid, nb)
        if key not in built:
            try:
                built[key] = summary(kind, _TABLES[tid], nb, seed, _ROUNDTRIP)
            except Exception as e:  # noqa: BLE001 - a failure to record, not to raise
                built[key] = e
        return built[key]

    for i, (nbf, nbg) in enumerate(pairs):
        for label in labels:
            kw = VARIANTS[label][1] if label in VARIANTS else {}
            res = out[(label, (nbf, nbg))] = []
            for tf, tg in _PAIRS:
                a, b = get(tf, nbf), get(tg, nbg)
                bad = a if isinstance(a, Exception) else b if isinstance(b, Exception) else None
                if bad is not None:
                    res.append((math.nan, math.nan, math.nan, f"build:{type(bad).__name__}"))
                    continue
                try:
                    e = a.join_size(b, **kw)
                    res.append((float(e.value), float(e.low), float(e.high), None))
                except Exception as e:  # noqa: BLE001
                    res.append((math.nan, math.nan, math.nan, f"join:{type(e).__name__}"))
        built = {k: v for k, v in built.items() if last[k[1]] > i}
    return job, out, time.process_time() - cpu


def summarise(J: float, draws, count_like: bool) -> dict:
    """One cell's statistics from its draws ``[(value, low, high, error)]`` (see the module docstring)."""
    n = len(draws)
    v, lo, hi = (np.array([d[i] for d in draws], dtype=np.float64) for i in range(3))
    errs = [d[3] for d in draws if d[3]]
    exc = len(errs)
    finite = np.isfinite(v) & np.isfinite(lo) & np.isfinite(hi)
    nan = int((~finite).sum()) - exc
    with np.errstate(invalid="ignore"):
        hit = finite & (lo <= J) & (J <= hi)
        zw = int((finite & (hi == lo) & ~hit).sum())
        neg = int((finite & (lo < 0)).sum()) if count_like else 0
    scale = abs(J) if J != 0 else 1.0
    err = np.abs(v[finite] - J) / scale
    hw = (hi[finite] - lo[finite]) / 2 / scale
    out = {"n": n, "hits": int(hit.sum()), "exc": exc, "nan": nan, "zw": zw, "neg": neg,
           "incompatible": exc == n > 0 and all("IncompatibleSketchError" in x for x in errs),
           "err": float(np.median(err)) if len(err) else math.nan,
           "hw": float(np.median(hw)) if len(hw) else math.nan, "why": sorted(set(errs))[:2]}
    out["ratio"] = out["hw"] / out["err"] if out["err"] >= TINY else math.nan
    return out


def _line(name, kind, nb, c) -> str:
    if not c["n"]:
        return f"{name:38s} {kind:8s} {nb:>11s}  no seed done yet"
    if c["incompatible"]:
        return f"{name:38s} {kind:8s} {nb:>11s}  incompatible ({c['why'][0]})"
    lo, hi = wilson(c["hits"], c["n"])
    ratio = f"{c['ratio']:7.2f}" if math.isfinite(c["ratio"]) else f"{'-':>7s}"
    why = f"  {','.join(c['why'])}" if c["why"] else ""
    return (f"{name:38s} {kind:8s} {nb:>11s} {c['hits'] / c['n']:6.3f} [{lo:.3f},{hi:.3f}] {c['err']:9.2e} "
            f"{c['hw']:9.2e} {ratio} {c['exc']:4d} {c['nan']:4d} {c['zw']:4d} {c['neg']:4d}{why}")


HEAD = (f"{'shape':38s} {'kind':8s} {'bytes f:g':>11s} {'cover':>6s} {'(Wilson 95%)':>13s} {'err/J':>9s} "
        f"{'hw/J':>9s} {'hw/err':>7s} {'exc':>4s} {'nan':>4s} {'zw':>4s} {'neg':>4s}")


def _budgets(text: str) -> list[tuple[int, int]]:
    out = []
    for item in filter(None, (x.strip() for x in text.split(","))):
        a, _, b = item.partition(":")
        try:
            out.append((int(a), int(b or a)))
        except ValueError:
            raise SystemExit(f"--nbytes/--asym: {item!r} is not a budget: give N or F:G (bytes, e.g. 148:65536)") from None
    return out


CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "skimsketch", "adversarial")
_SOURCES = (adv, adv.sw, adv.real_keys, sys.modules[adv.sw.zipf_frequencies.__module__])


def _cached(cache: str | None, name: str, scale: float, data_seed: int, make):
    """``make()`` -> ``(table f, table g, J)``, kept in ``cache`` (npz, keyed by the generators' source code,
    the shape, ``scale`` and ``data_seed``) when ``cache`` is given."""
    if not cache:
        return make()
    h = hashlib.sha1(b"".join(open(m.__file__, "rb").read() for m in _SOURCES))
    h.update(f"{name}|{scale!r}|{data_seed}".encode())
    path = os.path.join(cache, f"{name}-{h.hexdigest()[:16]}.npz")
    if os.path.exists(path):
        with np.load(path, allow_pickle=False) as z:
            return Table(z["kf"], z["tf"]), Table(z["kg"], z["tg"]), float(z["J"])
    a, b, J = make()
    os.makedirs(cache, exist_ok=True)
    np.savez(path + ".tmp.npz", kf=a.keys, tf=a.totals, kg=b.keys, tg=b.totals, J=J)
    os.replace(path + ".tmp.npz", path)
    return a, b, J


def prepare(shapes, scale: float, data_seed: int, keep_rows: bool, cache: str | None = None):
    """Generate every shape once (or read it from ``cache``): ``(tables by digest, [(name, tf, tg, J,
    count_like)])``. Tables equal in keys and totals are one table."""
    tables, cells = {}, []
    for sh in shapes:
        def make(sh=sh):
            kf, wf, kg, wg = sh.make(np.random.default_rng(data_seed), scale)
            a, b = aggregate(kf, wf, keep_rows), aggregate(kg, wg, keep_rows)
            return a, b, exact_join(a, b)

        a, b, J = _cached(None if keep_rows else cache, sh.name, scale, data_seed, make)
        ids = []
        for t in (a, b):
            ids.append(t.digest())
            tables.setdefault(ids[-1], t)
        count_like = bool((a.totals >= 0).all() and (b.totals >= 0).all() and not (a.floating or b.floating))
        cells.append((sh.name, ids[0], ids[1], J, count_like))
    return tables, cells


def matrix(results, cells, cols) -> list[str]:
    """The compact coverage table: a row per shape, a column per (kind, budget)."""
    short = {"skimnorm": "norm"}
    names = [f"{short.get(k, k[:4])}{b[0] if b[0] == b[1] else f'{b[0]}:{b[1]}'}" for k, b in cols]
    lines = [f"{'coverage':38s} " + " ".join(f"{n:>10s}" for n in names)]
    for i, (name, *_rest) in enumerate(cells):
        vals = []
        for col in cols:
            c = results[col][i]
            vals.append("incompat" if c["incompatible"] else f"{c['hits'] / c['n']:.3f}" if c["n"] else "-")
        lines.append(f"{name:38s} " + " ".join(f"{v:>10s}" for v in vals))
    return lines


def _commit() -> str:
    """The checkout's commit (``+dirty`` with uncommitted changes), for the result file's header."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="hash seeds per cell (default 200; 40 with --quick)")
    ap.add_argument("--seed0", type=int, default=10_000, help="first hash seed")
    ap.add_argument("--nbytes", default="1024,4096,16384,65536", help="budgets, comma-separated; F:G per side")
    ap.add_argument("--asym", default="148:65536,65536:148", help="asymmetric budgets run as well ('' for none)")
    ap.add_argument("--kinds", default="sample,skimmed", help=f"comma-separated among {','.join(KINDS)}")
    ap.add_argument("--shapes", nargs="*", default=None, metavar="PATTERN", help="shape name substrings")
    ap.add_argument("--quick", action="store_true", help="the QUICK shapes and 40 seeds (unless --seeds is given)")
    ap.add_argument("--scale", type=float, default=1.0, help="size multiplier of the generated tables")
    ap.add_argument("--data-seed", type=int, default=0)
    ap.add_argument("--procs", type=int, default=2, help="worker processes (at most 2)")
    ap.add_argument("--rows", action="store_true", help="feed the rows instead of one row per key (slower)")
    ap.add_argument("--roundtrip", default="float", choices=("all", "float", "none"),
                    help="which tables' summaries are read back from their bytes (default: float totals; "
                         "the library documents equal answers before and after, and a round trip costs 25 %%)")
    ap.add_argument("--cache", default=CACHE, help="folder of the generated tables ('' for none)")
    ap.add_argument("--out", default=None, help=f"result file ('' for none; default {OUT}, *_quick.txt with --quick)")
    args = ap.parse_args(argv)
    seeds = args.seeds if args.seeds is not None else 40 if args.quick else 200
    kinds = [k for k in args.kinds.split(",") if k]
    bad = [k for k in kinds if k not in KINDS]
    if bad or seeds < 1 or not 1 <= args.procs <= 2:
        ap.error(f"--kinds {bad} not among {KINDS}" if bad else "--seeds must be >= 1 and --procs 1 or 2")
    budgets = _budgets(args.nbytes) + [b for b in _budgets(args.asym) if b not in _budgets(args.nbytes)]
    shapes = adv.select(args.shapes, args.quick)
    if not shapes:
        ap.error(f"--shapes {args.shapes} matches no shape; known: {', '.join(adv.SHAPES)}")

    t0, commit = time.perf_counter(), _commit()  # the code this run imported (the checkout may move meanwhile)
    global _ROUNDTRIP
    tables, cells = prepare(shapes, args.scale, args.data_seed, args.rows, args.cache)
    _TABLES.update(tables)
    _PAIRS[:] = [(c[1], c[2]) for c in cells]
    _ROUNDTRIP = args.roundtrip
    t_data = time.perf_counter() - t0
    print(f"# {len(cells)} shapes, {len(tables)} distinct tables, generated in {t_data:.1f}s", file=sys.stderr)

    cols = [(k, b) for k in kinds for b in budgets if k == "sample" or b[0] == b[1]]
    base = {k: VARIANTS[k][0] if k in VARIANTS else k for k in kinds}  # the kind whose summaries a label reads
    bases = list(dict.fromkeys(base.values()))
    jobs = [(kb, [k for k in kinds if base[k] == kb], [b for b in budgets if kb == "sample" or b[0] == b[1]],
             args.seed0 + s) for s in range(seeds) for kb in bases]
    raw = {col: [[] for _ in cells] for col in cols}
    cmd = "python -m benchmarks.interval_coverage_adversarial " + " ".join(argv if argv is not None else sys.argv[1:])
    out = args.out if args.out is not None else OUT.replace(".txt", "_quick.txt") if args.quick else OUT
    warnings.simplefilter("ignore", RuntimeWarning)  # overflow inside an estimator: its NaN/inf is counted instead
    ctx = mp.get_context("fork")
    cpu = dict.fromkeys(bases, 0.0)

    def report(done: int) -> list[str]:
        """The table of the seeds done so far (tasks finish in seed order, up to the pool's width)."""
        results = {col: [summarise(c[3], d, c[4]) for c, d in zip(cells, raw[col])] for col in raw}
        n = min(len(raw[col][0]) for col in cols)
        state = "" if done == len(jobs) else f"PARTIAL ({done}/{len(jobs)} tasks; a cell has {n}+ seeds): "
        lines = [f"# {cmd}", f"# {state}{seeds} hash seeds a cell (from {args.seed0}), data seed {args.data_seed}, "
                 f"scale {args.scale}, {'rows' if args.rows else 'one row per key'}, round trip through bytes: "
                 f"{args.roundtrip}; 95% intervals; {time.perf_counter() - t0:.0f}s on {args.procs} processes",
                 f"# library at commit {commit}; data {t_data:.0f}s; worker CPU seconds: "
                 + ", ".join(f"{k} {v:.0f}" for k, v in cpu.items()), "", HEAD]
        for i, (name, _tf, _tg, J, _cl) in enumerate(cells):
            for k, b in cols:
                lines.append(_line(name, k, f"{b[0]}" if b[0] == b[1] else f"{b[0]}:{b[1]}", results[(k, b)][i]))
            lines.append(f"{'':38s} J = {J:.6g}")
        lines += ["", *matrix(results, cells, cols)]
        if out:
            os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
            with open(out, "w") as fh:
                fh.write("\n".join(lines) + "\n")
        return lines

    with ctx.Pool(args.procs) as pool:
        for done, (job, res, secs) in enumerate(pool.imap_unordered(_task, jobs), 1):
            cpu[job[0]] += secs
            for col, draws in res.items():
                for i, d in enumerate(draws):
                    raw[col][i].append(d)
            if done % max(1, len(jobs) // 20) == 0 and done < len(jobs):
                print(f"# {done}/{len(jobs)} tasks, {time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
                report(done)  # a checkpoint: the file holds the seeds done so far
    print("\n".join(report(len(jobs))))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
