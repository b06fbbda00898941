"""``skimsketch pairs``: every pair of stored summaries ranked by estimated join size, checked against the exact
joins of tables of different shapes (a dimension, foreign keys into it, Zipf tables of other skews and
domains, a small table every sample keeps whole, a table sharing no key with the others)."""

import re

import numpy as np
import pytest

import skimsketch as ss
from skimsketch.cli import main
from skimsketch.sample.overlap import coverage, shared_keys

LINE = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+([\d,.]+)\s+\[([-\d,.e+]+), ([-\d,.e+]+)\]\s+(\S+)\s+covers: (.*)$")


def _tables():
    rng = np.random.default_rng(42)
    return {
        "customers": np.arange(20_000),  # a dimension: every key once
        "orders": rng.zipf(1.3, 120_000) % 20_000,  # a foreign key into customers
        "visits": rng.zipf(1.1, 150_000) % 40_000,  # half its keys beyond the customers
        "reviews": rng.integers(0, 30_000, 50_000),  # flat keys
        "regions": np.repeat(np.arange(50), 40),  # small: every sample keeps it whole
        "currencies": np.repeat(np.arange(30, 60), 10),  # small, and shares 20 keys with regions
        "archive": rng.integers(10**6, 2 * 10**6, 30_000),  # shares no key with the others
    }


def _exact_join(a, b):
    ka, ca = np.unique(a, return_counts=True)
    kb, cb = np.unique(b, return_counts=True)
    _, i, j = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return float(np.dot(ca[i].astype(np.float64), cb[j]))


def _share(a, b):
    ua, ub = np.unique(a), np.unique(b)
    both = len(np.intersect1d(ua, ub, assume_unique=True))
    return both / len(ua), both / len(ub)


def _write(tmp_path, make):
    paths = {}
    for name, keys in _tables().items():
        p = tmp_path / f"{name}.sks"
        p.write_bytes(make().update(keys).to_bytes())
        paths[name] = str(p)
    return paths


def _parse(out: str, paths):
    names = {v: k for k, v in paths.items()}
    rows = []
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            num = [float(x.replace(",", "")) for x in m.group(4, 5, 6)]
            rows.append((names[m.group(2)], names[m.group(3)], *num, m.group(7), m.group(8)))
    return rows


def test_pairs_of_samples_rank_every_pair_and_cover_the_exact_answers(tmp_path, capsys):
    paths = _write(tmp_path, lambda: ss.JoinSample.for_bytes(4096, seed=9))
    assert main(["pairs", *paths.values(), "--top", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("21 pairs estimated (7 summaries)")
    rows = _parse(out, paths)
    assert len(rows) == 21
    tables = _tables()
    values = [r[2] for r in rows]
    assert values == sorted(values, reverse=True)
    inside = inside_share = 0
    for left, right, value, low, high, method, covers in rows:
        want = ss.from_bytes((tmp_path / f"{left}.sks").read_bytes()).join_size(
            ss.from_bytes((tmp_path / f"{right}.sks").read_bytes()))
        assert [value, low, high] == [round(x) for x in (want.value, want.low, want.high)]  # the core's, printed
        assert method == want.method
        inside += low <= _exact_join(tables[left], tables[right]) <= high
        got = [tuple(round(x, 2) for x in c) for c in coverage(*(ss.from_bytes((tmp_path / f"{n}.sks").read_bytes())
                                                                  for n in (left, right)))]
        shares = re.findall(r"(\S+)\.sks ([\d.e-]+)%(?: \(([\d.e-]+)-([\d.e-]+)%\))?", covers)
        assert [s[0].rsplit("/", 1)[-1] for s in shares] == [left, right]
        for (_, v, lo, _hi), c, w in zip(shares, got, _share(tables[left], tables[right])):
            assert abs(float(v) / 100 - c[0]) <= 0.01 and (not lo or abs(float(lo) / 100 - c[1]) <= 0.01)
            inside_share += (c[1] - 0.01 <= w <= c[2] + 0.01)
    assert inside >= 20, rows  # 95% intervals: all 21 hold (visits x regions sits inside its sure bounds)
    assert inside_share >= 40, rows  # every share's interval holds the exact share, but for one or two
    # the exact ranking's top three are the estimated top three
    exact_rank = sorted(((_exact_join(tables[a], tables[b]), a, b) for a, b, *_ in rows), reverse=True)
    assert {(a, b) for _, a, b in exact_rank[:3]} == {(r[0], r[1]) for r in rows[:3]}
    # the foreign key is covered: every order's customer is in the dimension
    fk = next(r for r in rows if {r[0], r[1]} == {"customers", "orders"})
    assert re.search(r"orders\.sks 100%", fk[6]), fk


def test_top_limits_the_lines_and_incompatible_pairs_are_named(tmp_path, capsys):
    paths = _write(tmp_path, lambda: ss.JoinSample.for_bytes(4096, seed=9))
    other = tmp_path / "other_seed.sks"
    other.write_bytes(ss.JoinSample.for_bytes(4096, seed=8).update(np.arange(100)).to_bytes())
    assert main(["pairs", *paths.values(), str(other), "--top", "4"]) == 0
    out = capsys.readouterr().out
    assert len(_parse(out, {**paths, "other": str(other)})) == 4
    assert "7 pairs not estimated" in out and "seed differs" in out


def test_pairs_of_sketches_print_no_key_shares_in_counter_mode(tmp_path, capsys):
    paths = _write(tmp_path, lambda: ss.SkimmedSketch.for_bytes(8192, seed=9))
    assert main(["pairs", *paths.values(), "--top", "0"]) == 0
    rows = _parse(capsys.readouterr().out, paths)
    assert len(rows) == 21
    tables = _tables()
    inside = sum(r[3] <= _exact_join(tables[r[0]], tables[r[1]]) <= r[4] for r in rows)
    assert inside >= 20, rows
    exact = {n for n, p in paths.items() if ss.from_bytes(open(p, "rb").read()).exact_mode}
    assert exact == {"regions", "currencies"}
    for r in rows:  # key shares only where both sketches are in exact mode (counter mode keeps no keys)
        assert (r[6] != "-") == ({r[0], r[1]} <= exact), r
    small = next(r for r in rows if {r[0], r[1]} == exact)
    assert small[2] == 20 * 40 * 10 and re.search(r"regions\.sks 40%, .*currencies\.sks 67%|currencies\.sks 67%, "
                                                  r".*regions\.sks 40%", small[6]), small


@pytest.mark.parametrize("args, message", [
    (["--top", "-1"], "--top must be >= 0"),
    (["--confidence", "1.5"], "--confidence must be in (0, 1)"),
])
def test_bad_arguments_name_the_flag(tmp_path, capsys, args, message):
    paths = _write(tmp_path, lambda: ss.JoinSample.for_bytes(4096, seed=9))
    assert main(["pairs", *list(paths.values())[:2], *args]) == 2
    assert message in capsys.readouterr().err


def test_one_file_or_a_file_that_is_no_summary_is_refused(tmp_path, capsys):
    paths = _write(tmp_path, lambda: ss.JoinSample.for_bytes(4096, seed=9))
    one = next(iter(paths.values()))
    assert main(["pairs", one, one]) == 2
    assert "at least two distinct summary files" in capsys.readouterr().err
    junk = tmp_path / "junk.sks"
    junk.write_bytes(b"not a summary")
    assert main(["pairs", one, str(junk)]) == 2
    assert "junk.sks" in capsys.readouterr().err


def test_coverage_counts_the_shared_keys_unbiasedly():
    """shared_keys over 60 seeds: the mean within 3 standard errors of the exact count."""
    tables = _tables()
    exact = len(np.intersect1d(np.unique(tables["orders"]), np.unique(tables["visits"])))
    got = []
    for seed in range(60):
        a = ss.JoinSample.for_bytes(2048, seed=seed).update(tables["orders"])
        b = ss.JoinSample.for_bytes(2048, seed=seed).update(tables["visits"])
        got.append(shared_keys(a, b).value)
    got = np.array(got)
    se = got.std(ddof=1) / np.sqrt(len(got))
    assert abs(got.mean() - exact) <= 3 * se, (got.mean(), exact, se)
    a = ss.JoinSample.for_bytes(4096, seed=1).update(tables["regions"])
    assert coverage(a, a) == ((1.0, 1.0, 1.0), (1.0, 1.0, 1.0))  # complete: exact
