"""The complete-run marker (`<seq> run_end`, header `end_marker=1`; traces/FORMAT.md): what a log
without its end can and cannot establish."""
from __future__ import annotations

import io
from pathlib import Path

from spmcheck.checker.parse import grammar, parse_line
from spmcheck.checker.replay import check_stream
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.spec.events import RunEnd

FIX = Path(__file__).parent / "fixtures"
BASE = (FIX / "lookup-ok.log").read_text().splitlines()  # header, comment, 11 events (seq 1..11)
HEADER, BODY = BASE[0], BASE[1:]


def check(lines: list[str]) -> FileResult:
    return check_stream(io.BytesIO(("\n".join(lines) + "\n").encode()), "t.log")


def test_marker_line_has_one_reading() -> None:
    assert parse_line("12 run_end") == RunEnd(12)
    m = grammar().fast.regex.fullmatch("12 run_end")
    assert m is not None and m.lastgroup == "k_run_end"
    # never a thread name, for the regex and for Lark alike
    assert grammar().fast.regex.fullmatch("12 run_end update_end") is None
    assert parse_line("12 run_endx update_end").thread == "run_endx"  # type: ignore[union-attr]


def test_promised_marker_present_is_accepted_without_note() -> None:
    r = check([HEADER + " end_marker=1", *BODY, "12 run_end"])
    assert (r.verdict, r.events, r.note) == (Verdict.ACCEPTED, 11, "")


def test_promised_marker_missing_is_inconclusive() -> None:
    r = check([HEADER + " end_marker=1", *BODY])
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "CHK302") and "did not finish" in r.message


def test_v1_without_promise_keeps_the_rule_and_says_so() -> None:
    r = check([HEADER, *BODY])
    assert r.verdict is Verdict.ACCEPTED and "no run_end marker" in r.note
    assert check([HEADER, *BODY, "12 run_end"]).note == ""  # a marker is honoured without the promise


def test_lines_after_the_marker_and_gaps_before_it() -> None:
    r = check([HEADER + " end_marker=1", *BODY, "12 run_end", "13 l0 lookup_begin agent=0"])
    assert (r.verdict, r.code, r.line) == (Verdict.MALFORMED, "TRC020", len(BODY) + 3)
    r = check([HEADER + " end_marker=1", *BODY, "12 run_end", "13 run_end"])
    assert r.code == "TRC020"
    r = check([HEADER + " end_marker=1", *BODY, "14 run_end"])  # events 12, 13 lost before the end
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "TRC013")


def test_a_violation_needs_no_marker() -> None:
    bad = (FIX / "violated-bad.log").read_text().splitlines()
    r = check([bad[0] + " end_marker=1", *bad[1:]])
    assert r.verdict is Verdict.VIOLATED  # a prefix that violates violates every continuation


def test_end_state_verdicts_need_the_end() -> None:
    # a thread inside an operation at the end: CHK301 only if the log is the whole run
    cut = [HEADER + " end_marker=1", *BODY[:-1]]
    assert check(cut).code == "CHK302"
    assert check([HEADER, *BODY[:-1]]).code == "CHK301"


def test_no_events_is_never_accepted() -> None:
    assert (check([HEADER]).verdict, check([HEADER]).code) == (Verdict.INCONCLUSIVE, "CHK303")
    r = check([HEADER + " end_marker=1", "1 run_end"])
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "CHK303")
    assert check([HEADER + " end_marker=1"]).code == "CHK302"
