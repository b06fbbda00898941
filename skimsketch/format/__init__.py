"""Shared: the bytes every family writes (docs/format.md).

* :mod:`.header`: the common ``SKSK`` header, the counters and each layout's extension;
* :mod:`.framing`: length-prefixed, CRC-checked frames (stream checkpoints);
* :mod:`.kinds`: the kind registry (kind byte -> class);
* :mod:`.serde`: :func:`from_bytes` and the :class:`Serialisable` mixin.

Imports no family (``tests/test_architecture.py``); import the modules, this package exports nothing.
"""
