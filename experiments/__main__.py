"""One command for every experiment: ``python -m experiments [--quick | --full]``.

Writes into ``experiments/results/<mode>/`` (or ``--out DIR``): ``results.csv``,
``samples.csv``, ``run.json``, one PNG per figure and ``REPORT.md``. Progress
bars and the time estimate go to stderr.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import sys
import time
from dataclasses import replace
from pathlib import Path

from data.census import SYNTHETIC_NOTE

from .report import RESULT_FIELDS, plot_figure, read_results, write_report
from .runner import SAMPLE_FIELDS, aggregate, fmt_num, run_all
from .workloads import FIGURES, FULL, METHODS, QUICK

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def _write_csv(path: Path, rows: list[dict], fields) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(fields), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: fmt_num(r[k]) if r[k] is not None else "" for k in fields})


def _code_version() -> dict:
    """The git commit of the code that ran, and whether skimsketch/ had local changes."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "skimsketch", "experiments", "data"],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "local_changes": None}
    return {"commit": head or None, "local_changes": bool(dirty)}


def make_outputs(rows, config: dict, info: dict, out: Path) -> dict:
    """PNGs and REPORT.md from aggregated rows."""
    subtitle = f"{config['mode']} mode, {config['reps']} reps"
    pngs = {}
    for fig in config["figures"]:
        if any(r["figure"] == fig for r in rows):
            png = out / ("census.png" if fig == "census" else f"figure{fig}.png")
            plot_figure(rows, fig, png, subtitle)
            pngs[fig] = png
    write_report(rows, config, info, out, pngs)
    return pngs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments", description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="CI-sized run (default)")
    mode.add_argument("--full", action="store_true", help="the paper's sizes (see experiments/README.md)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--out", type=Path, default=None, help="output directory (default experiments/results/<mode>)")
    ap.add_argument("--figures", default=None, help=f"comma list of {','.join(FIGURES)} (default all)")
    ap.add_argument("--methods", default=None, help=f"comma list of {','.join(METHODS)} (default all)")
    ap.add_argument("--reps", type=int, default=None, help="override the number of repetitions")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--report-only", action="store_true", help="redo plots and report from an existing results.csv")
    args = ap.parse_args(argv)

    config = FULL if args.full else QUICK
    if args.figures:
        config = replace(config, figures=tuple(f.strip() for f in args.figures.split(",")))
    if args.methods:
        config = replace(config, methods=tuple(m.strip() for m in args.methods.split(",")))
    if args.reps:
        config = replace(config, reps=args.reps)
    bad = [f for f in config.figures if f not in FIGURES] + [m for m in config.methods if m not in METHODS]
    if bad:
        ap.error(f"unknown figure/method: {', '.join(bad)}")
    out = args.out or RESULTS_DIR / config.mode
    out.mkdir(parents=True, exist_ok=True)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    if args.report_only:
        meta = json.loads((out / "run.json").read_text())
        make_outputs(read_results(out / "results.csv"), meta["config"], dict(meta["timing"], code=meta.get("code")),
                     out)
        log(f"[experiments] report rewritten in {out}")
        return 0

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    code = _code_version()
    samples, info = run_all(config, jobs=max(1, args.jobs), progress=not args.no_progress, log=log)
    rows = aggregate(samples)
    _write_csv(out / "samples.csv", samples, SAMPLE_FIELDS)
    _write_csv(out / "results.csv", rows, RESULT_FIELDS)
    meta = {
        "config": config.as_dict(),
        "timing": info,
        "started_utc": started,
        "code": code,
        "synthetic_data": SYNTHETIC_NOTE if "census" in config.figures else None,
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": __import__("os").cpu_count()},
    }
    (out / "run.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    make_outputs(read_results(out / "results.csv"), meta["config"], dict(info, code=code), out)
    log(f"[experiments] done in {info['wall_seconds'] / 60:.1f} min; results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
