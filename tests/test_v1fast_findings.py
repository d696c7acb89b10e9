"""The compiled v1 run (checker/v1fast.py) notes the definition's findings itself, as the v1 replay
does: a state finding at each line where it starts to fail, the replay's message, count and cap
(MAX_FINDINGS), field for field the same FileResult, and the compiled run takes the file.

The logs are built here from the U2 counterexample (`spmcheck cex --variant final --property
stored-flag-mirrors-refcount`: two updaters store the flag in the opposite order), finished so
both calls end, and repeated: the finding fails, holds again (inside the next call's window, or
after a call that stores the right value), and fails again; busy stretches are random walks of
final. The monitor's flag is also checked against the whole claim after every step: on U2 (read
whole), on P1 taken as a finding (a `forall`: read at the agents a step reaches while it holds,
whole while it fails) and on a made-up `forall` that per-agent steps also mend.
"""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from spmcheck.checker import v1fast
from spmcheck.checker.openworld_check import parse_fast, reading
from spmcheck.checker.parse import parse_line
from spmcheck.checker.replay import MAX_FINDINGS, _Run, check_stream
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.checker.simulate import trace_text
from spmcheck.spec.lang.owcompile import Program
from spmcheck.spec.lang.syntax import Claim, Expr, Forall, Protocol, Var
from spmcheck.spec.model import Model
from spmcheck.spec.programs import FLAG, P1
from spmcheck.spec.vocabulary import Config

from .test_v1fast import engine

ROOT = Path(__file__).resolve().parent.parent
HEADER = "spmcheck-trace v1 variant=final agents=2 updaters=2 lookups=2 end_marker=1"


def _call(u: str, enable: int, old: int, new: int) -> list[str]:
    """update_serialization() of updater u for holder c0 on every agent, up to its store."""
    return [f"{u} update_begin agents=all enable={enable} holder=c0",
            f"{u} lock_acquire lock=queues mode=shared",
            f"{u} lock_acquire lock=refcount mode=exclusive",
            f"{u} lock_acquire lock=serializer_map mode=shared",
            f"{u} lock_release lock=serializer_map mode=shared",
            f"{u} refcount_change agent=all old={old} new={new}",
            f"{u} lock_acquire lock=serializer_map mode=exclusive",
            f"{u} lock_release lock=serializer_map mode=exclusive",
            f"{u} lock_release lock=refcount mode=exclusive"]


def _done(u: str) -> list[str]:
    return [f"{u} lock_release lock=queues mode=shared", f"{u} update_end"]


def stale() -> list[str]:
    """The counterexample: u0 enables, u1 disables and stores 0, u0 stores 1 (stale); both end."""
    return (_call("u0", 1, 0, 1) + _call("u1", 0, 1, 0) + ["u1 flag_store value=0", "u0 flag_store value=1"]
            + _done("u0") + _done("u1"))


def mend() -> list[str]:
    """Two calls one after the other, each storing the right value: the finding holds again."""
    return (_call("u1", 1, 0, 1) + ["u1 flag_store value=1"] + _done("u1")
            + _call("u1", 0, 1, 0) + ["u1 flag_store value=0"] + _done("u1"))


def walk(seed: int, steps: int = 300) -> list[str]:
    """A random walk of final at the header's size (no reference held at its start)."""
    text = trace_text("final", Config(2, 2, 2), steps, seed)
    return [ln.split(" ", 1)[1] for ln in text.splitlines()[1:]
            if ln[:1].isdigit() and not ln.endswith(" run_end")]


def log(*parts: list[str]) -> bytes:
    body = [e for p in parts for e in p]
    lines = [HEADER] + [f"{i} {e}" for i, e in enumerate(body, 1)] + [f"{len(body) + 1} run_end"]
    return ("\n".join(lines) + "\n").encode()


def both(data: bytes, findings_fail: bool = False) -> tuple[FileResult, bool]:
    """The v1 replay's result, after checking the default's is the same; and whether the
    compiled run gave it."""
    with engine("interp"):
        ref = check_stream(io.BytesIO(data), "t.log", findings_fail=findings_fail)
    before = v1fast.ACCEPTED
    with engine("compiled"):
        got = check_stream(io.BytesIO(data), "t.log", findings_fail=findings_fail)
    assert got == ref, (ref, got)
    return ref, v1fast.ACCEPTED > before


CASES = {  # the log's parts (built when the case runs), the lines the finding is noted at
    "once": (lambda: [stale()], [21]),
    "fails-holds-fails": (lambda: [stale(), mend(), stale(), stale(), mend()], [21, 69, 93]),
    "busy-after": (lambda: [stale(), stale(), mend(), stale(), walk(1)], [21, 45, 93]),
    "failing-through-a-walk": (lambda: [stale(), mend(), walk(2, 600)], [21]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_findings_noted_on_the_compiled_path(case: str) -> None:
    parts, lines = CASES[case]
    ref, fast = both(log(*parts()))
    assert ref.verdict is Verdict.ACCEPTED and fast, ref
    # the monitor is what notes them: a compiled run that ignored it would accept with none
    assert [f.line for f in ref.findings] == lines and ref.more_findings == 0, ref.findings
    assert {f.prop for f in ref.findings} == {FLAG}
    assert all(f.message.startswith("fails: U2: ") for f in ref.findings)


def test_more_than_max_findings() -> None:
    n = MAX_FINDINGS + 5
    ref, fast = both(log(*[stale()] * n))
    assert ref.verdict is Verdict.ACCEPTED and fast, ref
    assert len(ref.findings) == MAX_FINDINGS and ref.more_findings == n - MAX_FINDINGS


def test_findings_fail_is_the_v1_replays_verdict() -> None:
    ref, fast = both(log(stale(), mend()), findings_fail=True)
    assert ref.verdict is Verdict.VIOLATED and ref.prop == FLAG and ref.line == 21 and not fast, ref
    ref, fast = both(log(mend(), walk(3)), findings_fail=True)  # no finding: the compiled run's
    assert ref.verdict is Verdict.ACCEPTED and not ref.findings and fast, ref


def test_a_compiled_run_without_the_monitors_would_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant: the definition compiled without its findings accepts with none noted, and the
    comparison above catches it."""
    data = log(stale(), mend(), stale())
    with engine("interp"):
        ref = check_stream(io.BytesIO(data), "t.log")
    monkeypatch.setattr(v1fast, "program", lambda variant: Program(reading("core", variant).proto))
    before = v1fast.ACCEPTED
    with engine("compiled"):
        got = check_stream(io.BytesIO(data), "t.log")
    assert v1fast.ACCEPTED > before and got.findings == () and ref.findings and got != ref


def _flags(lines: list[str], proto: Protocol, name: str) -> int:
    """Replay a log step by step on the compiled run of `proto` with its finding `name`
    monitored; after every step the failing flag is the negation of the whole claim's value, and
    each time it starts to fail is noted. The number of times the flag changed."""
    h = next(r for r in map(parse_line, lines) if r is not None and not hasattr(r, "thread"))
    cfg = Config(h.agents, h.updaters, h.lookups)
    eng = v1fast.V1Run(Program(proto, findings=True), h.variant, Model(cfg, h.variant), _Run("t"), (name,), False)
    changes = 0
    prev = False
    for n, text in enumerate(lines, 1):
        ev = parse_fast(text) if text[:1].isdigit() and not text.endswith(" run_end") else None
        if ev is None:
            continue
        eng.step(ev, n, text, "t")
        now = eng.failing[name]
        assert now is (not eng.claims[name]()), (n, text)
        changes += now != prev
        prev = now
    assert eng.run.n_findings == (changes + 1) // 2
    return changes


def _as_finding(variant: str, name: str, expr: Expr | None = None) -> Protocol:
    """The definition with its claim `name` (or `expr` under that name) as its only finding."""
    proto = reading("core", variant).proto
    cl = proto.claims[name] if expr is None else Claim(name, "invariant", "", "", expr)
    return dataclasses.replace(proto, claims={k: c for k, c in proto.claims.items() if k != name},
                               findings={name: cl})


def test_u2_flag_is_the_whole_claim_after_every_step() -> None:
    """U2 is read whole (no top-level forall) after every step that can change it."""
    lines = log(stale(), mend(), stale(), walk(4)).decode().splitlines()
    assert _flags(lines, reading("core", "final").proto, FLAG) >= 3


@pytest.mark.parametrize("name", ["apply-after-unlock-a2-u2-l2.log", "global-flag-a2-u2-l2.log"])
def test_p1_as_a_finding_flag_is_the_whole_claim_after_every_step(name: str) -> None:
    """P1 is `forall a`: the monitor re-reads it at the agents a step reaches while it holds, and
    whole while it fails; these runs break it and mend it several times."""
    lines = (ROOT / "traces" / name).read_text().splitlines()
    h = parse_line(next(ln for ln in lines if ln.startswith("spmcheck-trace")))
    assert _flags(lines, _as_finding(h.variant, P1), P1) >= 4


def test_a_finding_mended_at_the_elements_a_step_reaches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `forall a` finding that per-agent steps break and mend (no agent counted: the definition's
    own rc, a claim made up for this test, so the message is its name): the flag is cleared by the
    step that mends it, where P1 only ever mends on steps that reach it whole."""
    monkeypatch.setattr(v1fast, "finding_note", lambda pname, at_step: pname)
    proto = reading("core", "final").proto
    rc = next(f for f in proto.funcs if f.name == "rc")
    a = Var("a", next(s for s in proto.sorts if s.name == "agent"))
    proto = _as_finding("final", "uncounted", Forall(a, rc(a) == 0))
    for seed in range(2):
        assert _flags(trace_text("final", Config(2, 2, 2), 300, seed).splitlines(), proto, "uncounted") >= 3
