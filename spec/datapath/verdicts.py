"""A verdict per hazard x revision: exhaustive exploration of the data path at a fixed scope.

Each row names one claim of the definition (invariant or step claim) or one progress claim, the
scope it is decided in (sizes and scenario switches: the smallest run that can show the hazard,
so each exploration takes seconds), and a non-vacuity witness (a state predicate the run must
reach, else a proof would be empty). A verdict is

* `violated`: the shortest counterexample (BFS), its length in steps;
* `proved`: no reachable state or step breaks the claim, at that scope, with the number of states
  explored (a proof at a fixed size, nothing more);
* `unknown`: the exploration hit its state limit.

Expected verdicts come from the audit's reading of each revision (`EXPECT`); a verdict that
differs is reported, never hidden.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from ..backend import CONCRETE
from ..lang.syntax import And, Exists, Expr, Lit, Not, Or, Var
from .explore import Explorer, Graph, first_state, stuck
from .protocol import (BARS, DRAIN, DRAIN_LABELS, GATE, GRANT, H1, H2, H2B, H3, H5, H6, LATE, P3, PKTS, DP,
                       Scope, definition, dp_of)
from .variants import DVARIANTS, DVariant

K = Lit

SCOPES: dict[str, Scope] = {
    "multi": Scope(queues=1, ctxs=2),
    "single": Scope(queues=2, packets=1),
    "barrier": Scope(queues=1, packets=2, mixed=True, barrier_second=True, writes=2),
    "destroy": Scope(queues=1, packets=1, destroy=True),
    "two-queues": Scope(queues=2, packets=1, tracing=False),
    "tt": Scope(queues=1, packets=1, tracers=1),
    "no-timeouts": Scope(queues=1, packets=1, timeouts=False),
    "two-agents": Scope(agents=2, queues=1, packets=1),
}

BARRIER_CLEARS = "barrier-can-clear"
DRAIN_ENDS = "drain-ends"
FAIRNESS = ("AG(pending -> EF goal) on the whole reachable graph: a violation needs no fairness (no "
            "continuation at all reaches the goal, whatever the scheduler does); a proof says the goal "
            "stays reachable from every reachable state, so a scheduler fair to every transition enabled "
            "infinitely often (strong fairness) reaches it")


@dataclass(frozen=True)
class Progress:
    name: str
    summary: str
    source: str
    # (label, pending, goal) per element of the scope
    cases: Callable[[DP, Scope], list[tuple[str, Expr, Expr]]]


def _barrier_cases(d: DP, sc: Scope) -> list[tuple[str, Expr, Expr]]:
    return [(f"transition barrier {b} of agent {a}", d.blive(K(a), K(b)), Not(d.blive(K(a), K(b))))
            for a in range(sc.agents) for b in BARS]


def _drain_cases(d: DP, sc: Scope) -> list[tuple[str, Expr, Expr]]:
    out = []
    for i in range(sc.ctxs):
        c = K(f"c{i}")
        inside = Or(*[d.cpc(c) == lab for lab in DRAIN_LABELS])
        out.append((f"the stop of c{i}", inside, Not(inside)))
    return out


PROGRESS: dict[str, Progress] = {
    BARRIER_CLEARS: Progress(BARRIER_CLEARS, "H2/H3: from every reachable state, every incomplete "
                             "transition barrier can still clear", "audit §3 H2, H3; digest §3.1 hsa_barrier",
                             _barrier_cases),
    DRAIN_ENDS: Progress(DRAIN_ENDS, "H4: from every reachable state, a stop inside its drain "
                         "(interposition_sync, then Queue::sync per queue) can still leave it",
                         "audit §3 H4, S2(a) [queue_controller_sync@amd-vkale/5d4ce3a9]", _drain_cases),
}


@dataclass(frozen=True)
class Row:
    id: str
    prop: str
    kind: str  # invariant | step | progress
    scope: str
    witness: str
    witness_expr: Callable[[DP, Scope], Expr]
    expect: Callable[[DVariant], str]
    why: str  # where the expectation comes from
    finding: bool = False  # a reframed finding rather than a hazard


def _exists_q(d: DP, f: Callable[[Var], Expr]) -> Expr:
    q = Var("wq", d.queue)
    return Exists(q, f(q))


def _v(early: bool | None = None, two: bool | None = None, agent: bool | None = None,
       fix: bool | None = None, all_: str | None = None) -> Callable[[DVariant], str]:
    def f(v: DVariant) -> str:
        if all_:
            return all_
        bad = ((early is not None and v.early_async == early) or (two is not None and v.completion_two_arg == two)
               or (agent is not None and v.gate_per_agent == agent) or (fix is not None and v.hook_reads_gate == fix))
        return "violated" if bad else "proved"
    return f


ROWS: list[Row] = [
    Row("H1", H1, "invariant", "multi", "a batched write's packets are in flight",
        lambda d, sc: _exists_q(d, lambda q: And(d.bat(q), d.st(q, K(0)) != "none")),
        _v(fix=False), "audit H1: every stored revision caches the gate per write (ee045e38, 810df56a, head design)"),
    Row("H2", H2, "invariant", "barrier", "an intercepted write carries a barrier packet",
        lambda d, sc: _exists_q(d, lambda q: And(Not(d.raw(q)), Not(d.disp(q, K(1))), d.st(q, K(1)) != "none")),
        _v(early=True), "audit H2: async_started before the hooks leaks for non-dispatch packets"),
    Row("H2-fence", BARRIER_CLEARS, "progress", "barrier", "an incomplete transition barrier",
        lambda d, sc: Or(*[d.blive(K(a), K(b)) for a in range(sc.agents) for b in BARS]),
        _v(early=True), "audit H2: a leaked count never reaches zero"),
    Row("H2b", H2B, "step", "single", "a dispatch is put behind a transition fence",
        lambda d, sc: _exists_q(d, lambda q: Or(*[d.fb(K(k), K(b), q) for k in PKTS[:sc.packets] for b in BARS])),
        _v(early=True), "audit H2b: async_started precedes kernel_dispatch in ee045e38/03c67769/a027fa94/810df56a"),
    Row("H2b-grant", GRANT, "step", "single", "a granted dispatch completes",
        lambda d, sc: Or(*[And(d.gr(K(f"q{i}")), d.rb(K(f"q{i}"), K(0)), d.st(K(f"q{i}"), K(0)) == "done")
                           for i in range(sc.queues)]),
        _v(early=False), "audit H2b (last paragraph): the later ordering lets an uncounted completion act "
        "on the serializer under the current status"),
    Row("H3", H3, "step", "single", "a transition barrier counts a queue's sessions",
        lambda d, sc: Or(*[d.bw(K(a), K(b), K(f"q{i}")) > 0 for a in range(sc.agents) for b in BARS
                           for i in range(sc.queues)]),
        _v(two=False), "audit H3: the 1-argument completion (03c67769/ee045e38/a027fa94)"),
    Row("H3-fence", BARRIER_CLEARS, "progress", "single", "an incomplete transition barrier",
        lambda d, sc: Or(*[d.blive(K(a), K(b)) for a in range(sc.agents) for b in BARS]),
        _v(all_="violated"), "audit H3 (1-argument), H2b (self-counted fence, early async_started); "
        "later ordering: an uncounted granted dispatch keeps the grant after a disable"),
    Row("H4", DRAIN_ENDS, "progress", "multi", "a stop is inside its drain",
        lambda d, sc: Or(*[d.cpc(K(f"c{i}")) == lab for i in range(sc.ctxs) for lab in DRAIN_LABELS]),
        _v(all_="violated"), "audit H4: interposition_sync() has no timeout; H1-H3 (and the stolen grant) "
        "give it a session that never completes"),
    Row("H5", H5, "invariant", "destroy", "a queue is destroyed",
        lambda d, sc: _exists_q(d, lambda q: d.gone(q)),
        _v(all_="violated"), "audit H5: destroy_queue never tells the serializer (5d4ce3a9)"),
    Row("H6", H6, "invariant", "two-queues", "an SPM hardware session is active",
        lambda d, sc: Or(*[d.hw(K(f"q{i}"), k) for i in range(sc.queues) for k in PKTS[:sc.packets]]),
        _v(early=False), "audit H6: with the later ordering the drain does not count a hooked, unsubmitted "
        "SPM packet (early ordering: the packet is fenced behind its own session instead, H2b)"),
    Row("P3", P3, "step", "tt", "thread trace holds a reference while a dispatch is in flight",
        lambda d, sc: And(d.tton(K("tt0")), _exists_q(d, lambda q: d.st(q, K(0)) != "none")),
        _v(all_="violated"), "audit Z3: thread trace returns bSerialize=false; raw fast path (G2)"),
    Row("drain-covers", DRAIN, "step", "no-timeouts", "a stop's drain returned",
        lambda d, sc: Or(*[d.cpc(K(f"c{i}")) == "clear" for i in range(sc.ctxs)]),
        _v(early=False), "audit S3: false alarm where async_started precedes the hook, real for 2a7bb457",
        finding=True),
    Row("late-delivery", LATE, "step", "no-timeouts", "a context's stop returned",
        lambda d, sc: Or(*[d.ret(K(f"c{i}")) for i in range(sc.ctxs)]),
        _v(early=False), "audit X4: the SDK config is a shared_ptr (safe); tool-owned callback data is not",
        finding=True),
    Row("late-delivery-timeout", LATE, "step", "single", "a context's stop returned",
        lambda d, sc: Or(*[d.ret(K(f"c{i}")) for i in range(sc.ctxs)]),
        _v(all_="violated"), "audit S2, X4: Queue::sync() gives up after 5 s and the stop returns anyway",
        finding=True),
    Row("gate", GATE, "step", "two-agents", "an SPM context is active while a queue of another agent exists",
        lambda d, sc: Or(*[And(d.slot(K("c0")), d.alive(K(f"q{i}")), d.qag(K(f"q{i}")) != d.cag(K("c0")))
                           for i in range(sc.queues)]),
        _v(agent=False), "digest §5.2: the process-wide gate slows unrelated queues (a027fa94, 810df56a)",
        finding=True),
]


@dataclass(frozen=True)
class Event:
    seq: int
    thread: str
    kind: str
    keys: tuple[tuple[str, object], ...]

    def line(self) -> str:
        return " ".join([str(self.seq), self.thread, self.kind] + [f"{k}={_fmt(v)}" for k, v in self.keys])


def _fmt(v: object) -> str:
    return str(int(v)) if isinstance(v, bool) else str(v)


@dataclass(frozen=True)
class DVerdict:
    row: str
    prop: str
    kind: str
    variant: str
    scope: str
    scope_text: str
    verdict: str  # violated | proved | unknown
    expected: str
    why: str
    length: int | None  # counterexample steps
    states: int
    seconds: float
    witness: str
    witness_reached: bool
    finding: bool
    failing: str = ""  # what the last step (or the stuck state) breaks
    events: tuple[Event, ...] = ()
    waits: tuple[str, ...] = ()  # H4: calls that wait in the stuck state, with the guard they wait on
    # the exported trace breaks no other claim before its last step (else it is the shortest one)
    clean: bool = True

    @property
    def matches(self) -> bool:
        return self.verdict == self.expected

    def cell(self) -> str:
        if self.verdict == "violated":
            return f"violated ({self.length} steps)"
        if self.verdict == "proved":
            return f"proved ({self.states} states)"
        return "unknown"

    def trace(self) -> str:
        head = (f"spmcheck-trace v2 model=datapath variant={self.variant} source=spmcheck-cex "
                f"scope={self.scope} property={self.prop}")
        return "\n".join([head] + [e.line() for e in self.events]) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "property": self.prop, "kind": self.kind, "variant": self.variant,
                "scope": self.scope, "scope_text": self.scope_text, "verdict": self.verdict,
                "expected": self.expected, "matches": self.matches, "cex_length": self.length,
                "states": self.states, "seconds": round(self.seconds, 3), "witness": self.witness,
                "witness_reached": self.witness_reached, "finding": self.finding, "failing": self.failing,
                "waits": list(self.waits)}


@dataclass
class Exploration:
    explorer: Explorer
    graph: Graph | None
    seconds: float
    dp: DP


# explorations per (variant, scope, mutation, limit), kept for the process: every row of one
# scope reads one graph, and `cex` after `prove` (or a test after another) does not search again
_EXPLORED: dict[tuple[str, str, str, int], Exploration] = {}


class Runner:
    """Verdicts of rows, reading the process-wide explorations."""

    def __init__(self, max_states: int = 400_000, mutation: str = "") -> None:
        self.max_states = max_states
        self.mutation = mutation

    @property
    def cache(self) -> dict[tuple[str, str], Exploration]:
        return {(k[0], k[1]): e for k, e in _EXPLORED.items() if k[2:] == (self.mutation, self.max_states)}

    def exploration(self, v: DVariant, scope: str) -> Exploration:
        key = (v.name, scope, self.mutation, self.max_states)
        if key not in _EXPLORED:
            sc = SCOPES[scope]
            t0 = time.perf_counter()
            ex = Explorer(definition(v, sc, self.mutation), sc.sizes())
            try:
                g: Graph | None = ex.explore(self.max_states)
            except RuntimeError:
                g = None
            _EXPLORED[key] = Exploration(ex, g, time.perf_counter() - t0, dp_of(v, sc))
        return _EXPLORED[key]

    def verdict(self, row: Row, v: DVariant, clean: bool = True) -> DVerdict:
        """The row's verdict for `v`; `clean`: also search a counterexample that breaks no other
        claim before its last step (a second, pruned exploration) for the exported trace."""
        sc = SCOPES[row.scope]
        e = self.exploration(v, row.scope)
        base = dict(row=row.id, prop=row.prop, kind=row.kind, variant=v.name, scope=row.scope,
                    scope_text=sc.describe(), expected=row.expect(v), why=row.why, witness=row.witness,
                    finding=row.finding)
        if e.graph is None:
            return DVerdict(verdict="unknown", length=None, states=self.max_states, seconds=e.seconds,
                            witness_reached=False, **base)
        g, ex = e.graph, e.explorer
        reached = first_state(g, ex.closed(row.witness_expr(e.dp, sc), "witness")) is not None
        path: list[tuple[int, int]] | None = None
        failing, waits = "", ()
        if row.kind == "invariant":
            claim = ex.proto.claims[row.prop]
            assert claim.expr is not None
            bad = first_state(g, ex.closed(Not(claim.expr), row.prop))
            if bad is not None:
                path, failing = g.path_to(bad), claim.summary
        elif row.kind == "step":
            hit = g.step_fail.get(row.prop)
            if hit is not None:
                i, ii, why = hit
                path, failing = g.path_to(i) + [(i, ii)], why
        else:
            prog = PROGRESS[row.prop]
            for label, pending, goal in prog.cases(e.dp, sc):
                i, _ = stuck(g, ex.closed(pending, "pending"), ex.closed(goal, "goal"))
                if i is not None and (path is None or len(g.path_to(i)) < len(path)):
                    path, failing = g.path_to(i), f"{label} can never {'clear' if 'barrier' in label else 'end'}"
                    waits = tuple(_waits(ex, g.states[i]))
        if path is None:
            return DVerdict(verdict="proved", length=None, states=len(g.states), seconds=e.seconds,
                            witness_reached=reached, **base)
        events, is_clean = tuple(_events(ex, g, path)), row.kind == "progress"
        if clean and row.kind != "progress":
            found = self._clean(ex, row)
            if found is not None:
                events = found
            is_clean = found is not None
        return DVerdict(verdict="violated", length=len(path), states=len(g.states), seconds=e.seconds,
                        witness_reached=reached, failing=failing, events=events, waits=waits,
                        clean=is_clean, **base)

    def _clean(self, ex: Explorer, row: Row) -> tuple[Event, ...] | None:
        """A shortest counterexample that breaks no other claim before its last step (what the
        trace checker, which checks every claim, rejects at the last line), if there is one."""
        inv = tuple(ex.closed(c.expr, n) for n, c in ex.proto.claims.items()
                    if c.kind == "invariant" and c.expr is not None and n != row.prop)
        steps = frozenset(n for n, c in ex.proto.claims.items() if c.kind == "step" and n != row.prop)
        try:
            g = ex.explore(self.max_states, inv, steps)
        except RuntimeError:
            return None
        if row.kind == "invariant":
            claim = ex.proto.claims[row.prop]
            assert claim.expr is not None
            bad = first_state(g, ex.closed(Not(claim.expr), row.prop))
            path = None if bad is None else g.path_to(bad)
        else:
            hit = g.step_fail.get(row.prop)
            path = None if hit is None else g.path_to(hit[0]) + [(hit[0], hit[1])]
        return None if path is None else tuple(_events(ex, g, path))


def _events(ex: Explorer, g: Graph, path: list[tuple[int, int]]) -> list[Event]:
    out = []
    for n, (i, ii) in enumerate(path, 1):
        inst = ex.instances[ii]
        s = g.as_dict(i)
        obs = inst.comp.observed(CONCRETE, s)
        out.append(Event(n, inst.thread, inst.act.kind, tuple(inst.static.items()) + tuple(obs.items())))
    return out


def _waits(ex: Explorer, tup: tuple) -> list[str]:
    """Lifecycle calls (tool threads) and queue calls that cannot move in `tup`, with the first
    guard each waits on."""
    s = dict(zip(ex.names, tup))
    out = []
    for role in ("ctx", "queue"):
        pc = ex.proto.pc[role]
        for t in ex.u.elems(next(x for x in ex.proto.leaf_sorts() if x.name == role)):
            key = ex.index[ex.u.key(pc, [t])]
            cands = ex.bucket.get((key, tup[key]), [])
            if not cands or any(ex.instances[i].enabled(tup) for i in cands):
                continue
            for i in cands:
                inst = ex.instances[i]
                if not all(v for _, v in inst.comp.selectors(CONCRETE, s)):
                    continue
                why = next((lab for lab, v in inst.comp.guards(CONCRETE, s) if not v), "")
                if why and "writes left" not in why:  # a queue whose writes are done is not waiting
                    out.append(f"{t} {inst.act.kind}: waits until {why}")
                    break
    return out


def trace_definition(variant: str, scope: str) -> Any:
    """The definition a datapath v2 trace is read against (its header names both)."""
    return definition(DVARIANTS[variant], SCOPES[scope])


def run(variants: list[str] | None = None, rows: list[str] | None = None, mutation: str = "",
        max_states: int = 400_000) -> list[DVerdict]:
    r = Runner(max_states, mutation)
    out = []
    for row in ROWS:
        if rows and row.id not in rows:
            continue
        for name in variants or list(DVARIANTS):
            out.append(r.verdict(row, DVARIANTS[name]))
    return out
