"""Golden blobs: bytes written by every format version stay readable into the same sketch,
and the current version's bytes are exactly what ``to_bytes`` writes."""

import hashlib

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.format.header import READ_VERSIONS, SIGN_VERSION

from .golden_blobs import BUILDERS, GOLDEN_DIR, current_version, golden_path, versions_of

NAMES = sorted(BUILDERS)


@pytest.mark.parametrize("version", READ_VERSIONS)
def test_every_builder_has_a_golden_file_and_no_stray_files(version):
    found = sorted(p.name for p in GOLDEN_DIR.glob(f"v{version}_*.bin"))
    assert found == sorted(golden_path(n, version).name for n in NAMES if version in versions_of(n))


@pytest.mark.parametrize("name,version", [(n, v) for n in NAMES for v in versions_of(n)])
def test_blob_of_every_version_reads_into_the_same_sketch(name, version):
    expected = BUILDERS[name]()
    got = ss.from_bytes(golden_path(name, version).read_bytes())
    assert type(got) is type(expected)
    assert got.params == expected.params
    assert np.array_equal(got.counters, expected.counters)
    assert got.total_weight == expected.total_weight and got.null_weight == expected.null_weight
    if getattr(expected, "hierarchy_counters", None) is not None:
        assert np.array_equal(got.hierarchy_counters, expected.hierarchy_counters)
    if isinstance(expected, ss.Sketch):  # a pair sketch (two key columns) records no key domain
        assert got.key_domain == (None if version == 1 else expected.key_domain)  # version 1 did not record it
    assert got.counter_width == expected.counter_width
    assert getattr(got, "key_range", None) == getattr(expected, "key_range", None)
    assert getattr(got, "exact_mode", False) == getattr(expected, "exact_mode", False)
    assert getattr(got, "exact_entries", None) == getattr(expected, "exact_entries", None)
    if isinstance(expected, ss.Sketch):  # the sign rule: recorded from version 4 on, before it what the bytes tell
        legacy = all(w >= 0 for w in expected.exact_entries.values()) if expected.exact_mode else expected.is_empty
        assert got.nonnegative == (expected.nonnegative if version >= SIGN_VERSION else legacy)
    if version >= SIGN_VERSION:
        assert got == expected  # every field, the sign flag included


@pytest.mark.parametrize("name", NAMES)
def test_current_writer_reproduces_current_version_bytes(name):
    """The current format version (4) is what ``to_bytes`` writes: byte for byte."""
    blob = golden_path(name, current_version(name)).read_bytes()
    assert BUILDERS[name]().to_bytes() == blob, hashlib.sha256(blob).hexdigest()
