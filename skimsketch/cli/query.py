"""``skimsketch info`` and ``skimsketch estimate``: what sketch files hold, the join estimate of two, and how
numbers are printed."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

from ..errors import SketchError
from ..format.serde import from_bytes
from ..heavy import HeavyKeySketch
from ..sample import JoinSample
from ..sketch import Sketch
from .inputs import CliError

__all__ = ["estimate_command", "estimate_label", "format_confidence", "format_number", "info_command", "load_summary"]


def load_summary(path: str):
    """The summary a file holds (any kind), or a :class:`CliError` naming the file."""
    try:
        return from_bytes(Path(path).read_bytes())
    except OSError as e:
        raise CliError(f"cannot read {path!r}: {e.strerror or e}") from None
    except SketchError as e:
        raise CliError(f"{path!r} is not a valid sketch file: {e}") from None


def info_command(a) -> int:
    for path in a.sketches:
        s = load_summary(path)
        params = ", ".join(f"{k}={v}" for k, v in s.params.items())
        print(f"{path}: {type(s).__name__}({params})")
        print(f"  total weight {s.total_weight}, null weight {s.null_weight}, empty {s.is_empty}")
        if isinstance(s, Sketch):  # the sign rule (docs/inputs.md): joins of two such sketches are clipped at 0
            print(f"  frequencies known >= 0: {'yes' if s.nonnegative else 'no'}")
        if isinstance(s, JoinSample):
            kept = len(s.sample_items()[0])
            part = "" if s.partition is None else f", partial: partitions {list(s.partition[0])} of {s.partition[1]}"
            scale = f" (at totals times 2**{s.scale})" if s.scale else ""
            print(f"  sample of {kept:,} of {s.n_keys:,} keys, tau {s.tau!r}{scale}{part}")
        if isinstance(s, HeavyKeySketch):
            keys, _, clean = s.table_items()
            print(f"  {len(keys):,} heavy keys held ({int(clean.sum()):,} without residual), {s.draws:,} admission draws")
        print(f"  memory {s.nbytes:,} bytes, serialised {len(s.to_bytes()):,} bytes")
    return 0


def estimate_command(a) -> int:
    left, right = load_summary(a.left), load_summary(a.right)
    for path, sk in ((a.left, left), (a.right, right)):
        if not isinstance(sk, (Sketch, JoinSample, HeavyKeySketch)):
            raise CliError(f"{path!r} holds a {type(sk).__name__}, which has no two-way join estimate "
                           "(a pair sketch is the middle of a chain join: skimsketch.chain_join_size)")
    try:
        e = left.join_size(right, confidence=a.confidence)
    except (SketchError, ValueError) as err:
        raise CliError(f"cannot estimate {a.left} x {a.right}: {err}") from None
    label = estimate_label(left.float_counters, right.float_counters)
    if isinstance(left, JoinSample) and not (left.float_counters and right.float_counters):
        label += " (or SUM of the weights, for a side sampled with an integer --weight)"
    print(f"{label}: {format_number(e.value)}")
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
