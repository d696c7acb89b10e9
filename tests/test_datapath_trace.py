"""`spmcheck check` on data-path logs: every exported counterexample is rejected at its last line
for its own claim (earlier breaks of other claims named), progress is judged at the end of the
log by exhaustive search from the last state, and the judgement matches the prover's graph."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from spmcheck.checker import openworld_check
from spmcheck.checker.cli import main
from spmcheck.checker.replay import check_stream
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.spec.datapath.certs import DatapathCerts
from spmcheck.spec.datapath.explore import can_reach
from spmcheck.spec.datapath.variants import DVARIANTS, LATEST
from spmcheck.spec.datapath.verdicts import PROGRESS, ROWS, SCOPES, DVerdict, Runner


@pytest.fixture(scope="module")
def exported() -> dict[tuple[str, str], DVerdict]:
    """Every violated (row, revision) with the trace `spmcheck cex` writes (certificates: no search)."""
    r = Runner(certs=DatapathCerts("use"))
    out = {}
    for row in ROWS:
        for v in DVARIANTS:
            d = r.verdict(row, DVARIANTS[v])
            if d.verdict == "violated":
                out[(row.id, v)] = d
    return out


def _check(text: str) -> FileResult:
    return check_stream(io.BytesIO(text.encode()), "t.log")


def test_every_counterexample_is_rejected_at_its_last_line_for_its_claim(
        exported: dict[tuple[str, str], DVerdict]) -> None:
    kinds = {row.kind for row, _ in ((next(r for r in ROWS if r.id == k[0]), 0) for k in exported)}
    assert kinds == {"invariant", "step", "progress"}
    wrong = []
    for (row, v), d in exported.items():
        res = _check(d.trace())
        last = len(d.events) + 1  # the header is line 1
        got = (res.verdict, res.prop, res.line, res.code)
        want = (Verdict.VIOLATED, d.prop, last, "CHK104" if d.kind == "progress" else "CHK101")
        if got != want:
            wrong.append((row, v, got, res.message))
            continue
        # a run that breaks another claim first names it, at its line, with the line as evidence
        named = re.findall(r"; on the way: (.*?)(?:; also broken at line|; no thread can move|$)", res.message)
        if d.clean:
            if named:
                wrong.append((row, v, "clean, yet names", named))
        else:
            earlier = [int(n) for n in re.findall(r" at line (\d+)", named[0])] if named else []
            if not earlier or max(earlier) >= last or [e.line for e in res.evidence[:-1]] != earlier:
                wrong.append((row, v, "not clean, earlier breaks not shown", res.message))
    assert not wrong, wrong
    assert sum(not d.clean for d in exported.values()) >= 1  # the 'on the way' branch is exercised


def test_both_engines_give_the_same_verdicts(exported: dict[tuple[str, str], DVerdict]) -> None:
    picks = [k for k in exported if k[1] in ("ee045e38", LATEST)]
    for k in picks:
        got = {}
        for eng in ("interp", "compiled"):
            old = openworld_check.ENGINE
            openworld_check.ENGINE = eng
            try:
                got[eng] = _check(exported[k].trace())
            finally:
                openworld_check.ENGINE = old
        assert got["interp"] == got["compiled"], k


def test_progress_at_the_end_agrees_with_the_graph(exported: dict[tuple[str, str], DVerdict]) -> None:
    """Each prefix of a progress counterexample is rejected for its claim exactly when, in the
    prover's full state graph, no goal state is reachable from the prefix's last state (backward
    reachability, an independent computation), and only for the case that is then pending."""
    r = Runner(certs=DatapathCerts("use"))
    for key in (("H4", LATEST), ("H2-fence", "ee045e38")):
        d = exported[key]
        row = next(x for x in ROWS if x.id == key[0])
        v, sc = DVARIANTS[key[1]], SCOPES[row.scope]
        e = r.exploration(v, row.scope)
        assert e.graph is not None
        g, ex = e.graph, e.explorer
        where = {t: i for i, t in enumerate(g.states)}
        cases = [(ex.closed(p, "p"), can_reach(g, [bool(ex.closed(q, "q")(t)) for t in g.states]))
                 for _, p, q in PROGRESS[row.prop].cases(e.dp, sc)]
        lines = d.trace().splitlines()
        seen = set()
        for k in range(1, len(lines)):
            text = "\n".join(lines[: k + 1]) + "\n"
            res = _check(text)
            path = ex.replay(_describes(ex, d, k))
            assert path is not None
            last = path[-1][0]
            stuck = any(p(last) and not ok[where[last]] for p, ok in cases)
            seen.add(stuck)
            assert (res.prop == row.prop and res.code == "CHK104") == stuck, (key, k, res.message)
        assert seen == {True, False}, key


def _describes(ex: object, d: DVerdict, k: int) -> list[str]:
    """The first k events of `d` as the explorer's instance descriptions (static keys only)."""
    from spmcheck.spec.datapath.explore import Explorer

    assert isinstance(ex, Explorer)
    out = []
    for e in d.events[:k]:
        inst = next(i for i in ex.instances if i.thread == e.thread and i.act.kind == e.kind
                    and all(dict(e.keys).get(s) == v for s, v in i.static.items()))
        out.append(inst.describe())
    return out


def test_log_with_other_thread_names_is_judged_the_same(exported: dict[tuple[str, str], DVerdict]) -> None:
    """OS thread ids instead of the reading's names (and queue keys naming them): the same
    verdict, claim and line."""
    for key in (("H4", LATEST), ("H6", LATEST), ("H2b", "ee045e38")):
        text = exported[key].trace()
        ref = _check(text)
        names = {"q0": "7301", "q1": "7302", "c0": "7400", "c1": "7401", "g0": "7500"}
        renamed = re.sub(r"\b(q[01]|c[01]|g0)\b", lambda m: names[m.group(1)], text.split("\n", 1)[1])
        got = _check(text.split("\n", 1)[0] + "\n" + renamed)
        assert (got.verdict, got.prop, got.line, got.code) == (ref.verdict, ref.prop, ref.line, ref.code), key


def test_header_property_that_the_log_does_not_break(exported: dict[tuple[str, str], DVerdict]) -> None:
    d = exported[("H1", LATEST)]
    head, rest = d.trace().split("\n", 1)
    res = _check(head.replace(f"property={d.prop}", "property=no-dangling-queue") + "\n" + rest)
    assert (res.verdict, res.prop) == (Verdict.VIOLATED, d.prop)  # the first break stands
    assert "property=no-dangling-queue is not broken" in res.note
    res = _check(head.replace(f"property={d.prop}", "property=no-such-claim") + "\n" + rest)
    assert res.prop == d.prop and "not a claim of the data path" in res.note


def test_a_drain_that_can_still_end_is_not_rejected() -> None:
    """The H4 row's non-vacuity witness (a stop inside its drain), as a log: the drain is pending
    at the end but can still end, so the log is inconclusive (a thread inside an operation), not
    rejected; the same log with the revision's stuck continuation is."""
    from spmcheck.spec.datapath.verdicts import _events

    r = Runner(certs=DatapathCerts("use"))
    row = next(x for x in ROWS if x.id == "H4")
    v = DVARIANTS["2a7bb457+gate-fix"]
    ex = r.explorer(v, row.scope)
    went = r.certs.entry(v.name, row.scope, r.digest(v, row.scope), "witnesses", row.id)
    assert went is not None
    path = ex.replay(list(went["path"]))
    assert path is not None
    head = f"spmcheck-trace v2 model=datapath variant={v.name} scope={row.scope} property=drain-ends"
    text = "\n".join([head] + [e.line() for e in _events(ex, path[:-1])]) + "\n"
    res = _check(text)
    assert (res.verdict, res.code) == (Verdict.INCONCLUSIVE, "CHK301"), res.message
    assert "property=drain-ends is not broken" in res.note


def test_cex_and_check_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "h6.log"
    assert main(["cex", "--model", "datapath", "--variant", LATEST, "--property", "H6", "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "the last" in said and "names too" in said
    n = len(out.read_text().splitlines())
    assert main(["check", str(out)]) == 1
    text = capsys.readouterr().out
    assert f"violated one-hw-spm-session-per-agent at line {n}" in text and "on the way: " in text
