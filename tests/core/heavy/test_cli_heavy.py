"""``skimsketch sketch --kind heavy``: the file's rows in order, the library's bytes; deletes refused in one line."""

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

import skimsketch as ss
from skimsketch.cli import main


def test_heavy_kind_from_files(tmp_path, capsys):
    keys = ((np.random.default_rng(3).zipf(1.3, 5000) - 1) % 400).astype(np.int64)
    pacsv.write_csv(pa.table({"k": keys, "w": np.arange(5000) % 3}), tmp_path / "f.csv")
    assert main(["sketch", str(tmp_path / "f.csv"), "-c", "k", "--key-type", "int", "--kind", "heavy", "--nbytes",
                 "2048", "--seed", "4", "-o", str(tmp_path / "f.sks")]) == 0
    got = ss.from_bytes((tmp_path / "f.sks").read_bytes())
    want = ss.HeavyKeySketch.for_bytes(2048, seed=4).update(keys)
    assert got == want and got.draws > 0  # the rows in file order: the same stream, the same bytes
    assert main(["estimate", str(tmp_path / "f.sks"), str(tmp_path / "f.sks")]) == 0
    assert "method heavy" in capsys.readouterr().out
    assert main(["info", str(tmp_path / "f.sks")]) == 0
    assert "heavy keys held" in capsys.readouterr().out


def test_heavy_kind_refuses_deletes(tmp_path, capsys):
    pacsv.write_csv(pa.table({"k": [1, 2], "w": [3, -1]}), tmp_path / "d.csv")
    rc = main(["sketch", str(tmp_path / "d.csv"), "-c", "k", "-w", "w", "--kind", "heavy", "-o", str(tmp_path / "d.sks")])
    err = capsys.readouterr().err
    assert rc == 2 and "no deletes" in err and "SkimmedSketch" in err and "Traceback" not in err
    assert not (tmp_path / "d.sks").exists()
