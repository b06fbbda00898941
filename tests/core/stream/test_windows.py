"""Windowed sketches (skimsketch.stream) against an independent brute-force reference.

The reference re-implements the documented rule from scratch: an element is
accepted iff ``ts >= watermark`` (watermark = max accepted timestamp so far -
allowed_lateness, as of the batch's arrival) and is valid at ``t`` iff
``pane(ts) <= pane(t) <= pane(ts) + n - 1``.
"""

import math

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.stream import (
    EventClock,
    ExactWindowedJoin,
    LateElementError,
    WindowedJoin,
    WindowedSketch,
    pane_index,
)

DOMAIN = 5000


def _kinds():
    return [
        ss.HashSketch(width=256, depth=5, seed=11),
        ss.AGMSSketch(width=32, depth=5, seed=11),
        ss.SkimmedSketch(width=256, depth=5, seed=11, domain=DOMAIN),
        ss.SkimmedSketch(width=256, depth=5, seed=11),  # unbounded keys: hierarchy kept in the panes too
    ]


class Reference:
    """Brute force: every accepted element kept, windows recomputed from scratch."""

    def __init__(self, windows: dict, slide, lateness):
        self.windows, self.slide, self.lateness = windows, slide, lateness
        self.now = None
        self.elems = {side: [] for side in windows}  # (key, ts, w)
        self.late = {side: [0, 0] for side in windows}

    def add(self, side, keys, ts, ws):
        wm = None if self.now is None else self.now - self.lateness
        acc_max = None
        for k, t, w in zip(keys, ts, ws):
            if wm is not None and t < wm:
                self.late[side][0] += 1
                self.late[side][1] += w
                continue
            self.elems[side].append((k, t, w))
            acc_max = t if acc_max is None else max(acc_max, t)
        if acc_max is not None and (self.now is None or acc_max > self.now):
            self.now = acc_max

    def valid(self, side, t):
        n = round(self.windows[side] / self.slide)
        p = math.floor(t / self.slide)
        return [(k, ts, w) for k, ts, w in self.elems[side] if math.floor(ts / self.slide) <= p <= math.floor(ts / self.slide) + n - 1]

    def sketch(self, template, side, t):
        v = self.valid(side, t)
        s = template.empty_like()
        if v:
            s.update([k for k, _, _ in v], weights=[w for _, _, w in v])
        return s

    def join_size(self, t):
        fa, fb = {}, {}
        for k, _, w in self.valid("a", t):
            fa[k] = fa.get(k, 0) + w
        for k, _, w in self.valid("b", t):
            fb[k] = fb.get(k, 0) + w
        return sum(c * fb.get(k, 0) for k, c in fa.items())

    def total_results(self):
        na, nb = round(self.windows["a"] / self.slide), round(self.windows["b"] / self.slide)
        tot = 0
        for ka, ta, wa in self.elems["a"]:
            pa = math.floor(ta / self.slide)
            for kb, tb, wb in self.elems["b"]:
                pb = math.floor(tb / self.slide)
                if ka == kb and pb - na + 1 <= pa <= pb + nb - 1:
                    tot += wa * wb
        return tot


def zipf_stream(seed, steps, per_step, jitter, late_every=0, z=1.2, deletes=0.1, domain=DOMAIN):
    """Batches (side, keys, ts, weights) around an advancing clock; some late, some deletes."""
    rng = np.random.default_rng(seed)
    out = []
    for step in range(steps):
        side = "a" if rng.random() < 0.5 else "b"
        n = int(rng.integers(per_step // 2, per_step + 1))
        keys = (rng.zipf(z, n) - 1) % domain + (0 if side == "a" else 3)  # B shifted by 3 (the paper's shifted Zipf)
        keys %= domain
        ts = step - rng.integers(0, jitter + 1, n)
        if late_every and step % late_every == late_every - 1:
            ts[: n // 10] -= 3 * jitter + 10  # beyond any lateness used here
        w = np.where(rng.random(n) < deletes, -1, 1).astype(np.int64)
        out.append((side, keys.astype(np.int64), ts.astype(np.int64), w))
    return out


# -- semantics: worked examples ----------------------------------------------------
def test_pane_index_integer_and_float():
    assert pane_index(np.array([-11, -10, -1, 0, 9, 10, 19]), 10).tolist() == [-2, -1, -1, 0, 0, 1, 1]
    assert pane_index(np.array([-0.5, 0.0, 2.49, 2.5]), 2.5).tolist() == [-1, 0, 0, 1]


def test_tumbling_window_holds_only_the_current_pane():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch.tumbling(t, 10)
    w.update([1, 2], [0, 9])
    assert w.sketch_at() == t.empty_like().update([1, 2])
    w.update([3], [10])  # new tumbling window [10, 20): pane 0 is gone
    assert w.sketch_at() == t.empty_like().update([3])
    assert w.retained_panes == [1]
    assert w.expired_panes == 1


def test_sliding_window_with_unit_panes_is_the_last_w_time_units():
    # slide = 1: valid on [ts, ts + window) exactly (a moving window)
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch.sliding(t, window=3, slide=1)
    for ts in range(6):
        w.update([ts], ts)
        assert w.sketch_at() == t.empty_like().update([k for k in range(ts + 1) if ts - 3 < k <= ts])
    assert w.retained_panes == [3, 4, 5]


def test_sliding_window_pane_granularity():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch(t, window=10, slide=5)
    w.update([1, 2, 3], [0, 4, 7])  # panes 0, 0, 1
    assert w.sketch_at() == t.empty_like().update([1, 2, 3])
    w.update([4], 12)  # pane 2: window = panes 1..2
    assert w.sketch_at() == t.empty_like().update([3, 4])
    assert w.sketch_at(14.9) == w.sketch_at()  # same pane
    assert w.sketch_at(15) == t.empty_like().update([4])  # future: panes 2..3
    assert w.sketch_at(100).is_empty


def test_windowed_join_worked_example_and_exact_counter_agree():
    tmpl = ss.HashSketch(width=512, depth=5, seed=3)
    j = WindowedJoin(tmpl, window_a=4, window_b=2, slide=1)
    x = ExactWindowedJoin(window_a=4, window_b=2, slide=1)
    for side, keys, ts in [("a", [7, 7, 8], [0, 1, 2]), ("b", [7, 8], [3, 3]), ("a", [8], [4]), ("b", [7], [6])]:
        j.update(side, keys, ts)
        x.update(side, keys, ts)
    # t = 6: A holds ts 3..6 -> {8}; B holds ts 5..6 -> {7}: no match
    assert x.join_size == 0 and float(j.join_size()) == 0.0
    # pairs with overlapping validity: (7@0,7@3) (7@1,7@3) (8@2,8@3) (8@4,8@3)
    assert x.total_results == 4
    assert x.join_size_at(6) == 0


# -- the main property: byte identity with a fresh sketch, all kinds ---------------
@pytest.mark.parametrize("template", _kinds(), ids=lambda s: f"{type(s).__name__}-{s.params.get('domain')}")
def test_window_sketch_is_byte_identical_to_fresh_sketch_at_every_checkpoint(template):
    slide, lateness = 2, 3
    windows = {"a": 20, "b": 6}
    j = WindowedJoin(template, windows["a"], windows["b"], slide=slide, allowed_lateness=lateness)
    ref = Reference(windows, slide, lateness)
    for step, (side, keys, ts, w) in enumerate(zipf_stream(5, 80, 40, jitter=4, late_every=7)):
        j.update(side, keys, ts, w)
        ref.add(side, keys.tolist(), ts.tolist(), w.tolist())
        assert j.now == ref.now
        for s, ws in (("a", j.a), ("b", j.b)):
            assert ws.sketch_at().to_bytes() == ref.sketch(template, s, ref.now).to_bytes(), (step, s)
            # a past time still inside the lateness horizon
            t_past = ref.now - lateness
            assert ws.sketch_at(t_past).to_bytes() == ref.sketch(template, s, t_past).to_bytes(), (step, s)
            ws._check_invariant()
    for s, ws in (("a", j.a), ("b", j.b)):
        assert (ws.late_count, ws.late_weight) == tuple(ref.late[s]) and ws.late_count > 0


# -- estimates tracked against the exact counter ----------------------------------
@pytest.mark.parametrize(
    "template,steps,max_median_error",
    [
        (ss.HashSketch(width=1024, depth=7, seed=42), 300, 0.05),
        pytest.param(ss.SkimmedSketch(width=1024, depth=7, seed=42, domain=DOMAIN), 80, 0.05,
                     marks=pytest.mark.slow),  # the hash and AGMS windows keep the property in the default run
        (ss.AGMSSketch(width=64, depth=7, seed=42), 120, 0.25),
    ],
    ids=lambda x: type(x).__name__ if isinstance(x, ss.Sketch) else str(x),
)
def test_windowed_estimates_cover_exact_join_size_at_stated_confidence(template, steps, max_median_error):
    # Zipf(1.1) keys, B shifted by 3, two window lengths (100 and 25), out-of-order and late data, 5% deletes
    conf = 0.95
    slide, lateness = 5, 5
    windows = {"a": 100, "b": 25}
    j = WindowedJoin(template, windows["a"], windows["b"], slide=slide, allowed_lateness=lateness)
    x = ExactWindowedJoin(windows["a"], windows["b"], slide=slide, allowed_lateness=lateness)
    inside, checks, errs = 0, 0, []
    for side, keys, ts, w in zipf_stream(2024, steps, 300, jitter=6, late_every=11, z=1.1, deletes=0.05):
        j.update(side, keys, ts, w)
        x.update(side, keys, ts, w)
        est = j.join_size(confidence=conf)
        exact = x.join_size
        checks += 1
        inside += est.contains(exact)
        if exact > 0:
            errs.append(abs(est.value - exact) / exact)
    rate = inside / checks
    assert rate >= conf, f"interval covered the exact windowed join size at {rate:.3f} of {checks} checkpoints < {conf}"
    assert np.median(errs) < max_median_error, f"median relative error {np.median(errs):.4f} >= {max_median_error}"
    assert x.stats()["a"]["late_count"] == j.a.late_count > 0


def test_exact_counter_matches_brute_force_over_stream():
    slide, lateness = 3, 4
    windows = {"a": 12, "b": 30}
    x = ExactWindowedJoin(windows["a"], windows["b"], slide=slide, allowed_lateness=lateness)
    ref = Reference(windows, slide, lateness)
    for side, keys, ts, w in zipf_stream(9, 60, 15, jitter=5, late_every=6, domain=40):
        x.update(side, keys, ts, w)
        ref.add(side, keys.tolist(), ts.tolist(), w.tolist())
        assert x.join_size == x.join_size_at() == ref.join_size(ref.now)
        assert x.join_size_at(ref.now - lateness) == ref.join_size(ref.now - lateness)
    assert x.total_results == ref.total_results()
    for s in "ab":
        assert (x.stats()[s]["late_count"], x.stats()[s]["late_weight"]) == tuple(ref.late[s])


def test_total_results_in_order_stream_equals_probe_count():
    # In-order arrivals, slide 1: every arrival probes the other window (a nested-loop join).
    rng = np.random.default_rng(1)
    x = ExactWindowedJoin(window_a=5, window_b=3, slide=1)
    wa, wb, probes = [], [], 0
    for t in range(200):
        side = "a" if rng.random() < 0.6 else "b"
        k = int(rng.integers(0, 4))
        other, wnd = (wb, 3) if side == "a" else (wa, 5)
        probes += sum(1 for (kk, tt) in other if kk == k and t - tt < wnd)
        (wa if side == "a" else wb).append((k, t))
        x.update(side, [k], t)
    assert x.total_results == probes


# -- lateness --------------------------------------------------------------------
def test_late_elements_counted_never_silently_dropped():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch(t, window=10, slide=5, allowed_lateness=2)
    w.update([1], 20)  # watermark 18
    w.update([2, 3, 4, 5], [18, 17, 3, 25], weights=[1, 4, 5, 1])  # 17 and 3 late; 18 (== watermark) accepted
    assert (w.late_count, w.late_weight, w.events) == (2, 9, 3)
    assert w.sketch_at() == t.empty_like().update([1, 5])  # panes 4..5 = ts 20..29
    assert w.sketch_at(23) == t.empty_like().update([1, 2])  # panes 3..4 = ts 15..24
    assert w.watermark == 23


def test_late_elements_raise_mode_refuses_whole_batch():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch(t, window=10, slide=5, on_late="raise")
    w.update([1], 20)
    before = w.to_bytes()
    with pytest.raises(LateElementError, match=r"1 element\(s\) older than the watermark 20"):
        w.update([2, 3], [25, 19])
    assert w.to_bytes() == before


def test_accepted_but_out_of_window_late_element_only_affects_past_windows():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch(t, window=2, slide=1, allowed_lateness=10)
    w.update([1], 20)
    w.update([2], 12)  # accepted (>= 10) but its window (12..13) is in the past
    assert w.sketch_at() == t.empty_like().update([1])
    assert w.sketch_at(13) == t.empty_like().update([2])
    assert len(w.retained_panes) <= w.max_panes


def test_expired_window_query_raises():
    w = WindowedSketch(ss.HashSketch(width=64, depth=3, seed=1), window=10, slide=5)
    w.update([1], 100)
    with pytest.raises(ValueError, match="has expired"):
        w.sketch_at(50)


# -- empty windows, deletes, nulls, atomicity --------------------------------------
def test_empty_windows():
    tmpl = ss.HashSketch(width=64, depth=3, seed=1)
    j = WindowedJoin(tmpl, 10, 10, slide=5)
    e = j.join_size()
    assert (e.value, e.low, e.high) == (0.0, 0.0, 0.0)  # no data at all
    j.update_a([1, 2], 0).update_b([1], 0)
    assert float(j.join_size()) == 1.0
    j.advance_to(1000)  # both windows empty again
    assert j.a.sketch_at().is_empty and j.b.sketch_at().is_empty
    assert float(j.join_size()) == 0.0
    assert j.a.retained_panes == [] and j.nbytes == 2 * tmpl.nbytes
    j.update_a([], np.array([], dtype=np.int64))  # an empty batch changes nothing
    assert j.a.events == 2


def test_delete_of_never_inserted_key_is_a_signed_count():
    tmpl = ss.HashSketch(width=512, depth=5, seed=1)
    j = WindowedJoin(tmpl, 10, 10, slide=5)
    x = ExactWindowedJoin(10, 10, slide=5)
    for obj in (j, x):
        obj.update_a([5], 1, weights=-1)  # delete of a key never inserted
        obj.update_b([5, 5], 2)
    assert x.join_size == -2 and x.window_counts("a") == {5: -1}
    assert j.a.sketch_at() == tmpl.empty_like().update([5], weights=-1)
    assert float(j.join_size()) == -2.0


def test_null_keys_go_to_null_weight_per_pane():
    t = ss.HashSketch(width=64, depth=3, seed=1)
    w = WindowedSketch(t, window=2, slide=1)
    w.update([1, None, 7, None], [0, 0, 1, 1], weights=[1, 2, 3, 4])
    assert w.sketch_at() == t.empty_like().update([1, None, 7, None], weights=[1, 2, 3, 4])
    w.advance_to(2)
    assert w.sketch_at().null_weight == 4
    assert w.sketch_at() == t.empty_like().update([7, None], weights=[3, 4])


def test_failed_update_changes_nothing():
    w = WindowedSketch(ss.HashSketch(width=64, depth=3, seed=1), window=10, slide=5)
    w.update([1, 2], [0, 7])
    before = w.to_bytes()
    with pytest.raises(ss.KeyTypeError, match="non-integral weight"):
        w.update([3, 4], [3, 12], weights=[1, 0.5])
    with pytest.raises(ss.KeyTypeError):
        w.update([True], [3])
    assert w.to_bytes() == before


def test_float_timestamps_and_float_weights():
    t = ss.HashSketch(width=64, depth=3, seed=1, dtype="float64")
    w = WindowedSketch(t, window=1.5, slide=0.5)
    w.update([1, 2, 3], [0.1, 0.6, 1.4], weights=[0.5, 1.5, 2.0])
    w.update([4], 2.2)  # pane 4: window panes 2..4
    assert w.sketch_at() == t.empty_like().update([3, 4], weights=[2.0, 1.0])


# -- memory ----------------------------------------------------------------------
@pytest.mark.parametrize("window,lateness", [(10, 0), (40, 0), (40, 12)])
def test_memory_bounded_by_panes_not_elements(window, lateness):
    tmpl = ss.HashSketch(width=128, depth=3, seed=1)
    w = WindowedSketch(tmpl, window=window, slide=2, allowed_lateness=lateness)
    rng = np.random.default_rng(0)
    peak = 0
    for step in range(300):
        w.update(rng.integers(0, 10**6, 500), step - rng.integers(0, lateness + 1, 500))
        peak = max(peak, w.nbytes)
        assert len(w.retained_panes) <= w.max_panes
    assert w.max_panes == window // 2 + math.ceil(lateness / 2) + 1
    assert peak <= (w.max_panes + 1) * tmpl.nbytes


# -- serialisation ------------------------------------------------------------------
def test_state_round_trip_and_resume_is_identical():
    tmpl = ss.SkimmedSketch(width=128, depth=5, seed=9, domain=DOMAIN)
    batches = zipf_stream(3, 40, 30, jitter=3, late_every=5)
    a = WindowedSketch(tmpl, window=12, slide=3, allowed_lateness=2)
    b = WindowedSketch(tmpl, window=12, slide=3, allowed_lateness=2)
    for i, (_, keys, ts, w) in enumerate(batches):
        a.update(keys, ts, w)
        b.update(keys, ts, w)
        if i % 10 == 9:
            b = WindowedSketch.from_bytes(b.to_bytes())  # "restart"
    assert a == b and a.to_bytes() == b.to_bytes()
    assert (b.late_count, b.events) == (a.late_count, a.events)


def test_corrupt_state_rejected():
    w = WindowedSketch(ss.HashSketch(width=16, depth=2, seed=1), window=4, slide=2).update([1], 0)
    blob = w.to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="bad magic"):
        WindowedSketch.from_bytes(b"XXXX" + blob[4:])
    with pytest.raises(ss.CorruptSketchError, match="checksum"):
        WindowedSketch.from_bytes(blob[:-5] + bytes([blob[-5] ^ 1]) + blob[-4:])
    with pytest.raises(ss.CorruptSketchError):
        WindowedSketch.from_bytes(blob[:20])


# -- reject cases -------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,err,match",
    [
        (dict(window=10, slide=3), ValueError, "not a multiple of slide"),
        (dict(window=1.0, slide=0.3), ValueError, "not a multiple of slide"),
        (dict(window=0, slide=1), ValueError, "window must be > 0"),
        (dict(window=10, slide=-5), ValueError, "slide must be > 0"),
        (dict(window=10, slide=20), ValueError, "not a multiple"),
        (dict(window=float("nan")), ValueError, "window must be finite"),
        (dict(window=True), TypeError, "window must be an int or float"),
        (dict(window=10, allowed_lateness=-1), ValueError, "allowed_lateness must be >= 0"),
        (dict(window=10, allowed_lateness=float("inf")), ValueError, "allowed_lateness must be finite"),
        (dict(window=10, on_late="drop"), ValueError, "on_late must be"),
    ],
)
def test_invalid_parameters_rejected(kwargs, err, match):
    with pytest.raises(err, match=match):
        WindowedSketch(ss.HashSketch(width=16, depth=2, seed=1), **kwargs)


def test_invalid_inputs_rejected():
    w = WindowedSketch(ss.HashSketch(width=16, depth=2, seed=1), window=4, slide=2)
    with pytest.raises(TypeError, match="template must be a sketch"):
        WindowedSketch(object(), 4)
    with pytest.raises(ValueError, match=r"timestamps have shape \(3,\), expected a scalar or \(2,\)"):
        w.update([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match=r"timestamps contain NaN or infinity \(position 1 is nan\)"):
        w.update([1, 2], [1.0, float("nan")])
    with pytest.raises(TypeError, match="datetime64"):
        w.update([1], np.array(["2024-01-01"], dtype="datetime64[s]"))
    with pytest.raises(TypeError, match="timestamps must be int or float"):
        w.update([1], True)
    with pytest.raises(ValueError, match="weights have shape"):
        w.update([1, 2], 0, weights=[1, 2, 3])
    with pytest.raises(ValueError, match="explicit common slide"):
        WindowedJoin(ss.HashSketch(width=16, depth=2, seed=1), 4, 6)
    with pytest.raises(ValueError, match="side must be 'a' or 'b'"):
        WindowedJoin(ss.HashSketch(width=16, depth=2, seed=1), 4).update("c", [1], 0)
    with pytest.raises(ss.IncompatibleSketchError, match="seed differs"):
        w.join_size(ss.HashSketch(width=16, depth=2, seed=2))
    assert w.events == 0


def test_event_clock_never_goes_back():
    c = EventClock(allowed_lateness=3)
    assert c.now is None and c.watermark is None
    c.advance_to(10)
    c.advance_to(4)
    assert (c.now, c.watermark) == (10, 7)
    with pytest.raises(ValueError, match="t must be finite"):
        c.advance_to(float("inf"))


def test_merge_panes_equals_update():
    tmpl = ss.HashSketch(width=128, depth=3, seed=2)
    a = WindowedSketch(tmpl, window=9, slide=3, allowed_lateness=3)
    b = WindowedSketch(tmpl, window=9, slide=3, allowed_lateness=3)
    for _, keys, ts, w in zipf_stream(8, 30, 20, jitter=2, late_every=4):
        a.update(keys, ts, w)
        wm = b.watermark
        late = np.zeros(len(ts), bool) if wm is None else ts < wm
        panes = {}
        for k in np.unique(pane_index(ts[~late], 3)).tolist():
            sel = ~late & (pane_index(ts, 3) == k)
            panes[k] = tmpl.empty_like().update(keys[sel], weights=w[sel])
        mx = ts[~late].max().item() if (~late).any() else None
        b.merge_panes(panes, mx, late_count=int(late.sum()), late_weight=int(w[late].sum()), events=int((~late).sum()))
    assert a == b and a.late_count > 0
    with pytest.raises(ValueError, match="before the watermark's pane"):
        b.merge_panes({0: tmpl.empty_like()}, 1)
    with pytest.raises(ss.IncompatibleSketchError, match="width differs"):
        b.merge_panes({10**6: ss.HashSketch(width=64, depth=3, seed=2)}, 3 * 10**6)


def test_windowed_join_state_round_trip_resumes_with_shared_clock():
    tmpl = ss.HashSketch(width=128, depth=3, seed=4)
    batches = zipf_stream(12, 40, 20, jitter=3, late_every=6)
    ref = WindowedJoin(tmpl, 12, 6, slide=3, allowed_lateness=4)
    j = WindowedJoin(tmpl, 12, 6, slide=3, allowed_lateness=4)
    for i, (side, keys, ts, w) in enumerate(batches):
        ref.update(side, keys, ts, w)
        j.update(side, keys, ts, w)
        if i % 7 == 6:
            j = WindowedJoin.from_bytes(j.to_bytes())
            assert j.a.clock is j.b.clock
    assert j == ref
    assert float(j.join_size()) == float(ref.join_size())
    blob = ref.to_bytes()
    with pytest.raises(ss.CorruptSketchError, match="checksum"):
        WindowedJoin.from_bytes(blob[:30] + bytes([blob[30] ^ 1]) + blob[31:])
    with pytest.raises(ss.CorruptSketchError, match="bad magic"):
        WindowedJoin.from_bytes(blob[4:])


def test_counter_overflow_leaves_the_window_unchanged():
    t = ss.HashSketch(width=8, depth=2, seed=1)
    w = WindowedSketch(t, window=4, slide=2)
    big = 2**62
    w.update([1, 2], [0, 2], weights=[big, big // 2])  # panes 0 and 1, both in the window
    before = w.to_bytes()
    with pytest.raises(ss.CounterOverflowError):
        w.update([3, 1], [0, 3], weights=[1, big])  # pane 0, total, pane 1 merge; then the total overflows
    assert w.to_bytes() == before
    w._check_invariant()


@pytest.mark.parametrize(
    "template,tol",
    [(ss.HashSketch(width=2048, depth=7, seed=6), 0.05), (ss.AGMSSketch(width=64, depth=7, seed=6), 0.25)],
    ids=lambda x: type(x).__name__ if isinstance(x, ss.Sketch) else str(x),
)
def test_total_results_estimate_tracks_exact_total_results(template, tol):
    j = WindowedJoin(template, 30, 10, slide=5, allowed_lateness=6)
    x = ExactWindowedJoin(30, 10, slide=5, allowed_lateness=6)
    errs = []
    for i, (side, keys, ts, w) in enumerate(zipf_stream(77, 150, 100, jitter=8, late_every=9, z=1.1, deletes=0.0)):
        j.update(side, keys, ts, w)
        x.update(side, keys, ts, w)
        if i % 10 == 9:
            errs.append(abs(j.total_results_estimate - x.total_results) / x.total_results)
    assert max(errs) < tol, f"relative errors of the results estimate {np.round(errs, 4)} exceed {tol}"
    assert WindowedJoin.from_bytes(j.to_bytes()).total_results_estimate == j.total_results_estimate


def test_total_results_estimate_worked_example():
    j = WindowedJoin(ss.HashSketch(width=64, depth=3, seed=1), window_a=4, window_b=2, slide=1)
    x = ExactWindowedJoin(window_a=4, window_b=2, slide=1)
    for obj in (j, x):
        obj.update_a([7, 7, 8], [0, 1, 2]).update_b([7, 8], [3, 3]).update_a([8], [4]).update_b([7], [6])
        obj.update_a([7], [6], weights=-1)  # a delete at 6 overlaps B's 7@6 only: one result less
    # (7@0,7@3) (7@1,7@3) (8@2,8@3) (8@4,8@3) - (7@6,7@6)
    assert x.total_results == 3
    assert j.total_results_estimate == 3.0  # keys 7 and 8 share no bucket here: every table is exact


def test_pane_sketches_record_the_key_domain_of_string_keys():
    w = WindowedSketch(ss.HashSketch(width=64, depth=3, seed=9), window=2, slide=1)
    w.update(["a", None, "b"], timestamps=[0.1, 0.5, 1.2], weights=[1, 2, 3])
    ref = ss.HashSketch(width=64, depth=3, seed=9).update(["a", None, "b"], weights=[1, 2, 3])
    assert w.sketch_at().key_domain == "str" and w.sketch_at() == ref
    with pytest.raises(ss.IncompatibleSketchError, match="key_domain"):
        w.sketch_at().merge(ss.HashSketch(width=64, depth=3, seed=9).update([1]))
