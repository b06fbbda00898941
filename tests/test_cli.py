"""The command line's main job, end to end on small streams."""

import re

import skimsketch as ss
from data.zipf import shifted_pair
from skimsketch.cli import main
from skimsketch.sizing import COUNTER_BYTES


def test_demo_prints_every_sketch_with_exact_answer(capsys):
    assert main(["demo", "--n", "20000", "--domain", "4096", "--kb", "4", "--shift", "10", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    f, g = shifted_pair(20000, 4096, 1.0, 10, seed=3)
    exact = ss.exact_join_size(f, g)
    assert f"exact join size: {exact:,}" in out
    for name in ("AGMS (paper grid)", "hash sketch", "skimmed (paper grid)", "skimmed (default)"):
        line = next(l for l in out.splitlines() if l.startswith(name))
        err = float(re.search(r"([\d.]+)%\s*$", line).group(1))
        assert 0 <= err < 1000, line
        depth, width, nbytes = map(int, re.search(r"(\d+)x(\d+)\s+(\d+)", line).groups())
        # budgets count COUNTER_BYTES per counter (the stored width may be larger until counters are int32)
        counted = COUNTER_BYTES * depth * width
        assert nbytes % (depth * width) == 0 and 4096 - COUNTER_BYTES * depth < counted <= 4096, line


def test_unknown_command_and_help(capsys):
    assert main(["nope"]) == 2
    assert "unknown command" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert main([]) == 2
