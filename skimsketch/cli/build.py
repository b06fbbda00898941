"""``skimsketch sketch``: the sketch the flags describe, filled from the inputs, written to a file."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ..errors import KeyDomainError, SketchError
from ..heavy import HeavyKeySketch
from ..sample import JoinSample
from ..sketch import AGMSSketch, HashSketch, SkimmedSketch
from ..sketch.sizing import check_nbytes, check_width
from .inputs import CliError
from .inputs import inputs as read_inputs

__all__ = ["DEFAULT_NBYTES", "KINDS", "sketch_command"]

KINDS = {"skimmed": SkimmedSketch, "hash": HashSketch, "agms": AGMSSketch, "sample": JoinSample, "heavy": HeavyKeySketch}
DEFAULT_NBYTES = 16 * 1024


def _template(a):
    """The sketch the flags describe. ``--weight`` gives a sketch float counters with the shape of the count
    sketch of the same flags (so the two join; its memory is up to twice ``--nbytes``), and a sample float
    totals (:func:`_sample_totals` keeps integer totals for an integer column, as the library does)."""
    cls = KINDS[a.kind]
    if a.domain is not None and cls is not SkimmedSketch:
        raise CliError(f"--domain {a.domain} applies to skimmed sketches only, not --kind {a.kind}")
    if (a.width is None) != (a.depth is None):
        raise CliError("--width and --depth go together")
    if a.width is not None and a.nbytes is not None:
        raise CliError("give either --nbytes or --width/--depth, not both")
    if cls in (JoinSample, HeavyKeySketch):
        if a.width is not None:
            raise CliError(f"--width/--depth apply to sketches, not --kind {a.kind}: give --nbytes")
        try:
            return cls.for_bytes(DEFAULT_NBYTES if a.nbytes is None else check_nbytes(a.nbytes), seed=a.seed,
                                        dtype="int64" if a.weight is None else "float64")
        except (TypeError, ValueError) as e:
            raise CliError(f"cannot build the {a.kind}: {e}") from None
    params = {"domain": a.domain} if cls is SkimmedSketch else {}
    try:
        if a.width is not None:
            count = cls(check_width(a.width), a.depth, a.seed, **params)
        else:
            count = cls.for_bytes(DEFAULT_NBYTES if a.nbytes is None else check_nbytes(a.nbytes), seed=a.seed, **params)
    except (TypeError, ValueError) as e:
        raise CliError(f"cannot build the sketch: {e}") from None
    return count if a.weight is None else type(count)(**dict(count.params, dtype="float64"))


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


def sketch_command(a) -> int:
    sketch = _template(a)
    out = Path(a.output)
    if not out.parent.is_dir():
        raise CliError(f"-o {a.output!r}: the output folder {str(out.parent)!r} does not exist; create it first")
    inputs = read_inputs(a)
    sketch = _sample_totals(sketch, inputs)
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


def _sample_totals(sketch, inputs):
    """A weighted sample keeps integer totals when every file's ``--weight`` column holds integers, as
    ``JoinSample.update``, SQL's ``skim_sample_agg`` and ``estimate_join_size`` do for such a column (an
    entry costs a varint, not 8 bytes: about twice the entries in the budget)."""
    if not isinstance(sketch, JoinSample) or not sketch.float_counters:
        return sketch
    if all(inp.integral_weights() for inp in inputs):
        return JoinSample.for_bytes(sketch.budget, seed=sketch.seed)
    return sketch


def _is_input_error(e: Exception) -> bool:
    import pyarrow as pa

    return isinstance(e, (pa.ArrowException, OSError, UnicodeDecodeError))


def _remedy(e: SketchError, a) -> str:
    """The flag that fixes a sketch's input error, if one does."""
    if isinstance(e, KeyDomainError) and a.domain is not None:
        return f" (--domain {a.domain} declares keys in [0, {a.domain}): drop --domain for other keys)"
    return ""
