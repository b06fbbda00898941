"""Partial sketches from Arrow batches, one per group, inside Spark workers.

Shared by the DataFrame builders (:mod:`spark_udaf.build`) and the Python SQL
aggregates (:mod:`spark_udaf.sql`): each fills an empty copy of a template
sketch with the core's vectorised ``update``, buffering ``CHUNK_ROWS`` rows per
call, and emits each group's sketch bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import skimsketch as ss

__all__ = ["CHUNK_ROWS", "PartialAccumulator"]

#: Rows buffered per core ``update`` call inside a worker (amortises per-call cost).
CHUNK_ROWS = 1 << 18


class PartialAccumulator:
    """Fills partial sketches (one per group) from Arrow arrays; used inside workers.

    ``add(keys, weights, groups)`` takes aligned Arrow arrays (``groups`` a list
    of arrays, empty for ungrouped builds). Rows with a null weight are
    skipped (as SQL ``SUM`` skips them); null keys go to ``null_weight``.
    Input is buffered per group up to ``chunk_rows`` rows per core update; a
    batch holding a single group (the usual case) is never sorted.
    """

    def __init__(self, template: bytes, chunk_rows: int = CHUNK_ROWS):
        self._template = template
        self._chunk = chunk_rows
        self._sketches: dict = {}  # group tuple -> sketch
        self._group_arrays: dict = {}  # group tuple -> list of 1-row arrays (original types)
        self._pending: dict = {}  # group tuple -> [(keys, weights)]
        self._pending_rows: dict = {}

    def _sketch(self, gid, group_arrays=()):
        sk = self._sketches.get(gid)
        if sk is None:
            sk = self._sketches[gid] = ss.from_bytes(self._template)
            self._group_arrays[gid] = list(group_arrays)
        return sk

    @staticmethod
    def _fill(sk, keys, weights):
        if weights is not None and weights.null_count:
            valid = pc.is_valid(weights)
            keys, weights = pc.filter(keys, valid), pc.filter(weights, valid)
        if len(keys):
            sk.update(keys, weights=weights)

    def _flush(self, gid):
        parts = self._pending.pop(gid, None)
        self._pending_rows.pop(gid, None)
        if not parts:
            return
        keys = parts[0][0] if len(parts) == 1 else pa.concat_arrays([k for k, _ in parts])
        ws = [w for _, w in parts]
        weights = None if ws[0] is None else (ws[0] if len(ws) == 1 else pa.concat_arrays(ws))
        self._fill(self._sketch(gid), keys, weights)

    def _buffer(self, gid, firsts, keys, weights):
        self._sketch(gid, firsts)
        self._pending.setdefault(gid, []).append((keys, weights))
        n = self._pending_rows[gid] = self._pending_rows.get(gid, 0) + len(keys)
        if n >= self._chunk:
            self._flush(gid)

    def add(self, keys, weights=None, groups=()):
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        if isinstance(weights, pa.ChunkedArray):
            weights = weights.combine_chunks()
        if len(keys) == 0:
            return
        if not groups:
            self._buffer((), (), keys, weights)
            return
        groups = [g.combine_chunks() if isinstance(g, pa.ChunkedArray) else g for g in groups]
        code = np.zeros(len(keys), dtype=np.int64)
        for g in groups:
            enc = pc.dictionary_encode(g, null_encoding="encode")
            code = code * (len(enc.dictionary) + 1) + enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        if code.min() == code.max():  # one group in this batch
            firsts = [g.slice(0, 1) for g in groups]
            self._buffer(tuple(a[0].as_py() for a in firsts), firsts, keys, weights)
            return
        order = np.argsort(code, kind="stable")
        sorted_codes = code[order]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        ends = np.r_[starts[1:], len(order)]
        for s, e in zip(starts, ends):
            first = pa.array([int(order[s])])
            firsts = [g.take(first) for g in groups]
            rows = pa.array(order[s:e])
            self._buffer(tuple(a[0].as_py() for a in firsts), firsts, keys.take(rows),
                         None if weights is None else weights.take(rows))

    def results(self):
        """``[(group arrays, sketch bytes)]`` of the non-empty partial sketches."""
        for gid in list(self._pending):
            self._flush(gid)
        return [(self._group_arrays[g], sk.to_bytes()) for g, sk in self._sketches.items() if not sk.is_empty]
