"""Legacy join samples through the jar's SQL functions (issue 33 item 10): whatever the core reads, SQL reads.

Every blob of the previous release (layout 1, ``tests/core/sample/golden/v4_*.bin``), its partial piece among
them, answers in SQL as in the core, and unions write the core's bytes; an empty legacy sample joins and
merges a new one, as in the core; a legacy piece merges a disjoint legacy piece of its partitioning.
"""

import struct
from pathlib import Path

import numpy as np
import pytest

import skimsketch as ss
from spark_udaf import native

from .test_golden import _close

pytestmark = pytest.mark.spark

GOLDEN = Path(__file__).parents[1] / "core" / "sample" / "golden"
LAYOUT1 = sorted(p.stem.removeprefix("v4_") for p in GOLDEN.glob("v4_*.bin"))


@pytest.fixture(scope="module")
def jar(spark):
    if not native.loaded(spark):
        pytest.skip("the session's JVM has no native jar")
    from spark_udaf import native as nat

    nat.register(spark)  # the JVM's estimate functions (another module may have registered the Python ones)
    yield spark
    import spark_udaf

    spark_udaf.register(spark)


def _v4(name: str) -> bytes:
    return (GOLDEN / f"v4_{name}.bin").read_bytes()


def _x(blob: bytes) -> str:
    return f"X'{blob.hex()}'"


def _error(spark, sql: str) -> str:
    with pytest.raises(Exception) as err:
        spark.sql(sql).collect()
    return str(err.value)


def _layout1_piece(seed: int, width: int, part: int, parts: int, key: int, total: int) -> bytes:
    """A complete layout-1 partial piece holding one key (the previous release's extension: partial flag, bitmap)."""
    from skimsketch.format import header as fmt

    nb = -(-parts // 8)
    bits = bytearray(nb)
    bits[part // 8] |= 1 << (part % 8)
    ext = struct.pack("<4sBB2sIIdQ", b"SMPL", 1, 1, b"\0\0", 1, parts, float("inf"), 1) + bytes(bits)
    ext += struct.pack("<q", key) + struct.pack("<i", total)
    head = fmt.Header(5, width, 1, seed, None, False, 0.0, total, 0, False, counter_width=4, key_domain="int")
    return fmt.encode(head, np.zeros(0), ext, 4)


def test_the_layout1_golden_pieces_are_what_the_sql_side_reads():
    assert "piece" in LAYOUT1 and "empty" in LAYOUT1 and len(LAYOUT1) >= 10
    assert _v4("piece")[64 + 5] == 1  # a layout-1 partial piece: once refused by the JVM as CorruptSketchError


@pytest.mark.parametrize("name", LAYOUT1)
def test_every_layout1_blob_answers_in_sql_as_in_the_core(jar, name):
    blob = _v4(name)
    core = ss.from_bytes(blob)
    row = jar.sql(f"SELECT skim_sketch_info({_x(blob)}) AS i, skim_self_join_size_bounds({_x(blob)}) AS s, "
                  f"skim_union_agg(b) AS u FROM (SELECT {_x(blob)} AS b)").collect()[0]
    assert bytes(row.u) == core.to_bytes()  # read and written again: the core's layout-2 bytes, byte for byte
    assert (row.i.kind, row.i.width, row.i.seed, row.i.nbytes) == ("JoinSample", core.budget, core.seed,
                                                                   len(core.to_bytes()))
    want = core.self_join_size()
    got = row.s
    assert all(_close(w, g) for w, g in zip((want.value, want.low, want.high, want.confidence),
                                            (got.value, got.low, got.high, got.confidence))), (want, got)
    assert got.method == want.method


def test_a_layout1_piece_joins_legacy_samples_and_refuses_new_ones_as_the_core(jar):
    piece, whole = _v4("piece"), _v4("zipf_g")
    want = ss.from_bytes(piece).join_size(ss.from_bytes(whole))
    got = jar.sql(f"SELECT skim_join_size_bounds({_x(piece)}, {_x(whole)}) AS j").collect()[0].j
    assert _close(want.value, got.value) and _close(want.low, got.low) and _close(want.high, got.high)
    new = ss.JoinSample.for_bytes(ss.from_bytes(piece).budget, seed=42, partition=(0, 3)).update([1]).to_bytes()
    with pytest.raises(ss.IncompatibleSketchError) as core_err:
        ss.from_bytes(piece).merge(ss.from_bytes(new))
    assert str(core_err.value) in _error(jar, f"SELECT skim_union({_x(piece)}, {_x(new)})")
    with pytest.raises(ss.IncompatibleSketchError) as core_err:
        ss.from_bytes(piece).merge(ss.from_bytes(piece))
    assert "both cover partitions [1] of 3" in str(core_err.value)
    assert str(core_err.value) in _error(jar, f"SELECT skim_union({_x(piece)}, {_x(piece)})")


def test_a_layout1_piece_merges_a_disjoint_legacy_piece_to_the_core_s_bytes(jar):
    piece = _v4("piece")  # partition 1 of 3, capacity 77, seed 42
    other = _layout1_piece(42, 77, 0, 3, 7, 3)
    want = ss.from_bytes(piece).merge(ss.from_bytes(other))
    assert want.partition == ((0, 1), 3)
    for a, b in ((piece, other), (other, piece)):
        got = jar.sql(f"SELECT skim_union({_x(a)}, {_x(b)}) AS u").collect()[0].u
        assert bytes(got) == ss.from_bytes(a).merge(ss.from_bytes(b)).to_bytes()
    agg = jar.sql(f"SELECT skim_union_agg(b) AS u FROM VALUES ({_x(piece)}), ({_x(other)}) AS t(b)").collect()[0].u
    assert bytes(agg) == want.to_bytes() and bytes(agg)[64 + 5] == 3  # flags partial | legacy


@pytest.mark.parametrize("legacy_first", [True, False])
def test_an_empty_legacy_sample_joins_and_merges_a_new_one_as_the_core(jar, legacy_first):
    empty = _v4("empty")
    core_empty = ss.from_bytes(empty)
    new = ss.JoinSample.for_bytes(core_empty.budget, seed=core_empty.seed).update([1, 2, 2]).to_bytes()
    a, b = (empty, new) if legacy_first else (new, empty)
    merged = ss.from_bytes(a).merge(ss.from_bytes(b))
    row = jar.sql(f"SELECT skim_join_size({_x(a)}, {_x(b)}) AS j, skim_union({_x(a)}, {_x(b)}) AS u").collect()[0]
    assert row.j == ss.from_bytes(a).join_size(ss.from_bytes(b)).value == 0.0
    assert bytes(row.u) == merged.to_bytes() and bytes(row.u)[64 + 5] == 0  # the new rank hash
    agg = jar.sql(f"SELECT skim_union_agg(b) AS u FROM VALUES ({_x(a)}), ({_x(b)}) AS t(b)").collect()[0].u
    assert bytes(agg) == merged.to_bytes()
    j = jar.sql(f"SELECT skim_join_size({_x(bytes(row.u))}, {_x(new)}) AS j").collect()[0].j
    assert j == merged.join_size(ss.from_bytes(new)).value == 5.0
    zipf = _v4("zipf")  # a legacy sample with keys still refuses a new one, naming the rank hashes
    assert "rank hash differs ('layout 1' != 'layout 2')" in _error(jar, f"SELECT skim_join_size({_x(zipf)}, "
                                                                          f"{_x(new)})")
