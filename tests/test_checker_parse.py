"""Grammar: round trip, and the grammar-derived regex accepts exactly the lines Lark accepts."""
from __future__ import annotations

import random
from functools import lru_cache

from hypothesis import given, settings, strategies as st

from spmcheck.checker.parse import TraceSyntaxError, grammar, lark_parse, parse_line
from spmcheck.checker.simulate import walk
from spmcheck.spec.events import Event, Header, render_event, render_header
from spmcheck.spec.model import Model
from spmcheck.spec.vocabulary import Config


@lru_cache(maxsize=1)  # built by the first test that reads it, not at collection in every worker
def _sample_lines() -> list[str]:
    out = [render_header(Header(1, "final", 2, 2, 2, (("seed", "7"), ("source", "recorder")))), "# c", "", "  "]
    for v, seed in (("final", 1), ("global-flag", 2), ("stale-lookup", 3)):
        out += [render_event(e) for e in walk(Model(Config(3, 2, 2), v), 150, seed)]
    return out


def _lark(line: str) -> object:
    try:
        return ("ok", lark_parse(line))
    except TraceSyntaxError:
        return ("err",)


def _fast(line: str) -> bool:
    return grammar().fast.regex.fullmatch(line) is not None


def test_round_trip() -> None:
    for line in _sample_lines():
        rec = parse_line(line)
        if isinstance(rec, Event):
            assert render_event(rec) == line and lark_parse(line) == rec
        elif isinstance(rec, Header):
            assert render_header(rec) == line and lark_parse(line) == rec


ALPHABET = " \t=_.,:-#01239aegilnorstuvx\x00é"


def _mutate(rng: random.Random, line: str) -> str:
    op = rng.randrange(5)
    i = rng.randrange(len(line) + 1)
    if op == 0:
        return line[:i]
    if op == 1:
        return line[:i] + rng.choice(ALPHABET) + line[i + 1:]
    if op == 2:
        return line[:i] + rng.choice(ALPHABET) + line[i:]
    if op == 3:
        return line[:i] + line[i + 1:]
    j = rng.randrange(len(line) + 1)
    return line[:min(i, j)] + line[max(i, j):]


def test_fast_path_equals_lark_on_fuzzed_lines() -> None:
    rng = random.Random(5)
    seen_ok = seen_err = 0
    for k in range(6000):
        line = rng.choice(_sample_lines())
        for _ in range(rng.randrange(1, 3)):
            line = _mutate(rng, line)
        lk = _lark(line)
        assert _fast(line) == (lk[0] == "ok"), repr(line)
        if lk[0] == "ok":
            seen_ok += 1
            assert parse_line(line) == lk[1]
        else:
            seen_err += 1
    assert seen_ok > 500 and seen_err > 500


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET + "abcdefghijklmnopqrstuvwxyz", max_size=60))
def test_fast_path_equals_lark_on_random_text(s: str) -> None:
    assert _fast(s) == (_lark(s)[0] == "ok")
