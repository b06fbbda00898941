"""Key canonicalisation (docs/inputs.md)."""

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.keys.canonical import canonical_key, canonicalize


def test_int_widths_are_one_key():
    for dt in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        assert canonicalize(np.array([1, 2, 100], dtype=dt)).keys.tolist() == [1, 2, 100]
    assert canonical_key(np.int16(-5)) == -5 and canonical_key(7) == 7


def test_strings_and_bytes_share_canonical_bytes():
    assert canonical_key("abc") == canonical_key(b"abc") == ss.fingerprint64(b"abc")
    assert canonical_key("é") == ss.fingerprint64("é".encode())
    assert canonical_key("1") != canonical_key(1)


def test_string_containers_identical():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    words = ["apple", "pear", "apple", "fig", "ünïcode", "", "pear"]
    ref = ss.HashSketch(64, 3, 1).update(words)
    for c in (np.array(words), np.array(words, dtype=object), pd.Series(words), pd.Series(words, dtype="string"),
              pa.array(words), pa.array(words, type=pa.large_string()), pa.array(words).dictionary_encode(),
              [w.encode() for w in words], pa.array([w.encode() for w in words], type=pa.binary())):
        assert ss.HashSketch(64, 3, 1).update(c) == ref


def test_integral_floats_and_nan_nulls():
    b = canonicalize(np.array([1.0, np.nan, 3.0]))
    assert b.keys.tolist() == [1, 3] and b.null_weight == 1
    with pytest.raises(ss.KeyTypeError, match="not integral"):
        canonicalize([1.0, 2.5])


def test_null_markers():
    pd = pytest.importorskip("pandas")
    b = canonicalize([None, float("nan"), pd.NA, pd.NaT, 5], weights=[1, 2, 3, 4, 5])
    assert b.keys.tolist() == [5] and b.null_weight == 10


def test_mixed_object_keys():
    b = canonicalize(["a", b"a", None])  # str and bytes are one key domain
    assert b.keys.tolist() == [ss.fingerprint64(b"a"), ss.fingerprint64(b"a")] and b.key_domain == "str"
    assert canonicalize([3, None, 4.0]).key_domain == "int" and canonicalize([None]).key_domain is None
    with pytest.raises(ss.KeyTypeError, match="mix integers and strings"):
        canonicalize(["a", 3, b"a", None])


def test_empty_inputs():
    assert len(canonicalize([]).keys) == 0
    sk = ss.HashSketch(8, 2).update([])
    assert sk.is_empty
    assert ss.exact_join_size([], [1]) == 0


def test_scalar_key():
    assert canonicalize(5).keys.tolist() == [5]
    assert canonicalize("x").keys.tolist() == [ss.fingerprint64(b"x")]


def test_float_weights_need_float_sketch():
    with pytest.raises(ss.KeyTypeError, match="dtype='float64'"):
        ss.HashSketch(8, 2).update([1], weights=0.5)
    s = ss.HashSketch(8, 2, dtype="float64").update([1, 2], weights=[0.5, 0.25])
    assert s.total_weight == 0.75
    # integral floats are fine on integer sketches
    assert ss.HashSketch(8, 2).update([1], weights=[2.0]) == ss.HashSketch(8, 2).update([1, 1])


def test_exact_join_size_with_weights_and_big_values():
    assert ss.exact_join_size([1, 2], [1, 1, 2], weights_f=[2**62, 1]) == 2**63 + 1  # beyond int64: exact
    assert ss.exact_join_size([1], [1], weights_f=[0.5]) == 0.5
    assert ss.exact_self_join_size(["a", "a", "b"]) == 5


def test_skimmed_domain_checked():
    s = ss.SkimmedSketch(16, 3, domain=100)
    with pytest.raises(ss.KeyDomainError, match=r"outside the declared domain \[0, 100\)"):
        s.update([5, 100])
    with pytest.raises(ss.KeyDomainError):
        s.update([-1])
    assert s.is_empty
    assert ss.SkimmedSketch(16, 3).domain is None  # unbounded keys (tests/core/sketch/skim/test_unbounded.py)
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="domain"):
            ss.SkimmedSketch(16, 3, domain=bad)
    for bad in (0, -1.0, float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="skim_factor"):
            ss.SkimmedSketch(16, 3, domain=10, skim_factor=bad)


def test_skimmed_domain_mismatch_is_incompatible():
    a, b = ss.SkimmedSketch(16, 3, domain=100), ss.SkimmedSketch(16, 3, domain=200)
    with pytest.raises(ss.IncompatibleSketchError, match="domain"):
        a.join_size(b)
    # the skim factor is a query setting, not a compatibility field
    c = ss.SkimmedSketch(16, 3, domain=100, skim_factor=3.0).update([1])
    assert a.merge(c).skim_factor == 1.0


# --- weights of every numeric kind, float keys near 2**53, pandas Index keys (docs/inputs.md) ---


def test_decimal_and_fraction_weights_are_not_truncated():
    from decimal import Decimal
    from fractions import Fraction

    import pyarrow as pa

    import skimsketch as ss

    dec = pa.array([Decimal("4.38"), Decimal("1.99")])
    assert ss.HashSketch(64, 3, seed=1, dtype="float64").update([1, 2], weights=dec).total_weight == 4.38 + 1.99
    assert ss.exact_join_size([1, 2], [1, 2], weights_f=[Decimal("4.38"), Decimal("1.99")]) == 4.38 + 1.99
    obj = np.array([np.float32(2.5), 1], dtype=object)
    assert ss.exact_join_size([1, 2], [1, 2], weights_f=obj) == 3.5
    # integral Decimal / Fraction weights are exact in integer sketches
    b = canonicalize([1, 2], weights=[Decimal(4), Fraction(6, 2)])
    assert b.weights.dtype == np.int64 and b.weights.tolist() == [4, 3]
    with pytest.raises(ss.KeyTypeError, match="non-integral weight"):
        canonicalize([1, 2], weights=[Decimal("4.38"), 1])
    with pytest.raises(ss.KeyTypeError, match="NaN or infinity"):
        canonicalize([1], weights=[Decimal("NaN")], allow_float_weights=True)
    with pytest.raises(ss.KeyTypeError, match="weights must be int or float"):
        canonicalize([1], weights=np.array(["3"], dtype=object))


def test_float_keys_at_or_above_2_53_are_refused():
    import pandas as pd

    assert canonicalize([2.0**53 - 1]).keys.tolist() == [2**53 - 1]
    for bad in ([2.0**53], np.array([-(2.0**53)]), pd.Series([2**53 + 1, None])):
        with pytest.raises(ss.KeyTypeError, match="2\\*\\*53"):
            canonicalize(bad)
    with pytest.raises(ss.KeyTypeError, match="2\\*\\*53"):
        canonical_key(2.0**60)


def test_pandas_index_keys():
    import pandas as pd

    assert canonicalize(pd.Index([3, 1])).keys.tolist() == [3, 1]
    b = canonicalize(pd.Index([3.0, np.nan]))
    assert b.keys.tolist() == [3] and b.null_weight == 1


def test_null_weights_skip_their_row_in_every_container():
    from decimal import Decimal

    import pandas as pd
    import pyarrow as pa

    keys = [1, None, 3, 4]
    for w in ([2, 5, None, 7], np.array([2.0, 5.0, np.nan, 7.0]), pa.array([2, 5, None, 7]),
              pd.Series([2, 5, None, 7], dtype="Int64"), pd.Series([Decimal(2), Decimal(5), None, Decimal(7)])):
        b = canonicalize(keys, w)
        assert (b.keys.tolist(), b.weights.tolist(), b.null_weight) == ([1, 4], [2, 7], 5)
        sk = ss.HashSketch(64, 3, seed=1).update(keys, weights=w)
        assert sk.to_bytes() == ss.HashSketch(64, 3, seed=1).update([1, None, 4], weights=[2, 5, 7]).to_bytes()
    with pytest.raises(ss.KeyTypeError, match="NaN or infinity"):
        canonicalize([1, 2], weights=[np.inf, 1])


def test_scalar_weights_follow_the_array_rule():
    from decimal import Decimal
    from fractions import Fraction

    import pandas as pd

    assert ss.HashSketch(64, 3, seed=1).update([1, 2], weights=Decimal(3)).total_weight == 6
    assert ss.HashSketch(64, 3, seed=1, dtype="float64").update([1], weights=Fraction(1, 4)).total_weight == 0.25
    with pytest.raises(ss.KeyTypeError, match="non-integral weight"):
        ss.HashSketch(64, 3, seed=1).update([1], weights=Decimal("0.5"))
    with pytest.raises(ss.KeyTypeError, match="weights=None"):
        ss.HashSketch(64, 3, seed=1).update([1], weights=pd.NA)
