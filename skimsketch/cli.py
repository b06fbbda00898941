"""``skimsketch``: sketch columns of files, inspect sketch files, estimate joins.

    skimsketch sketch FILE... --column K [--weight X] [--nbytes N | --width W --depth D]
                      [--kind skimmed|hash|agms] [--domain M] [--seed S] -o OUT
    skimsketch info SKETCH...
    skimsketch estimate LEFT RIGHT [--confidence C]
    skimsketch --version

Files are Parquet or CSV (by extension, or ``--format``), read in batches with
pyarrow; the sketch file holds the sketch's bytes (``skimsketch.from_bytes``
reads it). Two sketches built with the same kind, shape and seed estimate the
size of their join (``COUNT(*)``), or ``SUM`` of the left side's weights over
the join when the left sketch was built with ``--weight``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import __version__
from .agms import AGMSSketch
from .base import Sketch
from .errors import SketchError
from .hash_sketch import HashSketch
from .serde import from_bytes
from .skimmed import SkimmedSketch

__all__ = ["main"]

KINDS = {"skimmed": SkimmedSketch, "hash": HashSketch, "agms": AGMSSketch}
DEFAULT_NBYTES = 16 * 1024


class CliError(Exception):
    """A usage or input problem reported as one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="skimsketch",
                                 description="Sketch columns of files, inspect sketch files, estimate joins.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Run 'skimsketch COMMAND --help' for a command's options.")
    ap.add_argument("--version", action="version", version=f"skimsketch {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    sk = sub.add_parser("sketch", help="sketch one column of Parquet/CSV files into a sketch file",
                        description="Sketch the key column of Parquet or CSV files into a sketch file.")
    sk.add_argument("files", nargs="+", metavar="FILE", help="input files or directories (Parquet or CSV)")
    sk.add_argument("--column", "-c", required=True, help="the join key column")
    sk.add_argument("--weight", "-w", default=None,
                    help="a numeric column whose values are summed (SUM over the join); default: count rows")
    sk.add_argument("--format", choices=("parquet", "csv"), default=None,
                    help="input format (default: from the first file's extension)")
    sk.add_argument("--kind", choices=sorted(KINDS), default="skimmed", help="sketch kind (default skimmed)")
    sk.add_argument("--nbytes", type=int, default=None,
                    help=f"memory budget in bytes; the library's default shape for it (default {DEFAULT_NBYTES})")
    sk.add_argument("--width", type=int, default=None, help="buckets per table (with --depth, instead of --nbytes)")
    sk.add_argument("--depth", type=int, default=None, help="number of tables (with --width)")
    sk.add_argument("--domain", type=int, default=None,
                    help="skimmed only: integer keys lie in [0, DOMAIN) (default: unbounded keys)")
    sk.add_argument("--seed", type=int, default=0, help="hash seed; sketches to be joined need the same (default 0)")
    sk.add_argument("--output", "-o", required=True, help="the sketch file to write")
    sk.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bar on stderr (default: when stderr is a terminal)")

    info = sub.add_parser("info", help="print what a sketch file holds",
                          description="Print the kind, shape, seed, weights and size of sketch files.")
    info.add_argument("sketches", nargs="+", metavar="SKETCH")

    est = sub.add_parser("estimate", help="estimate the join size (or SUM) of two sketch files",
                         description="Estimate |LEFT join RIGHT| (or SUM of LEFT's weights over the join), "
                                     "with an interval.")
    est.add_argument("left")
    est.add_argument("right")
    est.add_argument("--confidence", type=float, default=0.95, help="interval confidence (default 0.95)")
    return ap


def _template(a):
    cls = KINDS[a.kind]
    if a.domain is not None and cls is not SkimmedSketch:
        raise CliError(f"--domain {a.domain} applies to skimmed sketches only, not --kind {a.kind}")
    if (a.width is None) != (a.depth is None):
        raise CliError("--width and --depth go together")
    if a.width is not None and a.nbytes is not None:
        raise CliError("give either --nbytes or --width/--depth, not both")
    params = {"domain": a.domain} if cls is SkimmedSketch else {}
    if a.weight is not None:
        params["dtype"] = "float64"
    try:
        if a.width is not None:
            return cls(a.width, a.depth, a.seed, **params)
        return cls.for_bytes(DEFAULT_NBYTES if a.nbytes is None else a.nbytes, seed=a.seed, **params)
    except (TypeError, ValueError) as e:
        raise CliError(f"cannot build the sketch: {e}") from None


def _dataset(files, fmt):
    import pyarrow.dataset as pads

    for f in files:
        if not Path(f).exists():
            raise CliError(f"input {f!r} does not exist")
    if fmt is None:
        first = Path(files[0])
        fmt = "csv" if first.suffix.lower() in (".csv", ".tsv") or first.name.lower().endswith(".csv.gz") else "parquet"
    try:
        return pads.dataset(files[0] if len(files) == 1 else files, format=fmt), fmt
    except Exception as e:  # pyarrow raises several types for unreadable input
        raise CliError(f"cannot read {', '.join(files)} as {fmt}: {e}") from None


class _Progress:
    """A one-line progress bar on stderr: rows done (of the total when known) and the rate."""

    def __init__(self, total: int | None, enabled: bool):
        self.total, self.enabled, self.done, self.t0 = total, enabled, 0, time.perf_counter()

    def advance(self, rows: int) -> None:
        self.done += rows
        if not self.enabled:
            return
        rate = self.done / max(time.perf_counter() - self.t0, 1e-9)
        if self.total:
            frac = min(self.done / self.total, 1.0)
            bar = "#" * int(30 * frac)
            line = f"\r[{bar:<30}] {frac:6.1%} {self.done:,}/{self.total:,} rows, {rate:,.0f} rows/s"
        else:
            line = f"\r{self.done:,} rows, {rate:,.0f} rows/s"
        print(line, end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr, flush=True)


def _sketch(a) -> int:
    sketch = _template(a)
    ds, fmt = _dataset(a.files, a.format)
    names = set(ds.schema.names)
    for role, col in (("--column", a.column), ("--weight", a.weight)):
        if col is not None and col not in names:
            raise CliError(f"{role} {col!r} is not a column of the input (columns: {', '.join(sorted(names))})")
    columns = [a.column] + ([a.weight] if a.weight else [])
    total = ds.count_rows() if fmt == "parquet" else None  # from the footers; CSV would need a full read
    progress = _Progress(total, sys.stderr.isatty() if a.progress is None else a.progress)
    try:
        for batch in ds.to_batches(columns=columns):
            if batch.num_rows:
                weights = batch.column(1) if a.weight else None
                sketch.update(batch.column(0), weights=weights)
            progress.advance(batch.num_rows)
    finally:
        progress.close()
    blob = sketch.to_bytes()
    Path(a.output).write_bytes(blob)
    print(f"{a.output}: {type(sketch).__name__} of {progress.done:,} rows, {len(blob):,} bytes")
    return 0


def _load(path: str):
    try:
        return from_bytes(Path(path).read_bytes())
    except OSError as e:
        raise CliError(f"cannot read {path!r}: {e.strerror or e}") from None
    except SketchError as e:
        raise CliError(f"{path!r} is not a valid sketch file: {e}") from None


def _info(a) -> int:
    for path in a.sketches:
        s = _load(path)
        params = ", ".join(f"{k}={v}" for k, v in s.params.items())
        print(f"{path}: {type(s).__name__}({params})")
        print(f"  total weight {s.total_weight}, null weight {s.null_weight}, empty {s.is_empty}")
        print(f"  memory {s.nbytes:,} bytes, serialised {len(s.to_bytes()):,} bytes")
    return 0


def _estimate(a) -> int:
    left, right = _load(a.left), _load(a.right)
    for path, sk in ((a.left, left), (a.right, right)):
        if not isinstance(sk, Sketch):
            raise CliError(f"{path!r} holds a {type(sk).__name__}, which has no two-way join estimate "
                           "(a pair sketch is the middle of a chain join: skimsketch.chain_join_size)")
    try:
        e = left.join_size(right, confidence=a.confidence)
    except (SketchError, ValueError) as err:
        raise CliError(f"cannot estimate {a.left} x {a.right}: {err}") from None
    what = "SUM of left weights over the join" if left.float_counters else "join size"
    print(f"{what}: {e.value:,.6g}")
    print(f"interval: [{e.low:,.6g}, {e.high:,.6g}] at {e.confidence:.0%} confidence (method {e.method})")
    return 0


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 usage or input error)."""
    ap = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    a = ap.parse_args(argv)
    if a.command is None:
        ap.print_help()
        return 2
    run = {"sketch": _sketch, "info": _info, "estimate": _estimate}[a.command]
    try:
        return run(a)
    except CliError as e:
        print(f"skimsketch {a.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
