"""Parametric verdicts per (variant, property): `run()` is the API behind `spmcheck prove --parametric`.

proved    every query is valid: initiation (Init ⊨ Inv), consecution per action
          (Inv ∧ step ⊨ Inv'), and the property check (Inv ⊨ P; for P5 also the static lock
          graph and the deadlock queries) — for ANY number of agents and threads.
violated  some query fails (its CTI is recorded) and a concrete path from Init that violates the
          property replays on spec.model now (spec.parametric.confirm).
unknown   anything else: a solver `unknown` (with its reason), or a CTI with no confirmed path.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import lru_cache
from typing import Callable, Sequence

import z3

from ..expected import expected
from ..programs import definition
from ..properties import PROPERTIES
from ..variants import VARIANTS, Variant
from .transitions import PAction, Params, build_actions
from .encoding import LOCK_REL, READING, ROLE_SORT, SYMBOLS, Agent, Lookup, PState, Updater, at, enabled, exists, forall, fresh_state
from .invariants import Conjunct, lock_table
from .queries import (Bounded, action_params, conj, failing_conjuncts, fragment_of, init, limit, run_check, safety_net,
                      state_cti, step_cti)
from .results import Cti
from .results import Check, ParamResult, any_size_text, conclude, render_text

PROPS = ("serializer-mirrors-refcount", "creation-consistent", "lock-discipline", "lock-order-acyclic")
CLASS_ORDER = ("queues", "refcount", "serializer_map", "serializer")


def _note(m: z3.ModelRef, s: PState, inv: Sequence[Conjunct]) -> str:
    from .queries import ModelStructure

    st = ModelStructure(m, {})
    with st.universe():
        bad = failing_conjuncts(m, s, inv)
    return ("breaks: " + "; ".join(bad)) if bad else ""


def initiation(inv: Sequence[Conjunct], timeout: float) -> Check:
    def build(b: Bounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
        S = fresh_state("pre")
        return ([init(S), z3.Not(_inv(S, inv, b))] + (b.closure(S) if b else []),
                lambda m: state_cti(m, S, _note(m, S, inv)))

    return run_check("initiation", build, fragment_of(inv), timeout)


@lru_cache(maxsize=None)
def _reads(c: Conjunct) -> frozenset[str]:
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


def consecution(pa: PAction, inv: Sequence[Conjunct], timeout: float) -> Check:
    """Inv ∧ step ⊨ Inv'. Conjuncts that read no symbol the step writes are equal in both states
    and so follow from the hypothesis: they are left out of the goal (frame reasoning). The goal
    is the pre-state terms with the written symbols replaced by the step's updates (one
    substitution in Z3, instead of building every goal conjunct again through z3py)."""
    def build(b: Bounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
        if b is None:
            S, p, f, writes, subst = _step(pa)
        else:
            S = fresh_state("pre")
            p = action_params(pa.name, pa, b)
            f = pa.fire(S, p)
            writes = {k for k in S.fns if f.post.fns[k] is not S.fns[k]}
        goal = [c for c in inv if _reads(c) & writes]
        if b is None:  # the hypothesis is already on the shared solver
            post = substituted(_hypothesis(tuple(goal)), subst)
            parts = [f.enabled(), *f.side, z3.Not(post)]
        else:
            parts = [conj(S, inv), f.enabled(), *f.side, z3.Not(conj(f.post, goal)), *b.closure(S)]
        return parts, lambda m: step_cti(m, S, f.post, pa, p, _note(m, f.post, inv))

    t0 = time.monotonic()
    if _goals_refuted(pa, inv, timeout):
        return Check(f"consecution:{pa.name}", "valid", fragment_of(inv), time.monotonic() - t0)
    # some goal conjunct is not refuted (or Z3 gave up on it): the whole query, asked as before,
    # decides, and its bounded search gives the CTI
    return run_check(f"consecution:{pa.name}", build, fragment_of(inv), timeout, base=_hyp_solver(tuple(inv)))


def _goals_refuted(pa: PAction, inv: Sequence[Conjunct], timeout: float) -> bool:
    """Inv ∧ step ⊨ g' for every goal conjunct g, asked one conjunct at a time on the shared
    solver (Inv ∧ step in a push/pop scope): Z3 refutes the small negated goals faster than
    their disjunction, and all of them refuted is the consecution query refuted. False as soon
    as one is not `unsat`; the caller then asks the whole query."""
    deadline = safety_net(timeout)  # each goal is bounded by resource units; this is the net
    S, p, f, writes, subst = _step(pa)
    goal = [c for c in inv if _reads(c) & writes]
    sol = _hyp_solver(tuple(inv))
    sol.push()
    try:
        sol.add(f.enabled(), *f.side)
        for g in goal:
            if deadline <= time.monotonic():
                return False
            limit(sol, timeout, deadline)
            sol.push()
            sol.add(z3.Not(substituted(_term(g), subst)))
            r = sol.check()
            sol.pop()
            if r != z3.unsat:
                return False
    finally:
        sol.pop()
    return True


@lru_cache(maxsize=64)
def _hyp_solver(inv: tuple[Conjunct, ...]) -> z3.Solver:
    """One solver holding Inv over the shared pre-state: every consecution query of this
    invariant (one per action) is asked on it in a push/pop scope (queries.solve_on)."""
    s = z3.Solver()
    s.add(_hypothesis(inv))
    return s


_STEPS: dict[int, tuple] = {}


def _step(pa: PAction) -> tuple:
    """(pre-state, parameters, firing, written symbols, their replacements) of `pa` over the
    shared pre-state, built once per action: every layer set's consecution query of the action
    reads the same step."""
    got = _STEPS.get(id(pa))
    if got is None or got[0] is not pa:
        S = fresh_state("pre")
        p = action_params(pa.name, pa, None)
        f = pa.fire(S, p)
        writes = {k for k in S.fns if f.post.fns[k] is not S.fns[k]}
        got = _STEPS[id(pa)] = (pa, S, p, f, writes, post_subst(S, f.post, writes))
    return got[1:]


def after(term: z3.BoolRef, pre: PState, post: PState, writes: set[str],
          symbols: dict[str, tuple[tuple[z3.SortRef, ...], z3.SortRef]] = SYMBOLS) -> z3.BoolRef:
    """`term` over `pre` read in `post`: each written symbol replaced by its updated value (a
    declared function by the post-state's term over its arguments, a constant by its value).
    `symbols`: the state's signature (the core's by default; the lifecycle passes its own)."""
    return substituted(term, post_subst(pre, post, writes, symbols))


Subst = tuple[list[tuple[z3.FuncDeclRef, z3.ExprRef]], list[tuple[z3.ExprRef, z3.ExprRef]]]


def post_subst(pre: PState, post: PState, writes: set[str],
               symbols: dict[str, tuple[tuple[z3.SortRef, ...], z3.SortRef]] = SYMBOLS) -> Subst:
    """The replacements `after` makes, built once per step: a post-state symbol is a Python
    closure that builds its update term on every call, which is dear for the lifecycle's
    updates, so a step's goals share one list."""
    funs, consts = [], []
    for k in sorted(writes):
        dom, _ = symbols[k]
        if dom:
            decl = pre.fns[k]
            args = [z3.Var(i, d) for i, d in enumerate(dom)]
            funs.append((decl, post.fns[k](*args)))
        else:
            consts.append((pre.fns[k](), post.fns[k]()))
    return funs, consts


def substituted(term: z3.BoolRef, subst: Subst) -> z3.BoolRef:
    """`term` with every replacement of `subst` made at once: one `substitute_funs` call, a
    constant by its 0-ary declaration. Two calls in a row would be wrong when a function's
    update reads a written constant (the lifecycle's `ser_en` reads `rc_all`): the second call
    would replace the constant inside the first call's updates, reading it after the step."""
    funs, consts = subst
    pairs = funs + [(c.decl(), v) for c, v in consts]
    return z3.substitute_funs(term, *pairs) if pairs else term  # type: ignore[return-value]


def _inv(s: PState, inv: Sequence[Conjunct], b: Bounded | None) -> z3.BoolRef:
    """Inv over `s` (the pre-state): the shared cached term, or expanded over a bounded universe."""
    return _hypothesis(tuple(inv)) if b is None else conj(s, inv)


@lru_cache(maxsize=None)
def _term(c: Conjunct) -> z3.BoolRef:
    """A conjunct over the pre-state `fresh_state("pre")`, built once (same names, same Z3
    symbols, so every query of every layer set shares it). Never inside a finite universe: the
    quantifiers would be expanded over its elements."""
    from . import encoding

    assert not encoding._FINITE, "a cached term built inside a finite universe"
    return c.fn(fresh_state("pre"))


@lru_cache(maxsize=256)
def _hypothesis(inv: tuple[Conjunct, ...]) -> z3.BoolRef:
    """Inv over the pre-state, built once per invariant."""
    return z3.And(*[_term(c) for c in inv])


# ---- property checks --------------------------------------------------------------------------
def p1_holds(s: PState) -> z3.BoolRef:
    """P1 as the definition states it (spec.programs `_claims`), read any size."""
    from ..variants import VARIANTS

    claim = definition(VARIANTS["final"]).claims["serializer-mirrors-refcount"]
    assert claim.expr is not None
    return READING.closed(claim.expr, s.fns)


def implies_p1(inv: Sequence[Conjunct], timeout: float) -> Check:
    def build(b: Bounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
        S = fresh_state("pre")
        return ([_inv(S, inv, b), z3.Not(p1_holds(S))] + (b.closure(S) if b else []),
                lambda m: state_cti(m, S, "a state of the invariant where P1 fails"))

    return run_check("implies-property", build, fragment_of(inv), timeout)


def implies_p2(v: Variant, acts: list[PAction], inv: Sequence[Conjunct], timeout: float) -> Check:
    return implies_step(acts, inv, "creation-consistent", timeout)


def implies_step(acts: list[PAction], inv: Sequence[Conjunct], claim: str, timeout: float) -> Check:
    """Inv ∧ (some step listing a condition for `claim` is enabled) ⇒ that condition: one query
    per such action, the conditions read off the definition (its `checks`)."""
    watched = [pa for pa in acts if any(c == claim for c, _, _ in pa.defn.checks)]
    checks = []
    for pa in watched:
        def build(b: Bounded | None, pa: PAction = pa) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
            S = fresh_state("pre")
            p = action_params("imp", pa, b)
            f = pa.fire(S, p)
            return ([_inv(S, inv, b), f.enabled(), *f.side, z3.Not(f.claim(claim))] + (b.closure(S) if b else []),
                    lambda m: step_cti(m, S, f.post, pa, p, f"a step {pa.name} the invariant allows that breaks {claim}"))

        checks.append(run_check("implies-property", build, fragment_of(inv), timeout))
    assert checks, f"no step lists a condition for {claim}"
    failing = [c for c in checks if c.status != "valid"]
    return failing[0] if failing else checks[0]


def lock_graph(acts: list[PAction]) -> Check:
    """Static half of P5: edges held-class -> acquired-class from the lock table (the table is a
    conjunct of the invariant, so its consecution queries prove it for every size)."""
    t0 = time.monotonic()
    cls_of = {rel: cls for (role, cls, mode), rel in LOCK_REL.items()}
    edges: set[tuple[str, str]] = set()
    for role in ("updater", "lookup"):
        table = lock_table(acts, role)
        for pa in acts:
            if pa.role == role and pa.lock is not None and pa.lock[2] and pa.at in table:
                for rel in table[pa.at]:
                    edges.add((cls_of[rel], pa.lock[0]))
    cycle = _cycle(edges)
    txt = ", ".join(f"{a}->{b}" for a, b in sorted(edges))
    if cycle:
        return Check("lock-graph", "fails", "none (dataflow over the transitions)", time.monotonic() - t0,
                     None, "cycle " + " -> ".join(cycle) + f" in {{{txt}}}")
    return Check("lock-graph", "valid", "none (dataflow over the transitions)", time.monotonic() - t0,
                 None, f"acyclic: {{{txt}}}")


def _cycle(edges: set[tuple[str, str]]) -> list[str]:
    nodes = sorted({x for e in edges for x in e})
    for start in nodes:
        stack = [(start, [start])]
        while stack:
            n, path = stack.pop()
            for a, b in sorted(edges):
                if a != n:
                    continue
                if b == start:
                    return path + [b]
                if b not in path:
                    stack.append((b, path + [b]))
    return []


def _holds_class(s: PState, role: str, t: z3.ExprRef, cls: str) -> z3.BoolRef:
    out = []
    for mode in ("shared", "exclusive"):
        rel = LOCK_REL.get((role, cls, mode))
        if rel is None:
            continue
        out.append(exists(Agent, lambda x, rel=rel: s.fns[rel](t, x)) if cls == "serializer" else s.fns[rel](t))
    return z3.Or(*out) if out else z3.BoolVal(False)


_MOVES: dict[tuple[int, str], tuple] = {}


def _can_move(s: PState, acts: list[PAction], role: str, t: z3.ExprRef, shared: bool = False) -> z3.BoolRef:
    """Some step of t is enabled (the transitions are the definition's, so enabledness is exact).
    `shared`: `s` is the shared pre-state `fresh_state("pre")` outside a finite universe; the term
    is then built once per action list and role, for a placeholder thread, and each use
    substitutes its own thread (the deadlock queries ask it for every thread of 7 queries)."""
    if not shared:
        return _can_move_of(s, acts, role, t)
    key = (id(acts), role)
    got = _MOVES.get(key)
    if got is None or got[0] is not acts:
        t0 = z3.Const(f"mv!{role}", ROLE_SORT[role])
        got = _MOVES[key] = (acts, t0, _can_move_of(s, acts, role, t0))
    return z3.substitute(got[2], (got[1], t))


def _can_move_of(s: PState, acts: list[PAction], role: str, t: z3.ExprRef) -> z3.BoolRef:
    opts = []
    for pa in acts:
        if pa.role != role or pa.kind in ("update_begin", "lookup_begin"):
            continue
        a = z3.Const(f"a!mv!{pa.name}", Agent)
        f = pa.fire(s, Params(t, a, tag="mv"))
        g = f.enabled()
        opts.append(z3.Exists([a], g) if pa.per == "agent" else g)
    return z3.Or(*opts)


def deadlock_checks(acts: list[PAction], inv: Sequence[Conjunct], timeout: float) -> list[Check]:
    """Dynamic half of P5: no state of the invariant has a thread inside an operation while every
    such thread is blocked. One query per case of the highest lock class held (and by which role),
    so each refutation only needs that one holder's steps (a finite instantiation)."""
    frag = fragment_of(inv, "∀∃")

    def builder(top: tuple[int, str] | None) -> Callable[[Bounded | None], tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]]:
        def build(b: Bounded | None) -> tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]:
            S = fresh_state("pre")
            parts = [_inv(S, inv, b),
                     z3.Or(exists(Updater, lambda u: z3.Not(at(S, "updater", u, "idle"))),
                           exists(Lookup, lambda l: z3.Not(at(S, "lookup", l, "idle")))),
                     forall(Updater, lambda u: z3.Implies(z3.Not(at(S, "updater", u, "idle")),
                                                          z3.Not(_can_move(S, acts, "updater", u, b is None)))),
                     forall(Lookup, lambda l: z3.Implies(z3.Not(at(S, "lookup", l, "idle")),
                                                         z3.Not(_can_move(S, acts, "lookup", l, b is None))))]
            above = CLASS_ORDER if top is None else CLASS_ORDER[top[0] + 1:]
            for c in above:
                parts.append(z3.And(forall(Updater, lambda u, c=c: z3.Not(_holds_class(S, "updater", u, c))),
                                    forall(Lookup, lambda l, c=c: z3.Not(_holds_class(S, "lookup", l, c)))))
            first: dict[z3.SortRef, z3.ExprRef] = {}
            note = "every inside thread blocked, no lock held"
            if top is not None:
                cls, role = CLASS_ORDER[top[0]], top[1]
                sort = Updater if role == "updater" else Lookup
                t0 = b.elems[sort][0] if b else z3.Const(f"top@{cls}.{role}", sort)
                parts.append(_holds_class(S, role, t0, cls))
                first = {sort: t0}
                note = f"every inside thread blocked; highest lock class held: {cls} (by a {role})"
            parts += b.closure(S) if b else []
            return parts, lambda m: state_cti(m, S, note, first)
        return build

    out = [run_check("deadlock:no-lock-held", builder(None), frag, timeout)]
    for i, cls in enumerate(CLASS_ORDER):
        for role in ("updater", "lookup"):
            if any((role, cls, m) in LOCK_REL for m in ("shared", "exclusive")):
                out.append(run_check(f"deadlock:top-{cls}-{role}", builder((i, role)), frag, timeout))
    return out


# ---- one (variant, property) ----------------------------------------------------------------
@lru_cache(maxsize=None)
def _consecution_cached(variant: str, layers: tuple[str, ...], action: str, timeout: float) -> Check:
    v = VARIANTS[variant]
    inv = [c for c in _conjuncts(variant) if c.layer in layers]
    pa = next(x for x in build_actions(v) if x.name == action)
    return consecution(pa, inv, timeout)


@lru_cache(maxsize=None)
def _conjuncts(variant: str) -> tuple[Conjunct, ...]:
    from .invariants import conjuncts

    return tuple(conjuncts(VARIANTS[variant]))


def prove_pair(variant: str, prop: str, timeout: float = 20.0,
               progress: Callable[[str], None] | None = None) -> ParamResult:
    from .confirm import confirm
    from .invariants import LAYERS
    from .witnesses import witnesses

    t0 = time.monotonic()
    v = VARIANTS[variant]
    acts = build_actions(v)
    try:
        inv = [c for c in _conjuncts(variant) if c.layer in LAYERS[prop]]
    except ValueError as e:
        # the invariant's shape (lock ownership follows the pc) does not fit this definition:
        # nothing is proved, and that is a verdict of its own, never a crash
        return ParamResult(variant, prop, "unknown", expected(variant, prop)[0], (), (),
                           time.monotonic() - t0, f"no invariant can be stated: {e}", 0)
    # a failed initiation or consecution already shows the invariant is not inductive: the
    # remaining consecution queries are skipped (that keeps the known-bad variants cheap)
    checks: list[Check] = [initiation(inv, timeout)]
    for pa in acts:
        if checks[-1].status == "fails":
            break
        if progress:
            progress(f"{variant} / {prop}: consecution {pa.name}")
        checks.append(_consecution_cached(variant, LAYERS[prop], pa.name, timeout))
    if checks[-1].status != "fails":
        if prop == "serializer-mirrors-refcount":
            checks.append(implies_p1(inv, timeout))
        elif prop == "creation-consistent":
            checks.append(implies_p2(v, acts, inv, timeout))
        elif prop == "lock-discipline":
            checks.append(implies_step(acts, inv, prop, timeout))
        else:
            checks.append(lock_graph(acts))
            checks += deadlock_checks(acts, inv, timeout)
    exp = expected(variant, prop)[0]
    verdict, reason, ws, cex = conclude(checks, lambda: witnesses(variant, prop), lambda: confirm(variant, prop))
    return ParamResult(variant, prop, verdict, exp, tuple(checks), ws, time.monotonic() - t0, reason,
                       len(inv), cex)


def lifecycle_pairs(variants: Sequence[str] | None = None, properties: Sequence[str] | None = None
                    ) -> list[tuple[str, str]]:
    """The lifecycle (variant, property) pairs `run(lifecycle=...)` proves by default (every core
    lifecycle property of `final`, and each known-bad variant against the property its bug
    breaks), filtered by names (None: no filter). Unknown names raise ValueError."""
    from ..lifecycle.properties import LPROPERTIES
    from ..lifecycle.variants import LVARIANTS
    from .lifecycle_prove import default_pairs

    for name in variants or ():
        if name not in LVARIANTS:
            raise ValueError(f"unknown lifecycle variant={name!r}; known: {', '.join(LVARIANTS)}")
    for p in properties or ():
        if p not in LPROPERTIES:
            raise ValueError(f"unknown lifecycle property={p!r}; known: {', '.join(LPROPERTIES)}")
    return [(v, p) for v, p in default_pairs()
            if (variants is None or v in variants) and (properties is None or p in properties)]


def _task(model: str, variant: str, props: tuple[str, ...], timeout: float) -> list[ParamResult]:
    """One worker's unit: every requested property of one (model, variant). The properties of a
    variant share its steps, conjunct terms and consecution queries (module caches), so one
    process builds them once instead of each worker building its own copy."""
    if model == "lifecycle":
        from .lifecycle_prove import prove_pair as prove_lifecycle

        return [prove_lifecycle(variant, p, timeout) for p in props]
    return [prove_pair(variant, p, timeout) for p in props]


def run(variants: list[str] | None = None, properties: list[str] | None = None, timeout: float = 20.0,
        progress: Callable[[str], None] | None = None, jobs: int | None = None,
        lifecycle: bool | Sequence[tuple[str, str]] = False, core: bool = True) -> list[ParamResult]:
    """Parametric verdicts: core variants x properties (default: all), in that order, then the
    lifecycle pairs (`lifecycle=True`: `lifecycle_pairs()`; or an explicit list of pairs; False:
    none, the default, so existing callers get the core table only; `core=False` skips the core
    pairs). Results carry
    `model` = "core" | "lifecycle".

    `timeout` bounds each Z3 query. Pairs run in `jobs` processes (default: up to 2, one per
    core): each pair is independent and Z3 holds the GIL during a check.
    """
    vs = list(variants) if variants else list(VARIANTS)
    ps = list(properties) if properties else list(PROPS)
    for name in vs:
        if name not in VARIANTS:
            raise ValueError(f"unknown variant={name!r}; known: {', '.join(VARIANTS)}")
    for p in ps:
        if p not in PROPS:
            raise ValueError(f"unknown property={p!r}; known: {', '.join(PROPS)}")
    lpairs = lifecycle_pairs() if lifecycle is True else list(lifecycle or [])
    if lpairs:
        from ..lifecycle.properties import LPROPERTIES
        from ..lifecycle.variants import LVARIANTS

        for v, p in lpairs:
            if v not in LVARIANTS or p not in LPROPERTIES:
                raise ValueError(f"unknown lifecycle pair ({v!r}, {p!r})")
    tasks = ([("core", v, p) for v in vs for p in ps] if core else []) + [("lifecycle", v, p) for v, p in lpairs]
    n = jobs if jobs is not None else min(2, os.cpu_count() or 1, len(tasks))
    if n <= 1:
        out1 = []
        for m, v, p in tasks:
            r = prove_pair(v, p, timeout, progress) if m == "core" else _lifecycle_prove(v, p, timeout, progress)
            out1.append(r)
        return out1
    ctx = multiprocessing.get_context("fork")
    out: dict[tuple[str, str, str], ParamResult] = {}
    groups: dict[tuple[str, str], list[str]] = {}
    for m, v, p in _by_cost(tasks):
        groups.setdefault((m, v), []).append(p)
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        futs = {pool.submit(_task, m, v, tuple(ps), timeout): (m, v)
                for (m, v), ps in sorted(groups.items(), key=lambda kv: -_group_cost(*kv[0], kv[1]))}
        for fut in as_completed(futs):
            for r in fut.result():
                out[(futs[fut][0], r.variant, r.property)] = r
                if progress:
                    progress(f"{r.model} {r.variant} / {r.property}: {r.verdict} ({r.seconds:.2f}s)")
    return [out[k] for k in tasks]


def _group_cost(model: str, variant: str, props: list[str]) -> float:
    """A rough CPU cost of one (model, variant) group for longest-first scheduling (seconds on
    this project's machine; only the order matters): a proof costs a full consecution sweep,
    a known-bad pair usually stops at its first failing query."""
    if model == "core":
        return (1.0 if VARIANTS[variant].known_bad else 2.5) * len(props) / len(PROPS)
    return 4.0 if variant == "final" else 0.3 * len(props)


def _lifecycle_prove(variant: str, prop: str, timeout: float, progress: Callable[[str], None] | None) -> ParamResult:
    from .lifecycle_prove import prove_pair as prove_lifecycle

    return prove_lifecycle(variant, prop, timeout, progress)


def _by_cost(tasks: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Longest first, so two workers finish together (P1 proofs have the most conjuncts; the
    lifecycle P3/P9 invariants are the largest of the lifecycle)."""
    rank = {"serializer-mirrors-refcount": 0, "lock-order-acyclic": 1, "creation-consistent": 2, "lock-discipline": 3}
    lrank = {"refcount-balanced": 0, "no-unserialized-dispatch-while-enabled": 0}

    def key(t: tuple[str, str, str]) -> tuple[int, int, int]:
        m, v, p = t
        if m == "core":
            return (VARIANTS[v].known_bad, 0, rank[p])
        return (0 if v == "final" else 1, 1, lrank.get(p, 1))

    return sorted(tasks, key=key)


def any_size_status(variant: str, property: str, model: str | None = None) -> str:
    """"any size" if (variant, property) is proved parametrically, else "bounded only: <reason>".

    `model` is "core" or "lifecycle"; None means core for the core's property names (two names,
    serializer-mirrors-refcount and lock-order-acyclic, exist in both: pass model="lifecycle"
    for the lifecycle's) and lifecycle for lifecycle-only names."""
    from ..lifecycle.properties import LPROPERTIES
    from .status import LSTATUS, STATUS

    if model is None:
        model = "core" if property in PROPERTIES else "lifecycle"
    if model == "lifecycle":
        if property not in LPROPERTIES:
            raise ValueError(f"unknown lifecycle property={property!r}")
        got = LSTATUS.get((variant, property))
        return got if got is not None else "bounded only: no parametric proof recorded"
    if model != "core":
        raise ValueError(f"unknown model={model!r}; known: core, lifecycle")
    if property not in PROPERTIES:
        raise ValueError(f"unknown property={property!r}")
    got = STATUS.get((variant, property))
    if got is None:
        return "bounded only: no parametric proof recorded"
    return got


__all__ = ["run", "lifecycle_pairs", "render_text", "any_size_status", "any_size_text", "prove_pair", "ParamResult"]
