"""``skimsketch``: sketch columns of files, inspect sketch files, estimate joins.

    skimsketch sketch FILE... --column K [--weight X] [--nbytes N | --width W --depth D]
                      [--kind skimmed|hash|agms|sample] [--domain M] [--seed S] [--key-type int|string] -o OUT
    skimsketch info SKETCH...
    skimsketch estimate LEFT RIGHT [--confidence C]
    skimsketch --version

Files are Parquet or CSV (by extension, or ``--format``), read in batches with
pyarrow; the sketch file holds the sketch's bytes (``skimsketch.from_bytes``
reads it). Keys are read as stored: Parquet keys keep their type, CSV keys are
the text as written (``--key-type int|string`` converts); files whose keys
differ in type are refused. Two sketches built with the same kind, shape and
seed estimate the size of their join (``COUNT(*)``), ``SUM(left.w)`` when the
left sketch was built with ``--weight`` (float counters, the count sketch's
shape), and ``SUM(left.w * right.w)`` when both were. ``--kind sample`` writes a
``JoinSample`` (a coordinated weighted sample, for tables at rest: ``docs/sample.md``;
building it holds every distinct key's total in memory); two samples of the same seed
estimate their join. Input errors print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from decimal import Decimal
from pathlib import Path

from .. import __version__
from ..sketch.agms import AGMSSketch
from ..sketch.base import Sketch
from ..errors import KeyDomainError, SketchError
from ..sketch.hash_sketch import HashSketch
from ..sample.join_sample import JoinSample
from ..format.serde import from_bytes
from ..sketch.sizing import MIN_NBYTES, check_nbytes, check_width
from ..sketch.skim.skimmed import SkimmedSketch

__all__ = ["estimate_label", "format_confidence", "format_number", "main"]

KINDS = {"skimmed": SkimmedSketch, "hash": HashSketch, "agms": AGMSSketch, "sample": JoinSample}
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
                    help="input format (default: each file's extension; .csv/.tsv are CSV, others Parquet)")
    sk.add_argument("--key-type", choices=("int", "string"), default=None,
                    help="convert the key column to integers or strings (default: as stored; CSV keys as "
                         "written, i.e. strings: '0123' and '123' are different keys)")
    sk.add_argument("--kind", choices=sorted(KINDS), default="skimmed", help="sketch kind (default skimmed); sample: a JoinSample for tables at rest")
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
    return ap


def _template(a):
    """The sketch the flags describe. ``--weight`` gives float counters with the shape of the count
    sketch of the same flags (so the two join; its memory is up to twice ``--nbytes``)."""
    cls = KINDS[a.kind]
    if a.domain is not None and cls is not SkimmedSketch:
        raise CliError(f"--domain {a.domain} applies to skimmed sketches only, not --kind {a.kind}")
    if (a.width is None) != (a.depth is None):
        raise CliError("--width and --depth go together")
    if a.width is not None and a.nbytes is not None:
        raise CliError("give either --nbytes or --width/--depth, not both")
    if cls is JoinSample:
        if a.width is not None:
            raise CliError("--width/--depth apply to sketches, not --kind sample: give --nbytes")
        try:
            return JoinSample.for_bytes(DEFAULT_NBYTES if a.nbytes is None else check_nbytes(a.nbytes), seed=a.seed,
                                        dtype="int64" if a.weight is None else "float64")
        except (TypeError, ValueError) as e:
            raise CliError(f"cannot build the sample: {e}") from None
    params = {"domain": a.domain} if cls is SkimmedSketch else {}
    try:
        if a.width is not None:
            count = cls(check_width(a.width), a.depth, a.seed, **params)
        else:
            count = cls.for_bytes(DEFAULT_NBYTES if a.nbytes is None else check_nbytes(a.nbytes), seed=a.seed, **params)
    except (TypeError, ValueError) as e:
        raise CliError(f"cannot build the sketch: {e}") from None
    return count if a.weight is None else type(count)(**dict(count.params, dtype="float64"))


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        return fmt
    name = path.name.lower()
    return "csv" if name.endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")) else "parquet"


def _input_files(paths, fmt):
    """``[(file, format)]``: each argument as given, a directory as its files (recursively, in name order,
    skipping hidden and ``_``-prefixed names such as ``_SUCCESS``, as Spark does).

    Files are read as ``spark.read.parquet`` reads them: a file given twice, a file and its folder, or
    overlapping lists are read as often as they are listed; a table folder given with one of its
    partition directories (``name=value`` folders) is refused, as Spark refuses it."""
    out, seen = [], {}
    for p in map(Path, paths):
        if not p.exists():
            raise CliError(f"input {str(p)!r} does not exist")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and not any(
                part.startswith((".", "_")) for part in f.relative_to(p).parts))
            if not found:
                raise CliError(f"input folder {str(p)!r} holds no data files")
            listed = [(f, f.relative_to(p).parts[:-1]) for f in found]
        else:
            listed = [(p, ())]
        for f, between in listed:
            seen.setdefault(f.resolve(), []).append((p, any("=" in d for d in between)))
            out.append((f, _format_of(f, fmt)))
    for f, roots in seen.items():
        if len(roots) > 1 and any(partitioned for _, partitioned in roots):
            a, b = (str(r) for r, _ in roots[:2])
            raise CliError(f"inputs {a!r} and {b!r} both hold {str(f)!r}, through a partition directory: "
                           "Spark refuses such a list (conflicting directory structures); give the table "
                           "folder or its partition directories, not both")
    return out


_KEY_KIND = {"int": "integer", "str": "string"}


def _key_kind(t) -> str | None:
    """"int" / "str" for an Arrow key type of that key domain; None for others (the core refuses them)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return "int"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "str"
    return None


class _Input:
    """One input file: its key (and weight) column in batches, keys as written or cast to ``--key-type``."""

    def __init__(self, path: Path, fmt: str, a):
        self.path, self.fmt, self.column, self.weight, self.key_type = path, fmt, a.column, a.weight, a.key_type
        self.columns = [a.column] + ([a.weight] if a.weight else [])
        try:
            names, self.key_arrow_type = self._schema()
        except CliError:
            raise
        except Exception as e:  # pyarrow raises several types for unreadable input
            raise CliError(f"cannot read {str(path)!r} as {fmt}: {e}") from None
        for role, col in (("--column", a.column), ("--weight", a.weight)):
            if col is not None and col not in names:
                raise CliError(f"{role} {col!r} is not a column of {str(path)!r} (columns: {', '.join(sorted(names))})")

    def _csv_options(self):
        import pyarrow as pa
        import pyarrow.csv as pacsv

        types = {self.column: pa.string()}  # as written (--key-type converts each batch)
        if self.weight:
            types[self.weight] = pa.float64()
        delim = "\t" if self.path.name.lower().endswith((".tsv", ".tsv.gz")) else ","
        # only an empty field is null: "NA", "null", ... are keys as written
        conv = pacsv.ConvertOptions(column_types=types, include_columns=self.columns, null_values=[""],
                                    strings_can_be_null=True, quoted_strings_can_be_null=False)
        return pacsv.ParseOptions(delimiter=delim), conv

    def _schema(self):
        import pyarrow.parquet as pq

        if self.fmt == "parquet":
            schema = pq.read_schema(self.path)
            names = schema.names
            return names, schema.field(self.column).type if self.column in names else None
        parse, _ = self._csv_options()
        names = _open_csv(self.path, parse, None)[0].schema.names
        return names, None  # CSV keys: as written (strings) or --key-type

    @property
    def key_kind(self) -> str | None:
        if self.key_type is not None:
            return {"int": "int", "string": "str"}[self.key_type]
        return "str" if self.fmt == "csv" else _key_kind(self.key_arrow_type)

    @property
    def rows(self) -> int | None:
        if self.fmt != "parquet":
            return None
        import pyarrow.parquet as pq

        return pq.ParquetFile(self.path).metadata.num_rows

    def batches(self):
        """(keys, weights or None) per batch."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        if self.fmt == "parquet":
            reader = pq.ParquetFile(self.path).iter_batches(columns=self.columns)
        else:
            reader = _csv_batches(self.path, *self._csv_options())
        for batch in reader:
            if not batch.num_rows:
                continue
            keys = batch.column(batch.schema.get_field_index(self.column))
            try:
                if self.key_type == "int" and _key_kind(keys.type) != "int":
                    keys = pc.cast(keys, pa.int64())  # strings as written -> integers (refuses non-integers)
                elif self.key_type == "string" and _key_kind(keys.type) != "str":
                    keys = pc.cast(keys, pa.string())  # integers -> their decimal text
            except pa.ArrowException as e:
                raise CliError(f"{str(self.path)!r}: --key-type {self.key_type} cannot convert --column "
                               f"{self.column!r} ({keys.type}): {e}; give the --key-type the keys are written "
                               "in, or none to keep them as stored") from None
            weights = batch.column(batch.schema.get_field_index(self.weight)) if self.weight else None
            yield keys, weights


#: pyarrow's CSV block size to start with; a row longer than the block makes it fail ("straddling
#: object"), so the block grows until the row fits (up to the largest pyarrow takes).
CSV_BLOCK = 1 << 20
_CSV_BLOCK_MAX = (1 << 31) - 1


def _open_csv(path: Path, parse, conv, block: int = CSV_BLOCK):
    """(reader, block size) of CSV ``path``, the block grown while one row does not fit its first block."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    while True:
        try:
            opts = pacsv.ReadOptions(block_size=block)
            return pacsv.open_csv(path, read_options=opts, parse_options=parse, convert_options=conv), block
        except pa.ArrowInvalid as e:
            if "straddling" not in str(e) or block >= _CSV_BLOCK_MAX:
                raise
            block = min(4 * block, _CSV_BLOCK_MAX)


def _csv_batches(path: Path, parse, conv):
    """The record batches of CSV ``path``, whatever its rows' lengths: when a row does not fit the
    block, the file is read again with a larger block, skipping the rows already given (a row's
    values do not depend on the block size)."""
    import pyarrow as pa

    done, block = 0, CSV_BLOCK
    while True:
        reader, block = _open_csv(path, parse, conv, block)
        skip = done
        try:
            for batch in reader:
                if skip >= batch.num_rows:
                    skip -= batch.num_rows
                    continue
                batch, skip = batch.slice(skip), 0
                done += batch.num_rows
                yield batch
            return
        except pa.ArrowInvalid as e:
            if "straddling" not in str(e) or block >= _CSV_BLOCK_MAX:
                raise
            block = min(4 * block, _CSV_BLOCK_MAX)


def _inputs(a) -> list:
    """The input files, checked to hold the columns and one key domain (``--key-type`` converts)."""
    inputs = [_Input(p, fmt, a) for p, fmt in _input_files(a.files, a.format)]
    kinds = {}
    for inp in inputs:
        kinds.setdefault(inp.key_kind, inp)
    if len(kinds) > 1:
        (k1, f1), (k2, f2) = list(kinds.items())[:2]
        what = {None: "an unsupported", "int": "integer", "str": "string"}
        raise CliError(f"--column {a.column!r} holds {what[k1]} keys in {str(f1.path)!r} ({f1.key_arrow_type or f1.fmt}) "
                       f"but {what[k2]} keys in {str(f2.path)!r} ({f2.key_arrow_type or f2.fmt}): files must agree; "
                       "give --key-type int or --key-type string to convert every file's keys")
    return inputs


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
    out = Path(a.output)
    if not out.parent.is_dir():
        raise CliError(f"-o {a.output!r}: the output folder {str(out.parent)!r} does not exist; create it first")
    inputs = _inputs(a)
    counts = [inp.rows for inp in inputs]
    total = None if None in counts else sum(counts)  # Parquet footers; CSV would need a full read
    progress = _Progress(total, sys.stderr.isatty() if a.progress is None else a.progress)
    try:
        for inp in inputs:
            try:
                for keys, weights in inp.batches():
                    sketch.update(keys, weights=weights)
                    progress.advance(len(keys))
            except SketchError as e:
                raise CliError(f"{str(inp.path)!r}: {e}" + _remedy(e, a)) from None
            except Exception as e:  # pyarrow's parse and cast errors (several types)
                if not _is_input_error(e):
                    raise
                raise CliError(f"cannot read {str(inp.path)!r} as {inp.fmt}: {e}") from None
    finally:
        progress.close()
    blob = sketch.to_bytes()
    try:
        out.write_bytes(blob)
    except OSError as e:
        raise CliError(f"cannot write {a.output!r}: {e.strerror or e}") from None
    print(f"{a.output}: {type(sketch).__name__} of {progress.done:,} rows, {len(blob):,} bytes")
    return 0


def _is_input_error(e: Exception) -> bool:
    import pyarrow as pa

    return isinstance(e, (pa.ArrowException, OSError, UnicodeDecodeError))


def _remedy(e: SketchError, a) -> str:
    """The flag that fixes a sketch's input error, if one does."""
    if isinstance(e, KeyDomainError) and a.domain is not None:
        return f" (--domain {a.domain} declares keys in [0, {a.domain}): drop --domain for other keys)"
    return ""


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
        if isinstance(s, Sketch):  # the sign rule (docs/inputs.md): joins of two such sketches are clipped at 0
            print(f"  frequencies known >= 0: {'yes' if s.nonnegative else 'no'}")
        if isinstance(s, JoinSample):
            kept = len(s.sample_items()[0])
            part = "" if s.partition is None else f", partial: partitions {list(s.partition[0])} of {s.partition[1]}"
            print(f"  sample of {kept:,} of {s.n_keys:,} keys, tau {s.tau!r}{part}")
        print(f"  memory {s.nbytes:,} bytes, serialised {len(s.to_bytes()):,} bytes")
    return 0


def _estimate(a) -> int:
    left, right = _load(a.left), _load(a.right)
    for path, sk in ((a.left, left), (a.right, right)):
        if not isinstance(sk, (Sketch, JoinSample)):
            raise CliError(f"{path!r} holds a {type(sk).__name__}, which has no two-way join estimate "
                           "(a pair sketch is the middle of a chain join: skimsketch.chain_join_size)")
    try:
        e = left.join_size(right, confidence=a.confidence)
    except (SketchError, ValueError) as err:
        raise CliError(f"cannot estimate {a.left} x {a.right}: {err}") from None
    print(f"{estimate_label(left.float_counters, right.float_counters)}: {format_number(e.value)}")
    print(f"interval: [{format_number(e.low)}, {format_number(e.high)}] at {format_confidence(e.confidence)} "
          f"confidence (method {e.method})")
    return 0


def estimate_label(left_weighted: bool, right_weighted: bool) -> str:
    """What a join estimate of two sketches is: float counters mark a ``--weight`` sketch (SUM of w)."""
    if left_weighted and right_weighted:
        return "SUM(left.w * right.w) over the join"
    if left_weighted or right_weighted:
        return f"SUM({'left' if left_weighted else 'right'}.w) over the join"
    return "join size (COUNT(*))"


def format_number(x: float) -> str:
    """An estimate with thousands separators: whole units from 100 up (and for integers), else 6 digits."""
    if not math.isfinite(x) or abs(x) >= 1e18:
        return f"{x:.6g}"
    if abs(x) >= 100 or x == int(x):
        return f"{x:,.0f}"
    return f"{x:,.6g}"


def format_confidence(c: float) -> str:
    """A confidence as the percentage it was given as: 0.95 -> 95%, 0.999999999 -> 99.9999999%."""
    d = (Decimal(repr(float(c))) * 100).normalize()
    return f"{d:f}%"


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
