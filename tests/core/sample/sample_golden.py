"""Golden join samples (format kind 5): the builders, their bytes, and the estimate vectors for the JVM.

Two sets, both in ``golden/`` (beside this file):

* **layout 2** (what ``to_bytes`` writes): ``compact_<name>.bin`` holds the bytes ``to_bytes``
  wrote for each builder of :data:`BUILDERS`, and ``compact_estimates.tsv`` the estimate vectors
  in the format of ``tests/spark_udaf/golden_estimates.py`` (``sample  name  hex`` lines, then
  ``op  confidence  a  b  key  expected``), answered by the core. The JVM port reproduces the
  bytes (every blob reads and writes back byte for byte) and the answers.
* **layout 2 before the sign flag** (read compatibility, frozen): ``preflag_<name>.bin``, the same builders'
  bytes before samples recorded the sign flag (header bit 4): they read, write back byte for byte, and know
  their signs only when they kept every key (``test_sample.py``).
* **layout 1** (read compatibility, frozen): ``v4_<name>.bin`` and ``estimates.tsv``, written by
  the previous release (12-byte entries, keys). They are never rewritten: every blob but the
  partial ``piece`` reads (converted to fingerprints, :mod:`skimsketch.sample.join_sample`), and every
  ``join``/``self``/``freq`` answer of ``estimates.tsv`` is still the core's answer; ``info``
  answers name the converted sample's budget ``100 + 12 m`` and its layout-2 size now, and the
  partial piece is refused (``test_sample.py`` checks all of it).

Write the missing layout-2 files (existing blobs are never rewritten; the TSV is regenerated)::

    PYTHONPATH=$PWD python -m tests.core.sample.sample_golden
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import skimsketch as ss

DIR = Path(__file__).parent / "golden"
TSV = DIR / "compact_estimates.tsv"
LEGACY_TSV = DIR / "estimates.tsv"  # layout 1: frozen
LEGACY = ("complete", "zipf", "zipf_g", "strings_deletes", "wide", "float", "piece", "merged_pieces", "empty",
          "other_seed")


def _zipf(seed: int, n: int, domain: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) % domain).astype(np.int64)


def _pieces(keys, nbytes: int, seed: int, parts: int) -> list:
    """Finished pieces for every key-hash partition of ``keys`` (the JVM's partial samples)."""
    part = ss.JoinSample.partition_of(keys, parts, seed=seed)
    return [ss.JoinSample.from_bytes(
        ss.JoinSample.for_bytes(nbytes, seed, partition=(i, parts)).update(keys[part == i]).to_bytes())
        for i in range(parts)]


def _extreme() -> ss.JoinSample:
    """Totals of every varint length, negative ones, and |total| >= 2**62 (one key a batch: a batch's |weights|
    sum within int64)."""
    s = ss.JoinSample.for_bytes(300, seed=43)
    weights = [(-1) ** i * (2**62 + i) for i in range(15)] + [-1, 1, -64, 64, -65, 63, 2**31, -(2**31), 127, 128,
                                                              300, -300, 2**56, -(2**56), 5, 2**49, -(2**35)]
    for k, w in enumerate(weights):
        s.update([k], weights=[w])
    return s


def _scaled(nbytes: int, shift: int, n: int = 500) -> ss.JoinSample:
    """Float totals ``(k % 37 + 1) 2^shift`` (negative for every fifth key; exact sums in any order): beyond
    ``2^-511 .. 2^511`` a layout-3 sample (its scale exponent; skimsketch/sample/scale.py)."""
    keys = np.arange(n)
    w = np.ldexp((keys % 37 + 1).astype(np.float64), shift) * np.where(keys % 5 == 0, -1.0, 1.0)
    return ss.JoinSample.for_bytes(nbytes, seed=44, dtype="float64").update(keys, weights=w)


def _span_merged() -> ss.JoinSample:
    """Pieces of one partitioning at different scale exponents (totals 2^-900, 2^-600 and 2^-750 times an integer),
    finished and merged: the one-build sample."""
    keys = np.arange(3000)
    part = ss.JoinSample.partition_of(keys, 3, seed=44)
    w = np.ldexp((keys % 37 + 1).astype(np.float64), np.array([-900, -600, -750])[part])
    p = _pieces_of(keys, w, part, 3)
    return p[0].merge(p[2]).merge(p[1])


def _pieces_of(keys, w, part, parts: int) -> list:
    return [ss.from_bytes(ss.JoinSample.for_bytes(600, 44, "float64", (i, parts)).update(
        keys[part == i], weights=w[part == i]).to_bytes()) for i in range(parts)]


def _merged() -> ss.JoinSample:
    p = _pieces(_zipf(1, 5000, 2000), 300, 42, 3)
    return p[2].merge(p[0]).merge(p[1])


BUILDERS = {
    # a sample that kept every key (tau infinite)
    "complete": lambda: ss.JoinSample.for_bytes(512, seed=41).update([3, 1, 4, 1, 5, 9, 2, 6, None]),
    # the rank order, the longest prefix that fits, and tau over a skewed table
    "zipf": lambda: ss.JoinSample.for_bytes(1024, seed=42).update(_zipf(1, 5000, 2000)),
    "zipf_g": lambda: ss.JoinSample.for_bytes(1024, seed=42).update(_zipf(2, 4000, 2000) + 5),
    # string keys, deletes that empty a key, a null
    "strings_deletes": lambda: ss.JoinSample.for_bytes(400, seed=42).update(
        [f"user{i % 61}" for i in range(900)] + [None]).update(["user1", "user2"], weights=[-15, -3]),
    # totals beyond int32 (longer varints)
    "wide": lambda: ss.JoinSample.for_bytes(400, seed=43).update(np.arange(40), weights=np.arange(40) * 2**33 + 1),
    # negative totals and 10-byte varints (|total| >= 2**62)
    "extreme_totals": lambda: _extreme(),
    # float totals
    "float": lambda: ss.JoinSample.for_bytes(600, seed=42, dtype="float64").update(
        _zipf(3, 800, 300), weights=np.linspace(0.25, 3.0, 800)),
    # a partial piece (partition 1 of 3: min(K, C) entries, beyond the budget), and the merge of all three
    # pieces (== the whole sample of the same rows at 300 bytes)
    "piece": lambda: _pieces(_zipf(1, 5000, 2000), 300, 42, 3)[1],
    "merged_pieces": _merged,
    "empty": lambda: ss.JoinSample.for_bytes(256, seed=42),
    "other_seed": lambda: ss.JoinSample.for_bytes(1024, seed=7).update(_zipf(1, 5000, 2000)),
    # a layout-1 sample (the previous release's v4_zipf.bin) read and written again: its entries as they were
    "from_layout1": lambda: ss.from_bytes((DIR / "v4_zipf.bin").read_bytes()),
    # the previous release's partial piece (v4_piece.bin: partition 1 of 3) read and written again (extension
    # flags partial | legacy), and its empty sample (v4_empty.bin): legacy, yet it joins and merges new samples
    "from_layout1_piece": lambda: ss.from_bytes((DIR / "v4_piece.bin").read_bytes()),
    "empty_legacy": lambda: ss.from_bytes((DIR / "v4_empty.bin").read_bytes()),
    # float totals of any magnitude (issue 36): layout 3, the scale exponent in the extension's head
    "float_tiny": lambda: _scaled(600, -540),
    "float_huge": lambda: _scaled(600, 600),
    "float_tiny_complete": lambda: _scaled(600, -1000, 20),
    "float_span_merged": _span_merged,
}


#: The builders whose bytes before the sign flag are frozen (``preflag_<name>.bin``); later builders have none.
PREFLAG = ("complete", "zipf", "zipf_g", "strings_deletes", "wide", "extreme_totals", "float", "piece",
           "merged_pieces", "empty", "other_seed", "from_layout1")


def path(name: str) -> Path:
    return DIR / f"compact_{name}.bin"


def preflag_path(name: str) -> Path:
    return DIR / f"preflag_{name}.bin"


def legacy_path(name: str) -> Path:
    return DIR / f"v4_{name}.bin"


def cases() -> list[tuple]:
    """(op, confidence, a, b, key) of every vector."""
    out = []
    for a, b in (("zipf", "zipf_g"), ("zipf", "zipf"), ("zipf", "complete"), ("complete", "complete"),
                 ("zipf", "float"), ("wide", "complete"), ("zipf", "empty"), ("merged_pieces", "zipf_g"),
                 ("strings_deletes", "strings_deletes"), ("zipf", "other_seed"), ("zipf", "strings_deletes"),
                 ("piece", "zipf_g"), ("extreme_totals", "wide"), ("from_layout1", "zipf_g"),
                 ("from_layout1_piece", "from_layout1"), ("from_layout1_piece", "zipf"), ("empty_legacy", "zipf"),
                 ("zipf", "empty_legacy"), ("empty_legacy", "from_layout1"), ("empty_legacy", "empty"),
                 ("float_tiny", "float_huge"), ("float_huge", "float_tiny"), ("float_huge", "float_tiny_complete"),
                 ("float_span_merged", "float_huge"), ("float_tiny_complete", "float_tiny_complete")):
        out.append(("join", 0.95, a, b, None))
    for c in (0.5, 0.99):
        out.append(("join", c, "zipf", "zipf_g", None))
    for name in BUILDERS:
        out.append(("self", 0.95, name, None, None))
        out.append(("info", None, name, None, None))
    for k in ("int:0", "int:1", "int:3", "int:1999", "int:-5", "str:" + b"user5".hex()):
        for name in ("zipf", "complete", "strings_deletes", "float", "piece", "extreme_totals", "from_layout1_piece",
                     "float_tiny", "float_huge"):
            out.append(("freq", 0.95, name, None, k))
    return out


def _key(k: str):
    kind, v = k.split(":", 1)
    return {"int": int, "str": lambda x: bytes.fromhex(x).decode()}[kind](v)


def _num(x) -> str:
    return repr(float(x))


def answer(op: str, conf, a: bytes, b: bytes | None, key: str | None) -> str:
    """The core's answer as the ``expected`` field (``!ErrorName message`` for an error)."""
    try:
        s = ss.from_bytes(a)
        if op == "join":
            e = s.join_size(ss.from_bytes(b), conf)
        elif op == "self":
            e = s.self_join_size(conf)
        elif op == "freq":
            e = s.frequency(_key(key), conf)
        else:
            return " ".join(["JoinSample", str(s.budget), "1", str(s.seed), _num(s.total_weight),
                             _num(s.null_weight), str(s.nbytes)])
    except ss.SketchError as err:
        return f"!{type(err).__name__} {err}"
    return " ".join([_num(e.value), _num(e.low), _num(e.high), _num(e.confidence), e.method])


def lines() -> list[str]:
    blobs = {name: build().to_bytes() for name, build in BUILDERS.items()}
    out = ["\t".join(["sample", name, blob.hex()]) for name, blob in blobs.items()]
    for op, conf, a, b, key in cases():
        exp = answer(op, conf, blobs[a], None if b is None else blobs[b], key)
        out.append("\t".join([op, "-" if conf is None else repr(conf), a, b or "-", key or "-", exp]))
    return out


def legacy_answers() -> list[tuple[list[str], str]]:
    """(fields, the core's answer now) of every query line of the frozen layout-1 ``estimates.tsv``."""
    blobs, out = {}, []
    for line in LEGACY_TSV.read_text().splitlines():
        f = line.split("\t")
        if line.startswith("#"):
            continue
        if f[0] == "sample":
            blobs[f[1]] = bytes.fromhex(f[2])
            continue
        op, conf, a, b, key = f[:5]
        got = answer(op, None if conf == "-" else float(conf), blobs[a], None if b == "-" else blobs[b],
                     None if key == "-" else key)
        out.append((f, got))
    return out


def refresh_legacy_answers() -> None:
    """Rewrite the ``join``/``self`` answers of the frozen layout-1 ``estimates.tsv`` after an interval
    change: the blobs and every other line stay; an answer whose estimate itself moved (beyond 1e-9
    relative) is refused, since only the interval rule may change."""
    out = []
    answers = iter(legacy_answers())
    for line in LEGACY_TSV.read_text().splitlines():
        if line.startswith(("#", "sample\t")):
            out.append(line)
            continue
        f, got = next(answers)  # legacy_answers walks the same query lines, split into fields
        if f[0] in ("join", "self") and "piece" not in (f[2], f[3]) and got != f[5]:
            old, new = f[5].split(" "), got.split(" ")
            if old[0].startswith("!") or abs(float(old[0]) - float(new[0])) > 1e-9 * abs(float(old[0])):
                raise SystemExit(f"layout-1 vector {f[:5]}: the estimate changed ({f[5]} -> {got})")
            f[5] = " ".join([old[0], *new[1:]])  # the frozen estimate, the current interval
        out.append("\t".join(f))
    LEGACY_TSV.write_text("\n".join(out) + "\n")


def main() -> None:
    DIR.mkdir(exist_ok=True)
    for name, build in BUILDERS.items():
        if not path(name).exists():
            path(name).write_bytes(build().to_bytes())
            print(f"wrote {path(name).name}")
    # the header names this script's first home: the jar carries a copy of the file, byte for byte
    header = "# op\tconfidence\ta\tb\tkey\texpected  (layout 2, generated by tests/core/sample_golden.py)"
    TSV.write_text("\n".join([header, *lines()]) + "\n")
    print(f"wrote {TSV}")
    refresh_legacy_answers()
    print(f"refreshed the intervals of {LEGACY_TSV}")


if __name__ == "__main__":
    main()
