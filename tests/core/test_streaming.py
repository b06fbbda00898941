"""In-process continuous maintenance (skimsketch.streaming)."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.streaming import SketchStream, StateFile, StreamTableJoin
from skimsketch.windows import WindowedSketch


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
    assert not s.apply([1, 2], batch_id=0)  # replay
    assert not s.apply([3], batch_id=1)  # replay
    assert s.apply([4], batch_id=5)  # gaps are fine; ids only need to increase
    assert s.sketch == t.empty_like().update([1, 2, 3, 4])
    assert (s.batches, s.skipped_batches, s.last_batch_id) == (3, 2, 5)
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
    for i, (k, w) in enumerate(batches):  # the source replays everything from 0
        s.apply(k, w, batch_id=i)
    assert s.skipped_batches == 7
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
    j.update([1], batch_id=3)  # replay: skipped
    assert j.stream.skipped_batches == 1
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
