"""Golden serialised sketches: the builders, and the script that wrote ``golden/*.bin``.

Each builder makes a small deterministic sketch. ``golden/v<N>_<name>.bin`` holds the
bytes format version N wrote for it; the tests check that every version's files are
still read into exactly the sketch the builder makes (parameters, counters,
weights), and that the current version's files are what ``to_bytes`` writes.

Write the files of the current format version that are missing (existing files are
never rewritten: a format change gets a new version and new files)::

    PYTHONPATH=$PWD python -m tests.core.format.golden_blobs
"""

from pathlib import Path

import numpy as np

import skimsketch as ss
from skimsketch.format.header import READ_VERSIONS, SIGN_VERSION, VERSION, VIRTUAL_VERSION

GOLDEN_DIR = Path(__file__).parent / "golden"


def _keys(n, seed, m=1000):
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) - 1) % m


BUILDERS = {
    "agms": lambda: ss.AGMSSketch(8, 3, seed=11).update(_keys(200, 1)),
    "hash_int64": lambda: ss.HashSketch(16, 3, seed=12).update(_keys(300, 2)),
    "hash_float64": lambda: ss.HashSketch(16, 3, seed=13, dtype="float64").update(
        _keys(100, 3), weights=np.round(np.random.default_rng(3).normal(2.0, 1.0, 100), 3)),
    "hash_weighted_deletes": lambda: ss.HashSketch(16, 3, seed=14).update(_keys(100, 4), weights=7).update(
        [1, 2, 3], weights=[-5, 4, -3]),
    "hash_nulls_strings": lambda: ss.HashSketch(16, 3, seed=15).update(["a", None, "b", "a", None, b"c"]),
    "hash_empty": lambda: ss.HashSketch(16, 3, seed=16),
    "agms_empty_float": lambda: ss.AGMSSketch(4, 2, seed=17, dtype="float64"),
    "skimmed_bounded": lambda: ss.SkimmedSketch(32, 3, seed=18, domain=1000, skim_factor=2.5).update(_keys(500, 5)),
    "skimmed_bounded_float": lambda: ss.SkimmedSketch(32, 3, seed=19, domain=1000, dtype="float64").update(
        _keys(50, 6), weights=0.5),
    "skimmed_unbounded": lambda: ss.SkimmedSketch(32, 3, seed=20, hier_width=16, hier_depth=2).update(
        list(_keys(300, 7)) + [None, None]),
    "skimmed_unbounded_strings_float": lambda: ss.SkimmedSketch(
        32, 3, seed=21, dtype="float64", hier_width=16, hier_depth=2).update(["x", "y", "x", "zz"], weights=[1.5, -2.0, 3.25, 4.0]),
    "skimmed_unbounded_empty": lambda: ss.SkimmedSketch(32, 3, seed=22, hier_width=16, hier_depth=2),
    "skimmed_range": lambda: ss.SkimmedSketch(32, 3, seed=23, search="range").update(
        list(_keys(300, 8) - 40) + [None]),
    "skimmed_range_strings_empty": lambda: ss.SkimmedSketch(32, 3, seed=24, search="range").update(["a", "b"]).update(
        ["a", "b"], weights=-1),
    # exact mode (format version 2 on): entries instead of counters
    "exact_skimmed_bounded": lambda: ss.SkimmedSketch(32, 3, seed=23, domain=1000, exact=True).update(_keys(40, 8)),
    "exact_skimmed_unbounded_strings_deletes": lambda: ss.SkimmedSketch(
        32, 3, seed=24, hier_width=16, hier_depth=2, exact=True).update(
        ["x", "y", None, "x", "zz", "w"], weights=[3, 1, 2, -3, 4, -(2**31)]),
    "exact_skimmed_range": lambda: ss.SkimmedSketch(32, 3, seed=28, search="range", exact=True).update(
        [5, 9, 9, -2, None]),
    "exact_hash_wide": lambda: ss.HashSketch(16, 3, seed=25, exact=True).update([7, -3, 2**62], weights=[2**40, -5, 1]),
    "exact_hash_float": lambda: ss.HashSketch(16, 3, seed=26, dtype="float64", exact=True).update(
        [1, 2, 1, 9], weights=[0.5, -1.25, 2.0, 1e300]),
    "exact_agms_empty": lambda: ss.AGMSSketch(4, 2, seed=27, exact=True).update([None], weights=3),
    # the virtual layout (format version 3 on): every key type as a signed id in [0, 2**lg)
    "skimmed_virtual": lambda: ss.SkimmedSketch(32, 3, seed=29, search="virtual", virtual_lg=10).update(
        list(_keys(300, 10) * 7919 - 2**40) + [None]),
    "skimmed_virtual_strings_float": lambda: ss.SkimmedSketch(32, 3, seed=30, dtype="float64", virtual_lg=14).update(
        ["x", "y", "x", "zz"], weights=[1.5, -2.0, 3.25, 4.0]),
    "skimmed_virtual_deletes_empty": lambda: ss.SkimmedSketch(32, 3, seed=31, virtual_lg=10).update(["a", "b"]).update(
        ["a", "b"], weights=-1),
    "exact_skimmed_virtual": lambda: ss.SkimmedSketch(32, 3, seed=32, virtual_lg=20, exact=True).update(
        ["p", "q", None, "p", b"r"], weights=[3, 1, 2, 4, -(2**31)]),
    # the sign flag (format version 4 on): every weight ever added was >= 0, or not
    "sign_hash_reinserted": lambda: ss.HashSketch(16, 3, seed=33).update([1, 2, 3]).update([2], weights=-1).update([2]),
    "sign_exact_reinserted": lambda: ss.HashSketch(16, 3, seed=34, exact=True).update([1, 2]).update(
        [2], weights=-1).update([2]),
    "sign_skimmed_range_merged_delete": lambda: ss.SkimmedSketch(32, 3, seed=35, search="range").update(
        _keys(100, 11)).merge(ss.SkimmedSketch(32, 3, seed=35, search="range").update([4], weights=-1)),
    "sign_agms_null_delete": lambda: ss.AGMSSketch(8, 3, seed=36).update([1, None, 2], weights=[2, -4, 1]),
    "sign_virtual_float": lambda: ss.SkimmedSketch(32, 3, seed=37, dtype="float64", virtual_lg=10).update(
        ["a", "b", "a"], weights=[0.5, 0.0, 2.25]),
    "pair": lambda: ss.PairSketch(8, 4, 3, seed_a=23, seed_b=24).update(
        list(_keys(200, 8)) + [None, 5], [f"b{k % 7}" for k in _keys(200, 9)] + ["x", None]).update(
        [1, 2], ["b1", "b2"], weights=[-3, 2]),
}
# the first format version that wrote each builder's kind or mode (others: version 1)
SINCE = {name: 2 for name in BUILDERS if name.startswith(("exact_", "skimmed_range", "pair"))}
SINCE.update({name: VIRTUAL_VERSION for name in BUILDERS if "skimmed_virtual" in name})
SINCE.update({name: SIGN_VERSION for name in BUILDERS if name.startswith("sign_")})


def versions_of(name: str) -> list:
    """The format versions that have a golden file of builder ``name``: version 3 was written only
    for the virtual layout (which no earlier version has), and only version 2 for every other
    layout; version 4 for every layout."""
    since = SINCE.get(name, 1)
    return [v for v in READ_VERSIONS if since <= v <= VERSION and (v != VIRTUAL_VERSION or since == VIRTUAL_VERSION)]


def current_version(name: str) -> int:
    """The version ``to_bytes`` writes for builder ``name``."""
    return max(versions_of(name))


def golden_path(name: str, version: int = 1) -> Path:
    return GOLDEN_DIR / f"v{version}_{name}.bin"


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name in BUILDERS:
        build = BUILDERS[name]
        path = golden_path(name, current_version(name))
        if path.exists():  # golden files are never rewritten
            continue
        path.write_bytes(build().to_bytes())
        print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
