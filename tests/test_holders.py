"""References belong to holders (contexts), not threads (issue 11).

A tool thread may start two contexts before stopping either; each stop must name a holder that
started that same agent set. The fixed-size reading (format v1: `holder=` optional, default the
thread's own `c<i>`) and the open world (format v2: tests/test_openworld.py) read the same guard.
"""
from __future__ import annotations

from pathlib import Path

from spmcheck.checker.replay import check_path
from spmcheck.checker.results import Verdict
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.events import Event, Header, render_event, render_header, value_text
from spmcheck.spec.model import Action, Model, apply
from spmcheck.spec.setup import run_alone
from spmcheck.spec.vocabulary import Config

CFG = Config(2, 2, 1)


def _begin(m: Model, thread: str, scope: str, enable: bool, holder: str) -> Action:
    (a,) = [x for x in m.actions if x.thread == thread and x.kind == "update_begin"
            and x.params["scope_name"] == scope and bool(x.params["enable"]) == enable
            and x.params["holder"] == holder]
    return a


def _trace(tmp: Path, calls: list[tuple[str, str, bool, str]], omit_own: bool = False) -> Path:
    """A v1 trace of sequential calls (thread, scope, enable, holder) on `final`."""
    m = Model(CFG, "final")
    state = m.init_state()
    lines = [render_header(Header(1, "final", CFG.agents, CFG.updaters, CFG.lookups, (("source", "test"),)))]
    seq = 0
    for thread, scope, enable, holder in calls:
        steps, _ = run_alone(m, state, thread, _begin(m, thread, scope, enable, holder))
        for act in steps:
            seq += 1
            args = {**act.static_args(), **act.observed(CONCRETE, state)}
            if omit_own and args.get("holder") == f"c{thread[1:]}":
                del args["holder"]
            lines.append(render_event(Event(seq, thread, act.kind, tuple((k, value_text(v)) for k, v in args.items()))))
            state = apply(m, CONCRETE, state, act)
    p = tmp / "t.log"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_one_thread_starts_two_contexts_before_stopping_either(tmp_path: Path) -> None:
    p = _trace(tmp_path, [("u0", "all", True, "c0"), ("u0", "0", True, "c1"),
                          ("u0", "all", False, "c0"), ("u0", "0", False, "c1")])
    assert "holder=c1" in p.read_text()
    r = check_path(str(p))
    assert r.verdict == Verdict.ACCEPTED, r.message


def test_an_omitted_holder_is_the_threads_own(tmp_path: Path) -> None:
    p = _trace(tmp_path, [("u1", "1", True, "c1"), ("u1", "1", False, "c1")], omit_own=True)
    assert "holder=" not in p.read_text()
    r = check_path(str(p))
    assert r.verdict == Verdict.ACCEPTED, r.message


def test_a_stop_must_name_the_holder_and_the_set_its_start_named(tmp_path: Path) -> None:
    p = _trace(tmp_path, [("u0", "0", True, "c0")])
    text = p.read_text()
    n = len(text.splitlines())
    for bad, why in ((f"{n} u1 update_begin agents=0 enable=0 holder=c1", "c1 holds a reference"),
                     (f"{n} u0 update_begin agents=1 enable=0 holder=c0", "c0 stops the same agent set it started")):
        p.write_text(text + bad + "\n")
        r = check_path(str(p))
        assert r.verdict == Verdict.DIVERGED and why in r.message, (r.verdict, r.message)
