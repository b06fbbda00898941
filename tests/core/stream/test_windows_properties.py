"""Property tests: random streams, window shapes and lateness against brute force."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import skimsketch as ss
from skimsketch.stream import (
    ExactWindowedJoin,
    WindowedJoin,
)

TEMPLATE = ss.HashSketch(width=32, depth=3, seed=5)

batch = st.tuples(
    st.sampled_from("ab"),
    st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 6)), st.integers(-5, 60), st.integers(-2, 3)),
             min_size=0, max_size=8),
)


@settings(max_examples=60, deadline=None)
@given(
    slide=st.integers(1, 4),
    na=st.integers(1, 5),
    nb=st.integers(1, 5),
    lateness=st.integers(0, 12),
    batches=st.lists(batch, min_size=1, max_size=12),
    probe=st.integers(0, 10),
)
def test_random_streams_match_brute_force(slide, na, nb, lateness, batches, probe):
    j = WindowedJoin(TEMPLATE, na * slide, nb * slide, slide=slide, allowed_lateness=lateness)
    x = ExactWindowedJoin(na * slide, nb * slide, slide=slide, allowed_lateness=lateness)
    now, kept, late = None, {"a": [], "b": []}, {"a": 0, "b": 0}
    for side, elems in batches:
        keys = [k for k, _, _ in elems]
        ts = np.array([t for _, t, _ in elems], dtype=np.int64)
        ws = [w for _, _, w in elems]
        j.update(side, keys, ts, ws)
        x.update(side, keys, ts, ws)
        wm = None if now is None else now - lateness
        for k, t, w in elems:
            if wm is not None and t < wm:
                late[side] += 1
            else:
                kept[side].append((k, t, w))
                now = t if now is None else max(now, t)
    if now is None:
        assert j.a.sketch_at().is_empty and x.join_size == 0
        return
    n = {"a": na, "b": nb}
    for t in (now, now - lateness + probe % (lateness + 1), now + probe):
        p = t // slide
        fresh = {}
        for s in "ab":
            v = [(k, w) for k, ts_, w in kept[s] if ts_ // slide <= p <= ts_ // slide + n[s] - 1]
            fresh[s] = TEMPLATE.empty_like()
            if v:
                fresh[s].update([k for k, _ in v], weights=[w for _, w in v])
        assert j.a.sketch_at(t).to_bytes() == fresh["a"].to_bytes()
        assert j.b.sketch_at(t).to_bytes() == fresh["b"].to_bytes()
        fa, fb = {}, {}
        for s, f in (("a", fa), ("b", fb)):
            for k, ts_, w in kept[s]:
                if k is not None and ts_ // slide <= p <= ts_ // slide + n[s] - 1:
                    f[k] = f.get(k, 0) + w
        assert x.join_size_at(t) == sum(c * fb.get(k, 0) for k, c in fa.items())
    assert x.join_size == x.join_size_at()
    pairs = sum(
        wa * wb
        for ka, ta, wa in kept["a"] if ka is not None
        for kb, tb, wb in kept["b"]
        if ka == kb and tb // slide - na + 1 <= ta // slide <= tb // slide + nb - 1
    )
    assert x.total_results == pairs
    assert (j.a.late_count, j.b.late_count) == (late["a"], late["b"])
    assert len(j.a.retained_panes) <= j.a.max_panes and len(j.b.retained_panes) <= j.b.max_panes
    assert math.isclose(float(j.join_size()), float(j.a.sketch_at().join_size(j.b.sketch_at())))
