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
from .certs import DatapathCerts, definition_hash
from . import tracecheck
from .explore import Explorer, Graph, can_reach, first_state, stuck
from .protocol import (BARS, DRAIN, DRAIN_LABELS, GATE, GRANT, H1, H2, H2B, H3, H5, H6, LATE, P3, PKTS, DP,
                       Scope, definition, dp_of)
from .tracecheck import Outcome, TEvent
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


# The any-size status of each data-path claim: every proof here is bounded (at its rows' scopes),
# and why it is not tried for any size, one line each (README "Any size vs bounded").
FIXED = ("fixed sizes: the definition writes 2 packets per write and 2 barrier slots per agent as fixed "
         "indices and at most 2 queues (the ready FIFO is not stored), so it has no unbounded reading")
ANY_SIZE: dict[str, str] = {
    H1: "first-order over queues x packets; fixed sizes; not tried",
    H2: "_active_kernels = sessions in flight is a count (not first-order); fixed sizes",
    H2B: "first-order (the fence a dispatch gets); fixed sizes; not tried",
    GRANT: "grant hand-off follows the serializer's FIFO, which the definition does not store; fixed sizes",
    H3: "first-order over barrier slots; fixed sizes; not tried",
    H5: "first-order over queues; fixed sizes; not tried",
    H6: "at most one hardware session per agent is a count (not first-order); fixed sizes",
    P3: "first-order over holders; fixed sizes; not tried",
    DRAIN: "first-order over packets in flight at the drain's return; fixed sizes; not tried",
    LATE: "first-order over deliveries after the stop returned; fixed sizes; not tried",
    GATE: "first-order over agents and queues; fixed sizes; not tried",
    BARRIER_CLEARS: "progress, AG EF (reachability, not first-order): decided on the finite state graph",
    DRAIN_ENDS: "progress, AG EF (reachability, not first-order): decided on the finite state graph",
}


@dataclass(frozen=True)
class Event:
    seq: int
    thread: str
    kind: str
    keys: tuple[tuple[str, object], ...]
    changes: tuple[tuple[str, str, str], ...] = ()  # (state variable, before, after)

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
    witness_steps: int = 0  # steps of the shortest run reaching the witness
    method: str = "breadth-first search"

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
_EXPLORED_BY_DEF: dict[tuple[str, str, str], Explorer] = {}  # (variant, scope, mutation): instances
_DIGESTS: dict[tuple[str, str, str], str] = {}
CERT_METHOD = "stored counterexample replayed (certificate)"


class Runner:
    """Verdicts of rows, reading the process-wide explorations and, in "use" mode, the stored
    certificates (spec.datapath.certs): a violated row whose certificate replays needs no search;
    a proved row is always found by exhaustive exploration."""

    def __init__(self, max_states: int = 400_000, mutation: str = "", certs: DatapathCerts | None = None) -> None:
        self.max_states = max_states
        self.mutation = mutation
        # a mutant's definition has its own hash, so certificates never apply to it by accident
        self.certs = certs or DatapathCerts("fresh")

    @property
    def cache(self) -> dict[tuple[str, str], Exploration]:
        return {(k[0], k[1]): e for k, e in _EXPLORED.items() if k[2:] == (self.mutation, self.max_states)}

    def explorer(self, v: DVariant, scope: str) -> Explorer:
        """The instances of (v, scope), without a search (what a certificate replays on)."""
        key = (v.name, scope, self.mutation)
        if key in _EXPLORED_BY_DEF:
            return _EXPLORED_BY_DEF[key]
        sc = SCOPES[scope]
        ex = _EXPLORED_BY_DEF[key] = Explorer(definition(v, sc, self.mutation), sc.sizes())
        return ex

    def exploration(self, v: DVariant, scope: str) -> Exploration:
        key = (v.name, scope, self.mutation, self.max_states)
        if key not in _EXPLORED:
            t0 = time.perf_counter()
            ex = self.explorer(v, scope)
            try:
                g: Graph | None = ex.explore(self.max_states)
            except RuntimeError:
                g = None
            _EXPLORED[key] = Exploration(ex, g, time.perf_counter() - t0, dp_of(v, SCOPES[scope]))
        return _EXPLORED[key]

    def digest(self, v: DVariant, scope: str) -> str:
        key = (v.name, scope, self.mutation)
        if key not in _DIGESTS:
            sc = SCOPES[scope]
            d = dp_of(v, sc)
            extra = [f"{r.id} witness {r.witness_expr(d, sc)!r}" for r in ROWS if r.scope == scope]
            extra += [f"{p} {lab} {pend!r} {goal!r}" for p, prog in PROGRESS.items()
                      for lab, pend, goal in prog.cases(d, sc)]
            _DIGESTS[key] = definition_hash(definition(v, sc, self.mutation), sc.sizes(), extra)
        return _DIGESTS[key]

    def _base(self, row: Row, v: DVariant) -> dict[str, Any]:
        sc = SCOPES[row.scope]
        return dict(row=row.id, prop=row.prop, kind=row.kind, variant=v.name, scope=row.scope,
                    scope_text=sc.describe(), expected=row.expect(v), why=row.why, witness=row.witness,
                    finding=row.finding)

    def verdict(self, row: Row, v: DVariant, clean: bool = True) -> DVerdict:
        """The row's verdict for `v`; `clean`: also find a counterexample that breaks no other
        claim before its last step (a second, pruned exploration, or its certificate) for the
        exported trace."""
        got = self._from_certificate(row, v, clean)
        if got is not None:
            return got
        return self._from_search(row, v, clean)

    # ---- from a search ---------------------------------------------------------------------
    def _from_search(self, row: Row, v: DVariant, clean: bool) -> DVerdict:
        sc = SCOPES[row.scope]
        e = self.exploration(v, row.scope)
        base = self._base(row, v)
        if e.graph is None:
            return DVerdict(verdict="unknown", length=None, states=self.max_states, seconds=e.seconds,
                            witness_reached=False, **base)
        g, ex = e.graph, e.explorer
        wi = first_state(g, ex.closed(row.witness_expr(e.dp, sc), "witness"))
        reached = wi is not None
        digest = self.digest(v, row.scope)
        wsteps = 0
        if wi is not None:
            wpath = g.path_to(wi)
            wsteps = len(wpath)
            self.certs.put(v.name, row.scope, digest, "witnesses", row.id,
                           {"path": [ex.instances[ii].describe() for _, ii in wpath]})
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
                    path, failing = g.path_to(i), _never(label)
                    waits = tuple(_waits(ex, g.states[i]))
        if path is None:
            return DVerdict(verdict="proved", length=None, states=len(g.states), seconds=e.seconds,
                            witness_reached=reached, witness_steps=wsteps, **base)
        steps = [(g.states[i], ii) for i, ii in path]
        events, is_clean = tuple(_events(ex, steps)), False
        entry: dict[str, Any] = {"path": [ex.instances[ii].describe() for _, ii in path]}
        if clean or self.certs.mode == "update":
            found, ok = self._export(ex, row, g, e.dp)
            # None: no such path at this definition (then the shortest one is exported)
            entry["clean"] = None if found is None else [ex.instances[ii].describe() for _, ii in found]
            if clean:
                if found is not None:
                    events = tuple(_events(ex, found))
                is_clean = ok
        self.certs.put(v.name, row.scope, digest, "violations", row.id, entry)
        return DVerdict(verdict="violated", length=len(path), states=len(g.states), seconds=e.seconds,
                        witness_reached=reached, witness_steps=wsteps, failing=failing, events=events,
                        waits=waits, clean=is_clean, **base)

    def _export(self, ex: Explorer, row: Row, g: Graph, dp: DP) -> tuple[list[tuple[tuple, int]] | None, bool]:
        """(the run `cex` exports, whether it breaks no other claim before its last step); None
        when every counterexample breaks another claim first (the shortest one is exported then,
        and the trace checker, told the claim by the header's property=, names both)."""
        found = self._clean(ex, row) if row.kind != "progress" else self._clean_progress(ex, row, g, dp)
        return found, found is not None

    def _avoid(self, ex: Explorer, row: Row) -> tuple[tuple[Callable[[tuple], Any], ...], frozenset[str]]:
        inv = tuple(ex.closed(c.expr, n) for n, c in ex.proto.claims.items()
                    if c.kind == "invariant" and c.expr is not None and n != row.prop)
        steps = frozenset(n for n, c in ex.proto.claims.items() if c.kind == "step" and n != row.prop)
        return inv, steps

    def _clean_progress(self, ex: Explorer, row: Row, g: Graph, dp: DP) -> list[tuple[tuple, int]] | None:
        """For a progress claim, a shortest run to a state from which the goal is unreachable
        (decided on the full graph `g`) that breaks no claim on the way, nor in its last state.
        The trace checker replays it and, at its end, finds that no continuation reaches the
        goal (CHK104). None: there is no such run."""
        inv, steps = self._avoid(ex, row)
        try:
            gp = ex.explore(self.max_states, inv, steps)
        except RuntimeError:
            return None
        where = {t: i for i, t in enumerate(g.states)}
        best: list[tuple[tuple, int]] | None = None
        for _, p, q in PROGRESS[row.prop].cases(dp, SCOPES[row.scope]):
            pend = ex.closed(p, "pending")
            ok = can_reach(g, [bool(x) for x in map(ex.closed(q, "goal"), g.states)])
            j = next((j for j, t in enumerate(gp.states) if pend(t) and not ok[where[t]]
                      and all(f(t) for f in inv)), None)
            if j is not None and (best is None or len(gp.path_to(j)) < len(best)):
                best = [(gp.states[i], ii) for i, ii in gp.path_to(j)]
        return best

    def _clean(self, ex: Explorer, row: Row) -> list[tuple[tuple, int]] | None:
        """A shortest counterexample that breaks no other claim before its last step (what the
        trace checker, which checks every claim, rejects at the last line), if there is one."""
        inv, steps = self._avoid(ex, row)
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
        return None if path is None else [(g.states[i], ii) for i, ii in path]

    # ---- from a certificate ----------------------------------------------------------------
    def _from_certificate(self, row: Row, v: DVariant, clean: bool) -> DVerdict | None:
        """The violated verdict a stored counterexample shows, re-executed on the concrete
        reading; None when there is none, it is stale, or it does not show the violation."""
        if self.certs.mode != "use":
            return None
        digest = self.digest(v, row.scope)
        entry = self.certs.entry(v.name, row.scope, digest, "violations", row.id)
        went = self.certs.entry(v.name, row.scope, digest, "witnesses", row.id)
        if entry is None or went is None:
            return None
        sc = SCOPES[row.scope]
        ex, dp = self.explorer(v, row.scope), dp_of(v, sc)
        t0 = time.perf_counter()
        wrun = ex.replay(list(went.get("path", [])))
        if wrun is None or not ex.closed(row.witness_expr(dp, sc), "witness")(wrun[-1][0]):
            return None
        run = ex.replay(list(entry.get("path", [])))
        if run is None or len(run) < 2:
            return None
        shown = self._shows(ex, dp, row, run)
        if shown is None:
            return None
        failing, waits = shown
        steps = run[:-1]
        events, is_clean = tuple(_events(ex, steps)), False
        if clean:
            crun = ex.replay(list(entry["clean"])) if isinstance(entry.get("clean"), list) else None
            if crun is not None and self._shows_clean(ex, dp, row, crun) and self._is_clean(ex, row, crun):
                events, is_clean = tuple(_events(ex, crun[:-1])), True
            elif "clean" in entry and entry["clean"] is None:
                is_clean = False  # the search that made the certificate found none: the shortest is shown
            else:  # no valid stored export: search for one
                g = self.exploration(v, row.scope).graph
                found, is_clean = (None, False) if g is None else self._export(ex, row, g, dp)
                if found is not None:
                    events = tuple(_events(ex, found))
        self.certs.note_used(v.name, row.scope, f"violation {row.id}")
        return DVerdict(verdict="violated", length=len(steps), states=0, seconds=time.perf_counter() - t0,
                        witness_reached=True, witness_steps=len(wrun) - 1, failing=failing, events=events,
                        waits=waits, clean=is_clean, method=CERT_METHOD, **self._base(row, v))

    def _shows(self, ex: Explorer, dp: DP, row: Row, run: list[tuple[tuple, int]]) -> tuple[str, tuple[str, ...]] | None:
        """(what fails, calls waiting) if the replayed run breaks the row's claim at its end."""
        last = run[-1][0]
        if row.kind == "invariant":
            claim = ex.proto.claims[row.prop]
            assert claim.expr is not None
            return (claim.summary, ()) if not ex.closed(claim.expr, row.prop)(last) else None
        if row.kind == "step":
            pre, ii = run[-2]
            for name, why, chk in ex.instances[ii].checks:
                if name == row.prop and not chk(pre):
                    return why, ()
            return None
        # progress: the goal is unreachable from the last state (explored from there only)
        try:
            g = ex.explore(self.max_states, start=last)
        except RuntimeError:
            return None
        for label, pending, goal in PROGRESS[row.prop].cases(dp, SCOPES[row.scope]):
            if ex.closed(pending, "pending")(last) and first_state(g, ex.closed(goal, "goal")) is None:
                return _never(label), tuple(_waits(ex, last))
        return None

    def _shows_clean(self, ex: Explorer, dp: DP, row: Row, run: list[tuple[tuple, int]]) -> bool:
        """The stored export shows the violation at its end (as `_shows`)."""
        return self._shows(ex, dp, row, run) is not None

    def _is_clean(self, ex: Explorer, row: Row, run: list[tuple[tuple, int]]) -> bool:
        """No other claim breaks before the run's last step (the explore(avoid_*) condition)."""
        inv, steps = self._avoid(ex, row)
        for n, (s, ii) in enumerate(run[:-1]):
            if n and not all(f(s) for f in inv):
                return False
            if any(name in steps and not chk(s) for name, _, chk in ex.instances[ii].checks):
                return False
        return True


def _never(label: str) -> str:
    return f"{label} can never {'clear' if 'barrier' in label else 'end'}"


def _events(ex: Explorer, steps: list[tuple[tuple, int]]) -> list[Event]:
    out = []
    for n, (tup, ii) in enumerate(steps, 1):
        inst = ex.instances[ii]
        obs = inst.observed(tup)
        after = inst.succ(tup)
        changes = tuple((name, _fmt(a), _fmt(b)) for name, a, b in zip(ex.names, tup, after) if a != b)
        out.append(Event(n, inst.thread, inst.act.kind, tuple(inst.static.items()) + tuple(obs.items()), changes))
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
        max_states: int = 400_000, certs: DatapathCerts | str | None = None, clean: bool = True) -> list[DVerdict]:
    """Verdicts of the selected rows x variants (row order, then variant order); with certs in
    "update" mode the certificate files are written at the end."""
    store = certs if isinstance(certs, DatapathCerts) else DatapathCerts(certs or "fresh")
    r = Runner(max_states, mutation, store)
    out = []
    for row in ROWS:
        if rows and row.id not in rows:
            continue
        for name in variants or list(DVARIANTS):
            out.append(r.verdict(row, DVARIANTS[name], clean))
    store.flush()
    return out


_TRACE_CASES: dict[tuple[str, str], list[tuple[str, str, Callable[[tuple], Any], Callable[[tuple], Any]]]] = {}
_TRACE_DONE: dict[tuple[str, str], Callable[[tuple], Any]] = {}


def run_done(d: DP, sc: Scope) -> Expr:
    """The end of a run at scope `sc`: every context stopped (or never started), every queue
    destroyed, never created, or with no writes left and no packet on the GPU. (The definition's
    final labels, `done` and `open`, are not `idle`: the open-world replay alone reads a finished
    run as threads stuck inside an operation.)"""
    qs = [K(f"q{i}") for i in range(sc.queues)]
    cs = [K(f"c{i}") for i in range(sc.ctxs)]
    return And(*[Or(d.qpc(q) == "gone", d.qpc(q) == "idle",
                    And(d.qpc(q) == "open", d.nw(q) == sc.writes, *[d.st(q, K(k)) == "none" for k in PKTS]))
                 for q in qs],
               *[Or(d.cpc(c) == "done", d.cpc(c) == "idle") for c in cs])


def check_trace(variant: str, scope: str, events: list[TEvent]) -> Outcome:
    """A data-path log (its header's revision and scope) replayed on the finite reading the
    verdicts come from: every claim's first break and, at the end, the progress cases that no
    continuation can reach any more (spec.datapath.tracecheck)."""
    v, sc = DVARIANTS[variant], SCOPES[scope]
    ex = Runner().explorer(v, scope)
    key = (variant, scope)
    if key not in _TRACE_CASES:
        dp = dp_of(v, sc)
        _TRACE_CASES[key] = [(name, lab, ex.closed(p, "pending"), ex.closed(q, "goal"))
                             for name, prog in PROGRESS.items() for lab, p, q in prog.cases(dp, sc)]
        _TRACE_DONE[key] = ex.closed(run_done(dp, sc), "done")
    return tracecheck.check(ex, _TRACE_CASES[key], events, _TRACE_DONE[key])
