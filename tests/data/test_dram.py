"""DRAM thesis Tab. 8 attribute generators."""

import doctest

import numpy as np
import pytest

import data.census
import data.dram
import data.zipf
from data.dram import ATTRIBUTE_RANGES, ATTRIBUTES, CARDINALITIES, dram_attribute, dram_relation


def test_cardinalities_are_tab7():
    assert CARDINALITIES == {"R1": 17, "R2": 57, "R3": 507, "R4": 1007, "R5": 5007, "R6": 10007}


def test_pinned_relation_seed_0():
    r = dram_relation(10, seed=0)
    assert list(r) == list(ATTRIBUTES)
    assert r["PK"][:6].tolist() == [4, 9, 8, 7, 5, 3]
    assert r["A1"][:6].tolist() == [80, 38, 36, 53, 279, 196]
    assert r["A2"][:6].tolist() == [111, 103, 92, 104, 95, 107]
    assert r["A3"][:6].tolist() == [894, 371, 317, 516, 154, 463]
    assert r["A4"][:6].tolist() == [4578, 4335, 4653, 4262, 4649, 4443]
    assert r["A5"][:6].tolist() == [4967, 4142, 4257, 5025, 5907, 4817]


@pytest.mark.parametrize("name", list(CARDINALITIES))
def test_relation_sizes_and_ranges(name):
    r = dram_relation(name, seed=1)
    n = CARDINALITIES[name]
    assert all(len(col) == n and col.dtype == np.int64 for col in r.values())
    assert sorted(r["PK"].tolist()) == list(range(n))  # a key: each value once
    for attr, (lo, hi) in ATTRIBUTE_RANGES.items():
        assert r[attr].min() >= lo
        if hi is not None:
            assert r[attr].max() <= hi


def test_distribution_moments():
    n = 200_000
    a1 = dram_attribute("A1", n, seed=2)
    a2 = dram_attribute("A2", n, seed=2)
    a3 = dram_attribute("A3", n, seed=2)
    a4 = dram_attribute("A4", n, seed=2)
    a5 = dram_attribute("A5", n, seed=2)
    assert abs(a1.mean() - 100) < 1.5 and abs(np.median(a1) - 100 * np.log(2)) < 2
    assert abs(a2.mean() - 100) < 0.3 and abs(a2.var() - 100) < 3
    assert a3.min() == 10 and a3.max() == 1000 and abs(a3.mean() - 505) < 3
    assert abs(a4.mean() - 4550) < 2 and abs(a4.std() - 153.3) < 3
    assert abs(a5.mean() - 5000) < 10 and abs(a5.std() - 666.7) < 10


def test_join_facts_from_tab9():
    r = dram_relation("R4", seed=0)
    # R4.A5 = R4'.PK has no result (A5 >= 3000 > 1006).
    assert not np.isin(r["A5"], r["PK"]).any()
    # R4.PK = R4'.PK is a key join: 1007 results.
    c = np.bincount(r["PK"])
    assert int(c @ c) == 1007
    # Documented: our A4 self-join is ~2,800, not the thesis' 89,171.
    c4 = np.bincount(r["A4"])
    assert int(c4 @ c4) == 2805


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown attribute"):
        dram_attribute("A9", 3)
    with pytest.raises(ValueError, match="unknown relation"):
        dram_relation("R7")


@pytest.mark.parametrize("module", [data.zipf, data.census, data.dram])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
