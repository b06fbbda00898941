"""Verdict rules of the report, on hand-made result rows."""

import pytest

from experiments.report import claims, plot_figure, write_report


def _rows(agms_err, skim_err, figure="5b", workload="zipf1.5_shift30", shift=30, bytes_per=8.0):
    rows = []
    for level, (a, s) in enumerate(zip(agms_err, skim_err)):
        counters = 550.0 * (level + 1)
        for method, err in (("agms", a), ("skimmed", s)):
            rows.append({"figure": figure, "workload": workload, "dataset": "zipf", "z": 1.5, "shift": shift,
                         "n": 1000, "domain": 4096, "join_size_mean": 1e6, "method": method,
                         "memory_level": level, "memory_counters": counters,
                         "memory_bytes": bytes_per * counters, "shapes": "50x11", "n_shapes": 1,
                         "repetitions": 2, "n_estimates": 2, "mean_error": err, "std_error": err / 2,
                         "median_error": err, "capped_share": 0.0, "seconds": 0.1})
    return rows


def _verdict(rows, claim_start):
    return [c["verdict"] for c in claims(rows) if c["claim"].startswith(claim_start)]


@pytest.mark.parametrize(
    "ratio, verdict",
    [(5.0, "holds"), (2.5, "holds"), (12.0, "stronger than claimed"), (1.5, "skimmed better, by less than claimed"),
     (0.8, "does NOT hold")],
)
def test_five_x_rule(ratio, verdict):
    rows = _rows([ratio * 0.1] * 3, [0.1] * 3, figure="5a", workload="zipf1.0_shift100", shift=100)
    assert _verdict(rows, "skimmed beats basic AGMS by about 5x") == [verdict]


def test_orders_of_magnitude_rule_uses_the_median_over_levels():
    rows = _rows([5.0, 5.0, 5.0], [0.01, 0.04, 0.2])  # ratios 500, 125, 25 -> median 125
    assert _verdict(rows, "skimmed beats basic AGMS by orders") == ["holds"]
    rows = _rows([5.0, 5.0, 5.0], [0.1, 0.2, 0.01])  # ratios 50, 25, 500 -> median 50
    assert _verdict(rows, "skimmed beats basic AGMS by orders") == ["skimmed better by 50x, not orders of magnitude"]


def test_few_kb_rule():
    # below 10% first at level 0: 550 counters x 8 B = 4.3 KiB
    assert _verdict(_rows([1, 1, 1], [0.05, 0.2, 0.01]), "skimmed error under 10%") == ["holds"]
    # first below 10% at level 2: 1650 counters = 12.9 KiB > 10 KiB
    assert _verdict(_rows([1, 1, 1], [0.5, 0.2, 0.05]), "skimmed error under 10%") == [
        "holds only from more memory"]
    assert _verdict(_rows([1, 1, 1], [0.5, 0.2, 0.15]), "skimmed error under 10%") == ["does NOT hold"]


def test_report_and_plot_from_rows(tmp_path):
    rows = _rows([5.0, 4.0, 3.0], [0.3, 0.05, 0.01])
    png = tmp_path / "figure5b.png"
    plot_figure(rows, "5b", png, "test")
    assert png.read_bytes()[:4] == b"\x89PNG"
    info = {"jobs": 2, "wall_seconds": 60.0, "cpu_seconds_in_tasks": 100.0, "load_average_at_end": 1.0}
    config = {"mode": "test", "zipf_n": 1000, "zipf_domain": 4096, "census_n": 10, "widths": [50],
              "depths": [11], "reps": 2}
    text = write_report(rows, config, info, tmp_path, {"5b": png}).read_text()
    assert "SYNTHETIC" in text and "| zipf1.5_shift30 |" in text and "figure5b.png" in text
    assert "about 0.8 min on 2 idle cores" in text
