"""Golden vectors of the estimate functions: sketch bytes -> the core's answers (or errors).

The file ``spark_udaf/java/io/skimsketch/spark/selftest/golden-estimates.tsv`` (a resource of the
jar) has tab-separated lines: ``sketch  name  hex`` (sketch bytes), then one query a line::

    op  confidence  a  b  key  expected

``op`` is ``join``, ``self``, ``freq``, ``info``, ``skim`` or ``search``; ``a``/``b`` name sketches
(``-`` when unused); ``key`` is ``int:<n>``, ``float:<repr>``, ``str:<utf-8 hex>``
or ``bytes:<hex>``; ``expected`` is ``value low high confidence method`` (estimates),
``kind width depth seed total_weight null_weight nbytes`` (info), the skim's dense keys
``key:value`` in ascending order, ``?`` before those a report would not name (skim: the
SKIMDENSE decisions behind a skimmed join, checked exactly; ``none`` when no key is dense), the
prefix search's candidates with the expansion cap ``key`` (``int:<max_expand>``) as their number and
order-sensitive hash ``h = 31 h + key`` (int64, wrapping; search), or
``!ErrorName message``. Numbers are Python reprs (exact round trips).

The answers are those of the Python SQL implementations (``spark_udaf.sql``: the core's
estimators with SQL's argument names in messages). The JVM self-test (``SelfTest``,
``./dev jar``) and ``tests/spark_udaf/test_golden.py`` (the core, the jar, and the SQL
functions in Spark) check every line. Adding the skimmed estimator on the JVM is adding
its cases to :func:`cases` (``PORTED`` says which counter-mode kinds the JVM answers) and
regenerating: ``./dev py -m tests.spark_udaf.golden_estimates``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import skimsketch as ss
from spark_udaf import sql
from tests.core.sketch.test_extreme_floats import pareto_pair

PATH = Path(__file__).resolve().parents[2] / "spark_udaf" / "java" / "io" / "skimsketch" / "spark" / "selftest" / \
    "golden-estimates.tsv"
#: Sketch kinds whose counter-mode estimates the JVM computes (exact-mode answers and info: every kind).
PORTED = ("HashSketch", "AGMSSketch", "SkimmedSketch")
#: Counter-mode skimmed layouts whose skim (SKIMDENSE) and join the JVM computes: the virtual ids, a
#: domain (None), a key range, the prefix hierarchy's search.
PORTED_SKIM_SEARCHES = ("virtual", None, "range", "prefix")


def _zipf(seed: int, n: int, domain: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.3, n) % domain).astype(np.int64)


def sketches() -> dict:
    """Named sketches the cases query (small shapes, varied data, modes and counter types)."""
    h = lambda **kw: ss.HashSketch(kw.pop("width", 64), kw.pop("depth", 5), kw.pop("seed", 1), **kw)  # noqa: E731
    out = {
        "hash_f": h().update(_zipf(1, 3000, 500)),
        "hash_g": h().update(_zipf(2, 2000, 500) + 3),
        "hash_empty": h(),
        "hash_w64": h().update([1, 2, 3, 1], weights=[2**40, -7, 2**41, 5]),
        "hash_deletes": h().update(_zipf(3, 1000, 200)).update(_zipf(3, 400, 200), weights=-1),
        "hash_float": h(dtype="float64").update(_zipf(4, 1500, 300), weights=np.linspace(0.25, 3.0, 1500)),
        "hash_str": h().update([f"user{i % 97}" for i in range(2000)]),
        "hash_str2": h().update([f"user{i % 61}" for i in range(900)] + [b"raw", b"raw"]),
        "hash_d4": h(depth=4).update(_zipf(5, 2500, 400)),
        "hash_d4b": h(depth=4).update(_zipf(6, 2500, 400)),
        "hash_d1": h(depth=1, width=128).update(_zipf(7, 800, 300)),
        "hash_d1b": h(depth=1, width=128).update(_zipf(8, 800, 300)),
        "hash_w32": h(width=32).update(_zipf(9, 500, 100)),
        "hash_seed2": h(seed=2).update(_zipf(10, 500, 100)),
        "hash_exact": h(exact=True).update(_zipf(11, 300, 40)),
        "hash_exact2": h(exact=True).update(_zipf(12, 200, 40)),
        "agms_f": ss.AGMSSketch(32, 3, 2).update(_zipf(13, 1000, 150)),
        "agms_g": ss.AGMSSketch(32, 3, 2).update(_zipf(14, 1200, 150)),
        "agms_wide": ss.AGMSSketch(100, 4, 3).update(_zipf(15, 600, 90)),
        "agms_exact": ss.AGMSSketch(32, 3, 2, exact=True).update(_zipf(16, 200, 30)),
        "skim_exact": ss.SkimmedSketch.for_bytes(4096, seed=5).update(_zipf(17, 400, 60)),
        "skim_exact2": ss.SkimmedSketch.for_bytes(4096, seed=5).update(_zipf(18, 300, 60)),
        "skim_exact_str": ss.SkimmedSketch.for_bytes(4096, seed=5).update([f"k{i % 23}" for i in range(200)]),
        "skim_exact_float": ss.SkimmedSketch.for_bytes(4096, seed=5, dtype="float64").update(
            [1, 2, 2, 3], weights=[0.5, 1.25, 2.0, -0.75]),
        "skim_counters": ss.SkimmedSketch.for_bytes(2048, seed=5).update(_zipf(19, 5000, 3000)),
        "skim_prefix": ss.SkimmedSketch(64, 5, 9, search="prefix").update(_zipf(20, 500, 100)),
    }
    out["hash_mixed"] = out["hash_exact"].copy().merge(h().update([5, 6, 7]))  # counter mode after the merge
    out.update(skimmed_sketches())
    out.update(far_float_sketches())
    return out


def _heavy(keys, counts) -> np.ndarray:
    return np.repeat(np.asarray(keys, dtype=np.int64), counts)


def skimmed_sketches() -> dict:
    """Counter-mode skimmed sketches of the scan layouts (virtual ids, a domain, a key range): skewed,
    flat, tiny and empty data, skims that explain every counter, float and large weights, deletes."""
    rng = np.random.default_rng(40)

    def virt(**kw):
        return ss.SkimmedSketch(kw.pop("width", 64), kw.pop("depth", 5), kw.pop("seed", 5), search="virtual",
                                virtual_lg=kw.pop("lg", 12), **kw)

    def dom(**kw):
        return ss.SkimmedSketch(kw.pop("width", 48), kw.pop("depth", 5), kw.pop("seed", 6), domain=1000, **kw)

    def pre(**kw):
        return ss.SkimmedSketch(kw.pop("width", 96), kw.pop("depth", 5), kw.pop("seed", 8), search="prefix", **kw)

    def rng_(**kw):
        return ss.SkimmedSketch(kw.pop("width", 64), kw.pop("depth", 5), kw.pop("seed", 7), search="range", **kw)

    heavy_a = _heavy([3, 77, 912, 4000, 123456], [900, 500, 300, 200, 120])
    heavy_b = _heavy([8, 78, 911, 4001, 654321], [800, 450, 350, 150, 100])
    base = 10**9
    out = {
        # search="virtual" (lg 12 keeps the scan small; one default-lg sketch: skim_counters)
        "v_zipf": virt().update(_zipf(41, 6000, 5000)),
        "v_zipf2": virt().update(_zipf(42, 4000, 5000)),
        "v_flat": virt().update(rng.integers(0, 3000, 3000)),
        "v_flat2": virt().update(rng.integers(0, 3000, 2500)),
        "v_tiny": virt().update([5, 5, 9]),
        "v_empty": virt(),
        "v_all": virt().update(heavy_a),
        "v_all2": virt().update(heavy_b),
        "v_float": virt(dtype="float64").update(_zipf(43, 3000, 2000), weights=np.linspace(0.1, 4.0, 3000)),
        "v_deletes": virt().update(_zipf(44, 3000, 2000)).update(_zipf(45, 2500, 2000), weights=-1),
        "v_w64": virt().update([1, 2, 3, 2**40], weights=[2**35, -3, 2**33, 7]),
        "v_str": virt().update([f"user{int(k)}" for k in _zipf(46, 3000, 800)]),
        "v_str2": virt().update([f"user{int(k)}" for k in _zipf(47, 2000, 800)]),
        "v_d4": virt(depth=4, width=96).update(_zipf(48, 5000, 3000)),
        "v_d4b": virt(depth=4, width=96).update(_zipf(49, 4000, 3000)),
        "v_lg13": virt(lg=13).update(_zipf(50, 3000, 2000)),
        "v_exact": virt(exact=True).update(_zipf(51, 300, 40)),
        "v_big": ss.SkimmedSketch.for_bytes(2048, seed=5, exact=False).update(_zipf(52, 8000, 5000)),
        # a bounded domain
        "d_zipf": dom().update(_zipf(53, 5000, 1000)),
        "d_zipf2": dom().update(_zipf(54, 3000, 1000)),
        "d_flat": dom().update(rng.integers(0, 1000, 2000)),
        "d_all": dom().update(_heavy([1, 2, 500, 999], [400, 300, 200, 100])),
        "d_all2": dom().update(_heavy([3, 501, 998], [350, 250, 150])),
        "d_float": dom(dtype="float64").update(_zipf(55, 2000, 1000), weights=np.linspace(-1.0, 3.0, 2000)),
        "d_deletes": dom().update(_zipf(56, 3000, 1000)).update(_zipf(57, 2000, 1000), weights=-1),
        "d_empty": dom(),
        # search="range": keys around 10**9, negative keys, a range too wide to scan, string keys
        "r_zipf": rng_().update(_zipf(58, 5000, 4000) + base),
        "r_zipf2": rng_().update(_zipf(59, 3000, 4000) + base),
        "r_neg": rng_().update(-_zipf(60, 3000, 3000)),
        "r_neg2": rng_().update(-_zipf(61, 2000, 3000) - 1),
        "r_wide": rng_().update(np.concatenate([_zipf(62, 3000, 4000) + base, [0]])),
        "r_str": rng_().update([f"k{int(k)}" for k in _zipf(63, 2000, 500)]),
        "r_str2": rng_().update([f"k{int(k)}" for k in _zipf(64, 1500, 500)]),
        "r_all": rng_().update(_heavy([base, base + 7, base + 4095], [600, 300, 100])),
        "r_empty": rng_(),
        # search="prefix": the hierarchy's top-down search supplies the candidates
        "p_zipf": ss.SkimmedSketch(64, 5, 9, search="prefix").update(_zipf(65, 3000, 2000)),
        "p_zipf2": ss.SkimmedSketch(64, 5, 9, search="prefix").update(_zipf(66, 2500, 2000)),
        "p_wide": pre().update(_zipf(67, 8000, 10**6) * 7919 - 10**9),
        "p_wide2": pre().update(_zipf(68, 6000, 10**6) * 7919 - 10**9),
        "p_str": pre().update([f"u{int(k)}" for k in _zipf(69, 4000, 3000)]),
        "p_str2": pre().update([f"u{int(k)}" for k in _zipf(70, 3000, 3000)]),
        "p_all": pre().update(_heavy([-5, 2**50, 17, 123456789], [700, 400, 250, 90])),
        "p_all2": pre().update(_heavy([6, 2**51, 18], [500, 300, 100])),
        "p_flat": pre().update(rng.integers(-10**12, 10**12, 3000)),
        "p_float": pre(dtype="float64").update(_zipf(71, 3000, 2000), weights=np.linspace(0.5, 2.5, 3000)),
        "p_deletes": pre().update(_zipf(72, 4000, 2000)).update(_zipf(73, 3000, 2000), weights=-1),
        "p_d4": pre(depth=4, hier_depth=3).update(_zipf(74, 5000, 3000)),
        "p_d4b": pre(depth=4, hier_depth=3).update(_zipf(75, 4000, 3000)),
        "p_narrow": pre(hier_width=16).update(rng.integers(0, 400, 20000)),
        "p_bytes": ss.SkimmedSketch.for_bytes(4096, seed=5, search="prefix", exact=False).update(_zipf(76, 6000, 5000)),
        "p_empty": pre(),
        "p_many": ss.SkimmedSketch(1024, 5, 8, search="prefix", hier_width=256, hier_depth=4).update(
            (np.random.default_rng(5).zipf(1.1, 200000) % 10**9).astype(np.int64)),
    }
    return out


#: Float weights far from 1 (issue 36): a join estimate is taken on copies rescaled by an exact power of two
#: (skimsketch/sketch/signed_join.py); the name's tag says the weights' scale.
FAR = {"e100": 1e100, "em100": 1e-100, "e150": 1e150, "em150": 1e-150}
#: The scales whose sketches include every skimmed layout and exact mode (the others: hash, AGMS, virtual).
FAR_ALL_LAYOUTS = ("e100", "em150")


def far_float_sketches() -> dict:
    """Float sketches of every kind whose weights are near 1e100, 1e-100, 1e150 or 1e-150: non-negative and
    signed data, exact mode, and an interval that misses below 0 (the Cauchy-Schwarz fallback) at 1 and 1e100."""
    f64 = {"dtype": "float64"}
    out = {}
    for tag, m in FAR.items():
        def w(n, lo=0.25, hi=3.0, m=m):
            return np.linspace(lo, hi, n) * m

        virt = dict(width=64, depth=5, seed=5, search="virtual", virtual_lg=12, **f64)
        out.update({
            f"fh_{tag}": ss.HashSketch(64, 5, 1, **f64).update(_zipf(80, 1500, 300), weights=w(1500)),
            f"fh_{tag}_signed": ss.HashSketch(64, 5, 1, **f64).update(_zipf(81, 1200, 300), weights=w(1200, -1.0)),
            f"fa_{tag}": ss.AGMSSketch(32, 3, 2, **f64).update(_zipf(82, 1000, 150), weights=w(1000)),
            f"fa_{tag}_signed": ss.AGMSSketch(32, 3, 2, **f64).update(_zipf(83, 800, 150), weights=w(800, -2.0)),
            f"fv_{tag}": ss.SkimmedSketch(**virt).update(_zipf(84, 3000, 2000), weights=w(3000, 0.1, 4.0)),
            f"fv_{tag}_signed": ss.SkimmedSketch(**virt).update(_zipf(85, 2500, 2000), weights=w(2500, -1.0)),
        })
        if tag not in FAR_ALL_LAYOUTS:
            continue
        out.update({
            f"fd_{tag}_signed": ss.SkimmedSketch(48, 5, 6, domain=1000, **f64).update(
                _zipf(86, 2000, 1000), weights=w(2000, -1.0)),
            f"fd_{tag}": ss.SkimmedSketch(48, 5, 6, domain=1000, **f64).update(_zipf(87, 2500, 1000), weights=w(2500)),
            f"fr_{tag}": ss.SkimmedSketch(64, 5, 7, search="range", **f64).update(
                _zipf(88, 3000, 4000) + 10**9, weights=w(3000)),
            f"fr_{tag}b": ss.SkimmedSketch(64, 5, 7, search="range", **f64).update(
                _zipf(89, 2000, 4000) + 10**9, weights=w(2000)),
            f"fp_{tag}": ss.SkimmedSketch(96, 5, 8, search="prefix", **f64).update(
                _zipf(90, 3000, 2000), weights=w(3000, 0.5, 2.5)),
            f"fp_{tag}_signed": ss.SkimmedSketch(96, 5, 8, search="prefix", **f64).update(
                _zipf(91, 2500, 2000), weights=w(2500, -0.5, 2.5)),
            f"fhx_{tag}": ss.HashSketch(64, 5, 1, exact=True, **f64).update(_zipf(92, 300, 40), weights=w(300)),
            f"fsx_{tag}": ss.SkimmedSketch(64, 5, 5, search="virtual", virtual_lg=12, exact=True, **f64).update(
                _zipf(93, 300, 40), weights=w(300, -0.5)),
        })
    out.update(_cauchy_schwarz_sketches())
    return out


def _cauchy_schwarz_sketches() -> dict:
    """Skimmed 1 KB float sketches (hash seed 10012) whose join interval lies wholly below 0, at 1 and 1e100
    (tests/core/sketch/test_extreme_floats.py): the answer falls back to Cauchy-Schwarz, 0 <= J <= sqrt(F2 F2).
    The default Chebyshev interval does so at confidence 0.2 (the normal one did at 0.95): their joins are
    asked at both."""
    kf, wf, kg, wg = pareto_pair()
    out = {}
    for tag, scale in (("1", 1.0), ("e100", 1e100)):
        for side, keys, w in (("f", kf, wf), ("g", kg, wg)):
            out[f"cs_{side}_{tag}"] = ss.SkimmedSketch.for_bytes(1024, seed=10012, dtype="float64").update(
                keys, weights=w * scale)
    return out


def far_joins() -> list[tuple]:
    """(a, b) joins of the far float sketches: each kind at each scale, signed data, exact mode, one side huge
    and the other tiny or at scale 1, the Cauchy-Schwarz fallback."""
    out = []
    for tag in FAR:
        for kind in ("fh", "fa", "fv"):
            out += [(f"{kind}_{tag}", f"{kind}_{tag}"), (f"{kind}_{tag}", f"{kind}_{tag}_signed"),
                    (f"{kind}_{tag}_signed", f"{kind}_{tag}_signed")]
    for tag in FAR_ALL_LAYOUTS:
        out += [(f"fd_{tag}", f"fd_{tag}_signed"), (f"fd_{tag}", f"fd_{tag}"), (f"fr_{tag}", f"fr_{tag}b"),
                (f"fp_{tag}", f"fp_{tag}_signed"), (f"fp_{tag}", f"fp_{tag}"), (f"fhx_{tag}", f"fhx_{tag}"),
                (f"fhx_{tag}", f"fh_{tag}"), (f"fh_{tag}_signed", f"fhx_{tag}"), (f"fsx_{tag}", f"fv_{tag}"),
                (f"fsx_{tag}", f"fsx_{tag}")]
    out += [("fh_e100", "fh_em100"), ("fh_e150", "fh_em150_signed"), ("fa_em100", "fa_e100"),
            ("fa_e150_signed", "fa_em150"), ("fv_e100", "fv_em100"), ("fv_em150_signed", "fv_e150"),
            ("fh_e100", "hash_float"), ("hash_float", "fh_em150"), ("fv_e150", "v_float"), ("fd_e100", "d_float"),
            ("fp_em150", "p_float"), ("fhx_e100", "fh_em150"), ("fhx_em150", "fhx_e100"), ("fr_e100", "fr_em150b"),
            ("fd_em150_signed", "fd_e100"), ("cs_f_1", "cs_g_1"), ("cs_f_e100", "cs_g_e100"),
            ("cs_f_e100", "cs_g_1")]
    return out


#: (a, b) joins of counter-mode skimmed sketches (and their errors), each at several confidences.
SKIM_JOINS = [
    ("v_zipf", "v_zipf2"), ("v_zipf", "v_zipf"), ("v_flat", "v_flat2"), ("v_tiny", "v_zipf"), ("v_empty", "v_zipf"),
    ("v_empty", "v_empty"), ("v_all", "v_all"), ("v_all", "v_all2"), ("v_all", "v_zipf"), ("v_float", "v_zipf"),
    ("v_deletes", "v_zipf"), ("v_deletes", "v_deletes"), ("v_w64", "v_zipf"), ("v_str", "v_str2"),
    ("v_d4", "v_d4b"), ("v_lg13", "v_lg13"), ("v_exact", "v_zipf"), ("v_zipf", "v_exact"), ("v_big", "skim_counters"),
    ("d_zipf", "d_zipf2"), ("d_zipf", "d_flat"), ("d_all", "d_all"), ("d_all", "d_all2"), ("d_float", "d_zipf"),
    ("d_deletes", "d_zipf"), ("d_empty", "d_zipf"),
    ("r_zipf", "r_zipf2"), ("r_neg", "r_neg2"), ("r_wide", "r_zipf"), ("r_str", "r_str2"), ("r_all", "r_zipf"),
    ("r_empty", "r_zipf"), ("r_all", "r_all"),
    ("p_zipf", "p_zipf2"), ("p_zipf", "skim_prefix"), ("p_wide", "p_wide2"), ("p_str", "p_str2"), ("p_all", "p_all"),
    ("p_all", "p_all2"), ("p_all", "p_wide"), ("p_flat", "p_wide"), ("p_float", "p_deletes"), ("p_deletes", "p_deletes"),
    ("p_d4", "p_d4b"), ("p_narrow", "p_narrow"), ("p_empty", "p_wide"), ("p_bytes", "p_bytes"), ("p_many", "p_many"),
    # errors: another layout, another virtual domain, another key type
    ("v_zipf", "r_zipf"), ("v_zipf", "v_lg13"), ("v_zipf", "v_str"), ("d_zipf", "v_zipf"), ("p_zipf", "p_wide"),
    ("p_d4", "p_wide"), ("p_wide", "v_zipf"),
]


def cases(sk: dict) -> list[tuple]:
    """(op, confidence, a, b, key) of every vector."""
    out = []
    pairs = [("hash_f", "hash_g"), ("hash_f", "hash_f"), ("hash_f", "hash_empty"), ("hash_w64", "hash_f"),
             ("hash_deletes", "hash_f"), ("hash_float", "hash_f"), ("hash_str", "hash_str2"), ("hash_d4", "hash_d4b"),
             ("hash_d1", "hash_d1b"), ("hash_exact", "hash_exact2"), ("hash_exact", "hash_f"),
             ("hash_f", "hash_exact"), ("hash_mixed", "hash_g"), ("agms_f", "agms_g"), ("agms_exact", "agms_f"),
             ("skim_exact", "skim_exact2"), ("skim_exact_str", "skim_exact_str"),
             ("skim_exact_float", "skim_exact"),
             # errors
             ("hash_f", "hash_w32"), ("hash_f", "hash_seed2"), ("hash_f", "hash_str"), ("hash_f", "agms_f")]
    for a, b in pairs:
        out.append(("join", 0.95, a, b, None))
    for a, b in SKIM_JOINS:
        for c in (0.95,) if a == b else (0.5, 0.95, 0.99):
            out.append(("join", c, a, b, None))
    for a, b in far_joins():
        for c in (0.5, 0.95, 0.99) if b == f"{a}_signed" else (0.2, 0.95) if a.startswith("cs_") else (0.95,):
            out.append(("join", c, a, b, None))
    for c in (0.5, 0.9, 0.99, 0.999999):
        out.append(("join", c, "hash_f", "hash_g", None))
        out.append(("join", c, "agms_f", "agms_wide" if c == 0.5 else "agms_g", None))
    for name, s in sk.items():
        if isinstance(s, ss.SkimmedSketch) and not s.exact_mode and s.search in PORTED_SKIM_SEARCHES:
            out.append(("skim", None, name, None, None))
        if isinstance(s, ss.SkimmedSketch) and not s.exact_mode and s.search == "prefix" and s.total_weight:
            for cap in (512, 16, 5):  # the default cap, and caps the search reaches (the heaviest kept)
                out.append(("search", None, name, None, f"int:{cap}"))
        exact_or_ported = s.exact_mode or type(s).__name__ in PORTED
        if exact_or_ported:
            out.append(("self", 0.95, name, None, None))
        out.append(("info", None, name, None, None))
    keys = ["int:0", "int:1", "int:3", "int:499", "int:-5", f"int:{2**40}", "float:3.0", "float:2.5",
            "str:" + b"user5".hex(), "bytes:" + b"raw".hex()]
    for name in ("hash_f", "hash_w64", "hash_float", "hash_str2", "hash_d4", "hash_exact", "hash_empty", "agms_f",
                 "agms_exact", "skim_exact", "skim_exact_str", "v_zipf", "v_float", "v_str", "v_big", "d_zipf",
                 "r_zipf", "r_str", "p_zipf", "skim_prefix"):
        for k in keys:
            out.append(("freq", 0.95, name, None, k))
    out.append(("freq", 0.8, "hash_f", None, "int:1"))
    return out


def _key(k: str):
    kind, v = k.split(":", 1)
    return {"int": int, "float": float, "str": lambda x: bytes.fromhex(x).decode(),
            "bytes": bytes.fromhex}[kind](v)


def _num(x) -> str:
    return repr(float(x))


def answer(op: str, conf, a: bytes, b: bytes | None, key: str | None) -> str:
    """The Python SQL implementation's answer as the ``expected`` field."""
    try:
        if op == "join":
            r = sql.join_impl([a], [b], True, conf)[0]
        elif op == "self":
            r = sql.self_join_impl([a], True, conf)[0]
        elif op == "skim":
            return skim_line(ss.from_bytes(a))
        elif op == "search":
            return search_line(ss.from_bytes(a), int(_key(key)))
        elif op == "freq":
            s = ss.from_bytes(a)
            k = _key(key)
            sql.frequency_impl([a], [k], conf)  # the SQL function's checks (key types)
            e = s.frequency(k, confidence=conf)
            r = {"value": e.value, "low": e.low, "high": e.high, "confidence": e.confidence, "method": e.method}
        else:
            r = sql.info_impl([a])[0]
            return " ".join([r["kind"], str(r["width"]), str(r["depth"]), str(r["seed"]), _num(r["total_weight"]),
                             _num(r["null_weight"]), str(r["nbytes"])])
    except ss.SketchError as e:
        return f"!{type(e).__name__} {e}"
    return " ".join([_num(r["value"]), _num(r["low"]), _num(r["high"]), _num(r["confidence"]), r["method"]])


def skim_line(s) -> str:
    """The ``skim`` answer: the dense keys (ascending) with their values, ``?`` marking those a report
    would not name (SkimmedSketch._doubtful)."""
    res = s.skim()
    doubtful = s._doubtful(res)[0]
    out = [("?" if m else "") + f"{int(k)}:{_num(v)}" for k, v, m in zip(res.keys, res.values, doubtful)]
    return " ".join(out) or "none"


def search_line(s, max_expand: int) -> str:
    """The ``search`` answer: the number of candidate keys of the prefix search and their hash."""
    from skimsketch.sketch.skim.hierarchy import hierarchy

    h = hierarchy(s.seed, s.hier_width.bit_length() - 1, s.hier_depth)
    keys, _ = h.search(s.hierarchy_counters.astype(np.float64), s._search_floor(), max_expand=max_expand)
    acc = 0
    for k in keys.tolist():
        acc = (acc * 31 + k) & (2**64 - 1)
    return f"{len(keys)} {acc - 2**64 if acc >= 2**63 else acc}"


def lines() -> list[str]:
    sk = sketches()
    blobs = {name: s.to_bytes() for name, s in sk.items()}
    out = ["\t".join(["sketch", name, blob.hex()]) for name, blob in blobs.items()]
    for op, conf, a, b, key in cases(sk):
        exp = answer(op, conf, blobs[a], None if b is None else blobs[b], key)
        out.append("\t".join([op, "-" if conf is None else repr(conf), a, b or "-", key or "-", exp]))
    return out


def read() -> tuple[dict, list[list[str]]]:
    """The stored vectors: ({name: sketch bytes}, queries as lists of fields)."""
    rows = [ln.split("\t") for ln in PATH.read_text().splitlines() if ln and not ln.startswith("#")]
    blobs = {r[1]: bytes.fromhex(r[2]) for r in rows if r[0] == "sketch"}
    return blobs, [r for r in rows if r[0] != "sketch"]


def main() -> int:
    header = "# op\tconfidence\ta\tb\tkey\texpected  (generated by tests/spark_udaf/golden_estimates.py)"
    PATH.write_text("\n".join([header, *lines()]) + "\n")
    print(f"wrote {PATH} ({len(read()[1])} vectors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
