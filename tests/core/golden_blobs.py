"""Golden serialised sketches: the builders, and the script that wrote ``golden/*.bin``.

Each builder makes a small deterministic sketch. ``golden/v<N>_<name>.bin`` holds the
bytes format version N wrote for it; the tests check that every version's files are
still read into exactly the sketch the builder makes (parameters, counters,
weights), and that the current version's files are what ``to_bytes`` writes.

Write the files of the current format version that are missing (existing files are
never rewritten: a format change gets a new version and new files)::

    PYTHONPATH=$PWD python -m tests.core.golden_blobs
"""

from pathlib import Path

import numpy as np

import skimsketch as ss
from skimsketch.format import VERSION

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
}
# the first format version that could write each builder's sketch (default: 1)
SINCE = {"skimmed_range": 2, "skimmed_range_strings_empty": 2}


def names_for(version: int) -> list:
    """The builders whose sketches format ``version`` can hold."""
    return sorted(n for n in BUILDERS if SINCE.get(n, 1) <= version)


def golden_path(name: str, version: int = 1) -> Path:
    return GOLDEN_DIR / f"v{version}_{name}.bin"


def main() -> None:
    GOLDEN_DIR.mkdir(exist_ok=True)
    for name in names_for(VERSION):
        build = BUILDERS[name]
        path = golden_path(name, VERSION)
        if path.exists():  # golden files are never rewritten
            continue
        path.write_bytes(build().to_bytes())
        print(f"wrote {path.name}")


if __name__ == "__main__":
    main()
