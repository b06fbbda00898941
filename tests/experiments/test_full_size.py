"""Paper-sized checks (4M elements, domain 2^18): excluded from the default run (-m slow)."""

import pytest

from experiments.__main__ import main
from experiments.report import read_results


@pytest.mark.slow
def test_full_size_figure5b_skimmed_far_below_agms(tmp_path):
    # Figure 5(b) at the paper's sizes, all 25 shapes, 2 repetitions: ~1-2 min on 2 cores.
    assert main(["--full", "--figures", "5b", "--methods", "agms,skimmed", "--reps", "2",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    rows = read_results(tmp_path / "results.csv")
    for wl in ("zipf1.5_shift30", "zipf1.5_shift50"):
        agms = {r["memory_level"]: r["mean_error"] for r in rows if r["workload"] == wl and r["method"] == "agms"}
        skim = {r["memory_level"]: r["mean_error"] for r in rows if r["workload"] == wl and r["method"] == "skimmed"}
        assert len(agms) == len(skim) == 13
        ratios = sorted(agms[k] / skim[k] for k in skim)
        assert ratios[len(ratios) // 2] >= 10, (wl, ratios)  # an order of magnitude at the median
        # the largest memory level (250 x 59) brings skimmed below 10% error
        assert skim[12] < 0.1, (wl, skim[12])
