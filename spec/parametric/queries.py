"""The Z3 queries of a parametric proof and CTI extraction from their models.

Each query is one solver call with a budget: `unsat` = the check is valid, `sat` = it fails and
the model is a finite counterexample (CTI), `unknown` = reported with Z3's reason, never as valid.
A budget of T seconds is Z3 resource units per check (`rlimit`, T * spec.budget.RLIMIT_PER_SECOND),
with the wall clock only a safety net (WALL_FACTOR * T), so a busy machine makes a proof slower,
not different -- the CTI search too: under a wall-clock deadline a failing query once came back
without its CTI on a loaded machine.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import z3

from ..budget import RLIMIT_PER_SECOND, WALL_FACTOR
from ..programs import LOOKUP_LABELS, UPDATER_LABELS
from ..vocabulary import Config
from .transitions import PAction, Params
from .encoding import LPC, UPC, Agent, Holder, Lookup, PState, Updater, enabled, finite_universe, forall, fresh_state
from .finite import Structure
from .invariants import Conjunct
from .results import Check, Cti


def init(s: PState) -> z3.BoolRef:
    """Init of spec.vocabulary.declare: nothing held, everything idle/zero/false. `ag` is left
    free (the fixed size starts it at agent 0; any agent is a superset)."""
    return z3.And(
        s.rc_all() == 0, z3.Not(s.flag()),
        forall(Agent, lambda x: z3.And(s.rc(x) == 0, z3.Not(s.ex(x)), z3.Not(s.en(x)))),
        forall(Updater, lambda u: z3.And(
            s.upc(u) == UPC["idle"], *[z3.Not(s.fns[k](u)) for k in ("uq", "uw", "usr", "usw", "enable", "all")],
            forall(Agent, lambda x: z3.And(*[z3.Not(s.fns[k](u, x)) for k in ("us", "inn", "pend", "was", "wh")])))),
        forall(Holder, lambda h: z3.And(z3.Not(s.held(h)), z3.Not(s.hall(h)),
                                        forall(Agent, lambda x: z3.Not(s.hin(h, x))))),
        forall(Lookup, lambda l: z3.And(
            s.lpc(l) == LPC["idle"], *[z3.Not(s.fns[k](l)) for k in ("lr", "lsr", "lsw", "sh")],
            forall(Agent, lambda x: z3.Not(s.ls(l, x))))),
    )


def conj(s: PState, inv: Sequence[Conjunct]) -> z3.BoolRef:
    return z3.And(*[c.fn(s) for c in inv])


def fragment_of(inv: Sequence[Conjunct], extra: str = "") -> str:
    frs = {c.fragment for c in inv} | ({extra} if extra else set())
    if any("cycle" in f for f in frs):
        return "∀∃ with a function cycle, quantified LIA (outside the decidable fragments; solver answered)"
    if any("LIA" in f for f in frs):
        return "quantified LIA (undecidable fragment, solver answered)"
    return "EPR"


def limit(s: z3.Solver, timeout: float, deadline: float | None = None) -> None:
    """Bound the next check of `s`: `timeout` seconds' worth of resource units (Z3 counts them
    from the start of each check, the same on an idle and a busy machine); the wall clock, up to
    `deadline` (default WALL_FACTOR * timeout from now), is only the safety net."""
    s.set("rlimit", max(1, int(timeout * RLIMIT_PER_SECOND)))
    wall = WALL_FACTOR * timeout if deadline is None else deadline - time.monotonic()
    s.set("timeout", max(1, int(min(wall, 2e6) * 1000)))


def safety_net(timeout: float) -> float:
    """The wall-clock deadline of a group of checks that share `timeout` (never a verdict)."""
    return time.monotonic() + WALL_FACTOR * timeout


def solve(parts: Sequence[z3.BoolRef], timeout: float, deadline: float | None = None
          ) -> tuple[z3.CheckSatResult, z3.Solver]:
    s = z3.Solver()
    limit(s, timeout, deadline)
    s.add(*parts)
    return s.check(), s


def solve_on(base: z3.Solver, parts: Sequence[z3.BoolRef], timeout: float, fresh: bool = True
             ) -> tuple[z3.CheckSatResult, str]:
    """`parts` checked on `base`, a solver already holding a hypothesis many queries share, in
    a push/pop scope: Z3 internalizes the shared hypothesis once instead of once per query. An
    `unknown` there is asked again on a fresh solver holding everything (incremental mode skips
    some preprocessing), so sharing can make a query cheaper but never changes its answer;
    `fresh=False` leaves that to the caller (a first, partial attempt). Returns the answer and,
    for `unknown`, Z3's reason."""
    limit(base, timeout)
    base.push()
    try:
        base.add(*parts)
        r = base.check()
    finally:
        base.pop()
    if r == z3.unknown and not fresh:
        return r, base.reason_unknown()
    if r == z3.unknown:
        r, s = solve([*base.assertions(), *parts], timeout)
        return r, s.reason_unknown() if r == z3.unknown else ""
    return r, ""


class Bounded:
    """A universe of at most n elements per sort: quantifiers expand over the constants, and
    every term of sort Agent (`ag(l)`, the only function into a sort) is closed over them. A
    model of a bounded query is a model of the quantified one, with at most that many elements:
    the small, readable CTI Ivy shows (peer-tools §9.1)."""

    def __init__(self, sizes: tuple[int, int, int], tag: str) -> None:
        self.sizes = sizes
        self.elems = {
            Agent: [z3.Const(f"a{i}#{tag}", Agent) for i in range(sizes[0])],
            Updater: [z3.Const(f"u{i}#{tag}", Updater) for i in range(sizes[1])],
            Lookup: [z3.Const(f"l{i}#{tag}", Lookup) for i in range(sizes[2])],
            Holder: [z3.Const(f"c{i}#{tag}", Holder) for i in range(sizes[1])],  # one per updater
        }

    def closure(self, s: PState) -> list[z3.BoolRef]:
        return [z3.Or(*[s.ag(l) == a for a in self.elems[Agent]]) for l in self.elems[Lookup]]


# Builds a query; with a Bounded universe it must use its elements for the existential
# parameters and add its closure. Returns the parts and how to render a model as a CTI.
Build = Callable[["Bounded | None"], tuple[list[z3.BoolRef], Callable[[z3.ModelRef], Cti]]]
CTI_SIZES = [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2), (2, 2, 1), (2, 1, 2), (1, 2, 2), (2, 2, 2),
             (3, 2, 2), (2, 3, 2), (2, 2, 3), (3, 3, 3)]


# The share of a query's budget the first attempt gets. A query Z3 cannot decide quickly may
# still have a model with a few elements per sort that quantifier instantiation does not build
# (a lifecycle mutant's failing consecution or implication query used its whole budget and came
# back `unknown`, while the bounded universe (1,1,2,1) had a model in 0.01 s); so after the first
# share the bounded universes are searched, and only then is the query asked again with its whole
# budget. An unsatisfiable query has no bounded model either, so no verdict changes: a valid
# query decided within the share is decided as before, and any other one gets its whole budget
# on a fresh attempt after a search that is cheap next to it.
PROBE_SHARE = 0.1


def bounded_model(build: Build, timeout: float, bounded: Callable[[tuple[int, ...], str], Any],
                  sizes: Sequence[tuple[int, ...]], name: str, deadline: float) -> Cti | None:
    """The CTI of the smallest bounded universe (tried in `sizes` order) where the query has a
    model, or None. Each size is bounded by `timeout`'s resource units; `deadline` is the
    wall-clock safety net. A model of a bounded query is one of the quantified query (every
    term of a sort is closed over the universe's elements), so a CTI here means `fails`."""
    for size in sizes:
        b = bounded(size, name)
        with finite_universe(b.elems):
            bparts, render = build(b)
            if deadline <= time.monotonic():
                return None
            r2, s2 = solve(bparts, timeout, deadline)
            if r2 == z3.sat:
                return render(s2.model())  # type: ignore[no-any-return]
    return None


def run_check(name: str, build: Build, fragment: str, timeout: float,
              bounded: Callable[[tuple[int, ...], str], Any] = Bounded,
              sizes: Sequence[tuple[int, ...]] = CTI_SIZES, base: z3.Solver | None = None) -> Check:
    """One query: unsat = valid; sat = fails, with a CTI from the smallest bounded universe (of
    `bounded`'s kind, tried in `sizes` order) that has one; unknown = reported with Z3's reason,
    never as valid. Shared by the core and the lifecycle encodings. With `base` (a solver
    holding the query's hypothesis), `build(None)` leaves the hypothesis out and the query is
    asked on `base` (`solve_on`); the bounded CTI search always builds everything. The query is
    first asked with PROBE_SHARE of its budget; if that is not enough, a bounded model is looked
    for before the whole budget is spent on it."""
    t0 = time.monotonic()
    parts, _ = build(None)

    def ask(units: float, fresh: bool) -> tuple[z3.CheckSatResult, str]:
        if base is not None:
            return solve_on(base, parts, units, fresh)
        r, s = solve(parts, units)
        return r, s.reason_unknown() if r == z3.unknown else ""

    searched = False
    r, why = ask(PROBE_SHARE * timeout, False)  # the fresh solver's retry is the whole budget's
    if r == z3.unknown:
        searched = True
        cti = bounded_model(build, timeout, bounded, sizes, name, t0 + WALL_FACTOR * timeout)
        if cti is not None:
            return Check(name, "fails", fragment, time.monotonic() - t0, cti)
        r, why = ask(timeout, True)
    if r == z3.unsat:
        return Check(name, "valid", fragment, time.monotonic() - t0)
    if r == z3.unknown:
        return Check(name, "unknown", fragment, time.monotonic() - t0, None, why)
    # the wall clock is a safety net only: each size is bounded by resource units
    cti = None if searched else bounded_model(build, timeout, bounded, sizes, name, t0 + WALL_FACTOR * timeout)
    if cti is not None:
        return Check(name, "fails", fragment, time.monotonic() - t0, cti)
    return Check(name, "fails", fragment, time.monotonic() - t0, None,
                 f"no CTI with at most {max(max(x) for x in sizes)} elements per sort (the solver's model is larger)")


def action_params(tag: str, pa: PAction, b: Bounded | None = None) -> Params:
    """Skolem constants for the step's existentials (the first elements in a bounded universe)."""
    sort = Updater if pa.role == "updater" else Lookup
    t = b.elems[sort][0] if b else z3.Const(f"t@{tag}", sort)
    a = b.elems[Agent][0] if b else z3.Const(f"a@{tag}", Agent)
    h = b.elems[Holder][0] if b else z3.Const(f"h@{tag}", Holder)
    return Params(t, a, z3.Bool(f"all_p@{tag}"), z3.Function(f"scope@{tag}", Agent, z3.BoolSort()), tag=tag, h=h)


# ---- CTI rendering --------------------------------------------------------------------------
class ModelStructure(Structure):
    """A Structure whose elements are a Z3 model's universe (acting thread/agent first)."""

    def __init__(self, m: z3.ModelRef, first: dict[z3.SortRef, z3.ExprRef]) -> None:
        def univ(sort: z3.SortRef) -> list[z3.ExprRef]:
            u = list(m.get_universe(sort) or [])
            if sort in first:
                f = m.eval(first[sort], model_completion=True)
                u.sort(key=lambda e: (not e.eq(f), str(e)))
            else:
                u.sort(key=str)
            if not u:  # a sort the query never constrains still has one element
                u = [m.eval(z3.Const(f"any!{sort.name()}", sort), model_completion=True)]
            return u

        self.agents, self.updaters, self.lookups = univ(Agent), univ(Updater), univ(Lookup)
        self.holders = univ(Holder)
        self.cfg = Config(len(self.agents), len(self.updaters), len(self.lookups), len(self.holders))
        self.elems = {Agent: self.agents, Updater: self.updaters, Lookup: self.lookups, Holder: self.holders}


def _txt(v: int | bool) -> str:
    return str(int(v)) if isinstance(v, bool) else str(v)


def _pretty(var: str, v: int | bool) -> str:
    if var.startswith("pc.u"):
        return UPDATER_LABELS[int(v)]
    if var.startswith("pc.l"):
        return LOOKUP_LABELS[int(v)]
    return _txt(v)


def state_cti(m: z3.ModelRef, s: PState, note: str, first: dict[z3.SortRef, z3.ExprRef] | None = None) -> Cti:
    st = ModelStructure(m, first or {})
    pre = st.read(m, s)
    return Cti((st.cfg.agents, st.cfg.updaters, st.cfg.lookups),
               tuple((k, _pretty(k, v)) for k, v in pre.items()), "", (), note)


def step_cti(m: z3.ModelRef, s: PState, post: PState, pa: PAction, p: Params, note: str) -> Cti:
    sort = Updater if pa.role == "updater" else Lookup
    st = ModelStructure(m, {sort: p.t, Agent: p.a})
    pre, nxt = st.read(m, s), st.read(m, post)
    thread = ("u0" if pa.role == "updater" else "l0")  # the acting thread is listed first
    agent = 0
    args: list[tuple[str, str]] = []
    if pa.kind == "update_begin":
        members = [str(i) for i, a in enumerate(st.agents) if z3.is_true(m.eval(p.scope(a), model_completion=True))]
        allp = z3.is_true(m.eval(p.all_p, model_completion=True))
        args = [("agents", "all" if allp else ",".join(members)), ("enable", "1" if pa.enable else "0")]
    elif pa.lock is not None:
        cls, mode, _ = pa.lock
        args = [("lock", f"serializer.{agent}" if cls == "serializer" else cls), ("mode", mode)]
    elif pa.per == "agent":
        args = [("agent", str(agent))]
    elif pa.kind == "refcount_change":
        args = [("agent", "all")]
    event = f"1 {thread} {pa.kind}" + "".join(f" {k}={v}" for k, v in args)
    changes = tuple((k, _pretty(k, pre[k]), _pretty(k, nxt[k])) for k in pre if pre[k] != nxt[k])
    return Cti((st.cfg.agents, st.cfg.updaters, st.cfg.lookups),
               tuple((k, _pretty(k, v)) for k, v in pre.items()), event, changes, note)


def failing_conjuncts(m: z3.ModelRef, s: PState, inv: Sequence[Conjunct]) -> list[str]:
    return [c.name for c in inv if z3.is_false(m.eval(c.fn(s), model_completion=True))]


__all__ = ["init", "conj", "run_check", "action_params", "state_cti", "step_cti", "fresh_state",
           "fragment_of", "failing_conjuncts", "enabled"]
