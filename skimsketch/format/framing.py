"""One framing for every binary container that wraps sketches (windows, joins, stream state).

A frame is (little-endian)::

    offset size field
    0      4    magic (names the container)
    4      2    container version (u16)
    6      2    reserved, zero
    8      8    payload length N (u64)
    16     N    payload (the container's own layout)
    16+N   4    CRC-32 (zlib) of every byte before it

:func:`unframe` checks, in this order, the length, magic, version, reserved
bytes, size and checksum, and raises :class:`CorruptSketchError` saying which
one failed; it never returns a partial payload. :class:`Reader` walks a
payload with the same rule: every read is bounds-checked, and trailing bytes
are an error. The containers' payload layouts are documented in
``docs/streaming.md`` ("Binary layouts"); sketches themselves use the sketch
format of :mod:`skimsketch.format.header`.

Containers written before this framing (version 1) had no length field and no
reserved bytes: magic, version, the payload, CRC-32. ``legacy`` versions are
read that way.

>>> blob = frame(b"DEMO", 2, b"abc")
>>> len(blob), unframe(blob, b"DEMO", "demo", versions=(2,))
(23, (2, b'abc'))
"""

from __future__ import annotations

import struct
import zlib

from ..errors import CorruptSketchError

__all__ = ["Reader", "frame", "length_prefixed", "unframe"]

_HEAD = struct.Struct("<4sHHQ")
_CRC = struct.Struct("<I")
_LEGACY_HEAD = struct.Struct("<4sH")


def frame(magic: bytes, version: int, payload: bytes) -> bytes:
    """``payload`` wrapped in a frame (module docstring)."""
    if len(magic) != 4:
        raise ValueError(f"magic must be 4 bytes, got {magic!r}")
    body = _HEAD.pack(magic, version, 0, len(payload)) + bytes(payload)
    return body + _CRC.pack(zlib.crc32(body))


def unframe(blob, magic: bytes, what: str, versions=(), legacy=()) -> tuple[int, bytes]:
    """``(version, payload)`` of a frame; :class:`CorruptSketchError` naming ``what`` and the fault.

    ``versions`` are the framed versions understood, ``legacy`` the
    pre-framing versions (magic, version u16, payload, CRC-32).
    """
    blob = bytes(blob)
    if len(blob) < _LEGACY_HEAD.size + _CRC.size:
        raise CorruptSketchError(f"{what}: truncated ({len(blob)} bytes)")
    got_magic, version = _LEGACY_HEAD.unpack_from(blob)
    if got_magic != magic:
        raise CorruptSketchError(f"{what}: bad magic {got_magic!r} (expected {magic!r})")
    if version in legacy:
        _check_crc(blob, what)
        return version, blob[_LEGACY_HEAD.size : -_CRC.size]
    if version not in versions:
        known = sorted(set(versions) | set(legacy))
        raise CorruptSketchError(f"{what}: unknown version {version} (this library reads {known})")
    if len(blob) < _HEAD.size + _CRC.size:
        raise CorruptSketchError(f"{what}: truncated ({len(blob)} bytes)")
    _, _, reserved, length = _HEAD.unpack_from(blob)
    if reserved:
        raise CorruptSketchError(f"{what}: reserved bytes are not zero ({reserved:#06x})")
    if len(blob) != _HEAD.size + length + _CRC.size:
        raise CorruptSketchError(f"{what}: size mismatch (payload length {length}, {len(blob)} bytes in all)")
    _check_crc(blob, what)
    return version, blob[_HEAD.size : -_CRC.size]


def _check_crc(blob: bytes, what: str) -> None:
    (stored,) = _CRC.unpack_from(blob, len(blob) - _CRC.size)
    if stored != zlib.crc32(blob[: -_CRC.size]):
        raise CorruptSketchError(f"{what}: checksum mismatch")


def length_prefixed(*parts: bytes) -> bytes:
    """Each part preceded by its length as u32 (the :meth:`Reader.blob` layout)."""
    out = []
    for p in parts:
        if len(p) > 0xFFFFFFFF:
            raise ValueError(f"a part of {len(p)} bytes does not fit a u32 length")
        out += [struct.pack("<I", len(p)), bytes(p)]
    return b"".join(out)


class Reader:
    """Bounds-checked reads from a payload; every fault is a ``CorruptSketchError`` naming ``what``.

    >>> r = Reader(struct.pack("<H", 7) + length_prefixed(b"xy"), "demo")
    >>> r.unpack("<H"), r.blob(), r.done()
    ((7,), b'xy', None)
    """

    def __init__(self, data: bytes, what: str):
        self.data, self.what, self.pos = bytes(data), what, 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int) -> bytes:
        if n < 0 or n > self.remaining:
            raise CorruptSketchError(
                f"{self.what}: truncated (needs {n} bytes at offset {self.pos}, {self.remaining} left)"
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def blob(self) -> bytes:
        """A u32-length-prefixed part."""
        (n,) = self.unpack("<I")
        return self.take(n)

    def done(self) -> None:
        """Raise unless the payload was read to its end."""
        if self.remaining:
            raise CorruptSketchError(f"{self.what}: size mismatch ({self.remaining} trailing bytes)")
