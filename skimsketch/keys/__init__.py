"""Shared: what every family does to a key before it summarises it.

* :mod:`.canonical`: canonical keys (integers, strings, bytes to one int64 domain), batches, weights per row;
* :mod:`.weights`: weight vectors (exact integer sums, floats, nulls);
* :mod:`.fingerprints`: 64-bit fingerprints of strings and bytes (MurmurHash3);
* :mod:`.hashing`: the seeded hash families (row hashes, signs, word tables).

Imports no family (``tests/test_architecture.py``); import the modules, this package exports nothing.
"""
