"""The ``skimsketch`` command line: sketch files, inspect them, estimate joins."""

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import skimsketch as ss
from skimsketch.cli import main


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(5)
    f = (rng.zipf(1.3, 30_000) - 1) % 2000
    g = (rng.zipf(1.3, 20_000) + 2) % 2000
    x = rng.integers(1, 50, len(f)).astype(np.float64) / 4
    (tmp_path / "fdir").mkdir()
    pq.write_table(pa.table({"k": f[:18_000], "x": x[:18_000]}), tmp_path / "fdir" / "f1.parquet")
    pq.write_table(pa.table({"k": f[18_000:], "x": x[18_000:]}), tmp_path / "fdir" / "f2.parquet")
    pacsv.write_csv(pa.table({"key": g}), tmp_path / "g.csv")
    return tmp_path, f, g, x


def test_sketch_files_then_estimate_matches_the_library(tables, capsys):
    d, f, g, _ = tables
    assert main(["sketch", str(d / "fdir" / "f1.parquet"), str(d / "fdir" / "f2.parquet"), "-c", "k", "--nbytes", "8192",
                 "--seed", "3", "-o", str(d / "f.sks"), "--no-progress"]) == 0
    assert main(["sketch", str(d / "g.csv"), "--column", "key", "--nbytes", "8192", "--seed", "3",
                 "--key-type", "int", "-o", str(d / "g.sks")]) == 0
    out = capsys.readouterr().out
    assert "of 30,000 rows" in out and "of 20,000 rows" in out
    sf = ss.from_bytes((d / "f.sks").read_bytes())
    sg = ss.from_bytes((d / "g.sks").read_bytes())
    expected_f = ss.SkimmedSketch.for_bytes(8192, seed=3).update(f)
    assert sf == expected_f and sg == expected_f.empty_like().update(g)
    assert main(["estimate", str(d / "f.sks"), str(d / "g.sks")]) == 0
    out = capsys.readouterr().out
    e = sf.join_size(sg)
    assert f"join size (COUNT(*)): {e.value:,.0f}" in out and f"[{e.low:,.0f}, {e.high:,.0f}] at 95%" in out


def test_weighted_sketch_estimates_sum(tables, capsys):
    d, f, g, x = tables
    assert main(["sketch", str(d / "fdir"), "-c", "k", "-w", "x", "--kind", "hash", "--width", "512", "--depth", "5",
                 "-o", str(d / "fx.sks")]) == 0
    assert main(["sketch", str(d / "g.csv"), "-c", "key", "--kind", "hash", "--width", "512", "--depth", "5",
                 "--key-type", "int", "-o", str(d / "g.sks")]) == 0
    sf = ss.from_bytes((d / "fx.sks").read_bytes())
    assert sf == ss.HashSketch(512, 5, dtype="float64").update(f, weights=x)
    capsys.readouterr()
    assert main(["estimate", str(d / "fx.sks"), str(d / "g.sks")]) == 0
    assert "SUM(left.w) over the join: " in capsys.readouterr().out


def test_info_prints_kind_shape_and_sizes(tables, capsys):
    d, f, _, _ = tables
    (d / "h.sks").write_bytes(ss.HashSketch(64, 3, seed=9).update(f).to_bytes())
    assert main(["info", str(d / "h.sks")]) == 0
    out = capsys.readouterr().out
    assert "HashSketch(width=64, depth=3, seed=9" in out and f"total weight {len(f)}" in out


def test_errors_are_one_line_and_exit_2(tables, capsys):
    d, _, _, _ = tables
    assert main(["sketch", str(d / "fdir" / "f1.parquet"), "-c", "nope", "-o", str(d / "x.sks")]) == 2
    assert "--column 'nope' is not a column of '" in capsys.readouterr().err
    assert main(["sketch", str(d / "missing.parquet"), "-c", "k", "-o", str(d / "x.sks")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["sketch", str(d / "fdir" / "f1.parquet"), "-c", "k", "--width", "8", "-o", str(d / "x.sks")]) == 2
    assert "--width and --depth go together" in capsys.readouterr().err
    (d / "bad.sks").write_bytes(b"not a sketch at all, really")
    assert main(["info", str(d / "bad.sks")]) == 2
    assert "is not a valid sketch file" in capsys.readouterr().err
    (d / "a.sks").write_bytes(ss.HashSketch(64, 3, seed=1).to_bytes())
    (d / "b.sks").write_bytes(ss.HashSketch(64, 3, seed=2).to_bytes())
    assert main(["estimate", str(d / "a.sks"), str(d / "b.sks")]) == 2
    assert "seed" in capsys.readouterr().err


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"skimsketch {ss.__version__}"
    assert main([]) == 2
    assert "sketch" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["sketch", "--help"])
    assert e.value.code == 0 and "--column" in capsys.readouterr().out


def test_pair_sketch_files_have_info_and_no_two_way_estimate(tables, capsys):
    d, _, _, _ = tables
    (d / "p.sks").write_bytes(ss.PairSketch(8, 4, 3, 1, 2).update([1, 2], ["x", None]).to_bytes())
    (d / "h.sks").write_bytes(ss.HashSketch(8, 3, seed=1).to_bytes())
    assert main(["info", str(d / "p.sks")]) == 0
    out = capsys.readouterr().out
    assert "PairSketch(width_a=8, width_b=4, depth=3, seed_a=1, seed_b=2, dtype=int64)" in out
    assert "total weight 1, null weight 1" in out
    assert main(["estimate", str(d / "h.sks"), str(d / "p.sks")]) == 2
    assert "holds a PairSketch, which has no two-way join estimate" in capsys.readouterr().err
