"""Kind 6 bytes: the golden vectors (bytes from streams, merges, answers) and format fuzzing."""

import struct
import zlib

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.errors import CorruptSketchError
from skimsketch.heavy import HeavyKeySketch
from skimsketch.heavy.table import bucket_pairs
from tests.core.heavy import golden


def _rows():
    for line in golden.TSV.read_text().splitlines():
        if line and not line.startswith("#"):
            yield line.split("\t")


def test_golden_file_is_what_the_builders_write():
    assert golden.TSV.read_text().splitlines() == golden.lines()


@pytest.mark.parametrize("row", [r for r in _rows() if r[0] in ("build", "merge")], ids=lambda r: r[1])
def test_golden_bytes_rebuild_and_read_back(row):
    blob = bytes.fromhex(row[-1])
    sk = golden.sketches()[row[1]]
    assert sk.to_bytes() == blob
    back = ss.from_bytes(blob)
    assert isinstance(back, HeavyKeySketch) and back.to_bytes() == blob
    if row[0] == "build":
        buckets, width, depth, f, seed = map(int, row[2:7])
        assert back.params == {"buckets": buckets, "width": width, "depth": depth, "seed": seed, "dtype": row[7],
                               "filter_per_bucket": f}


def test_golden_answers():
    sk = golden.sketches()
    for row in _rows():
        if row[0] in ("join", "self"):
            got = golden.answer({k: ss.from_bytes(v.to_bytes()) for k, v in sk.items()}, row[0], float(row[1]),
                                row[2], row[3])
            assert list(got) == pytest.approx([float(x) for x in row[4:7]], rel=1e-12)


def _recrc(b: bytearray) -> bytes:
    b[-4:] = struct.pack("<I", zlib.crc32(bytes(b[:-4])))
    return bytes(b)


def _blob():
    return golden.sketches()["zipf"].to_bytes()


def test_every_byte_flip_is_refused_or_read_as_a_valid_sketch():
    """A flipped byte (with the CRC repaired) is a CorruptSketchError, or a sketch whose bytes are those bytes."""
    blob = _blob()
    for i in range(len(blob) - 4):
        for bit in (0, 7):
            b = bytearray(blob)
            b[i] ^= 1 << bit
            alt = _recrc(b)
            try:
                sk = ss.from_bytes(alt)
            except CorruptSketchError:
                continue
            assert sk.to_bytes() == alt, f"byte {i} bit {bit} read into a sketch that writes other bytes"


def test_truncations_and_checksum():
    blob = _blob()
    for n in range(0, len(blob), 7):
        with pytest.raises(CorruptSketchError):
            ss.from_bytes(blob[:n])
    with pytest.raises(CorruptSketchError, match="checksum"):
        ss.from_bytes(blob[:-1] + bytes([blob[-1] ^ 1]))


def _ext_at(blob: bytes) -> int:
    return 64  # the extension follows the 64-byte header


@pytest.mark.parametrize("field,offset,value,message", [
    ("magic", 0, b"HEVZ", "magic"),
    ("layout", 4, b"\x02", "layout"),
    ("slots", 5, b"\x04", "slots"),
    ("filter", 6, b"\x00", "filter"),
    ("reserved", 7, b"\x01", "reserved"),
    ("reserved2", 12, b"\x01", "reserved"),
])
def test_extension_head_checks(field, offset, value, message):
    b = bytearray(_blob())
    at = _ext_at(bytes(b)) + offset
    b[at:at + len(value)] = value
    with pytest.raises(CorruptSketchError, match=message):
        ss.from_bytes(_recrc(b))


def test_state_checks():
    sk = golden.sketches()["zipf"]
    blob = bytearray(sk.to_bytes())
    ext = 64
    n = sk.buckets * 8
    counts = ext + 24 + 8 * n  # int32 counts (canonical width)
    # a negative count
    b = bytearray(blob)
    b[counts:counts + 4] = struct.pack("<i", -3)
    with pytest.raises(CorruptSketchError):
        ss.from_bytes(_recrc(b))
    # an empty slot with a key: zero a count
    occupied = int(np.flatnonzero(sk._table.counts)[0])
    b = bytearray(blob)
    b[counts + 4 * occupied:counts + 4 * occupied + 4] = b"\0\0\0\0"
    with pytest.raises(CorruptSketchError):
        ss.from_bytes(_recrc(b))
    # a key moved to a bucket that is not its own (16 buckets: most keys have neither of two given ones)
    big = HeavyKeySketch(16, 8, 4, seed=5).update(np.arange(10))
    slot = int(np.flatnonzero(big._table.counts)[0])
    stranger = next(k for k in range(1000, 2000)
                    if slot // 8 not in np.concatenate(bucket_pairs(np.array([k]), 16, big._table.salt)))
    b = bytearray(big.to_bytes())
    b[ext + 24 + 8 * slot:ext + 32 + 8 * slot] = struct.pack("<q", stranger)
    with pytest.raises(CorruptSketchError, match="other buckets"):
        ss.from_bytes(_recrc(b))
    # the empty flag on a non-empty sketch
    b = bytearray(blob)
    b[7] |= 1
    with pytest.raises(CorruptSketchError):
        ss.from_bytes(_recrc(b))


def test_no_large_allocation_before_the_size_checks():
    """A header claiming 2**24 buckets in a tiny blob is refused by its size, before anything is allocated."""
    b = bytearray(_blob())
    b[64 + 8:64 + 12] = struct.pack("<I", 1 << 24)
    with pytest.raises(CorruptSketchError, match="size"):
        ss.from_bytes(_recrc(b))
    b = bytearray(_blob())
    b[8:12] = struct.pack("<I", 1 << 26)  # the residual's width
    with pytest.raises(CorruptSketchError, match="size"):
        ss.from_bytes(_recrc(b))
