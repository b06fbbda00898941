"""``skimsketch pairs``: rank every pair of stored summaries by estimated join size.

The reuse workflow: each column's summary is built once (``skimsketch sketch ... -o col.sks``) and
stored; ``pairs`` reads them all once and estimates every pair that can be joined (same kind
family and seed; pairs that cannot are counted and named, not estimated), largest estimate first.
Each line gives the estimate, its interval, and which side's keys the join covers: the share of
each table's keys that the other holds (:func:`skimsketch.sample.overlap.coverage` for join
samples, exact for sketches in exact mode; a sketch in counter mode does not know its keys, so
``-``). Every summary is decoded and prepared once (a skimmed sketch skims once), whatever the
number of pairs it is in.
"""

from __future__ import annotations

import itertools

from ..errors import SketchError
from ..heavy import HeavyKeySketch
from ..sample import JoinSample
from ..sample.overlap import coverage
from ..sketch import Sketch
from .inputs import CliError
from .query import format_confidence, format_number, load_summary

__all__ = ["add_parser", "covered", "pairs_command"]


def add_parser(sub) -> None:
    """The ``pairs`` subcommand's arguments."""
    p = sub.add_parser("pairs", help="rank every pair of summary files by estimated join size",
                       description="Estimate the join size of every pair of summary files (built once, stored: "
                                   "the reuse workflow) and print the largest, with intervals and the share of "
                                   "each side's keys the join covers.")
    p.add_argument("summaries", nargs="+", metavar="SUMMARY", help="sketch or sample files (skimsketch sketch -o)")
    p.add_argument("--top", type=int, default=20, help="how many pairs to print, largest first (default 20; "
                                                       "0 prints every pair)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval confidence (default 0.95)")


def covered(a, b, confidence: float = 0.95) -> tuple[tuple, tuple] | None:
    """((share, low, high) of a's keys that b holds, the same of b's keys that a holds), or None when the
    summaries cannot tell (a sketch in counter mode keeps no keys, a HeavyKeySketch only its heavy ones)."""
    if isinstance(a, JoinSample):
        return coverage(a, b, confidence)
    if isinstance(a, Sketch) and a.exact_mode and b.exact_mode:
        ka, kb = a.exact_entries, b.exact_entries
        both = sum(1 for k, w in ka.items() if w != 0 and kb.get(k, 0) != 0)
        na, nb = (sum(1 for w in m.values() if w != 0) for m in (ka, kb))
        return tuple((x, x, x) for x in (both / na if na else 0.0, both / nb if nb else 0.0))
    return None


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%" if x >= 0.01 or x == 0 else f"{100 * x:.1g}%"


def _share(name: str, s: tuple) -> str:
    """``name 62%``, or ``name 62% (55-70%)`` with the share's interval when it is not exact."""
    value, low, high = s
    band = "" if low == high else f" ({_pct(low)[:-1]}-{_pct(high)})"
    return f"{name} {_pct(value)}{band}"


def pairs_command(a) -> int:
    """Run ``pairs``: every joinable pair estimated, the largest ``--top`` printed."""
    if a.top < 0:
        raise CliError(f"--top must be >= 0 (0 prints every pair), got {a.top}")
    if not 0 < a.confidence < 1:
        raise CliError(f"--confidence must be in (0, 1), got {a.confidence}")
    paths = list(dict.fromkeys(a.summaries))
    if len(paths) < 2:
        raise CliError("needs at least two distinct summary files")
    loaded = []
    for path in paths:
        s = load_summary(path)
        if not isinstance(s, (Sketch, JoinSample, HeavyKeySketch)):
            raise CliError(f"{path!r} holds a {type(s).__name__}, which has no two-way join estimate")
        loaded.append((path, s))
    rows, refused = [], []
    for (pa, sa), (pb, sb) in itertools.combinations(loaded, 2):
        try:
            e = sa.join_size(sb, confidence=a.confidence)
        except (SketchError, ValueError) as err:
            refused.append(f"{pa} x {pb}: {err}")
            continue
        rows.append((e, pa, pb, sa, sb))
    if not rows:
        raise CliError(f"no pair of these {len(paths)} files can be joined (same kind and seed needed); "
                       f"first: {refused[0]}")
    rows.sort(key=lambda r: (-r[0].value, r[1], r[2]))
    shown = rows if a.top == 0 else rows[: a.top]
    conf = format_confidence(a.confidence)
    print(f"{len(rows):,} pairs estimated ({len(paths)} summaries), largest {len(shown):,} first; "
          f"interval at {conf} confidence; covers: the share of each side's keys the other side holds "
          f"(with its interval when estimated)")
    width = max(len(p) for p in paths)
    for rank, (e, pa, pb, sa, sb) in enumerate(shown, 1):
        cov = covered(sa, sb, a.confidence)
        cv = "-" if cov is None else f"{_share(pa, cov[0])}, {_share(pb, cov[1])}"
        print(f"{rank:>4}  {pa:<{width}}  {pb:<{width}}  {format_number(e.value):>15}  "
              f"[{format_number(e.low)}, {format_number(e.high)}]  {e.method}  covers: {cv}")
    if refused:
        print(f"{len(refused):,} pairs not estimated (different kind, seed or key type), e.g. {refused[0]}")
    return 0

