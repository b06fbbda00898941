"""The join sample's entry codec (layout 2): Rice-coded fingerprints, zigzag LEB128 totals; exact bytes,
round trips against a bit-by-bit reference, and the decoders' refusals."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.errors import CorruptSketchError
from skimsketch.sample.codec import rice_decode, rice_encode, varint_decode, varint_encode, varint_sizes

from ..sketches import fix_crc


def _rice_reference(fps: list[int]) -> tuple[int, bytes]:
    """The fingerprint section written bit by bit from docs/format.md."""
    d = [f - p - 1 for f, p in zip(fps, [-1] + fps[:-1])]
    if not d:
        return 0, b""
    r = min(range(52), key=lambda r: (sum((x >> r) + 1 + r for x in d), r))
    bits = "".join("1" * (x >> r) + "0" + (format(x & ((1 << r) - 1), f"0{r}b") if r else "") for x in d)
    bits += "0" * (-len(bits) % 8)
    return r, bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def _varint_reference(t: int) -> bytes:
    z = ((t << 1) ^ (t >> 63)) % 2**64
    out = bytearray()
    while True:
        out.append((z & 0x7F) | (0x80 if z >> 7 else 0))
        z >>= 7
        if not z:
            return bytes(out)


fingerprint_sets = st.sets(st.one_of(st.integers(0, 2**52 - 1), st.integers(0, 300),
                                     st.integers(2**52 - 300, 2**52 - 1)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(fingerprint_sets)
def test_fingerprints_encode_as_the_reference_and_decode_back(fps):
    fps = sorted(fps)
    r, sec = rice_encode(np.array(fps, dtype=np.int64))
    assert (r, sec) == _rice_reference(fps)
    assert rice_decode(sec, len(fps), r).tolist() == fps


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40))
def test_totals_encode_as_the_reference_and_decode_back(totals):
    t = np.array(totals, dtype=np.int64)
    blob = varint_encode(t)
    assert blob == b"".join(map(_varint_reference, totals))
    assert varint_sizes(t).tolist() == [len(_varint_reference(x)) for x in totals]
    assert varint_decode(blob, len(totals)).tolist() == totals


def test_known_bytes():
    assert rice_encode(np.array([0, 1, 2])) == (0, b"\x00")  # three zero deltas: "000", padded
    assert rice_encode(np.array([5])) == (1, b"\xd0")  # d = 5: r = 1, 2, 3 tie at 4 bits -> 1: "11" "0" "1"
    assert rice_encode(np.zeros(0, np.int64)) == (0, b"")
    cases = {-1: b"\x01", 1: b"\x02", 63: b"\x7e", 64: b"\x80\x01", -65: b"\x81\x01",
             -(2**63): b"\xff" * 9 + b"\x01", 2**63 - 1: b"\xfe" + b"\xff" * 8 + b"\x01"}
    for t, want in cases.items():
        assert varint_encode(np.array([t])) == want


@pytest.mark.parametrize("section,n,r,msg", [
    (b"\xd1", 1, 1, "non-zero padding"),
    (b"\xd0\x00", 1, 1, "extra bytes"),
    (b"\xff", 1, 0, "ends inside a delta"),
    (b"\xd0", 4, 1, "ends inside a delta"),  # 5, 0, 0, then nothing
    (b"\xf8", 1, 0, "not the best one"),  # d = 5 at r = 0: "111110"
    (b"\xd0", 1, 52, "above 51"),
    (b"", 0, 3, "no entries"),
    (b"\x00", 0, 0, "no entries"),
    (b"\xc0" + b"\x00" * 6, 1, 51, "at or above 2\\*\\*52"),  # q = 2, r = 51: d = 2**52
    (int(("110" + "0" * 50) * 2 + "0" * 6, 2).to_bytes(14, "big"), 2, 50, "at or above 2\\*\\*52"),  # 2**51, 2**52 + 1
])
def test_fingerprint_section_refusals(section, n, r, msg):
    with pytest.raises(CorruptSketchError, match=msg):
        rice_decode(section, n, r)


@pytest.mark.parametrize("section,n,msg", [
    (b"\x80\x00", 1, "overlong"),
    (b"\x81\x80\x00", 1, "overlong"),
    (b"\xff" * 9 + b"\x02", 1, "longer than 64 bits"),
    (b"\xff" * 10 + b"\x01", 1, "longer than 64 bits"),
    (b"\x02\x02", 1, "exactly 1 varints"),
    (b"\x02\x82", 2, "exactly 2 varints"),
    (b"\x02", 0, "exactly 0 varints"),
])
def test_totals_section_refusals(section, n, msg):
    with pytest.raises(CorruptSketchError, match=msg):
        varint_decode(section, n)


def test_a_zero_total_is_refused():
    blob = ss.JoinSample.for_bytes(512, seed=1).update([7]).to_bytes()
    assert blob[-5:-4] == b"\x02"  # the last varint (total 1), before the CRC
    with pytest.raises(CorruptSketchError, match="zero or non-finite total"):
        ss.from_bytes(fix_crc(blob[:-5] + b"\x00" + blob[-4:]))


def test_the_budget_may_exceed_the_sketches_width_limit():
    s = ss.JoinSample.for_bytes(2**30, seed=1).update([1, 2, 2])
    blob = s.to_bytes()
    assert struct.unpack_from("<I", blob, 8)[0] == 2**30 and ss.from_bytes(blob).to_bytes() == blob
    h = ss.HashSketch(8, 2).to_bytes()
    with pytest.raises(CorruptSketchError, match="shape"):
        ss.from_bytes(fix_crc(h[:8] + struct.pack("<I", 2**27) + h[12:]))
