"""The in-memory demo (``./dev demo``), end to end on small streams."""

import re

import skimsketch as ss
from data.zipf import shifted_pair
from experiments.demo import main


def test_demo_prints_every_sketch_with_exact_answer(capsys):
    assert main(["--n", "20000", "--domain", "4096", "--kb", "4", "--shift", "10", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    f, g = shifted_pair(20000, 4096, 1.0, 10, seed=3)
    exact = ss.exact_join_size(f, g)
    assert f"exact join size: {exact:,}" in out
    for name in ("AGMS (paper grid)", "hash sketch", "skimmed (paper grid)", "skimmed (default)",
                 "skimmed (unbounded)"):
        line = next(row for row in out.splitlines() if row.startswith(name))
        err = float(re.search(r"([\d.]+)%\s*$", line).group(1))
        assert 0 <= err < 1000, line
        nbytes = int(re.search(r"\d+x\d+\s+(\d+)", line).group(1))
        assert 4096 * 0.75 < nbytes <= 4096, line  # the sketch fills, and stays within, the 4 KiB budget
