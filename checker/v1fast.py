"""Format v1 core logs through the compiled engine: an accelerator whose only outcome is `accepted`.

A v1 core event line `<seq> <thread> <kind> key=value ...` is also a v2 line (thread names are
ids, agents are the numbers the events name), so the compiled reading of the definition
(`spec.lang.owcompile`, run by `checker/owfast.py`) can replay it at the v2 engine's speed. What
the two formats mean differs only where v1 is stricter: a fixed size (declared threads, agents and
holders), the role a thread's name gives it, one canonical spelling per event (the grammar, and
values compared as written), and the definition's findings, which v1 notes. Each of those is read
here from v1's own reading, never restated: the thread set, roles, `select` and the implied keys
come from the finite model (`spec.model.Model`), the spelling from v1's grammar (`parse_line`,
`render_event`), and the findings are compiled as monitors of the same definition
(`Program(..., findings=True)`) that never stop a step.

Findings are noted on the compiled path as the v1 replay notes them: a state finding at the line
where it starts to fail (each monitor keeps a failing flag, re-evaluated on every step that can
change it, so it is seen to fail, hold again and fail again), with the replay's message
(`replay.finding_note`), count and cap (`replay._Run.finding`), in the replay's order when two
start to fail at one line. With `--findings-fail` a finding is the verdict: the file falls back.

The compiled run is trusted only when the whole file replays and ends accepted. Anything else (a
line v1 would spell or size differently, a guard, a claim, a finding under --findings-fail, a gap,
a problem, a thread left inside an operation) raises `Fallback` (a definition with a step finding
is not compiled at all), and `checker/replay.py` checks the file again from its first byte with
the v1 replay, which gives every verdict, message, code and line as before.
A validated line text is cached per (role, label) by the compiled engine, so each distinct text
is checked against v1's reading once, not per event.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, BinaryIO

from spmcheck.spec.events import Event, Header, RunEnd, promises_end, render_event
from spmcheck.spec.lang.owcompile import NotCompilable, Program
from spmcheck.spec.model import Model
from spmcheck.spec.programs import role_of

from .openworld_check import V2Check, _Line, reading
from .owfast import FastRun, run_compiled
from .parse import TraceSyntaxError, parse_line
from .replay import NO_END_NOTE, Engine, _Run, finding_note
from .results import FileResult, Verdict


ACCEPTED = 0  # files the compiled run accepted (the tests check it takes the clean runs)


class Fallback(Exception):
    """The compiled run cannot vouch for v1's verdict here: check the file with the v1 replay."""


@lru_cache(maxsize=None)
def program(variant: str) -> Program | None:
    """The core definition compiled with its findings as noted monitors (v1 notes a finding
    where it starts to fail; a step finding is not compiled: None, every file falls back)."""
    try:
        return Program(reading("core", variant).proto, findings=True)
    except NotCompilable:
        return None


class V1Run(FastRun):
    """The compiled engine, checking each new line text and each new thread against v1's
    reading before the compiled call for it is made (and cached)."""

    def __init__(self, prog: Program, variant: str, model: Model, run: _Run, order: tuple[str, ...],
                 findings_fail: bool) -> None:
        super().__init__(prog, "core", variant, "")
        self.run = run  # the findings noted, as the v1 replay records them
        self.order = order  # the v1 replay's order of the findings (Engine.finding_state)
        self.findings_fail = findings_fail
        self.holes = {}  # no shape cache: a line with a new value is a new text, checked below
        self.model = model
        self.threads = frozenset(model.cfg.threads())
        self.peers: dict[str, tuple[str, ...]] = {}
        for t in model.cfg.threads():
            self.peers.setdefault(role_of(t), ())
            self.peers[role_of(t)] += (t,)
        # an implied key's value (`Action.implied`: the holder a thread acts for when the event
        # omits it) is the thread's own element in v1 (u0 -> c0) and the thread itself in the
        # open world; an explicit value names the same element written either way
        self.alias = {(k, v): t for (t, _), kvs in model.implied.items() for k, v in kvs}

    def step(self, ev: _Line, n: int, text: str, name: str) -> tuple[Verdict, str, str, str, int] | None:
        t = ev.thread
        if t not in self.threads:
            raise Fallback  # v1: unknown thread (TRC010)
        role = role_of(t)
        if t not in self.role and (self.ow.begins.get(ev.kind) or [None])[0] != role:
            raise Fallback  # v1 takes the role from the name, v2 from the first call
        try:
            rec = parse_line(text)
        except TraceSyntaxError:
            raise Fallback from None
        if not isinstance(rec, Event) or dict(rec.args) != ev.keys:
            raise Fallback  # v1 compares values as written (`00` is not `0` there)
        m = self.model
        for u in self.peers[role]:  # the cached call serves every thread of the role
            if not m.select(u, ev.kind, ev.keys):
                raise Fallback  # v1 has no such action (CHK204): a size, a value, a role
        keys = {k: self.alias.get((k, v), v) for k, v in ev.keys.items()}
        if self.interp is not None:
            raise Fallback
        r = super().step(_Line(ev.seq, t, ev.kind, keys, ev.cols), n, text, name)
        if r is not None or self.interp is not None:
            raise Fallback
        return None

    def delegate(self, ev: _Line, n: int, text: str, name: str) -> tuple[Verdict, str, str, str, int] | None:
        raise Fallback  # v1's replay words every failure

    def new_edges(self, n: int, name: str) -> tuple[Verdict, str, str, str, int] | None:
        if self.found:  # findings that started to fail at line n (before its lock edges, as in v1)
            if self.findings_fail:
                raise Fallback  # the first finding is the verdict: v1 words it
            started = sorted(self.found, key=self.order.index)
            self.found.clear()
            for p in started:
                self.run.finding(p, n, finding_note(p, False))
        if super().new_edges(n, name) is not None:
            raise Fallback  # a lock-order cycle
        return None


class V1Check(V2Check):
    """V2Check's line rules, with every line that does not take the compiled fast path first
    read by v1's grammar: only canonical event lines, comments, blanks and run_end go on."""

    def line(self, n: int, text: str | None, err: Any, nl: bool) -> None:
        if err is not None or text is None:
            raise Fallback
        try:
            rec = parse_line(text, last=not nl)
        except TraceSyntaxError:
            raise Fallback from None
        if rec is None:
            return  # a comment or a blank line (v1's own rule)
        if isinstance(rec, Event):
            if render_event(rec) != text:
                raise Fallback  # v1 compares values as written: only its own spelling is vouched for
        elif not (isinstance(rec, RunEnd) and text == f"{rec.seq} run_end"):
            raise Fallback
        super().line(n, text, None, nl)
        if self.problems or self.stop is not None or self.gap is not None or not self.replaying:
            raise Fallback


def check_v1(stream: BinaryIO, name: str, header: Header, n: int, ref: Engine,
             findings_fail: bool = False) -> FileResult:
    """The v1 verdict `accepted` (with the findings v1 notes) for the rest of `stream` (after the
    header on line n), or Fallback. `ref`: the v1 replay's engine for the header (its model, and
    the findings it checks: the compiled run must monitor exactly those)."""
    prog = program(header.variant)
    if prog is None or ref.finding_step:
        raise Fallback
    order = tuple(p.name for p in ref.finding_state)
    if set(order) != set(prog.proto.findings) or len(order) != len(prog.proto.findings):
        raise Fallback  # noted under names the compiled run does not monitor
    chk = V1Check(name, (n, f"spmcheck-trace v2 model=core variant={header.variant}"))
    run = _Run(name)
    eng = V1Run(prog, header.variant, ref.model, run, order, findings_fail)
    run_compiled(chk, stream, n, eng)
    if chk.problems or chk.stop is not None or chk.gap is not None or chk.events == 0:
        raise Fallback
    if not chk.ended and promises_end(header):
        raise Fallback  # v1: CHK302
    if eng.inside():
        raise Fallback  # v1 words the end state (CHK301, CHK103)
    edges = tuple(eng.graph.edges())
    note = "" if chk.ended else NO_END_NOTE
    global ACCEPTED
    ACCEPTED += 1
    return run.with_findings(FileResult(name, Verdict.ACCEPTED, chk.events, 0, 1, "", "", "", (), (), 0, "", edges,
                                        note=note))
