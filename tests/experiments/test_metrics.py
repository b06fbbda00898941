"""The paper's error metric and the memory levels of its (s1, s2) grid."""

import doctest

import pytest

import experiments.metrics
from experiments.metrics import ERROR_CAP, PAPER_DEPTHS, PAPER_WIDTHS, memory_levels, paper_error


@pytest.mark.parametrize(
    "exact, estimate, expected",
    [
        (100, 100, 0.0),
        (100, 120, 0.2),  # overestimate: divided by J
        (100, 80, 0.25),  # underestimate: divided by the estimate (symmetric penalty)
        (100, 50, 1.0),
        (100, 11, 89 / 11),
        (100, 10, ERROR_CAP),  # <= J/10 counts as 10
        (100, 0, ERROR_CAP),
        (100, -5, ERROR_CAP),
        (100, 5000, 49.0),  # overestimates are not capped
    ],
)
def test_paper_error(exact, estimate, expected):
    assert paper_error(exact, estimate) == pytest.approx(expected)


def test_paper_error_needs_positive_join():
    with pytest.raises(ValueError, match="positive"):
        paper_error(0, 5)


def test_full_grid_levels():
    levels = memory_levels()
    assert sum(len(lv.shapes) for lv in levels) == 25
    assert [lv.label for lv in levels] == [
        "50x11",
        "100x11;50x23",
        "150x11;50x35",
        "200x11;100x23;50x47",
        "250x11;50x59",
        "150x23;100x35",
        "200x23;100x47",
        "150x35",
        "250x23;100x59",
        "200x35;150x47",
        "250x35;150x59;200x47",
        "250x47;200x59",
        "250x59",
    ]
    assert levels[1].counters == 1125.0
    # every group spans at most 8% of its smallest product
    for lv in levels:
        sizes = [w * d for w, d in lv.shapes]
        assert max(sizes) <= 1.08 * min(sizes)


def test_quick_grid_levels():
    labels = [lv.label for lv in memory_levels((50, 150, 250), (11, 35, 59))]
    assert labels == ["50x11", "150x11;50x35", "250x11;50x59", "150x35", "250x35;150x59", "250x59"]


def test_paper_grid_constants():
    assert PAPER_WIDTHS == (50, 100, 150, 200, 250)
    assert PAPER_DEPTHS == (11, 23, 35, 47, 59)


def test_docstring_examples():
    assert doctest.testmod(experiments.metrics).failed == 0
