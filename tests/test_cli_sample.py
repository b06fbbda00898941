"""The command line with ``--kind sample``: sample files, their info and estimates."""

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

import skimsketch as ss
from skimsketch.cli import main


def test_sample_files_then_estimate_matches_the_library(tmp_path, capsys):
    rng = np.random.default_rng(5)
    f, g = (rng.zipf(1.3, 30_000) - 1) % 2000, (rng.zipf(1.3, 20_000) + 2) % 2000
    x = rng.integers(1, 50, len(f)).astype(np.float64) / 4
    pq.write_table(pa.table({"k": f, "x": x}), tmp_path / "f.parquet")
    pacsv.write_csv(pa.table({"key": g}), tmp_path / "g.csv")
    assert main(["sketch", str(tmp_path / "f.parquet"), "-c", "k", "--kind", "sample", "--nbytes", "4096", "--seed", "3",
                 "-o", str(tmp_path / "f.smp")]) == 0
    assert main(["sketch", str(tmp_path / "g.csv"), "-c", "key", "--kind", "sample", "--nbytes", "4096", "--seed", "3",
                 "--key-type", "int", "-o", str(tmp_path / "g.smp")]) == 0
    assert main(["sketch", str(tmp_path / "f.parquet"), "-c", "k", "-w", "x", "--kind", "sample", "--nbytes", "4096",
                 "--seed", "3", "-o", str(tmp_path / "fx.smp")]) == 0
    sf, sg = (ss.from_bytes((tmp_path / n).read_bytes()) for n in ("f.smp", "g.smp"))
    assert sf == ss.from_bytes(ss.JoinSample.for_bytes(4096, seed=3).update(f).to_bytes())
    assert ss.from_bytes((tmp_path / "fx.smp").read_bytes()) == ss.from_bytes(
        ss.JoinSample.for_bytes(4096, seed=3, dtype="float64").update(f, weights=x).to_bytes())
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "f.smp"), str(tmp_path / "g.smp")]) == 0
    e = sf.join_size(sg)
    out = capsys.readouterr().out
    assert f"join size (COUNT(*)) (or SUM of the weights, for a side sampled with an integer --weight): " \
        f"{e.value:,.0f}" in out and "(method sample)" in out
    assert main(["estimate", str(tmp_path / "fx.smp"), str(tmp_path / "g.smp")]) == 0
    assert "SUM(left.w) over the join (or SUM of the weights, for a side sampled with an integer --weight): " \
        in capsys.readouterr().out
    assert main(["info", str(tmp_path / "f.smp")]) == 0
    out = capsys.readouterr().out
    assert "JoinSample(nbytes=4096, seed=3, dtype=int64)" in out and f"of {sf.n_keys:,} keys, tau " in out
    assert f"serialised {len((tmp_path / 'f.smp').read_bytes()):,} bytes" in out


def test_sample_errors_are_one_line(tmp_path, capsys):
    pq.write_table(pa.table({"k": [1, 2, 3]}), tmp_path / "t.parquet")
    assert main(["sketch", str(tmp_path / "t.parquet"), "-c", "k", "--kind", "sample", "--width", "8", "--depth", "2",
                 "-o", str(tmp_path / "x")]) == 2
    assert "--width/--depth apply to sketches, not --kind sample" in capsys.readouterr().err
    assert main(["sketch", str(tmp_path / "t.parquet"), "-c", "k", "--kind", "sample", "--nbytes", "100",
                 "-o", str(tmp_path / "x")]) == 2
    assert "cannot build the sample: nbytes must be at least 1024" in capsys.readouterr().err
    (tmp_path / "s.smp").write_bytes(ss.JoinSample.for_bytes(512).update([1, 2]).to_bytes())
    (tmp_path / "h.sks").write_bytes(ss.HashSketch(16, 2).update([1, 2]).to_bytes())
    assert main(["estimate", str(tmp_path / "s.smp"), str(tmp_path / "h.sks")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "type differs ('JoinSample' != 'HashSketch')" in err


def test_an_integer_weight_column_gives_integer_totals_as_the_library_does(tmp_path, capsys):
    """Issue 33 item 6: ``--weight`` on an integer column kept float totals (291 entries at 4 KB, the library
    512); Parquet integer columns and CSV integer text now give the library's int64 sample, bytes equal."""
    rng = np.random.default_rng(6)
    f = (rng.zipf(1.3, 40_000) - 1) % 5000
    w = rng.integers(1, 20, len(f))
    pq.write_table(pa.table({"k": f, "w": w.astype(np.int32)}), tmp_path / "f.parquet")
    pacsv.write_csv(pa.table({"k": f, "w": w}), tmp_path / "f.csv")
    pacsv.write_csv(pa.table({"k": f, "w": w + 0.5}), tmp_path / "x.csv")
    want = ss.JoinSample.for_bytes(4096, seed=1).update(f, weights=w)
    for name, key_type in (("f.parquet", []), ("f.csv", ["--key-type", "int"])):
        assert main(["sketch", str(tmp_path / name), "-c", "k", "-w", "w", "--kind", "sample", "--nbytes", "4096",
                     "--seed", "1", *key_type, "-o", str(tmp_path / "s.smp")]) == 0
        got = ss.from_bytes((tmp_path / "s.smp").read_bytes())
        assert got.dtype == "int64" and got.to_bytes() == ss.from_bytes(want.to_bytes()).to_bytes(), name
    assert len(got.sample_items()[0]) > 500
    assert main(["sketch", str(tmp_path / "x.csv"), "-c", "k", "-w", "w", "--kind", "sample", "--nbytes", "4096",
                 "--seed", "1", "--key-type", "int", "-o", str(tmp_path / "x.smp")]) == 0
    assert ss.from_bytes((tmp_path / "x.smp").read_bytes()).dtype == "float64"  # fractional weights: float totals
