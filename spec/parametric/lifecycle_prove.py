"""Parametric verdicts for the lifecycle: `run_lifecycle()` (called from `prove.run`).

Same contract as spec.parametric.prove: `proved` = initiation, consecution for every action and
the property check are all valid for ANY number of agents, contexts, tool threads and dispatches
(and the non-vacuity witnesses are reached by concrete walks); `violated` = some query fails AND a
stored concrete counterexample replays on LifecycleModel now; anything else is `unknown`.
"""
from __future__ import annotations

import time
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import z3

from ..budget import WALL_FACTOR
from ..lifecycle.expected import expected
from ..lifecycle.properties import CORE_LPROPS
from ..lifecycle.variants import LVARIANTS, LVariant
from ..lifecycle.vocabulary import LConfig, set_text
from .encoding import Agent, PState, exists, forall
from .lifecycle_encoding import FREE, TPC, Ctx, Dispatch, Tool, d_at, exited, h_at
from .lifecycle_finite import LStructure, pretty
from .lifecycle_invariants import LConjunct, invariant, nothing
from .lifecycle_transitions import (
    D0, H0, DThread, HThread, LAction, LParams, Scenario, build_lifecycle_actions, fresh_state, init, lparams,
)
from . import queries
from .results import Check, Cti, ParamResult, conclude

LPROPS = tuple(CORE_LPROPS)
P3, P4, P4M = "no-unserialized-dispatch-while-enabled", "in-flight-completion-delivered", "map-empty-after-drain"
P6, P7, P8, P9 = "tags-disjoint", "agent-scoping", "spm-contexts-disjoint", "refcount-balanced"
GATE, P1, P5 = "unrelated-queues-batched", "serializer-mirrors-refcount", "lock-order-acyclic"
# known-bad pairs run by default: each variant's bug against the property it breaks
BAD_PAIRS: tuple[tuple[str, str], ...] = (
    ("exit-over-active", P4), ("exit-over-active", P4M), ("conflict-scan-unlocked", P8),
    ("unscoped-hooks", P7), ("positive-tags", P6), ("process-wide-batching", GATE),
    ("publish-after-unlock", P8), ("slot-cleared-first", P3),
    ("unconditional-stop-disable", P8), ("set-agents-race", P8),
    ("pr-758072b", P8), ("pr-758072b", GATE), ("pr-758072b", P6),
)
SCENARIO = Scenario()  # the core lifecycle properties' scenario: drain timeouts on (properties.scenario)
CEX_DIR = Path(__file__).resolve().parent / "cex"


def conj(s: PState, inv: Sequence[LConjunct]) -> z3.BoolRef:
    return z3.And(*[c.fn(s) for c in inv])


# functions between sorts in the vocabulary (for the fragment note): cx, da (and constants)
FUNCTION_EDGES = {("Tool", "Ctx"), ("Dispatch", "Agent")}


def fragment_of(inv: Sequence[LConjunct], extra_lia: bool = False, extra: Sequence[tuple[str, str]] = ()) -> str:
    """EPR if no integer arithmetic and the sort graph (functions + ∀∃ Skolem edges) is acyclic."""
    edges = set(FUNCTION_EDGES) | {e for c in inv for e in c.skolem} | set(extra)
    cyc = any((b, a) in edges for a, b in edges) or _cyclic(edges)
    lia = extra_lia or any(c.lia for c in inv)
    if cyc:
        return "∀∃ with a sort cycle (Ctx -> Agent -> Ctx)" + (", quantified LIA" if lia else "") + \
               " (outside the decidable fragments; solver answered)"
    if lia:
        return "quantified LIA (undecidable fragment, solver answered)"
    return "EPR"


def _cyclic(edges: set[tuple[str, str]]) -> bool:
    nodes = {x for e in edges for x in e}
    for n in nodes:
        seen, todo = set(), [n]
        while todo:
            x = todo.pop()
            for a, b in edges:
                if a == x:
                    if b == n:
                        return True
                    if b not in seen:
                        seen.add(b)
                        todo.append(b)
    return False


# ---- bounded universes for small CTIs -------------------------------------------------------------
class LBounded:
    """At most n elements per sort; quantifiers expand, terms of a sort are closed over them."""

    def __init__(self, sizes: tuple[int, int, int, int], tag: str) -> None:
        self.sizes = sizes
        a, c, t, k = sizes
        self.elems = {Agent: [z3.Const(f"a{i}#{tag}", Agent) for i in range(a)],
                      Ctx: [z3.Const(f"c{i}#{tag}", Ctx) for i in range(c)],
                      Tool: [z3.Const(f"t{i}#{tag}", Tool) for i in range(t)],
                      Dispatch: [z3.Const(f"k{i}#{tag}", Dispatch) for i in range(k)],
                      DThread: [D0], HThread: [H0]}

    def closure(self, s: PState) -> list[z3.BoolRef]:
        A, C, K = self.elems[Agent], self.elems[Ctx], self.elems[Dispatch]
        out = [z3.Or(*[s.cx(t) == c for c in C]) for t in self.elems[Tool]]
        out += [z3.Or(*[s.da(k) == a for a in A]) for k in K]
        out += [z3.Or(*[s.hk() == k for k in K])]
        return out

    def params(self, tag: str) -> LParams:
        return lparams(tag, self.elems[Tool][0], self.elems[Ctx][0], self.elems[Agent][0], self.elems[Dispatch][0])


LBuildQ = Callable[["LBounded | None"], tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]]
CTI_SIZES = [(1, 1, 1, 1), (1, 2, 1, 1), (2, 2, 1, 1), (1, 1, 2, 1), (1, 1, 1, 2), (2, 2, 2, 1), (2, 2, 1, 2),
             (1, 2, 2, 2), (2, 2, 2, 2), (3, 2, 2, 2), (2, 3, 2, 2)]


def run_check(name: str, build: LBuildQ, fragment: str, timeout: float) -> Check:
    """queries.run_check over the lifecycle's four sorts (CTIs from the smallest LBounded universe)."""
    return queries.run_check(name, build, fragment, timeout, LBounded, CTI_SIZES)  # type: ignore[arg-type]


# ---- CTI rendering (lifecycle trace format) -------------------------------------------------------
class LModelStructure(LStructure):
    """An LStructure whose elements are a Z3 model's universe (acting elements first)."""

    def __init__(self, m: z3.ModelRef, first: dict[z3.SortRef, z3.ExprRef]) -> None:
        def univ(sort: z3.SortRef) -> list[z3.ExprRef]:
            u = list(m.get_universe(sort) or [])
            if sort in first:
                f = m.eval(first[sort], model_completion=True)
                u.sort(key=lambda e: (not e.eq(f), str(e)))
            else:
                u.sort(key=str)
            return u or [m.eval(z3.Const(f"any!{sort.name()}", sort), model_completion=True)]

        self.agents, self.ctxs, self.tools, self.disps = univ(Agent), univ(Ctx), univ(Tool), univ(Dispatch)
        self.cfg = LConfig(len(self.agents), len(self.ctxs), len(self.tools), len(self.disps))
        self.elems = {Agent: self.agents, Ctx: self.ctxs, Tool: self.tools, Dispatch: self.disps,
                      DThread: [D0], HThread: [H0]}


def _header(cfg: LConfig, variant: str, note: str) -> str:
    from ..lifecycle.trace import header_for

    return header_for(cfg, variant, (("source", "spmcheck-parametric-cti"),))


def state_cti(m: z3.ModelRef, s: PState, variant: str, note: str, first: dict[z3.SortRef, z3.ExprRef] | None = None) -> Cti:
    st = LModelStructure(m, first or {})
    pre = st.read(m, s)
    cfg = st.cfg
    return Cti((cfg.agents, cfg.contexts, cfg.tools), tuple((k, pretty(k, v)) for k, v in pre.items()), "", (), note,
               size_text=f"{cfg.agents} agents, {cfg.contexts} contexts, {cfg.tools} tools, {cfg.dispatches} dispatches",
               header=_header(cfg, variant, note))


def step_event(m: z3.ModelRef, st: LStructure, pa: LAction, p: LParams) -> str:
    """`1 <thread> <kind> key=value` with the step's static keys (as spec.lifecycle.definition)."""
    thread = {"tool": "t0", "dispatch": "d0", "complete": "h0"}[pa.role]
    idx = lambda es, e: [str(m.eval(x, model_completion=True)) for x in es].index(  # noqa: E731
        str(m.eval(e, model_completion=True)))
    args: list[tuple[str, str]] = []
    if pa.per in ("ctx", "ctxset"):
        args.append(("ctx", str(idx(st.ctxs, p.c))))
    if pa.per == "ctxset":
        members = tuple(i for i, a in enumerate(st.agents) if z3.is_true(m.eval(p.setp(a), model_completion=True)))
        args.append(("agents", set_text(members)))
    if pa.per == "agent_id":
        args += [("agent", str(idx(st.agents, p.a))), ("id", str(idx(st.disps, p.k)))]
    if pa.per == "id":
        args.append(("id", str(idx(st.disps, p.k))))
    return f"1 {thread} {pa.kind}" + "".join(f" {k}={v}" for k, v in args)


def step_cti(m: z3.ModelRef, s: PState, post: PState, pa: LAction, p: LParams, variant: str, note: str) -> Cti:
    st = LModelStructure(m, {Tool: p.t, Ctx: p.c, Agent: p.a, Dispatch: p.k})
    pre, nxt = st.read(m, s), st.read(m, post)
    cfg = st.cfg
    changes = tuple((k, pretty(k, pre[k]), pretty(k, nxt[k])) for k in pre if pre[k] != nxt[k])
    return Cti((cfg.agents, cfg.contexts, cfg.tools), tuple((k, pretty(k, v)) for k, v in pre.items()),
               step_event(m, st, pa, p), changes, note,
               size_text=f"{cfg.agents} agents, {cfg.contexts} contexts, {cfg.tools} tools, {cfg.dispatches} dispatches",
               header=_header(cfg, variant, note))


def _note(m: z3.ModelRef, s: PState, inv: Sequence[LConjunct]) -> str:
    st = LModelStructure(m, {})
    with st.universe():
        bad = [c.name for c in inv if z3.is_false(m.eval(c.fn(s), model_completion=True))]
    return ("breaks: " + "; ".join(bad)) if bad else ""


# ---- the queries ------------------------------------------------------------------------------------
def initiation(variant: str, inv: Sequence[LConjunct], timeout: float) -> Check:
    def build(b: LBounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
        S = fresh_state("init")
        return ([init(S), z3.Not(conj(S, inv))] + (b.closure(S) if b else []),
                lambda m: state_cti(m, S, variant, _note(m, S, inv)))

    return run_check("initiation", build, fragment_of(inv), timeout)


@lru_cache(maxsize=None)
def _reads(c: LConjunct) -> frozenset[str]:
    """State symbols a conjunct mentions (recorded by evaluating it once)."""
    seen: set[str] = set()

    class Rec(dict):  # type: ignore[type-arg]
        def __getitem__(self, k: str) -> object:
            seen.add(k)
            return dict.__getitem__(self, k)

    st = fresh_state("reads")
    st.__dict__["fns"] = Rec(st.fns)
    c.fn(st)
    return frozenset(seen)


@lru_cache(maxsize=None)
def _term(c: LConjunct) -> z3.BoolRef:
    """A conjunct over the shared pre-state `fresh_state("pre")`, built once through z3py (same
    names, same Z3 symbols, so every query of every invariant shares it). Never inside a finite
    universe: its quantifiers would be expanded over that universe's elements."""
    from . import encoding

    assert not encoding._FINITE, "a cached term built inside a finite universe"
    return c.fn(fresh_state("pre"))


@lru_cache(maxsize=64)
def _hypothesis(inv: tuple[LConjunct, ...]) -> z3.BoolRef:
    return z3.And(*[_term(c) for c in inv])


@lru_cache(maxsize=64)
def _hyp_solver(inv: tuple[LConjunct, ...]) -> z3.Solver:
    """One solver holding Inv over the shared pre-state; each action's consecution goals are
    asked on it in nested push/pop scopes, so Z3 internalizes the hypothesis once per invariant."""
    sol = z3.Solver()
    sol.add(_hypothesis(inv))
    return sol


_STEPS: dict[int, tuple] = {}


def _step(pa: LAction) -> tuple:
    """(pre-state, parameters, firing, written symbols, their replacements for a goal) of `pa`
    over the shared pre-state, fired once per action: the consecution queries of every
    invariant read the same step."""
    from .lifecycle_transitions import SYMBOLS
    from .prove import post_subst

    got = _STEPS.get(id(pa))
    if got is None or got[0] is not pa:
        S = fresh_state("pre")
        p = lparams(pa.name)
        f = pa.fire(S, p)
        writes = {k for k in S.fns if f.post.fns[k] is not S.fns[k]}
        got = _STEPS[id(pa)] = (pa, S, p, f, writes, post_subst(S, f.post, writes, SYMBOLS))
    return got[1:]


def consecution(variant: str, pa: LAction, inv: Sequence[LConjunct], timeout: float) -> Check:
    """Inv ∧ step ⊨ Inv'; conjuncts reading nothing the step writes are left out of the goal
    (frame reasoning), and the goal is checked one conjunct at a time on one solver holding
    Inv ∧ step (push/pop): Z3 refutes the small negated goals much faster than their
    disjunction. Valid iff every conjunct is; the first failing one is searched for a CTI.
    Each goal conjunct is its cached pre-state term with the written symbols replaced by the
    step's updates (spec.parametric.prove.after), and Inv sits on a solver shared by every
    action (`_hyp_solver`); an `unknown` there is asked again on a fresh solver. As in
    queries.run_check, each goal first gets queries.PROBE_SHARE of its budget, then the bounded
    universes are searched for a CTI, and only then is it asked with the whole budget."""
    from .prove import substituted

    name = f"consecution:{pa.name}"
    frag = fragment_of(inv)
    t0 = time.monotonic()
    S, p, f, writes, subst = _step(pa)
    goal = [c for c in inv if _reads(c) & writes]
    step = [f.enabled(), *f.side]
    sol = _hyp_solver(tuple(inv))
    sol.push()
    try:
        sol.add(*step)
        deadline = queries.safety_net(timeout)  # each goal is bounded by resource units
        for g in goal:
            if deadline <= time.monotonic():
                return Check(name, "unknown", frag, time.monotonic() - t0, None, "wall-clock safety net reached")
            neg = z3.Not(substituted(_term(g), subst))

            def ask(units: float, fresh: bool) -> tuple[z3.CheckSatResult, str]:
                queries.limit(sol, units, deadline)
                sol.push()
                sol.add(neg)
                r = sol.check()
                sol.pop()
                if r != z3.unknown or not fresh:
                    return r, sol.reason_unknown() if r == z3.unknown else ""
                # asked again on a fresh solver holding the whole query
                r, again = queries.solve([_hypothesis(tuple(inv)), *step, neg], units, deadline)
                return r, again.reason_unknown() if r == z3.unknown else ""

            r, why = ask(queries.PROBE_SHARE * timeout, False)  # the fresh retry is the whole budget's
            if r == z3.unknown:
                cti = queries.bounded_model(_consecution_build(variant, pa, inv, g), timeout, LBounded,  # type: ignore[arg-type]
                                            CTI_SIZES, name, deadline)
                if cti is not None:
                    return Check(name, "fails", frag, time.monotonic() - t0, cti)
                r, why = ask(timeout, True)
            if r == z3.unknown:
                return Check(name, "unknown", frag, time.monotonic() - t0, None, f"{g.name}: {why}")
            if r == z3.sat:
                return _consecution_cti(variant, pa, inv, g, timeout, t0)
    finally:
        sol.pop()
    return Check(name, "valid", frag, time.monotonic() - t0)


def _consecution_build(variant: str, pa: LAction, inv: Sequence[LConjunct], g: LConjunct) -> LBuildQ:
    """The consecution query of goal conjunct `g` built whole (hypothesis, step, negated goal),
    over a bounded universe when given one: what the CTI search asks."""
    def build(b: LBounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
        S = fresh_state("pre")
        p = b.params(pa.name) if b else lparams(pa.name)
        f = pa.fire(S, p)
        parts = [conj(S, inv), f.enabled(), *f.side, z3.Not(g.fn(f.post))] + (b.closure(S) if b else [])
        return parts, lambda m: step_cti(m, S, f.post, pa, p, variant, _note(m, f.post, inv))

    return build


def _consecution_cti(variant: str, pa: LAction, inv: Sequence[LConjunct], g: LConjunct, timeout: float,
                     t0: float) -> Check:
    c = run_check(f"consecution:{pa.name}", _consecution_build(variant, pa, inv, g), fragment_of(inv), timeout)
    return Check(c.name, c.status, c.fragment, time.monotonic() - t0, c.cti, c.reason)


# ---- the lifecycle's claims at any size ------------------------------------------------------------
# Each property is a claim of the definition (spec/lifecycle/definition.py `_claims`), read here
# through spec.lang.symbolic: invariant claims by `Reading.closed`, step claims by the conditions
# each watched action lists (`LFired.claim`, `Post` read on the step's post-state). Two invariant
# claims count (P4: deliveries against SPM packets; P9: references held against refcounts), and a
# cardinality is not first-order: those two are read in a first-order form that the finite
# instances check against the claim (tests/test_parametric_lifecycle.py), as said at each.
@lru_cache(maxsize=None)
def _claim_expr(variant: str, name: str):  # type: ignore[no-untyped-def]
    from ..lifecycle.definition import definition
    from .lifecycle_transitions import config

    return definition(LVARIANTS[variant], config(SCENARIO)).claims[name].expr


def claim_state(variant: str, name: str, s: PState) -> z3.BoolRef:
    """The definition's invariant claim `name` over the any-size state `s`."""
    from .lifecycle_transitions import READING

    return READING.closed(_claim_expr(variant, name), s.fns)


def delivered_once(s: PState) -> z3.BoolRef:
    """P4 at any size. The claim (ks(k) <= #SPM packets, and = once exited, and every one erased)
    compares two counts, which has no first-order reading. Through the ks abstraction (ks(k) counts
    k's erased SPM packets, Protocol.abstractions; its own check is `abstraction_check`) the first
    conjunct always holds and the second is the third: what remains is the definition's
    `Lifecycle.erased` for every exited dispatch, read here off the definition."""
    from ..lifecycle.definition import language
    from .lifecycle_transitions import config, open_expr, var

    lang = language(LVARIANTS["final"], config(SCENARIO))
    k = var("k", "kernel")
    return forall(Dispatch, lambda d: z3.Implies(exited(s, d), open_expr(lang.erased(k), s, k=d)))


def balanced(s: PState) -> z3.BoolRef:
    """P9 at any size, in first-order form: the claim's rc = #contexts holding a reference is a
    count; proved instead as hd in {0,1}; at most one context holds each key; rc = 1 iff some
    context holds it, else 0; a quiet free context holds nothing. In every finite instance this
    implies the claim (the tests check that direction on every finite structure they build)."""
    def quiet(c: z3.ExprRef) -> z3.BoolRef:
        return z3.And(s.slot(c) == FREE, z3.Not(s.mk(c)),
                      forall(Tool, lambda t: z3.Not(z3.And(s.pc(t) != TPC["idle"], s.cx(t) == c))))

    return z3.And(
        forall(Ctx, lambda c: z3.And(s.hd_all(c) >= 0, s.hd_all(c) <= 1,
                                     forall(Agent, lambda a: z3.And(s.hd(c, a) >= 0, s.hd(c, a) <= 1)))),
        forall(Ctx, lambda c1: forall(Ctx, lambda c2: z3.Implies(
            z3.And(s.hd_all(c1) > 0, s.hd_all(c2) > 0), c1 == c2))),
        forall(Agent, lambda a: forall(Ctx, lambda c1: forall(Ctx, lambda c2: z3.Implies(
            z3.And(s.hd(c1, a) > 0, s.hd(c2, a) > 0), c1 == c2)))),
        s.rc_all() == z3.If(exists(Ctx, lambda c: s.hd_all(c) > 0), 1, 0),
        forall(Agent, lambda a: s.rc(a) == z3.If(exists(Ctx, lambda c: s.hd(c, a) > 0), 1, 0)),
        forall(Ctx, lambda c: z3.Implies(quiet(c), nothing(s, c))))


STATE_PROPS: dict[str, Callable[[LVariant, PState], z3.BoolRef]] = {
    P8: lambda v, s: claim_state(v.name, P8, s),
    P6: lambda v, s: claim_state(v.name, P6, s),
    P4: lambda v, s: delivered_once(s),
    P1: lambda v, s: claim_state(v.name, P1, s),
    P9: lambda v, s: balanced(s),
}


def _watch(prop: str, pa: LAction) -> bool:
    """`pa` lists a condition for the step claim `prop`."""
    return prop in pa.claims()


def step_ok(prop: str, v: LVariant, s: PState, pa: LAction, p: LParams, f: "object") -> z3.BoolRef:
    """The definition's step claim `prop` at one firing `f` of `pa` (its conditions, read by
    spec.lang.symbolic with the step's post-state for `Post`)."""
    return f.claim(prop)  # type: ignore[attr-defined,no-any-return]


def implication(variant: str, prop: str, acts: list[LAction], inv: Sequence[LConjunct], timeout: float) -> list[Check]:
    v = LVARIANTS[variant]
    if prop in STATE_PROPS:
        def build(b: LBounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
            S = fresh_state("imp")
            return ([conj(S, inv), z3.Not(STATE_PROPS[prop](v, S))] + (b.closure(S) if b else []),
                    lambda m: state_cti(m, S, variant, f"a state of the invariant where {prop} fails"))

        lia = prop in (P6, P1, P9)
        return [run_check("implies-property", build, fragment_of(inv, lia), timeout)]
    out = []
    for pa in acts:
        if not _watch(prop, pa):
            continue

        def build_s(b: LBounded | None, pa: LAction = pa) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
            S = fresh_state("imp")
            p = b.params("imp") if b else lparams(f"imp.{pa.name}")
            f = pa.fire(S, p, claims=True)
            return ([conj(S, inv), f.enabled(), *f.side, z3.Not(step_ok(prop, v, S, pa, p, f))] +
                    (b.closure(S) if b else []),
                    lambda m: step_cti(m, S, f.post, pa, p, variant, f"a step the invariant allows that breaks {prop}"))

        out.append(run_check(f"implies-property:{pa.name}", build_s, fragment_of(inv, prop == P3), timeout))
    return out


# ---- P5: static lock graph and no stuck threads ------------------------------------------------------
def lock_graph(v: LVariant, acts: list[LAction]) -> Check:
    """Static half of P5: the lock chains of every lifecycle step kind (spec.lifecycle.properties,
    size-independent: a step's nesting does not depend on how many contexts or agents exist)
    united with the core's edges from the parametric lock table of the final core (proved for
    every size by its consecution queries)."""
    from ..lifecycle.locks import lock_chains
    from ..variants import VARIANTS
    from .transitions import build_actions
    from .encoding import LOCK_REL
    from .invariants import lock_table
    from .prove import _cycle

    t0 = time.monotonic()
    edges: set[tuple[str, str]] = set()
    for pa in acts:
        for chain in lock_chains(pa.kind, v.slot_cleared_first):
            edges |= set(zip(chain, chain[1:]))
    core = build_actions(VARIANTS["final"])
    cls_of = {rel: cls for (role, cls, mode), rel in LOCK_REL.items()}
    for role in ("updater", "lookup"):
        table = lock_table(core, role)
        for pa in core:
            if pa.role == role and pa.lock is not None and pa.lock[2] and pa.at in table:
                edges |= {(cls_of[rel], pa.lock[0]) for rel in table[pa.at]}
    cycle = _cycle(edges)
    txt = ", ".join(f"{a}->{b}" for a, b in sorted(edges))
    frag = "none (step lock chains + the core's parametric lock table)"
    if cycle:
        return Check("lock-graph", "fails", frag, time.monotonic() - t0, None, "cycle " + " -> ".join(cycle))
    return Check("lock-graph", "valid", frag, time.monotonic() - t0, None, f"acyclic: {{{txt}}}")


def no_stuck(variant: str, acts: list[LAction], inv: Sequence[LConjunct], timeout: float) -> Check:
    """Dynamic half of P5 (properties.no_stuck_threads): no state of the invariant has a thread
    inside an operation while every such thread is blocked. A tool inside works on cx(t), d0 on
    the dispatch and agent it gated or a hooked dispatch, h0 on hk (the steps' selectors), so each
    thread's moves are a finite disjunction (d0's over the dispatch and agent it may write or
    submit: both quantified, a step inside may name either)."""
    def can_move(s: PState, role: str, t: z3.ExprRef | None) -> z3.BoolRef:
        opts = []
        for pa in acts:
            if pa.role != role or pa.at == "idle":
                continue
            tt = t if t is not None else z3.Const("t!mv", Tool)

            def enabled(k: z3.ExprRef, a: z3.ExprRef, pa: LAction = pa, tt: z3.ExprRef = tt) -> z3.BoolRef:
                p = LParams(tt, s.cx(tt), a, k, lambda x: z3.BoolVal(False), "mv", z3.BoolVal(True))
                return pa.fire(s, p).enabled()  # a scope's side condition never guards a step inside

            opts.append(exists(Dispatch, lambda k, en=enabled: exists(Agent, lambda a: en(k, a))) if role == "dispatch"
                        else enabled(s.hk(), z3.Const("a!mv", Agent)))
        return z3.Or(*opts) if opts else z3.BoolVal(False)

    def build(b: LBounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
        S = fresh_state("dl")
        inside_d, inside_h = z3.Not(d_at(S, "idle")), z3.Not(h_at(S, "idle"))
        parts = [conj(S, inv),
                 z3.Or(exists(Tool, lambda t: S.pc(t) != TPC["idle"]), inside_d, inside_h),
                 forall(Tool, lambda t: z3.Implies(S.pc(t) != TPC["idle"], z3.Not(can_move(S, "tool", t)))),
                 z3.Implies(inside_d, z3.Not(can_move(S, "dispatch", None))),
                 z3.Implies(inside_h, z3.Not(can_move(S, "complete", None)))]
        parts += b.closure(S) if b else []
        return parts, lambda m: state_cti(m, S, variant, "every inside thread blocked")

    return run_check("deadlock:all-inside-blocked", build, fragment_of(inv), timeout)


# ---- witnesses with a first-order form: refuted for every size -------------------------------------
def _can_move_tool(s: PState, acts: Sequence[LAction], t: z3.ExprRef) -> z3.BoolRef:
    opts = []
    for pa in acts:
        if pa.role == "tool" and pa.at != "idle":
            p = LParams(t, s.cx(t), z3.Const("a!w", Agent), z3.Const("k!w", Dispatch), lambda x: z3.BoolVal(False),
                        "w", z3.BoolVal(True))
            opts.append(pa.fire(s, p).enabled())
    return z3.Or(*opts)


WITNESS_FORMS: dict[str, Callable[[PState, Sequence[LAction]], z3.BoolRef]] = {
    # properties.W_BLOCKED: a tool inside start/stop waits for the mutex another tool holds
    "thread-waits-for-mutex": lambda s, acts: exists(Tool, lambda t: z3.And(
        z3.Or(*[s.pc(t) == TPC[x] for x in ("start_release", "slot_clear", "stop_release")]),
        exists(Tool, lambda u: z3.And(u != t, s.mo(u))))),
    # its earlier form: some thread inside an operation cannot move
    "thread-waits": lambda s, acts: z3.Or(
        exists(Tool, lambda t: z3.And(s.pc(t) != TPC["idle"], z3.Not(_can_move_tool(s, acts, t))))),
}


@lru_cache(maxsize=None)
def witness_refuted(variant: str, name: str, timeout: float = 10.0) -> str:
    """Why witness `name` is unreachable at every size (Inv_ctl ∧ W unsat), or "" if it is not
    refuted or has no first-order form here. Inv_ctl is the invariant of lock-order-acyclic,
    proved inductive for the variant by its own initiation/consecution queries."""
    form = WITNESS_FORMS.get(name)
    if form is None:
        return ""
    acts = list(_actions(variant))
    inv = list(_inv(variant, P5))
    checks = [initiation(variant, inv, timeout)] + [_consecution_cached(variant, P5, pa.name, timeout) for pa in acts]
    if any(c.status != "valid" for c in checks):
        return ""
    S = fresh_state("wit")
    r, _ = queries.solve([conj(S, inv), form(S, acts)], timeout)
    if r != z3.unsat:
        return ""
    return ("unreachable for any number of agents, contexts, tools and dispatches: the inductive "
            "invariant of lock-order-acyclic (" + "; ".join(c.name for c in inv) + ") excludes it")


# ---- the abstracted counters (Protocol.abstractions) -------------------------------------------------
ABSTRACTION_HYPOTHESIS = P4  # its invariant (the dlv layer) is what each step's local check may assume


@lru_cache(maxsize=None)
def abstraction_check(variant: str, timeout: float) -> Check:
    """Every step keeps each abstracted counter (inf, ks) equal to what it counts, so reading
    the drain guard and P4 through the counts is exact at every size. By simultaneous induction
    with the invariant of in-flight-completion-delivered (the hypothesis each local check
    assumes), which must itself be inductive: initiation and consecution are re-used from that
    pair. Each local check is first-order (`Reading.keeps_count`)."""
    from .lifecycle_transitions import READING

    t0 = time.monotonic()
    acts = list(_actions(variant))
    inv = list(_inv(variant, ABSTRACTION_HYPOTHESIS))
    name, frag = "abstraction:" + ",".join(READING.abstracted), fragment_of(inv, True)
    base = [initiation(variant, inv, timeout)] + [
        _consecution_cached(variant, ABSTRACTION_HYPOTHESIS, pa.name, timeout) for pa in acts]
    bad = next((c for c in base if c.status != "valid"), None)
    if bad is not None:
        return Check(name, bad.status, frag, time.monotonic() - t0, None,
                     f"the hypothesis (the invariant of {ABSTRACTION_HYPOTHESIS}) is not inductive: {bad.name}")
    for counter in READING.abstracted:
        for pa in acts:
            S = fresh_state("pre")  # the symbols `_hypothesis` is built over
            p = lparams(f"abs.{pa.name}")
            f = pa.fire(S, p)
            keep = pa.keeps(S, p, counter)
            if z3.is_true(keep):
                continue  # writes neither the counter nor what it counts
            r, _ = queries.solve([_hypothesis(tuple(inv)), f.enabled(), *f.side, z3.Not(keep)], timeout,
                                 t0 + WALL_FACTOR * timeout)
            if r == z3.sat:
                return Check(name, "fails", frag, time.monotonic() - t0, None,
                             f"{pa.name} changes {counter} other than what it counts")
            if r == z3.unknown:
                return Check(name, "unknown", frag, time.monotonic() - t0, None, f"{counter} at {pa.name}")
    return Check(name, "valid", frag, time.monotonic() - t0, None,
                 "each step's update of " + ", ".join(READING.abstracted) + " matches what it counts")


# ---- one (variant, property) ---------------------------------------------------------------------
@lru_cache(maxsize=None)
def _actions(variant: str) -> tuple[LAction, ...]:
    return tuple(build_lifecycle_actions(LVARIANTS[variant], SCENARIO))


@lru_cache(maxsize=None)
def _inv(variant: str, prop: str) -> tuple[LConjunct, ...]:
    return tuple(invariant(LVARIANTS[variant], prop))


def _consecution_cached(variant: str, prop: str, action: str, timeout: float) -> Check:
    """Consecution of `prop`'s invariant for one action; properties with the same invariant
    (the same layers: P3 and P9, P4 and P4m) share the queries."""
    inv = _inv(variant, prop)
    return _consecution_of(variant, inv, action, timeout)


@lru_cache(maxsize=None)
def _consecution_of(variant: str, inv: tuple[LConjunct, ...], action: str, timeout: float) -> Check:
    pa = next(x for x in _actions(variant) if x.name == action)
    return consecution(variant, pa, inv, timeout)


def prove_pair(variant: str, prop: str, timeout: float = 20.0,
               progress: Callable[[str], None] | None = None) -> ParamResult:
    from .lifecycle_witnesses import confirm, witnesses

    t0 = time.monotonic()
    v = LVARIANTS[variant]
    acts = list(_actions(variant))
    inv = list(_inv(variant, prop))
    checks: list[Check] = [initiation(variant, inv, timeout)]
    for pa in acts:
        if checks[-1].status == "fails":
            break  # not inductive already; the remaining queries would not change the verdict
        if progress:
            progress(f"lifecycle {variant} / {prop}: consecution {pa.name}")
        checks.append(_consecution_cached(variant, prop, pa.name, timeout))
    if checks[-1].status != "fails":
        if prop == P5:
            checks.append(lock_graph(v, acts))
            checks.append(no_stuck(variant, acts, inv, timeout))
        else:
            checks += implication(variant, prop, acts, inv, timeout)
    if all(c.status == "valid" for c in checks):  # a proof reads inf and ks through their counts
        checks.append(abstraction_check(variant, timeout))
    exp = expected(variant, prop)[0]
    verdict, reason, ws, cex = conclude(checks, lambda: witnesses(variant, prop), lambda: confirm(variant, prop))
    return ParamResult(variant, prop, verdict, exp, tuple(checks), ws, time.monotonic() - t0, reason, len(inv), cex,
                       model="lifecycle")


def default_pairs() -> list[tuple[str, str]]:
    return [("final", p) for p in LPROPS] + list(BAD_PAIRS)


__all__ = ["prove_pair", "default_pairs", "LPROPS", "BAD_PAIRS", "init", "STATE_PROPS", "step_ok", "balanced",
           "delivered_once", "claim_state"]
