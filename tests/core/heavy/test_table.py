"""The table's invariants, after every update and merge (property tests over random streams):

* ``f = table + residual`` exactly: the residual's counters are the Count-Sketch of ``f - table``;
* a key with weight in the residual has both buckets spilled, and a clean slot's key has none;
* so the "provably no residual" rule (held clean, or a bucket not spilled) never skips a key that has one.
"""

import numpy as np
import pytest

from skimsketch.keys.hashing import family
from skimsketch.heavy import HeavyKeySketch
from skimsketch.heavy.table import HeavyTable, admit, admit_reference
from skimsketch import kernels
from skimsketch.kernels import hash_delta


def _exact(sk: HeavyKeySketch, truth: dict) -> None:
    keys, counts, clean = sk.table_items()
    held = dict(zip(keys.tolist(), counts.tolist()))
    assert all(v > 0 for v in held.values())
    assert set(held) <= set(truth)
    rest = {k: v - held.get(k, 0) for k, v in truth.items()}
    assert all(v >= 0 for v in rest.values()), "a table count exceeds the key's frequency"
    rk = np.array([k for k, v in rest.items() if v], dtype=np.int64)
    rw = np.array([v for v in rest.values() if v], dtype=np.float64 if sk.float_counters else np.int64)
    want = hash_delta(family(sk.seed), rk, rw, sk.width, sk.depth, sk.float_counters) if len(rk) else 0 * sk.residual
    assert np.array_equal(sk.residual, want), "residual != Count-Sketch of f - table"
    # the rule: provably no residual -> no residual (for every key, held or not, present or not)
    probe = np.array(sorted(set(truth) | set(range(-5, 60))), dtype=np.int64)
    safe = sk._table.no_residual(probe)
    for k, s in zip(probe.tolist(), safe.tolist()):
        if s:
            assert rest.get(k, 0) == 0, f"key {k} skipped but has residual {rest.get(k)}"
    # clean slots have no residual; residual keys have both buckets spilled
    for k, c in zip(keys.tolist(), clean.tolist()):
        if c:
            assert rest[k] == 0
    if len(rk):
        assert sk._table.marked(rk).all()


def _stream(rng, n, domain, z=1.2):
    return ((rng.zipf(z, n) - 1) % domain).astype(np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_table_plus_residual_is_f_after_every_update(seed):
    rng = np.random.default_rng(seed)
    sk = HeavyKeySketch(buckets=3, width=16, depth=4, seed=seed)
    truth: dict = {}
    for _ in range(25):
        keys = _stream(rng, int(rng.integers(1, 40)), 200)
        w = rng.integers(0, 5, len(keys)) if rng.random() < 0.5 else None
        sk.update(keys, w)
        for k, x in zip(keys.tolist(), (w if w is not None else np.ones(len(keys), int)).tolist()):
            if x:
                truth[k] = truth.get(k, 0) + x
        _exact(sk, truth)
    assert sk._table.spilled.any() and sk.draws > 0  # the streams did overflow the table


@pytest.mark.parametrize("seed", range(6))
def test_table_plus_residual_is_f_after_merges(seed):
    rng = np.random.default_rng(100 + seed)
    pieces, truths = [], []
    for i in range(4):
        sk = HeavyKeySketch(buckets=4, width=16, depth=4, seed=3)
        keys = _stream(rng, int(rng.integers(0, 300)), 150 + 50 * i)
        sk.update(keys)
        pieces.append(sk)
        t: dict = {}
        for k in keys.tolist():
            t[k] = t.get(k, 0) + 1
        truths.append(t)
    merged, truth = pieces[0].copy(), dict(truths[0])
    for p, t in zip(pieces[1:], truths[1:]):
        merged.merge(p)
        for k, v in t.items():
            truth[k] = truth.get(k, 0) + v
        _exact(merged, truth)
    assert merged.total_weight == sum(truth.values())


def test_float_weights_keep_the_invariants():
    rng = np.random.default_rng(7)
    sk = HeavyKeySketch(buckets=2, width=8, depth=3, seed=1, dtype="float64")
    truth: dict = {}
    for _ in range(10):
        keys = _stream(rng, 30, 80)
        w = rng.integers(1, 8, len(keys)) / 4.0  # exact binary fractions: sums are exact in any order
        sk.update(keys, w)
        for k, x in zip(keys.tolist(), w.tolist()):
            truth[k] = truth.get(k, 0) + x
        _exact(sk, truth)


def test_admission_rule_by_hand():
    """Two buckets of 8 slots: the 17th distinct key finds both full and replaces the smaller minimum or spills."""
    t = HeavyTable(2, seed=5, float_counts=False)
    keys = np.arange(16, dtype=np.int64)
    sk, sw = admit(t, keys, np.arange(1, 17, dtype=np.int64))
    assert len(sk) == 0 and t.counts.min() == 1 and t.clean_slots().all()  # every key placed clean
    assert not t.spilled.any() and t.draws == 0
    sk, sw = admit(t, np.array([99], dtype=np.int64), np.array([10**9], dtype=np.int64))  # p = 1e9 / (1 + 1e9)
    assert t.draws == 1 and sk.tolist() == [0] and sw.tolist() == [1]  # key 0 (count 1) evicted
    assert 99 in t.keys.tolist() and t.marked(np.array([0], dtype=np.int64)).all()
    slot = t.keys.tolist().index(99)
    assert t.clean_slots()[slot] == (not t.marked(np.array([99], dtype=np.int64))[0])
    sk, sw = admit(t, np.array([7], dtype=np.int64), None)  # held: its count grows
    assert len(sk) == 0 and t.counts[t.keys.tolist().index(7)] == 9


@pytest.mark.parametrize("float_counts,weighted,dirty", [(False, True, False), (False, False, True),
                                                        (True, True, True)])
def test_compiled_and_reference_agree(float_counts, weighted, dirty):
    """The compiled loop (when built) gives the reference loop's state, draws and spills."""
    rng = np.random.default_rng(11)
    keys = _stream(rng, 3000, 500)
    w = rng.integers(0, 4, len(keys)) if weighted else None
    if w is not None and float_counts:
        w = w / 4.0
    d = rng.random(len(keys)) < 0.3 if dirty else None
    a, b = (HeavyTable(5, seed=9, float_counts=float_counts, filter_per_bucket=8) for _ in range(2))
    with kernels.use("compiled" if kernels.available()["compiled"] is None else "numpy"):
        sk1, sw1 = admit(a, keys, w, d)
    sk2, sw2 = [], []
    admit_reference(b, keys, None if w is None else np.asarray(w, dtype=np.float64 if float_counts else np.int64),
                    sk2, sw2, d)
    assert a.same_state(b) and sk1.tolist() == sk2 and sw1.tolist() == sw2 and a.draws > 100


def test_many_spills_of_few_keys_give_the_hashed_counters():
    """Past 2**16 spills of keys in a short span the residual sums them per key first: the same counters."""
    rng = np.random.default_rng(5)
    keys = _stream(rng, 150_000, 3000, z=1.05)
    sk = HeavyKeySketch(buckets=2, width=32, depth=4, seed=2).update(keys)
    truth: dict = {}
    for k in keys.tolist():
        truth[k] = truth.get(k, 0) + 1
    _exact(sk, truth)
