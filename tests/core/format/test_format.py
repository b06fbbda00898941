"""Binary format: layout, rejects, and a fuzz test over malformed inputs."""

import struct
import zlib

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.format import header as fmt

from ..sketches import FACTORIES, KINDS, fix_crc, forget_signs, keys, update


WIDTHS = ("int32", "int64", "float64")


@pytest.fixture(params=[(k, w) for k in KINDS for w in WIDTHS], ids=lambda p: f"{p[0]}-{p[1]}")
def blob(request):
    """A sketch of every kind at every counter width (int32, widened int64, float64)."""
    kind, width = request.param
    sk = update(FACTORIES[kind](dtype="float64" if width == "float64" else "int64"), keys(n=500))
    if width == "int64":
        update(sk, [3], weights=2**40)
        assert sk.counter_width == 8
    return sk.to_bytes()


def test_header_layout():
    sk = ss.SkimmedSketch(10, 3, seed=42, domain=1000, skim_factor=2.0).update([1, 2, 2, None])
    b = sk.to_bytes()
    assert b[:4] == b"SKSK"
    # version 4, kind 3, flags: has domain, non-negative (16); counter type 3 = int32; key domain 1 = integers
    assert struct.unpack_from("<HBBIIQQBB", b, 4) == (4, 3, 2 | 16, 10, 3, 42, 1000, 3, 1)
    assert struct.unpack_from("<dqqI", b, 36) == (2.0, 3, 1, 0)
    assert len(b) == 64 + 4 * 30 + 4
    assert struct.unpack_from("<I", b, len(b) - 4)[0] == zlib.crc32(b[:-4])
    counters = np.frombuffer(b, "<i4", 30, 64).reshape(3, 10)
    assert np.array_equal(counters, sk.counters)


def test_widened_counters_are_written_as_int64_and_narrowed_when_they_fit_again():
    sk = ss.HashSketch(10, 3, seed=1).update([1], weights=2**31)
    assert sk.counter_width == 8
    b = sk.to_bytes()
    assert b[32] == 1 and len(b) == 64 + 8 * 30 + 4  # counter type 1 = int64
    back = ss.from_bytes(b)
    assert back == sk and back.counter_width == 8 and back.total_weight == 2**31
    sk.update([1], weights=-(2**31) + 5)  # fits int32 again: memory stays wide, bytes are canonical
    assert sk.counter_width == 8
    assert sk.to_bytes() == forget_signs(ss.HashSketch(10, 3, seed=1).update([1], weights=5)).to_bytes()
    assert ss.from_bytes(sk.to_bytes()).counter_width == 4


def test_non_canonical_width_rejected():
    sk = ss.HashSketch(10, 3, seed=1).update([1, 2])
    head, counters, ext = fmt.decode(sk.to_bytes())
    head.counter_width = 8
    with pytest.raises(ss.CorruptSketchError, match="non-canonical counter width"):
        ss.from_bytes(fmt.encode(head, counters, ext, 8))


@pytest.mark.parametrize(
    "mutate,msg",
    [
        (lambda b: b[:10], "truncated"),
        (lambda b: b[:-1], "size mismatch|checksum"),
        (lambda b: b"XXXX" + b[4:], "magic"),
        (lambda b: fix_crc(b[:4] + struct.pack("<H", 5) + b[6:]), "version"),
        (lambda b: fix_crc(b[:33] + bytes([9]) + b[34:]), "key domain"),
        (lambda b: fix_crc(b[:6] + bytes([9]) + b[7:]), "kind"),
        (lambda b: fix_crc(b[:32] + bytes([7]) + b[33:]), "counter type"),
        (lambda b: fix_crc(b[:8] + struct.pack("<I", 0) + b[12:]), "shape"),
        (lambda b: fix_crc(b[:8] + struct.pack("<I", 2**20) + b[12:]), "size mismatch"),
        (lambda b: b[:-4] + b"\0\0\0\0", "checksum"),
        (lambda b: b + b"\0", "size mismatch"),
        (lambda b: fix_crc(b[:7] + bytes([b[7] | 0x80]) + b[8:]), "reserved"),
    ],
)
def test_rejects_with_named_problem(blob, mutate, msg):
    bad = mutate(blob)
    if blob[7] & fmt.FLAG_EXACT and bad[8:12] != blob[8:12] and msg == "size mismatch":
        # exact mode stores no counters: a wider shape is another valid sketch holding the same entries
        assert ss.from_bytes(bad).width == 2**20 and ss.from_bytes(bad).exact_entries == ss.from_bytes(blob).exact_entries
        return
    with pytest.raises(ss.CorruptSketchError, match=msg):
        ss.from_bytes(bad)


def test_rejects_non_bytes():
    with pytest.raises(ss.CorruptSketchError, match="expected bytes"):
        ss.from_bytes("SKSK")


def test_domain_on_wrong_kind_rejected():
    b = ss.HashSketch(8, 2).update([1]).to_bytes()
    bad = fix_crc(b[:7] + bytes([b[7] | 2]) + b[8:24] + struct.pack("<Q", 100) + b[32:])
    with pytest.raises(ss.CorruptSketchError, match="domain"):
        ss.from_bytes(bad)


@pytest.mark.parametrize("cls", [ss.HashSketch, ss.AGMSSketch])
def test_extension_on_kind_without_one_rejected(cls):
    b = cls(8, 2).update([1]).to_bytes()
    body = b[:60] + struct.pack("<I", 3) + b"abc" + b[64:-4]
    with pytest.raises(ss.CorruptSketchError, match="extension"):
        ss.from_bytes(fix_crc(body + b"\0\0\0\0"))


def test_class_from_bytes_checks_kind():
    b = ss.HashSketch(8, 2).to_bytes()
    with pytest.raises(ss.IncompatibleSketchError, match="kind"):
        ss.AGMSSketch.from_bytes(b)


def test_fuzz_truncations_bitflips_and_random_bytes(blob):
    """Every malformed input raises CorruptSketchError; none returns a sketch or crashes."""
    rng = np.random.default_rng(2024)
    bad = [blob[:n] for n in range(0, len(blob), max(1, len(blob) // 97))]
    for _ in range(400):
        arr = bytearray(blob)
        pos = int(rng.integers(len(arr)))
        arr[pos] ^= 1 << int(rng.integers(8))
        bad.append(bytes(arr))
    for _ in range(200):
        arr = bytearray(blob)
        for pos in rng.integers(len(arr), size=int(rng.integers(2, 9))):
            arr[int(pos)] = int(rng.integers(256))
        if bytes(arr) != blob:
            bad.append(bytes(arr))
    for n in (0, 1, 63, 64, 67, 68, 200, 5000):
        bad.append(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        bad.append(b"SKSK" + rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    for b in bad:
        with pytest.raises(ss.CorruptSketchError):
            ss.from_bytes(b)


def test_every_kind_is_registered_by_its_class():
    from skimsketch.format.kinds import registered_kinds

    assert registered_kinds() == {1: ss.AGMSSketch, 2: ss.HashSketch, 3: ss.SkimmedSketch, 4: ss.PairSketch,
                                 5: ss.JoinSample, 6: ss.HeavyKeySketch}


def test_a_new_kind_registers_itself_and_loads(monkeypatch):
    """Adding a kind = defining a class with a KIND: from_bytes finds it, nothing else changes."""
    from skimsketch.format import kinds

    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))

    class TwiceHash(ss.HashSketch):
        KIND = 200
        METHOD = "twice"

    sk = TwiceHash(8, 2, seed=3).update([1, 2, 2])
    back = ss.from_bytes(sk.to_bytes())
    assert type(back) is TwiceHash and back == sk
    with pytest.raises(ValueError, match="already registered"):
        type("Clash", (ss.HashSketch,), {"KIND": 200, "METHOD": "x"})


def test_unknown_kind_names_the_known_ones():
    b = ss.HashSketch(8, 2).to_bytes()
    with pytest.raises(ss.CorruptSketchError, match=r"unknown sketch kind 77 \(known: \[1, 2, 3, 4, 5, 6\]\)"):
        ss.from_bytes(fix_crc(b[:6] + bytes([77]) + b[7:]))
