"""The command line's inputs: Parquet and CSV files (or directories of them) read in batches with pyarrow,
keys as stored (``--key-type`` converts), one key type across files; :class:`CliError` for any input problem."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CSV_BLOCK", "CliError", "inputs"]


class CliError(Exception):
    """A usage or input problem reported as one line, exit status 2."""


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
        self._int_weights = None  # CSV weights: read as int64 once integral_weights() found them integral
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
            types[self.weight] = pa.int64() if self._int_weights else pa.float64()
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

    def integral_weights(self) -> bool:
        """Whether the ``--weight`` column holds integers: a Parquet integer (or DECIMAL(p, 0)) type, or CSV
        text that reads as int64 throughout (one pass over that column)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.fmt == "parquet":
            t = pq.read_schema(self.path).field(self.weight).type
            return pa.types.is_integer(t) or pa.types.is_null(t) or (pa.types.is_decimal(t) and t.scale <= 0)
        if self._int_weights is None:
            parse, conv = self._csv_options()
            conv.column_types = {self.weight: pa.int64()}
            conv.include_columns = [self.weight]
            try:
                for _ in _csv_batches(self.path, parse, conv):
                    pass
                self._int_weights = True
            except pa.ArrowInvalid:
                self._int_weights = False
        return self._int_weights

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


def inputs(a) -> list:
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
