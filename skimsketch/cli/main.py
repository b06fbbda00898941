"""The ``skimsketch`` command's parser and dispatch (usage: :mod:`skimsketch.cli`)."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..sketch.sizing import MIN_NBYTES
from .build import DEFAULT_NBYTES, KINDS, sketch_command
from .inputs import CliError
from .pairs import add_parser as add_pairs_parser
from .pairs import pairs_command
from .query import estimate_command, info_command

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="skimsketch",
                                 description="Sketch columns of files, inspect sketch files, estimate joins (one pair, or every pair).",
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
                    help="input format (default: each file's extension; .csv/.tsv are CSV, others Parquet)")
    sk.add_argument("--key-type", choices=("int", "string"), default=None,
                    help="convert the key column to integers or strings (default: as stored; CSV keys as "
                         "written, i.e. strings: '0123' and '123' are different keys)")
    sk.add_argument("--kind", choices=sorted(KINDS), default="skimmed", help="sketch kind (default skimmed); sample: a JoinSample for tables at rest; heavy: a "
                         "HeavyKeySketch for append-only streams (rows in file order)")
    sk.add_argument("--nbytes", type=int, default=None,
                    help=f"memory budget in bytes, at least {MIN_NBYTES}; the library's default shape for it "
                         f"(default {DEFAULT_NBYTES})")
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
    add_pairs_parser(sub)
    return ap


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 usage or input error)."""
    ap = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    a = ap.parse_args(argv)
    if a.command is None:
        ap.print_help()
        return 2
    run = {"sketch": sketch_command, "info": info_command, "estimate": estimate_command,
           "pairs": pairs_command}[a.command]
    try:
        return run(a)
    except CliError as e:
        print(f"skimsketch {a.command}: {e}", file=sys.stderr)
        return 2
