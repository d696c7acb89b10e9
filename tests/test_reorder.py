"""`spmcheck check --reorder-window N` (checker/sequence.py `reordered`): lines up to N out of
sequence order are checked in order; a line more than N late is TRC021. The C++ run with per-thread
chunks unmerged is in tests/test_cpp.py."""
from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

from spmcheck.checker import check_cli
from spmcheck.checker.convert import v1_to_v2
from spmcheck.checker.replay import check_stream
from spmcheck.checker.sequence import reordered

ROOT = Path(__file__).resolve().parent.parent


def _lines(texts: list[str]) -> list[tuple[int, str, None, bool]]:
    return [(i + 1, t, None, True) for i, t in enumerate(texts)]


def _displaced(n: int, d: int, rng: random.Random) -> list[int]:
    """A permutation of 1..n in which every number is at most d places from its own (sorting by
    a key jittered by less than d/2 moves no element further than d: the key order and the
    number order agree on any two numbers more than d apart)."""
    key = {s: s + rng.uniform(0, d / 2) for s in range(1, n + 1)}
    return sorted(key, key=key.__getitem__)


def displacement(seqs: list[int]) -> int:
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    return max((abs(pos - i) for pos, i in enumerate(order)), default=0)


@pytest.mark.parametrize("seed", range(6))
def test_displacement_within_the_window_is_restored(seed: int) -> None:
    rng = random.Random(seed)
    d = rng.choice([1, 3, 17, 64])
    perm = _displaced(400, d, rng)
    w = displacement(perm)
    assert w <= d
    out = list(reordered(iter(_lines(["hdr", *[f"{s} x" for s in perm], "# c"])), w))
    assert out[0][1] == "hdr" and all(e[2] is None for e in out)
    seqs = [int(t.split()[0]) for _, t, _, _ in out if t[0].isdigit()]
    assert seqs == list(range(1, 401))
    # the line numbers are the file's own (a citation points into the file as written)
    assert sorted(n for n, t, _, _ in out if t[0].isdigit()) == list(range(2, 402))


def test_a_line_later_than_the_window_is_trc021_and_a_repeat_is_trc011() -> None:
    texts = [f"{s} x" for s in (2, 3, 4, 5, 1, 6, 6)]
    out = list(reordered(iter(_lines(texts)), 2))
    errs = [(n, e.code) for n, _, e, _ in out if e is not None]
    assert errs == [(5, "TRC021"), (7, "TRC011")], errs
    assert [t.split()[0] for _, t, e, _ in out if e is None] == ["2", "3", "4", "5", "6"]
    assert list(reordered(iter(_lines(texts)), 0)) == _lines(texts)  # 0: unchanged


def test_a_missing_number_is_still_a_gap() -> None:
    out = list(reordered(iter(_lines([f"{s} x" for s in (1, 2, 4, 5, 6)])), 3))
    assert [t.split()[0] for _, t, _, _ in out] == ["1", "2", "4", "5", "6"]


def _shuffled_corpus_trace(name: str, d: int, seed: int, v2: bool = False) -> tuple[str, str]:
    """A corpus trace (or its v2 rewrite) with its events moved at most `d` places (header and
    comments kept)."""
    text = (ROOT / "traces" / name).read_text()
    if v2:
        text = v1_to_v2(text, seed=seed)
    lines = text.splitlines()
    body = [ln for ln in lines if ln[:1].isdigit()]
    rest = [ln for ln in lines if not ln[:1].isdigit()]
    perm = _displaced(len(body), d, random.Random(seed))
    by_seq = {int(ln.split()[0]): ln for ln in body}
    first = min(by_seq)
    return text, "\n".join(rest + [by_seq[s + first - 1] for s in perm]) + "\n"


@pytest.mark.parametrize("v2", [False, True])
@pytest.mark.parametrize("name", ["final-a2-u2-l2.log", "stale-lookup-a2-u2-l2.log"])
def test_both_formats_get_the_same_verdict_within_the_window(name: str, v2: bool) -> None:
    orig, moved = _shuffled_corpus_trace(name, 12, 3, v2)
    want = check_stream(io.BytesIO(orig.encode()), name)
    got = check_stream(io.BytesIO(moved.encode()), name, reorder_window=12)
    assert (got.verdict, got.prop, got.code, got.events) == (want.verdict, want.prop, want.code, want.events)
    plain = check_stream(io.BytesIO(moved.encode()), name)
    assert plain.verdict.value == "malformed" and plain.code in ("TRC011", "TRC012"), plain


def test_cli_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, moved = _shuffled_corpus_trace("final-a2-u2-l2.log", 5, 1)
    f = tmp_path / "m.log"
    f.write_text(moved)
    assert check_cli.main([str(f)]) == 2
    assert check_cli.main(["--reorder-window", "5", str(f)]) == 0
    assert check_cli.main(["--reorder-window", "-1", str(f)]) == 2
    assert "--reorder-window must be >= 0" in capsys.readouterr().err
