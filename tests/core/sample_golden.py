"""Golden join samples (format kind 5): the builders, their bytes, and the estimate vectors for the JVM.

``golden_sample/v4_<name>.bin`` holds the bytes ``to_bytes`` wrote for each builder
(``tests/core/test_sample_golden.py`` checks they are still written and read the same).
``golden_sample/estimates.tsv`` holds estimate vectors in the format of
``tests/spark_udaf/golden_estimates.py`` (``sample  name  hex`` lines, then
``op  confidence  a  b  key  expected``), answered by the core: the JVM port of the sample
(``skim_sample_agg`` and the estimate functions) reproduces the bytes and the answers from
them. They are kept apart from the sketches' vectors so that the JVM self-test is unchanged
until the JVM reads kind 5; :func:`lines` is the generator to wire into
``golden_estimates.py`` then.

Write the missing files (existing blobs are never rewritten; the TSV is regenerated)::

    PYTHONPATH=$PWD python -m tests.core.sample_golden
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import skimsketch as ss

DIR = Path(__file__).parent / "golden_sample"
TSV = DIR / "estimates.tsv"


def _zipf(seed: int, n: int, domain: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) % domain).astype(np.int64)


def _pieces(keys, nbytes: int, seed: int, parts: int) -> list:
    """Finished pieces for every key-hash partition of ``keys`` (the JVM's partial samples)."""
    part = ss.JoinSample.partition_of(keys, parts, seed=seed)
    return [ss.JoinSample.from_bytes(
        ss.JoinSample.for_bytes(nbytes, seed, partition=(i, parts)).update(keys[part == i]).to_bytes())
        for i in range(parts)]


BUILDERS = {
    # a sample that kept every key (tau infinite)
    "complete": lambda: ss.JoinSample.for_bytes(512, seed=41).update([3, 1, 4, 1, 5, 9, 2, 6, None]),
    # the rank order and tau over a skewed table (int32 totals)
    "zipf": lambda: ss.JoinSample.for_bytes(1024, seed=42).update(_zipf(1, 5000, 2000)),
    "zipf_g": lambda: ss.JoinSample.for_bytes(1024, seed=42).update(_zipf(2, 4000, 2000) + 5),
    # string keys, deletes that empty a key, a null
    "strings_deletes": lambda: ss.JoinSample.for_bytes(400, seed=42).update(
        [f"user{i % 61}" for i in range(900)] + [None]).update(["user1", "user2"], weights=[-15, -3]),
    # totals beyond int32: a whole sample keeps floor(3m/4) entries as int64
    "wide": lambda: ss.JoinSample.for_bytes(400, seed=43).update(np.arange(40), weights=np.arange(40) * 2**33 + 1),
    # float totals
    "float": lambda: ss.JoinSample.for_bytes(600, seed=42, dtype="float64").update(
        _zipf(3, 800, 300), weights=np.linspace(0.25, 3.0, 800)),
    # a partial piece (partition 1 of 3), and the merge of all three pieces (== "zipf")
    "piece": lambda: _pieces(_zipf(1, 5000, 2000), 1024, 42, 3)[1],
    "merged_pieces": lambda: _pieces(_zipf(1, 5000, 2000), 1024, 42, 3)[2].merge(
        _pieces(_zipf(1, 5000, 2000), 1024, 42, 3)[0]).merge(_pieces(_zipf(1, 5000, 2000), 1024, 42, 3)[1]),
    "empty": lambda: ss.JoinSample.for_bytes(256, seed=42),
    "other_seed": lambda: ss.JoinSample.for_bytes(1024, seed=7).update(_zipf(1, 5000, 2000)),
}


def path(name: str) -> Path:
    return DIR / f"v4_{name}.bin"


def cases() -> list[tuple]:
    """(op, confidence, a, b, key) of every vector."""
    out = []
    for a, b in (("zipf", "zipf_g"), ("zipf", "zipf"), ("zipf", "complete"), ("complete", "complete"),
                 ("zipf", "float"), ("wide", "complete"), ("zipf", "empty"), ("merged_pieces", "zipf_g"),
                 ("strings_deletes", "strings_deletes"), ("zipf", "other_seed"), ("zipf", "strings_deletes")):
        out.append(("join", 0.95, a, b, None))
    for c in (0.5, 0.99):
        out.append(("join", c, "zipf", "zipf_g", None))
    for name in BUILDERS:
        out.append(("self", 0.95, name, None, None))
        out.append(("info", None, name, None, None))
    for k in ("int:0", "int:1", "int:3", "int:1999", "int:-5", "str:" + b"user5".hex()):
        for name in ("zipf", "complete", "strings_deletes", "float"):
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
            return " ".join(["JoinSample", str(s.capacity), "1", str(s.seed), _num(s.total_weight),
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


def main() -> None:
    DIR.mkdir(exist_ok=True)
    for name, build in BUILDERS.items():
        if not path(name).exists():
            path(name).write_bytes(build().to_bytes())
            print(f"wrote {path(name).name}")
    header = "# op\tconfidence\ta\tb\tkey\texpected  (generated by tests/core/sample_golden.py)"
    TSV.write_text("\n".join([header, *lines()]) + "\n")
    print(f"wrote {TSV}")


if __name__ == "__main__":
    main()
