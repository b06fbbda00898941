"""Summaries read again: bytes seen before decode and prepare once.

:func:`~skimsketch.format.serde.from_bytes` keeps the object it decoded, keyed by the bytes;
reading equal bytes again returns a copy of it (its arrays copied, so changing the copy changes
nothing else) that *shares* the first one's prepared query state, the ``_cache`` of a sketch (a
skimmed sketch's skim and what its estimates read from it, every kind's self-join tables) or a
finished sample's decoded entries. So an all-pairs loop over ``n`` stored summaries,
``from_bytes(x).join_size(from_bytes(y))``, decodes and prepares ``n`` times, not ``n^2``.

* Keyed by content: the length and the CRC-32 every kind writes in its last four bytes
  (``docs/format.md``), confirmed by comparing the bytes, so a lookup costs a compare, not a hash of
  the bytes. Only bytes that decoded without error are kept.
* Never stale: equal bytes are one summary, so its prepared state is the same; shared state is only
  read, and an object that changes (``update``, ``merge``, ...) first drops the shared state for a
  fresh one of its own (``Sketch._changed``).
* Bounded: at most :data:`LIMIT` bytes of summaries (least recently used out); what they decode and
  prepare to is a few times that (a 16 KB skimmed sketch: its int32 counters and float64 skim,
  about 8x; a 16 KB sample: its entries, 3-15x). :func:`set_limit` changes it (0 turns reuse off),
  :func:`clear` empties it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["LIMIT", "clear", "lookup", "remember", "set_limit", "stats"]

#: Default bound on the summaries' bytes kept (about 2,000 summaries of 16 KB).
LIMIT = 32 << 20

_lock = threading.Lock()
_kept: OrderedDict = OrderedDict()  # (length, crc) -> (bytes, decoded object)
_state = {"limit": LIMIT, "bytes": 0, "hits": 0, "misses": 0}


def _key(blob: bytes):
    return len(blob), blob[-4:]


def lookup(blob: bytes):
    """A fresh copy of the object decoded from bytes equal to ``blob`` (sharing its prepared state), or None."""
    if len(blob) < 8:
        return None
    with _lock:
        hit = _kept.get(_key(blob))
        if hit is None or hit[0] != blob:
            _state["misses"] += 1
            return None
        _kept.move_to_end(_key(blob))
        _state["hits"] += 1
        template = hit[1]
    return _reused(template)


def remember(blob: bytes, obj):
    """Keep ``obj`` (just decoded from ``blob``) for later reads; returns the object to hand out, a copy
    sharing its prepared state (the kept one is never handed out, so nobody changes it)."""
    size = len(blob)
    if size < 8 or size > _state["limit"] // 4:
        return obj
    with _lock:
        key = _key(blob)
        old = _kept.pop(key, None)
        if old is not None:
            _state["bytes"] -= len(old[0])
        _kept[key] = (blob, obj)
        _state["bytes"] += size
        while _state["bytes"] > _state["limit"] and _kept:
            _, (b, _) = _kept.popitem(last=False)
            _state["bytes"] -= len(b)
    return _reused(obj)


def _reused(template):
    return template.shared_copy()


def set_limit(nbytes: int) -> None:
    """Keep at most ``nbytes`` bytes of summaries (0: keep none); evicts at once."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"nbytes must be an int >= 0 (0 turns reuse off), got {nbytes!r}")
    with _lock:
        _state["limit"] = nbytes
        while _state["bytes"] > nbytes and _kept:
            _, (b, _) = _kept.popitem(last=False)
            _state["bytes"] -= len(b)


def clear() -> None:
    """Forget every kept summary."""
    with _lock:
        _kept.clear()
        _state["bytes"] = 0


def stats() -> dict:
    """``{"summaries", "bytes", "limit", "hits", "misses"}`` of the reuse cache."""
    with _lock:
        return {"summaries": len(_kept), **_state}
