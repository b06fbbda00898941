"""``skimsketch``: sketch columns of files, inspect sketch files, estimate joins.

    skimsketch sketch FILE... --column K [--weight X] [--nbytes N | --width W --depth D]
                      [--kind skimmed|hash|agms|sample|heavy] [--domain M] [--seed S] [--key-type int|string] -o OUT
    skimsketch info SKETCH...
    skimsketch estimate LEFT RIGHT [--confidence C]
    skimsketch pairs SUMMARY... [--top N] [--confidence C]
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
estimate their join. ``--kind heavy`` writes a ``HeavyKeySketch`` (append-only streams: the rows in file
order; docs/heavy.md); negative weights are refused. ``pairs`` ranks every pair of stored summaries by
estimated join size (the reuse workflow: each column summarised once, every pair answered from the files).
Input errors print one line and exit with status 2.

Modules: :mod:`.main` (parser, dispatch), :mod:`.build` (``sketch``), :mod:`.inputs` (reading files),
:mod:`.query` (``info``, ``estimate``), :mod:`.pairs` (``pairs``). ``python -m skimsketch.cli`` runs :func:`main`.
"""

from .inputs import CSV_BLOCK
from .main import main
from .query import estimate_label, format_confidence, format_number

__all__ = ["CSV_BLOCK", "estimate_label", "format_confidence", "format_number", "main"]
