"""In-process continuous maintenance, exactly-once checkpoints and container framing (skimsketch.stream)."""

import os
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.format.framing import Reader, frame, length_prefixed, unframe
from skimsketch.stream import (
    ExactlyOnce,
    ExactlyOnceError,
    SketchStream,
    StateFile,
    StreamTableJoin,
    WindowedJoin,
    WindowedSketch,
)


def _batches(seed, n_batches=30, size=200, domain=2000, deletes=0.2):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_batches):
        keys = (rng.zipf(1.3, size) - 1) % domain
        w = np.where(rng.random(size) < deletes, -1, 1).astype(np.int64)
        out.append((keys.astype(np.int64), w))
    return out


def _one_shot(template, batches):
    s = template.empty_like()
    for k, w in batches:
        s.update(k, weights=w)
    return s


# -- SketchStream ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "template",
    [ss.HashSketch(width=128, depth=5, seed=4), ss.AGMSSketch(width=16, depth=3, seed=4),
     ss.SkimmedSketch(width=128, depth=5, seed=4, domain=2000)],
    ids=lambda s: type(s).__name__,
)
def test_stream_of_inserts_and_deletes_equals_one_shot_build(template):
    batches = _batches(1)
    s = SketchStream(template.empty_like())
    for i, (k, w) in enumerate(batches):
        assert s.apply(k, w, batch_id=i)
    assert s.sketch.to_bytes() == _one_shot(template, batches).to_bytes()
    all_w = np.concatenate([w for _, w in batches])
    assert s.stats()["events"] == 30 * 200
    assert (s.inserted_weight, s.deleted_weight) == (int((all_w > 0).sum()), int((all_w < 0).sum()))
    assert s.nbytes == template.nbytes  # constant memory


def test_replayed_batch_ids_are_skipped():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    s = SketchStream(t.empty_like())
    assert s.apply([1, 2], batch_id=0) and s.apply([3], batch_id=1)
    with pytest.raises(ExactlyOnceError, match="batch 0 is before the last committed batch 1"):
        s.apply([1, 2], batch_id=0)  # not the last batch: a restarted numbering, never a replay
    assert not s.apply([3], batch_id=1)  # replay of the last batch
    assert s.apply([4], batch_id=5)  # gaps are fine; ids only need to increase
    assert s.sketch == t.empty_like().update([1, 2, 3, 4])
    assert (s.batches, s.skipped_batches, s.last_batch_id) == (3, 1, 5)
    with pytest.raises(TypeError, match="batch_id must be an int"):
        s.apply([1], batch_id="7")


def test_checkpoint_restart_equals_uninterrupted_run(tmp_path):
    t = ss.SkimmedSketch(width=128, depth=5, seed=4, domain=2000)
    batches = _batches(2, n_batches=12)
    path = tmp_path / "state" / "sketch.state"
    s = SketchStream(t.empty_like(), checkpoint=path)
    for i, (k, w) in enumerate(batches[:7]):
        s.apply(k, w, batch_id=i)
    del s  # "crash" after batch 6 was committed
    s = SketchStream(t.empty_like(), checkpoint=path)
    assert s.last_batch_id == 6
    for i, (k, w) in enumerate(batches[6:], start=6):  # the source replays its last batch, then goes on
        s.apply(k, w, batch_id=i)
    assert s.skipped_batches == 1
    assert s.sketch.to_bytes() == _one_shot(t, batches).to_bytes()
    assert StateFile(path).load()[0] == 11
    assert [p.name for p in path.parent.iterdir()] == ["sketch.state"]  # no temporary files left


def test_checkpoint_of_another_sketch_is_rejected(tmp_path):
    path = tmp_path / "s.state"
    SketchStream(ss.HashSketch(width=64, depth=3, seed=1), checkpoint=path).apply([1], batch_id=0)
    with pytest.raises(ss.IncompatibleSketchError, match="checkpoint differs"):
        SketchStream(ss.HashSketch(width=64, depth=3, seed=2), checkpoint=path)


def test_state_file_rejects_damage(tmp_path):
    f = StateFile(tmp_path / "x")
    f.save(None, b"payload")
    assert f.load() == (None, b"payload")
    f.save(2**40, b"")
    assert f.load() == (2**40, b"")
    f.save(9, b"hello world")
    data = (tmp_path / "x").read_bytes()
    cases = {
        "truncated": data[:10],
        "bad magic": b"ABCD" + data[4:],
        "unknown version": data[:4] + b"\x09\x00" + data[6:],
        "size mismatch": data[:-1],
        "checksum mismatch": data[:-6] + bytes([data[-6] ^ 0xFF]) + data[-5:],
    }
    for what, bad in cases.items():
        (tmp_path / "x").write_bytes(bad)
        with pytest.raises(ss.CorruptSketchError, match=what):
            f.load()


def test_stream_join_size_tracks_exact_over_time():
    conf = 0.95
    t = ss.HashSketch(width=512, depth=5, seed=8)
    fa, fb = SketchStream(t.empty_like()), SketchStream(t.empty_like())
    ka, wa, kb, wb = [], [], [], []
    inside = checks = 0
    for (k1, w1), (k2, w2) in zip(_batches(3, deletes=0.1), _batches(4, deletes=0.1)):
        fa.apply(k1, w1)
        fb.apply(k2 + 1, w2)
        ka.append(k1), wa.append(w1), kb.append(k2 + 1), wb.append(w2)
        exact = ss.exact_join_size(np.concatenate(ka), np.concatenate(kb), np.concatenate(wa), np.concatenate(wb))
        inside += fa.join_size(fb, confidence=conf).contains(exact)
        checks += 1
    assert inside / checks >= conf, f"covered {inside}/{checks} < {conf}"


# -- stream against table ------------------------------------------------------------
def test_stream_table_join_whole_stream():
    rng = np.random.default_rng(5)
    table_keys = (rng.zipf(1.2, 50_000) - 1) % 10_000
    table = ss.HashSketch(width=1024, depth=5, seed=6).update(table_keys)
    j = StreamTableJoin(table)
    seen = []
    inside = 0
    for i in range(20):
        batch = (rng.zipf(1.2, 500) - 1) % 10_000
        j.update(batch, batch_id=i)
        seen.append(batch)
        exact = ss.exact_join_size(np.concatenate(seen), table_keys)
        est = j.join_size()
        inside += est.contains(exact)
        assert est.relative_error(exact) < 0.1, (i, est, exact)
    assert inside >= 19
    j.update(batch, batch_id=19)  # replay of the last batch (same data): skipped
    assert j.stream.skipped_batches == 1
    with pytest.raises(ExactlyOnceError, match="replays the last committed batch .* with other data"):
        j.update([1], batch_id=19)  # same id, other data: not a replay
    assert j.nbytes == 2 * table.nbytes


def test_stream_table_join_windowed_matches_fresh_sketch():
    table = ss.HashSketch(width=256, depth=5, seed=6).update([1, 2, 2, 3])
    j = StreamTableJoin(table, window=10, slide=5, allowed_lateness=5)
    j.update([2, 3], timestamps=[1, 2]).update([1], timestamps=12)
    # window at 12: panes 1..2 -> ts 5..14 -> {1}
    assert j.stream_sketch() == table.empty_like().update([1])
    assert float(j.join_size()) == 1.0
    assert float(j.join_size(t=9)) == 3.0  # window at 9 (panes 0..1): {2, 3} -> 2 + 1
    j.update([9], timestamps=0)  # late (watermark 12 - 5 = 7): counted
    assert j.stream.late_count == 1
    j.update_table([1], weights=4)  # table changes are linear too
    assert float(j.join_size()) == 5.0


def test_stream_table_join_rejects_misuse():
    table = ss.HashSketch(width=64, depth=3, seed=1)
    with pytest.raises(TypeError, match="table must be a sketch"):
        StreamTableJoin([1, 2, 3])
    with pytest.raises(ValueError, match="need a window"):
        StreamTableJoin(table, slide=5)
    with pytest.raises(ValueError, match="timestamps given but the stream has no window"):
        StreamTableJoin(table).update([1], timestamps=3)
    w = StreamTableJoin(table, window=10)
    with pytest.raises(ValueError, match="needs timestamps"):
        w.update([1])
    with pytest.raises(ValueError, match="batch ids are supported on unwindowed streams only"):
        w.update([1], timestamps=1, batch_id=0)
    assert isinstance(w.stream, WindowedSketch)


def test_iterators_and_scalars_are_accepted_as_keys():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    s = SketchStream(t.empty_like())
    s.apply(iter([1, 2]), batch_id=0)
    s.apply(7, batch_id=1)
    s.apply(9, weights=-2, batch_id=2)
    assert s.sketch == t.empty_like().update([1, 2, 7]).update([9], weights=-2)
    assert (s.events, s.inserted_weight, s.deleted_weight) == (4, 3, 2)
    w = WindowedSketch(t, window=4, slide=2)
    w.update((k for k in [1, 2]), timestamps=0)
    assert w.sketch_at() == t.empty_like().update([1, 2])
    with pytest.raises(TypeError, match="keys must be a sequence"):
        w.update(object(), 0)


# -- exactly-once faults ------------------------------------------------------------------
def _run(path, batches, ids, **kw):
    """A stream on ``path`` fed ``batches[i]`` as batch ``i`` for ``i`` in ``ids``."""
    s = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path, **kw)
    for i in ids:
        s.apply(*batches[i], batch_id=i)
    return s


def _temp_files(path):
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def test_fault_replay_of_last_batch_is_skipped_and_changes_nothing(tmp_path):
    batches, path = _batches(10, n_batches=4), tmp_path / "s.state"
    s = _run(path, batches, range(4))
    before = path.read_bytes()
    assert not s.apply(*batches[3], batch_id=3)
    assert path.read_bytes() == before and s.skipped_batches == 1
    assert s.sketch == _one_shot(s.sketch, batches)
    restarted = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path)
    with pytest.raises(ExactlyOnceError, match=r"batch 3 replays the last committed batch .* with other data"):
        restarted.apply(*batches[2], batch_id=3)  # the digest is committed with the state
    assert not restarted.apply(*batches[3], batch_id=3) and path.read_bytes() == before
    f = SketchStream(ss.HashSketch(width=64, depth=3, seed=4, dtype="float64"))
    assert f.apply([1], [0.5], batch_id=0) and not f.apply([2], [0.25], batch_id=0)  # float counters: no digest


@pytest.mark.parametrize("when", ["before", "after"])
def test_fault_crash_around_the_commit_is_exactly_once(tmp_path, monkeypatch, when):
    """A crash between writing and renaming the state (``before`` the commit) or right after the
    rename (``after``): the restarted stream, fed the replayed batch, counts every batch once."""
    batches, path = _batches(11, n_batches=5), tmp_path / "s.state"
    s = _run(path, batches, range(3))
    real_replace = os.replace

    def crashing_replace(src, dst):
        if when == "after":
            real_replace(src, dst)
        raise KeyboardInterrupt(f"simulated crash {when} the rename")

    monkeypatch.setattr(os, "replace", crashing_replace)
    with pytest.raises(KeyboardInterrupt):
        s.apply(*batches[3], batch_id=3)
    monkeypatch.setattr(os, "replace", real_replace)
    assert _temp_files(path) == []  # the temporary file never survives
    assert StateFile(path).load()[0] == (2 if when == "before" else 3)

    s2 = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path)
    assert s2.apply(*batches[3], batch_id=3) == (when == "before")  # Spark-style replay of batch 3
    assert s2.apply(*batches[4], batch_id=4)
    assert s2.sketch.to_bytes() == _one_shot(s2.sketch, batches).to_bytes()


def test_fault_new_checkpoint_with_old_state_is_refused(tmp_path):
    batches, path = _batches(12, n_batches=4), tmp_path / "s.state"
    _run(path, batches, range(3), query_id="q-old")
    before = path.read_bytes()
    # without an identity: the restarted numbering is below the last committed batch
    with pytest.raises(ExactlyOnceError, match="batch 0 is before the last committed batch 2"):
        SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path).apply(*batches[0], batch_id=0)
    # with one: refused even where the ids alone would look like a replay
    new = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path, query_id="q-new")
    with pytest.raises(ExactlyOnceError, match="belongs to query 'q-old' .* batch 2 comes from query 'q-new'"):
        new.apply(*batches[2], batch_id=2)
    assert path.read_bytes() == before

    one = tmp_path / "one.state"
    _run(one, batches, [0], query_id="q-old")  # last committed batch 0 == a new query's first batch
    with pytest.raises(ExactlyOnceError, match="new checkpoint or another query needs its own state path"):
        _run(one, batches, [0], query_id="q-new")


def test_fault_old_checkpoint_with_new_state_is_refused(tmp_path):
    batches, path = _batches(13, n_batches=6), tmp_path / "s.state"
    _run(path, batches, range(5), query_id="q", consecutive=True)
    s = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path, query_id="q", consecutive=True)
    with pytest.raises(ExactlyOnceError, match="batch 3 is before the last committed batch 4"):
        s.apply(*batches[3], batch_id=3)  # an older copy of the checkpoint resumes at batch 3
    with pytest.raises(ExactlyOnceError, match="batches 5..5 are missing"):
        s.apply(*batches[0], batch_id=6)  # state older than the checkpoint
    fresh = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=tmp_path / "new.state",
                         query_id="q", consecutive=True)
    with pytest.raises(ExactlyOnceError, match=r"no committed batch, but batch 5 arrived: batches 0..4"):
        fresh.apply(*batches[5], batch_id=5)  # an existing checkpoint with a new (empty) state path
    assert not (tmp_path / "new.state").exists() and s.last_batch_id == 4
    assert s.apply(*batches[5], batch_id=5) and s.sketch == _one_shot(s.sketch, batches)


def test_fault_two_queries_sharing_a_state_path_are_detected(tmp_path):
    batches, path = _batches(14, n_batches=4), tmp_path / "s.state"
    a = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path, query_id="a")
    b = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path, query_id="b")
    assert a.apply(*batches[0], batch_id=0)
    committed = path.read_bytes()
    with pytest.raises(ExactlyOnceError, match="another query or process writes the same state"):
        b.apply(*batches[1], batch_id=0)  # running side by side: b's first commit finds a's
    assert path.read_bytes() == committed and b.last_batch_id is None
    # the same query twice (no identity given): the second writer is caught the same way
    c1 = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path)
    c2 = SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path)
    assert c1.apply(*batches[1], batch_id=1)
    with pytest.raises(ExactlyOnceError, match=r"now at batch 1 of query 'a'; this stream was at batch 0"):
        c2.apply(*batches[2], batch_id=2)
    # one after the other: b finds a's identity at its first batch
    with pytest.raises(ExactlyOnceError, match="belongs to query 'a'"):
        SketchStream(ss.HashSketch(width=128, depth=5, seed=4), checkpoint=path, query_id="b").apply([1], batch_id=2)


def test_exactly_once_rules_in_memory():
    x = ExactlyOnce(consecutive=True)
    with pytest.raises(ExactlyOnceError, match="no committed batch, but batch 1 arrived"):
        x.admit(1)
    assert x.admit(0) and x.commit(0, b"") is None and not x.admit(0) and x.admit(1)
    with pytest.raises(TypeError, match="batch_id must be an int"):
        x.admit(1.0)
    with pytest.raises(ValueError, match="batch_id must be >= 0"):
        ExactlyOnce().admit(-1)
    y = ExactlyOnce(query_id="q")
    y.commit(3, b"")
    assert y.committed_query_id == "q" and y.admit(7, query_id="q")
    with pytest.raises(ExactlyOnceError, match="batch 3 comes from query 'r'"):
        y.admit(3, query_id="r")
    y.commit(3, b"", digest=b"d3")
    y.commit(None, b"")  # an unnumbered batch keeps the last id and its digest
    assert (y.last_batch_id, y.last_digest) == (3, b"d3")
    with pytest.raises(ExactlyOnceError, match="batch 3 replays the last committed batch"):
        y.verify_replay(b"other")


def test_state_file_version_1_is_still_read_and_adopted(tmp_path):
    """A state committed before the common framing (no query id) resumes, and its next commit is version 2."""
    t = ss.HashSketch(width=64, depth=3, seed=1)
    state = t.empty_like().update([1, 2, 2]).to_bytes()
    body = b"SKST" + struct.pack("<HHqQ", 1, 1, 4, len(state)) + state
    path = tmp_path / "v1.state"
    path.write_bytes(body + struct.pack("<I", zlib.crc32(body)))
    assert StateFile(path).load() == (4, state)
    s = SketchStream(t.empty_like(), checkpoint=path, query_id="q")
    assert s.last_batch_id == 4 and not s.apply([9], batch_id=4) and s.apply([3], batch_id=5)
    c = StateFile(path).load_commit()
    assert (c.batch_id, c.query_id) == (5, "q") and path.read_bytes()[4:6] == b"\x02\x00"
    assert ss.from_bytes(c.payload) == t.empty_like().update([1, 2, 2, 3])


# -- framing ---------------------------------------------------------------------------
def test_framing_names_every_fault():
    good = frame(b"TEST", 2, b"payload")
    assert unframe(good, b"TEST", "demo", versions=(2,)) == (2, b"payload")
    cases = {
        "truncated": good[:8],
        "bad magic": b"XXXX" + good[4:],
        "unknown version 3": good[:4] + b"\x03\x00" + good[6:],
        "reserved bytes are not zero": good[:6] + b"\x01\x00" + good[8:],
        "size mismatch": good + b"x",
        "checksum mismatch": good[:-5] + bytes([good[-5] ^ 1]) + good[-4:],
    }
    for fault, bad in cases.items():
        with pytest.raises(ss.CorruptSketchError, match=f"demo: {fault}"):
            unframe(bad, b"TEST", "demo", versions=(2,))
    legacy = b"TEST\x01\x00abc"
    legacy += struct.pack("<I", zlib.crc32(legacy))
    assert unframe(legacy, b"TEST", "demo", versions=(2,), legacy=(1,)) == (1, b"abc")
    r = Reader(length_prefixed(b"xy") + b"z", "demo")
    assert r.blob() == b"xy"
    with pytest.raises(ss.CorruptSketchError, match="demo: size mismatch \\(1 trailing bytes\\)"):
        r.done()
    with pytest.raises(ss.CorruptSketchError, match="demo: truncated \\(needs 2 bytes at offset 6, 1 left\\)"):
        r.take(2)


def _as_version_1(blob: bytes) -> bytes:
    """The same container in the layout before the common framing: magic, version 1, payload, CRC-32."""
    _, payload = unframe(blob, blob[:4], "test", versions=(2,))
    body = blob[:4] + b"\x01\x00" + payload
    return body + struct.pack("<I", zlib.crc32(body))


def test_window_and_join_containers_round_trip_and_read_version_1():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch(t, window=10, slide=5, allowed_lateness=3).update([1, 2, None], [0, 6, 7], [1, -2, 3])
    j = WindowedJoin(t, window_a=10, window_b=5, slide=5).update_a([1, 2], [0, 6]).update_b([2], [7])
    for obj in (w, j):
        blob = obj.to_bytes()
        assert blob[4:6] == b"\x02\x00" and type(obj).from_bytes(blob) == obj
        assert type(obj).from_bytes(_as_version_1(blob)) == obj
        with pytest.raises(ss.CorruptSketchError, match="checksum mismatch"):
            type(obj).from_bytes(blob[:30] + bytes([blob[30] ^ 1]) + blob[31:])
    back = WindowedJoin.from_bytes(j.to_bytes())
    assert back.a.clock is back.b.clock and back.total_results_estimate == j.total_results_estimate


# -- layering ---------------------------------------------------------------------------
_STREAM_MODULES = {"stream", "windows", "streaming", "exact_windows"}  # the layer and its compatibility aliases


def _imported_modules(path):
    import ast

    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level and not mod:  # "from . import x"
                yield from (f".{a.name}" for a in node.names)
            else:
                yield "." * node.level + mod


def test_sketches_never_import_the_streaming_layer():
    """The stream subpackage imports the sketches, never the reverse (checked on the source, at any depth)."""
    import pathlib

    root = pathlib.Path(ss.__file__).parent
    core = [p for p in root.rglob("*.py") if p.name != "__init__.py" and "stream" not in p.relative_to(root).parts]
    assert {"base.py", "skimmed.py", "serde.py", "header.py", "framing.py"} <= {p.name for p in core}
    for p in core:
        for mod in _imported_modules(p):
            parts = mod.lstrip(".").replace("skimsketch.", "", 1).split(".")
            assert parts[0] not in _STREAM_MODULES, f"{p.name} imports {mod}: the sketches must not depend on the streams"
    stream = root / "stream"
    for p in stream.glob("*.py"):  # and the layer reaches the sketches only through their modules
        for mod in _imported_modules(p):
            assert not mod.startswith("skimsketch"), f"stream/{p.name} imports {mod} absolutely (use ..module)"


# -- exactly once under any sequence of faults (property) -----------------------------------
@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["next", "replay", "crash_before", "crash_after", "restart"]), max_size=14))
def test_exactly_once_under_any_fault_sequence(actions):
    """A source that behaves like Spark (re-sends the batch it has no acknowledgement for, and may re-send
    the last acknowledged one) ends, whatever the crashes and restarts, with every batch counted once."""
    import tempfile
    from unittest import mock

    batches = _batches(20, n_batches=len(actions) + 1, size=20)
    tmpl = ss.HashSketch(width=32, depth=3, seed=9)
    real_replace = os.replace
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.state")
        s = SketchStream(tmpl.empty_like(), checkpoint=path, query_id="q", consecutive=True)
        acked = -1  # the last batch the source saw succeed
        for act in actions:
            if act == "restart":
                s = SketchStream(tmpl.empty_like(), checkpoint=path, query_id="q", consecutive=True)
            elif act == "replay" and acked >= 0 and s.last_batch_id == acked:
                assert not s.apply(*batches[acked], batch_id=acked)
            elif act.startswith("crash"):
                def crash(src, dst, after=act == "crash_after"):
                    if after:
                        real_replace(src, dst)
                    raise OSError("simulated crash")

                with mock.patch("os.replace", crash), pytest.raises(OSError, match="simulated crash"):
                    s.apply(*batches[acked + 1], batch_id=acked + 1)
                s = SketchStream(tmpl.empty_like(), checkpoint=path, query_id="q", consecutive=True)
                # the source re-sends the batch it has no acknowledgement for
                assert s.apply(*batches[acked + 1], batch_id=acked + 1) == (act == "crash_before")
                acked += 1
            elif act == "next":
                assert s.apply(*batches[acked + 1], batch_id=acked + 1)
                acked += 1
        final = SketchStream(tmpl.empty_like(), checkpoint=path, query_id="q", consecutive=True)
        assert final.last_batch_id == (None if acked < 0 else acked)
        assert final.sketch.to_bytes() == _one_shot(tmpl, batches[: acked + 1]).to_bytes()
        assert sorted(os.listdir(d)) == (["s.state"] if acked >= 0 else [])


def test_window_and_join_payload_faults_are_named():
    """Well-framed containers (valid checksum) with a bad payload: each fault is a CorruptSketchError."""
    import json

    t = ss.HashSketch(width=16, depth=2, seed=1)
    w = WindowedSketch(t, window=4, slide=2).update([1, 2], [0, 3])
    _, payload = unframe(w.to_bytes(), b"SKWN", "test", versions=(2,))
    r = Reader(payload, "test")
    head, blobs = json.loads(r.blob()), []
    while r.remaining:
        blobs.append(r.blob())

    def window(head, blobs):
        return frame(b"SKWN", 2, length_prefixed(json.dumps(head).encode(), *blobs))

    assert WindowedSketch.from_bytes(window(head, blobs)) == w
    other = ss.HashSketch(width=16, depth=2, seed=2).to_bytes()
    cases = {
        "windowed sketch state: Expecting property name": frame(b"SKWN", 2, length_prefixed(b"{not json", *blobs)),
        "2 sketches for 2 panes": window(head, blobs[:2]),
        "truncated": None,
        "'window'": window({k: v for k, v in head.items() if k != "window"}, blobs),
        "seed differs": window(head, blobs[:1] + [other] + blobs[2:]),
        "window must be > 0": window(dict(head, window=-4), blobs),
    }
    for fault, blob in cases.items():
        if fault == "truncated":  # a part longer than what is left, inside a valid frame
            _, p = unframe(window(head, blobs), b"SKWN", "test", versions=(2,))
            blob = frame(b"SKWN", 2, p[:-3])
        with pytest.raises(ss.CorruptSketchError, match=fault):
            WindowedSketch.from_bytes(blob)

    j = WindowedJoin(t, window_a=4, window_b=2, slide=2).update_a([1], [0]).update_b([1], [1])
    _, p = unframe(j.to_bytes(), b"SKWJ", "test", versions=(2,))
    with pytest.raises(ss.CorruptSketchError, match="windowed join state: size mismatch \\(8 trailing bytes\\)"):
        WindowedJoin.from_bytes(frame(b"SKWJ", 2, p + bytes(8)))
    with pytest.raises(ss.CorruptSketchError, match="windowed join state: truncated"):
        WindowedJoin.from_bytes(frame(b"SKWJ", 2, p[:-8]))
    late = WindowedSketch(t, window=2, slide=2, allowed_lateness=1).to_bytes()
    la = struct.unpack("<I", p[:4])[0]
    side_a = p[8 : 8 + la]
    mixed = struct.pack("<II", la, len(late)) + side_a + late + p[-16:]
    with pytest.raises(ss.CorruptSketchError, match="allowed_lateness 1 differs from the clock's 0"):
        WindowedJoin.from_bytes(frame(b"SKWJ", 2, mixed))
