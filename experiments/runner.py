"""Run the experiments: one task per (figure, repetition, method), in parallel.

Every sketch is fed each distinct key once with its count as the weight. All
sketches here are linear, so this gives exactly the counters of feeding the
stream element by element (tested in tests/experiments), at a fraction of the
cost.

How each method is built, per repetition (sketch seed ``SKETCH_SEED + rep``):

* ``agms`` — one :class:`skimsketch.AGMSSketch` per stream at the largest shape
  of the grid; every smaller ``(s1, s2)`` is its sub-grid ``[:s2, :s1]``, which
  equals the sketch built at that shape with the same seed (documented in
  ``skimsketch.sketch.agms``; checked in the tests). The AGMS update costs
  ``s1 * s2`` per distinct key, so this saves a factor of ~9 on the full grid.
* ``hash`` / ``skimmed`` — a :class:`~skimsketch.HashSketch` /
  :class:`~skimsketch.SkimmedSketch` (``domain=m``) per shape ``(width=s1,
  depth=s2)`` and stream.
* ``skimmed_default`` — ``SkimmedSketch.for_bytes(COUNTER_BYTES * counters, domain=m)``:
  the library's default shape for the bytes the level's grid shapes keep (one
  shape per level).
* ``countmin`` — ``datasketches.count_min_sketch(num_hashes=s2,
  num_buckets=s1)``; see :mod:`experiments.countmin`.

Seconds: wall time to build and query. A sketch shared by several estimates
(F's sketch across the figure's G streams, AGMS's one max-shape build across
all shapes) has its build time split equally among the estimates using it.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np

import skimsketch as ss
from skimsketch.sketch.sizing import COUNTER_BYTES, DEFAULT_DEPTH

from . import countmin
from .metrics import memory_levels, paper_error
from .workloads import SKETCH_SEED, Config, FigureData, figure_data, sparse

__all__ = ["Task", "plan", "run_task", "run_all", "agms_subsketch", "SAMPLE_FIELDS"]

SAMPLE_FIELDS = (
    "figure", "workload", "dataset", "z", "shift", "n", "domain", "join_size", "rep", "method",
    "level", "level_counters", "shape", "width", "depth", "counters", "nbytes",
    "estimate", "error", "seconds",
)

# Single-core cost model (CPU seconds), fitted to the per-task CPU times of a full run
# (experiments/results/full/run.json); used only to weight the progress bar and to
# print a time estimate.
_COST_AGMS = 3.3e-9  # per distinct key x counter of the largest shape
_COST_HASH = 9.0e-9  # per distinct key x depth
_COST_SKIM = 1.0e-8  # per domain value x depth (SKIMDENSE scan)
_COST_CM = (1.1e-7, 5.3e-9)  # per distinct key, + per distinct key x depth


@dataclass(frozen=True)
class Task:
    figure: str
    rep: int
    method: str
    cost: float  # estimated single-core seconds


def agms_subsketch(big, width: int, depth: int):
    """The AGMS sketch of shape ``(width, depth)`` with ``big``'s seed and stream.

    AGMS counters do not depend on the shape (see ``skimsketch.sketch.agms``), so this is
    the sub-grid ``[:depth, :width]`` of ``big``'s counters.
    """
    if width > big.width or depth > big.depth:
        raise ValueError(f"{width}x{depth} is not a sub-grid of {big.width}x{big.depth}")
    return big.subsketch(width, depth)


def _distinct(freq: np.ndarray) -> int:
    return int(np.count_nonzero(freq))


def plan(config: Config) -> list[Task]:
    """All tasks of a run with estimated costs, largest first (better load balance)."""
    levels = memory_levels(config.widths, config.depths)
    shapes = [s for lv in levels for s in lv.shapes]
    big = max(config.widths) * max(config.depths)
    tasks = []
    for fig in config.figures:
        d0 = figure_data(fig, config, 0)
        distinct = _distinct(d0.freq_f) + sum(_distinct(w.freq_g) for w in d0.workloads)
        streams = 1 + len(d0.workloads)
        for method in config.methods:
            if method == "agms":
                cost = _COST_AGMS * distinct * big
            elif method == "hash":
                cost = _COST_HASH * distinct * sum(d for _, d in shapes)
            elif method == "skimmed":
                cost = sum(_COST_HASH * distinct * d + _COST_SKIM * streams * d0.domain * d for _, d in shapes)
            elif method == "skimmed_default":
                dd = DEFAULT_DEPTH
                cost = len(levels) * (_COST_HASH * distinct * dd + _COST_SKIM * streams * d0.domain * dd)
            elif method == "countmin":
                cost = sum(distinct * (_COST_CM[0] + _COST_CM[1] * d) for _, d in shapes)
            else:
                raise ValueError(f"unknown method {method!r}")
            tasks += [Task(fig, r, method, cost) for r in range(config.reps)]
    return sorted(tasks, key=lambda t: -t.cost)


def _sample(data: FigureData, wl, rep, method, li, lv, shape, counters, nbytes, estimate, seconds):
    return {
        "figure": data.figure, "workload": wl.name,
        "dataset": "census-style SYNTHETIC" if data.synthetic_note else "zipf",
        "z": data.z, "shift": wl.shift,
        "n": data.n_f, "domain": data.domain, "join_size": wl.join_size, "rep": rep,
        "method": method, "level": li, "level_counters": lv.counters, "shape": shape,
        "width": int(shape.split("x")[0]), "depth": int(shape.split("x")[1]),
        "counters": counters, "nbytes": nbytes, "estimate": float(estimate),
        "error": paper_error(wl.join_size, estimate), "seconds": seconds,
    }


def run_task(config: Config, figure: str, rep: int, method: str) -> list[dict]:
    """Run one method on one repetition of one figure; returns one sample per estimate."""
    data = figure_data(figure, config, rep)
    seed = SKETCH_SEED + rep
    m = data.domain
    kf, wf = sparse(data.freq_f)
    gs = [sparse(w.freq_g) for w in data.workloads]
    nw = len(data.workloads)
    levels = memory_levels(config.widths, config.depths)
    out = []
    clock = time.perf_counter

    if method == "agms":
        W, D = max(config.widths), max(config.depths)
        t = clock()
        big_f = ss.AGMSSketch(W, D, seed).update(kf, wf)
        big_g = [ss.AGMSSketch(W, D, seed).update(k, w) for k, w in gs]
        build = clock() - t
        n_est = nw * sum(len(lv.shapes) for lv in levels)
        for li, lv in enumerate(levels):
            for w, d in lv.shapes:
                sf = agms_subsketch(big_f, w, d)
                for wl, bg in zip(data.workloads, big_g):
                    t = clock()
                    est = sf.join_size(agms_subsketch(bg, w, d)).value
                    sec = clock() - t + build / n_est
                    out.append(_sample(data, wl, rep, method, li, lv, f"{w}x{d}", w * d, sf.nbytes, est, sec))
        return out

    if method in ("hash", "skimmed"):
        def make(w, d):
            if method == "hash":
                return ss.HashSketch(w, d, seed)
            return ss.SkimmedSketch(w, d, seed, domain=m)

        for li, lv in enumerate(levels):
            for w, d in lv.shapes:
                t = clock()
                sf = make(w, d).update(kf, wf)
                if method == "skimmed":
                    sf.skim()  # SKIMDENSE of F once, shared by every G (cached)
                tf = (clock() - t) / nw
                for wl, (k, c) in zip(data.workloads, gs):
                    t = clock()
                    est = sf.join_size(make(w, d).update(k, c)).value
                    sec = clock() - t + tf
                    out.append(_sample(data, wl, rep, method, li, lv, f"{w}x{d}", w * d, sf.nbytes, est, sec))
        return out

    if method == "skimmed_default":
        for li, lv in enumerate(levels):
            budget = COUNTER_BYTES * int(round(lv.counters))
            t = clock()
            sf = ss.SkimmedSketch.for_bytes(budget, seed=seed, domain=m).update(kf, wf)
            sf.skim()
            tf = (clock() - t) / nw
            w, d = sf.width, sf.depth
            for wl, (k, c) in zip(data.workloads, gs):
                t = clock()
                sg = ss.SkimmedSketch.for_bytes(budget, seed=seed, domain=m).update(k, c)
                est = sf.join_size(sg).value
                sec = clock() - t + tf
                out.append(_sample(data, wl, rep, method, li, lv, f"{w}x{d}", w * d, sf.nbytes, est, sec))
        return out

    if method == "countmin":
        for li, lv in enumerate(levels):
            for w, d in lv.shapes:
                t = clock()
                cf = countmin.build(kf, wf, num_hashes=d, num_buckets=w, seed=seed)
                tf = (clock() - t) / nw
                for wl, (k, c) in zip(data.workloads, gs):
                    t = clock()
                    est = countmin.join_size(cf, countmin.build(k, c, num_hashes=d, num_buckets=w, seed=seed))
                    sec = clock() - t + tf
                    out.append(_sample(
                        data, wl, rep, method, li, lv, f"{w}x{d}", w * d, countmin.state_bytes(d, w), est, sec
                    ))
        return out

    raise ValueError(f"unknown method {method!r}")


def _worker_init() -> None:
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"


def _call(args):
    config, figure, rep, method = args
    t, c = time.perf_counter(), time.process_time()
    samples = run_task(config, figure, rep, method)
    return samples, time.perf_counter() - t, time.process_time() - c


def _advance(bar, amount: float) -> None:
    """Advance the bar without ever passing its total (float rounding)."""
    bar.update(max(0.0, min(amount, bar.total - bar.n)))


def run_all(config: Config, jobs: int = 2, progress: bool = True, log=None) -> tuple[list[dict], dict]:
    """Run every task of ``config`` on ``jobs`` processes; returns (samples, timing info)."""
    from tqdm import tqdm

    tasks = plan(config)
    total_cost = sum(t.cost for t in tasks)
    est = total_cost / max(1, min(jobs, len(tasks)))
    if log:
        log(f"[experiments] {config.mode} mode: {len(tasks)} tasks on {jobs} process(es); "
            f"estimated {est / 60:.1f} min (cost model; the bar's ETA refines it)")
    samples: list[dict] = []
    task_seconds: dict[str, float] = {}
    task_cpu: dict[str, float] = {}
    t0 = time.perf_counter()
    bar = tqdm(total=total_cost, unit="s-est", disable=not progress, desc=f"{config.mode} run",
               bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} est-s [{elapsed}<{remaining}]")
    args = [(config, t.figure, t.rep, t.method) for t in tasks]
    if jobs <= 1:
        results = ((t, _call(a)) for t, a in zip(tasks, args))
        for t, (s, sec, cpu) in results:
            samples += s
            task_seconds[f"{t.figure}/{t.method}/rep{t.rep}"] = sec
            task_cpu[f"{t.figure}/{t.method}/rep{t.rep}"] = cpu
            _advance(bar, t.cost)
    else:
        import multiprocessing as mp

        _worker_init()  # inherited by spawned workers through the environment
        with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
            futs = {pool.submit(_call, a): t for t, a in zip(tasks, args)}
            for fut in as_completed(futs):
                t = futs[fut]
                s, sec, cpu = fut.result()
                samples += s
                task_seconds[f"{t.figure}/{t.method}/rep{t.rep}"] = sec
                task_cpu[f"{t.figure}/{t.method}/rep{t.rep}"] = cpu
                bar.set_postfix_str(f"done {t.figure}/{t.method}/rep{t.rep}", refresh=False)
                _advance(bar, t.cost)
    bar.close()
    wall = time.perf_counter() - t0
    info = {
        "wall_seconds": wall,
        "wall_seconds_in_tasks": sum(task_seconds.values()),
        # CPU time of the task processes: unlike wall time, barely affected by other jobs
        # sharing the machine; cpu / jobs estimates the wall time on idle cores.
        "cpu_seconds_in_tasks": sum(task_cpu.values()),
        "load_average_at_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "estimated_seconds": est,
        "jobs": jobs,
        "task_seconds": dict(sorted(task_seconds.items())),
        "task_cpu_seconds": dict(sorted(task_cpu.items())),
    }
    key = {m: i for i, m in enumerate(config.methods)}
    samples.sort(key=lambda s: (s["figure"], s["workload"], key[s["method"]], s["level"], s["shape"], s["rep"]))
    return samples, info


def aggregate(samples: list[dict]) -> list[dict]:
    """One row per (workload, method, memory level): mean/std of the error and more."""
    groups: dict[tuple, list[dict]] = {}
    for s in samples:
        groups.setdefault((s["figure"], s["workload"], s["method"], s["level"]), []).append(s)
    rows = []
    for (fig, wl, method, level), ss_ in groups.items():
        errs = np.array([s["error"] for s in ss_], dtype=np.float64)
        shapes = list(dict.fromkeys(s["shape"] for s in ss_))
        first = ss_[0]
        rows.append({
            "figure": fig,
            "workload": wl,
            "dataset": first["dataset"],
            "z": first["z"] if first["z"] is not None else "",
            "shift": first["shift"] if first["shift"] is not None else "",
            "n": first["n"],
            "domain": first["domain"],
            "join_size_mean": float(np.mean([s["join_size"] for s in ss_])),
            "method": method,
            "memory_level": level,
            "memory_counters": float(np.mean([s["counters"] for s in ss_])),
            "memory_bytes": float(np.mean([s["nbytes"] for s in ss_])),
            "shapes": ";".join(shapes),
            "n_shapes": len(shapes),
            "repetitions": len({s["rep"] for s in ss_}),
            "n_estimates": len(ss_),
            "mean_error": float(errs.mean()),
            "std_error": float(errs.std(ddof=1)) if len(errs) > 1 else 0.0,
            "median_error": float(np.median(errs)),
            "capped_share": float(np.mean(errs >= 10.0)),
            "seconds": float(sum(s["seconds"] for s in ss_)),
        })
    return rows


def fmt_num(x) -> str:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    return f"{x:.6g}" if isinstance(x, float) else str(x)
