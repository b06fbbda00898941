"""Golden blobs: bytes written by format version 1 stay readable into the same sketch."""

import hashlib

import numpy as np
import pytest

import skimsketch as ss

from .golden_blobs import BUILDERS, GOLDEN_DIR, golden_path

NAMES = sorted(BUILDERS)


def test_every_builder_has_a_golden_file_and_no_stray_files():
    assert sorted(p.name for p in GOLDEN_DIR.glob("v1_*.bin")) == sorted(golden_path(n).name for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_v1_blob_reads_into_the_same_sketch(name):
    expected = BUILDERS[name]()
    got = ss.from_bytes(golden_path(name).read_bytes())
    assert type(got) is type(expected)
    assert got.params == expected.params
    assert np.array_equal(got.counters, expected.counters)
    assert got.total_weight == expected.total_weight and got.null_weight == expected.null_weight
    if getattr(expected, "hierarchy_counters", None) is not None:
        assert np.array_equal(got.hierarchy_counters, expected.hierarchy_counters)
    assert got == expected


@pytest.mark.parametrize("name", NAMES)
def test_current_writer_reproduces_v1_bytes(name):
    """Format version 1 is what ``to_bytes`` writes today: byte for byte."""
    blob = golden_path(name).read_bytes()
    assert BUILDERS[name]().to_bytes() == blob, hashlib.sha256(blob).hexdigest()
