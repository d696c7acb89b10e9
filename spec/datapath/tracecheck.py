"""A data-path trace replayed on the finite reading of its (revision, scope), for the two things
the open-world replay (checker/openworld_check.py) cannot say on its own:

* every claim's *first* break, not only the first break of any claim: a counterexample for one
  claim may have to pass through another (no shorter run breaks it alone: the pruned search of
  spec.datapath.verdicts finds none), and the trace's header names the claim it is for
  (`property=`); claims only observe, so the run goes on past a break exactly as it would;
* progress at the end of the log: for each progress claim (spec.datapath.verdicts.PROGRESS) and
  each of its cases pending in the last state (an incomplete transition barrier, a stop inside
  its drain), whether *any* continuation still reaches the goal: an exhaustive search from the
  last state on the same reading the prover decides the claim on.

The progress check needs no fairness assumption to reject: "no continuation reaches the goal"
holds whatever the scheduler does. Its world is the header's scope closed at the end of the log:
the scope's threads with what they have left to do (writes, contexts, queue creations), no new
ones. A pending case whose goal is still reachable is not a rejection: the log may simply end
there; that it *will* be reached needs a fair scheduler (strong fairness, as the prover's proofs).

Events are matched to instances of the finite reading by kind, static keys and observed values;
threads and element-valued keys that are not the reading's own names (an OS tid) are mapped to
the first free element of the role that can take the event.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .explore import Explorer, first_state

MAX_STATES = 400_000


@dataclass(frozen=True)
class TEvent:
    line: int
    thread: str
    kind: str
    keys: dict[str, str]


@dataclass(frozen=True)
class Break:
    claim: str
    kind: str  # invariant | step | progress
    line: int
    message: str


@dataclass(frozen=True)
class Outcome:
    events: int  # events replayed on the finite reading
    stop: tuple[int, str] | None  # (line, why) where the finite reading could not follow the log
    breaks: tuple[Break, ...]  # the first break of every claim, in line order
    explored: int  # states explored from the last state (0: nothing was pending there)
    last_line: int
    unknown: str = ""  # the progress search from the last state hit its state limit
    finished: bool = False  # the last state is the end of the run: nothing enabled, every thread done


def _fmt(v: object) -> str:
    return str(int(v)) if isinstance(v, bool) else str(v)


class _Matcher:
    """Events to instances: candidates by kind, then thread, static keys, enabledness, observed
    values. `names` maps the log's thread and element names to the reading's."""

    def __init__(self, ex: Explorer) -> None:
        self.ex = ex
        self.by_kind: dict[str, list[int]] = {}
        for ii, inst in enumerate(ex.instances):
            self.by_kind.setdefault(inst.act.kind, []).append(ii)
        self.names: dict[str, str] = {}
        self.elements = {inst.thread for inst in ex.instances}

    def _static_ok(self, inst: Any, ev: TEvent) -> bool:
        for k, v in inst.static.items():
            got = ev.keys.get(k)
            if got is not None and self.names.get(got, got) != _fmt(v):
                return False
        return True

    def _observed_ok(self, inst: Any, tup: tuple, ev: TEvent) -> bool:
        for k, v in inst.observed(tup).items():
            got = ev.keys.get(k)
            if got is not None and got != _fmt(v):
                return False
        return True

    def match(self, tup: tuple, ev: TEvent) -> int | None:
        mapped = self.names.get(ev.thread)
        used = set(self.names.values())
        best: int | None = None
        for ii in self.by_kind.get(ev.kind, ()):
            inst = self.ex.instances[ii]
            if mapped is not None and inst.thread != mapped:
                continue
            if mapped is None and inst.thread in used:
                continue
            if not (self._static_ok(inst, ev) and self.ex.is_enabled(ii, tup) and self._observed_ok(inst, tup, ev)):
                continue
            if inst.thread == ev.thread:  # the log uses the reading's own names
                best = ii
                break
            if best is None:
                best = ii
        if best is not None and mapped is None:
            self.names[ev.thread] = self.ex.instances[best].thread
        return best


def check(ex: Explorer, progress: Sequence[tuple[str, str, Callable[[tuple], Any], Callable[[tuple], Any]]],
          events: Sequence[TEvent], done: Callable[[tuple], Any], max_states: int = MAX_STATES) -> Outcome:
    """Replay `events` from the initial state of `ex`; `progress`: (claim, case label, pending,
    goal) of each progress case at this scope; `done`: every thread is at the end of what the
    scope lets it do (a context stopped, a queue with no writes left and no packet queued)."""
    invs = [(n, c.summary, ex.closed(c.expr, n)) for n, c in ex.proto.claims.items()
            if c.kind == "invariant" and c.expr is not None]
    m = _Matcher(ex)
    s = tuple(int(x) if isinstance(x, bool) else x for x in ex.init())
    first: dict[str, Break] = {}
    n_done, last_line = 0, 0
    for ev in events:
        ii = m.match(s, ev)
        if ii is None:
            return Outcome(n_done, (ev.line, f"'{ev.thread} {ev.kind}' is not a step of the finite reading here"),
                           tuple(sorted(first.values(), key=lambda b: b.line)), 0, last_line)
        inst = ex.instances[ii]
        for claim, why, chk in inst.checks:
            if claim not in first and not chk(s):
                first[claim] = Break(claim, "step", ev.line, f"{claim} fails at this step: {why}")
        s = inst.succ(s)
        for name, summary, f in invs:
            if name not in first and not f(s):
                first[name] = Break(name, "invariant", ev.line, f"{name} fails: {summary}")
        n_done, last_line = n_done + 1, ev.line
    pending = [(c, lab, goal) for c, lab, pend, goal in progress if pend(s) and not goal(s)]
    explored, unknown = 0, ""
    if pending:
        try:
            g = ex.explore(max_states, start=s)
        except RuntimeError:
            g = None
            unknown = f"more than {max_states} states reachable from the last state: progress not decided"
        if g is not None:
            explored = len(g.states)
            for claim, label, goal in pending:
                if claim not in first and first_state(g, goal) is None:
                    verb = "clear" if "barrier" in label else "end"
                    first[claim] = Break(claim, "progress", last_line,
                                         f"{claim} fails: {label} can never {verb}: no continuation of the run "
                                         f"reaches that ({explored} states reachable from the last event, all "
                                         "explored)")
    finished = not ex.enabled(s) and bool(done(s))
    return Outcome(n_done, None, tuple(sorted(first.values(), key=lambda b: b.line)), explored, last_line, unknown,
                   finished)
