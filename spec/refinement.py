"""The lifecycle's atomic `update_serialization()` / `serializer()` refined by the core's lock-step
programs (issue 10, "What to build" item 3): core and lifecycle as modules of one protocol.

The lifecycle (spec/lifecycle/definition.py) reads `QueueController::enable/disable_serialization`
(`_update_serialization`, the `spm_enable` / `spm_disable` steps) and the `serializer()` part of
`dispatch_submit` as single atomic steps; the core (spec/programs.py) writes the same calls as
lock-step programs (digest §2.1 post-fix serializer(), §2.2 post-fix update_serialization()). This
module checks in Z3 that the atomic reading is sound, reading both definitions through the fixed-size
reading (`spec.lang.finite` compiled with the Z3 backend, bit-vectors as in BMC) and restating
neither:

1. sequential refinement — one core thread runs one call alone, from its entry step to its return,
   over every order its per-agent steps may take (the core fixes no agent order: unordered_set /
   unordered_map iteration, audit U3), from any pre-state of the shared variables that satisfies the
   core's P1 claim (an invariant the core model proves for `final`, and the lifecycle's own P1, which
   its prover shows for the lifecycle at large; without it an update that crosses no count would
   leave a stale entry the atomic step repairs); the shared abstraction it leaves
   (refcount all + per agent, entry exists, entry enabled) must equal the lifecycle step's post-state
   from the same pre-state, and `serializer()`'s entry state at return must equal the lifecycle's
   `serialized` observation. One validity query per (variant, role, size): "some run differs" unsat.
   A run that blocks alone, or does not return, is reported instead.
2. atomicity (two-phase locking) — on the same runs, the thread holds one lock continuously from its
   first access of the shared abstraction to its last (accesses and lock holdings read off the
   compiled steps, with the convention of spec/lang/discipline.py: a step's work is under a lock it
   holds before the step or acquires in it); the locks found for the two calls conflict (same lock
   class, one side exclusive; two serializer() calls need not, the lifecycle runs one dispatch
   thread), that lock is mutually exclusive in every reachable state of the core (a one-step
   inductive Z3 query over the core's whole transition relation), and no step's effect reads
   another thread's state. Then every access any thread makes to the abstraction lies in a region
   under that lock, regions of conflicting calls never overlap, and any interleaving reorders to
   one where each call runs atomically (Lipton reduction: acquires move right, releases left, the
   moved steps doing what they did), whose effect is the one part 1 compared.

The shared abstraction is derived, not listed: the core's state functions that name a protecting lock
(`guarded`, digest §1.3), matched to the lifecycle's function with the same key template. The stored
`_serialized_enabled` flag is not guarded (an atomic) and not modelled by the lifecycle; nothing on
the dispatch path reads it, so its store after U(rc) (fidelity-audit U2, a core finding) lies outside
the abstraction by construction.

The refinement mapping (which lifecycle step stands for which core call, and the lifecycle context of
the serializer() call) is the table below; everything else is read from the two definitions.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import z3

from .backend import CONCRETE
from .budget import Budget, as_budget
from .lang.finite import Universe
from .lang.syntax import Func, Protocol
from .model import Action, Model, ReadRecorder
from .programs import P1, definition, pc_of, role_of
from .results import RefinementResult
from .variants import VARIANTS, Variant
from .vocabulary import Config
from .z3_encoding import Z3, as_term, width_for

if TYPE_CHECKING:
    from .lifecycle.model import LifecycleModel

# ---- the refinement mapping ------------------------------------------------------------------
# core call (role, entry step kind, const) -> the lifecycle step that reads it atomically:
# spm::start_context calls enable_serialization(ctx.dispatch_spm.agents), stop_context
# disable_serialization (digest §2.7 post [SRC amd-vkale@5d4ce3a9]); WriteInterceptor calls
# serializer(queue) iff the enter hooks requested serialization (digest §2.4, §3.2)
UPDATER_STEPS = {True: "spm_enable", False: "spm_disable"}
LOOKUP_STEP = "dispatch_submit"
# the lifecycle's names for the serializer() call's context: the dispatch's agent (its queue) and
# the enter hooks' request (serializer() runs only when it is set), and what kernel_dispatch sees
LC_AGENT, LC_REQUESTED, LC_RETURNS = "da", "rq", "serialized"
# the lifecycle step reports the agent set of its update as a mask (0: all agents, the SDK's empty
# list); the core's entry step names it as a scope parameter (None: all)
LC_SCOPE = "agents_mask"

SIZES = (1, 2, 3)  # agents
MAX_STEPS = 96  # a call that has not returned alone within this many steps is reported
STRIDE = 8  # steps unrolled between two "has every run returned?" queries
SOURCE = ("issue 10 'What to build' item 3; digest §2.1 / §2.2 post-fix (QueueController::serializer, "
          "update_serialization [SRC amd-vkale@5d4ce3a9]); spec/lifecycle/definition.py "
          "_update_serialization, dispatch_submit")


# ---- the shared abstraction ------------------------------------------------------------------
def abstraction(core: Protocol, lifecycle: Protocol) -> list[tuple[Func, Func]]:
    """(core function, lifecycle function) pairs of the shared state: every core function that
    names a protecting lock class (digest §1.3), and the lifecycle's function with its key."""
    by_key = {f.key: f for f in lifecycle.funcs}
    out = []
    for f in core.funcs:
        if not f.guarded:
            continue
        if f.key not in by_key:
            raise ValueError(f"core state {f.name} ({f.key}) has no lifecycle counterpart")
        out.append((f, by_key[f.key]))
    return out


def accesses(model: Model, act: Action) -> frozenset[str]:
    """The keys an action instance reads (selectors, guards, update values, observations; not its
    claims' conditions, which judge the step and are no behaviour) or writes."""
    mine = _ACCESSES.setdefault(model, {})
    got = mine.get(act.index)
    if got is not None:
        return got
    s = ReadRecorder(model.init_state())
    act.selectors(CONCRETE, s)
    act.guards(CONCRETE, s)
    writes = act.effect(CONCRETE, s)
    act.observed(CONCRETE, s)
    got = mine[act.index] = frozenset(s.seen | set(writes))
    return got


# per model (weakly: a model's address may be reused by the next one), per action index
_ACCESSES: "weakref.WeakKeyDictionary[Model, dict[int, frozenset[str]]]" = weakref.WeakKeyDictionary()


# ---- lifecycle side ----------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _lifecycle(agents: int) -> "LifecycleModel":
    from .lifecycle.model import LifecycleModel
    from .lifecycle.vocabulary import LConfig

    # one context, tool, dispatch: the steps read the context's agent set and one dispatch; every
    # scenario switch on, so the coverage check (lifecycle_writers) sees every step there is
    return LifecycleModel(LConfig(agents=agents, contexts=1, tools=1, dispatches=1, timeouts=True,
                                  deactivate=True, destroy=True), "final")


def _in_range(model: Model, s: Mapping[str, z3.ExprRef]) -> list[z3.BoolRef]:
    out = []
    for d in model.vars:
        if d.kind == "int":
            out += [s[d.name] >= d.lo, s[d.name] <= d.hi]
    return out


def _lc_step(lc: "LifecycleModel", kind: str) -> Action:
    hits = [a for a in lc.actions if a.kind == kind]
    if len(hits) != 1:
        raise ValueError(f"lifecycle step {kind}: {len(hits)} instances at one context/dispatch")
    return hits[0]


def lifecycle_writers(lc: "LifecycleModel", keys: Iterable[str]) -> set[str]:
    """The lifecycle step kinds that write any of `keys` (the mapping's coverage check); a step
    that writes a key with the value it has (`Ite(c, new, old)`) counts: its compiled effect
    names every key it may write."""
    wanted = set(keys)
    return {a.kind for a in lc.actions if wanted & set(a.effect(CONCRETE, lc.init_state()))}


# ---- one core call run alone -----------------------------------------------------------------
def _bool(x: Any) -> z3.BoolRef:
    return z3.BoolVal(x) if isinstance(x, bool) else x


def _state(model: Model, tag: str, width: int) -> dict[str, z3.ExprRef]:
    return {d.name: z3.Bool(f"{d.name}@{tag}") if d.kind == "bool" else z3.BitVec(f"{d.name}@{tag}", width)
            for d in model.vars}


def _value(x: z3.ExprRef) -> bool:
    return z3.is_true(x) or z3.is_false(x) or z3.is_bv_value(x)


class Run:
    """One thread of a core model running one call alone from any of its entry instances (the
    call's arguments: scope and enable flag, or agent), unrolled in Z3:
    states s[0..K], a choice c[i] per step (an instance of the thread's steps, or `stutter` once
    it returned or if nothing is enabled). Values the simplifier folds to a constant (the program
    counter while the control flow does not branch on data, the call's arguments) are carried as
    constants, so a step's instances that cannot fire there drop out of the query."""

    def __init__(self, model: Model, thread: str, entries: Sequence[Action], width: int) -> None:
        self.model, self.thread, self.width = model, thread, width
        self.acts = [a for a in model.actions if a.thread == thread]
        self.entries = [self.acts.index(e) for e in entries]
        self.states: list[dict[str, z3.ExprRef]] = [_state(model, "s0", width)]
        self.choices: list[z3.ExprRef] = []
        self.enabled: list[list[z3.BoolRef]] = []
        self.idle_pc = pc_of(role_of(thread), "idle")
        self.kinds = {d.name: d.kind for d in model.vars}

    @property
    def stutter(self) -> int:
        return len(self.acts)

    def idle(self, i: int) -> z3.BoolRef:
        return z3.simplify(self.states[i][f"pc.{self.thread}"] == self.idle_pc)

    def extend(self) -> list[z3.BoolRef]:
        """Add step i = len(choices), s[i] -> s[i+1]; returns the step's constraints."""
        i = len(self.choices)
        s = self.states[i]
        # step 0 is the entry instance; later only steps inside the call (it runs one call: once
        # back at its entry label it stutters)
        en = []
        for j, a in enumerate(self.acts):
            live = j in self.entries if i == 0 else a.label != "idle"
            en.append(z3.simplify(z3.And(_bool(a.enabled(Z3, s)), z3.Not(self.idle(i)) if i else True))
                      if live else z3.BoolVal(False))
        cands = [j for j, e in enumerate(en) if not z3.is_false(e)]
        c = z3.BitVec(f"c{i}", 16)
        stuck = z3.simplify(z3.Not(z3.Or(*[en[j] for j in cands]))) if cands else z3.BoolVal(True)
        # the call starts with an entry instance; later it stutters only back at its entry label
        # (returned) or where nothing can fire (blocked)
        ok: list[z3.BoolRef] = [z3.Or(*[c == j for j in cands], *([z3.And(c == self.stutter, stuck)] if i else []))]
        ok += [z3.Implies(c == j, en[j]) for j in cands]
        effs = {j: self.acts[j].effect(Z3, s) for j in cands}
        nxt: dict[str, z3.ExprRef] = {}
        for name in self.model.var_names:
            e = s[name]
            for j in cands:
                if name in effs[j]:
                    e = z3.If(c == j, as_term(effs[j][name], self.kinds[name], self.width), e)
            e = z3.simplify(e) if len(cands) == 1 else e
            if _value(e) or e.eq(s[name]):
                nxt[name] = e
            else:
                nxt[name] = z3.Bool(f"{name}@s{i + 1}") if self.kinds[name] == "bool" else \
                    z3.BitVec(f"{name}@s{i + 1}", self.width)
                ok.append(nxt[name] == e)
        if len(cands) == 1:  # one instance can fire here: the choice is known
            ok = [z3.simplify(z3.And(*ok, c == cands[0]))]
        self.choices.append(c)
        self.enabled.append(en)
        self.states.append(nxt)
        return ok

    def blocked(self, m: z3.ModelRef) -> bool:
        """The model's run stutters before it returned: nothing of the call can fire there."""
        for i, c in enumerate(self.choices):
            if m.eval(c, model_completion=True).as_long() >= self.stutter:
                return not z3.is_true(m.eval(self.idle(i), model_completion=True))
        return False

    def describe(self, m: z3.ModelRef, upto: int) -> str:
        """The steps a model of the query takes, as trace lines."""
        steps = []
        for i in range(min(upto, len(self.choices))):
            j = m.eval(self.choices[i], model_completion=True).as_long()
            if j >= self.stutter:
                break
            steps.append(self.acts[j].describe())
        return "; ".join(steps)


def _lock_keys(model: Model, thread: str) -> list[str]:
    """The keys of every lock `thread` may hold (the lock-holding functions at its element)."""
    u = model.universe
    return [u.key(f, args) for f in model.protocol.funcs if f.lock is not None
            for args in u.applications(f) if args[0] == thread]


def _pre(model: Model, s: Mapping[str, z3.ExprRef], thread: str) -> list[z3.BoolRef]:
    """The pre-state: declared ranges, every lock free (no other thread runs), the thread idle,
    and the core's P1 claim (the invariant its prover shows for `final`; with every thread idle
    P1's `settled` holds)."""
    out = _in_range(model, s) + [s[f"pc.{thread}"] == pc_of(role_of(thread), "idle"),
                                 _bool(model.claim(P1)(Z3, s))]
    for f in model.protocol.funcs:
        if f.lock is not None:
            out += [z3.Not(s[model.universe.key(f, args)]) for args in model.universe.applications(f)]
    return out


def bv_solver() -> z3.Solver:
    """A solver for the quantifier-free bit-vector queries of this module (both readings are
    encoded over bit-vectors of one width, as BMC does). Z3's default solver runs every query
    asked after a push/pop (the unrolled call's strides, then one query per region lock) on its
    incremental SMT core; the QF_BV logic's solver bit-blasts to SAT and decided `final` at
    1..3 agents in a fifth of the CPU (14.5 -> 3.0 s). Verdicts are the queries' answers
    (sat/unsat), the same whichever solver gives them."""
    return z3.SolverFor("QF_BV")


def _query(solver: z3.Solver, goal: z3.BoolRef, budget: Budget) -> tuple[z3.CheckSatResult, z3.ModelRef | None, str]:
    """Is `goal` satisfiable on some run (the solver holds the pre-state and the unrolled steps)?
    Bounded by resource units (spec.budget: the same verdict on a loaded machine); `unknown`
    comes with its reason."""
    solver.push()
    solver.add(goal)
    r, why = budget.check(solver)
    m = solver.model() if r == z3.sat else None
    solver.pop()
    return r, m, why


def _mask(scope: Sequence[int]) -> int:
    return sum(1 << a for a in scope)


def _keys(u: Universe, f: Func) -> list[tuple[tuple[Any, ...], str]]:
    return [(args, u.key(f, args)) for args in u.applications(f)]


# ---- the checks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One role's call at one size over every entry instance: the sequential refinement and the
    region lock (each proved | violated | unknown, with the reason)."""

    role: str
    agents: int
    sequential: str
    seq_reason: str
    region: str
    region_reason: str
    locks: frozenset[tuple[str, str]] = frozenset()  # region locks (class, mode) every call holds
    steps: int = 0  # every run of the call alone returns within this many steps


# holders only widen the refcount's declared range (0..holders, one reference per holder): with
# three, and one increment of room (the lifecycle's cap), the pre-state's counts range over 0..2
# each, so all + per_agent reaches 0..4 (an entry created enabled, a disable that leaves it
# enabled); an update acts for one holder, the others' references are in the pre-state's counts
HOLDERS = 3


def _models(v: Variant, role: str, n: int) -> tuple[Model, str, list[Action]]:
    if role == "updater":
        model = Model(Config(agents=n, updaters=1, lookups=0, holders=HOLDERS), v)
        entries = [a for a in model.actions if a.kind == "update_begin" and a.params.get("holder") == "c0"]
        return model, "u0", entries
    model = Model(Config(agents=n, updaters=0, lookups=1, holders=HOLDERS), v)
    return model, "l0", [a for a in model.actions if a.kind == "lookup_begin"]


def _lifecycle_side(lc: "LifecycleModel", role: str, entry: Action, ls: dict[str, z3.ExprRef]
                    ) -> tuple[Action, list[z3.BoolRef]]:
    """The lifecycle step `entry` maps to, and its enabling and mapping conditions on the lifecycle
    pre-state."""
    if role == "updater":
        step = _lc_step(lc, UPDATER_STEPS[bool(entry.params["enable"])])
        obs = step.observed(Z3, ls)
        return step, [_bool(step.enabled(Z3, ls)), obs[LC_SCOPE] == _mask(entry.params["scope"])]  # (): all, mask 0
    step = _lc_step(lc, LOOKUP_STEP)
    funcs = {f.name: f for f in lc.protocol.funcs}
    k0 = lc.universe.elems(funcs[LC_AGENT].args[0])[0]
    return step, [_bool(step.enabled(Z3, ls)), ls[lc.universe.key(funcs[LC_REQUESTED], [k0])],
                  ls[lc.universe.key(funcs[LC_AGENT], [k0])] == entry.params["agent"]]


def check_call(v: Variant, role: str, n: int, budget: float | Budget = 300.0) -> Case:
    """Both checks for a role's call at n agents, over every entry instance at once."""
    model, thread, entries = _models(v, role, n)
    lc = _lifecycle(n)
    # bit-vectors (QF_BV, as BMC does): every int lies in its declared range in the pre-state and
    # the width leaves room for what either reading computes from it (a sum of two counts)
    width = max(width_for(model), width_for(lc))
    saved = Z3.width  # one shared backend: BMC and induction set their own int sort
    Z3.width = width
    try:
        return _check_call(model, thread, role, entries, n, lc, width, as_budget(budget))
    finally:
        Z3.width = saved


def _check_call(model: Model, thread: str, role: str, entries: list[Action], n: int, lc: "LifecycleModel",
                width: int, budget: Budget) -> Case:
    run = Run(model, thread, entries, width)
    s0 = run.states[0]
    ls = _state(lc, "lc", width)
    pairs = abstraction(model.protocol, lc.protocol)
    keys = [key for cf, _ in pairs for _, key in _keys(model.universe, cf)]
    cons = _pre(model, s0, thread) + _in_range(lc, ls)
    hi = {d.name: d.hi for d in model.vars}
    lhi = {d.name: d.hi for d in lc.vars}
    for key in keys:
        cons.append(ls[key] == s0[key])
        if not isinstance(s0[key], z3.BoolRef):
            # one increment stays inside both readings' declared ranges: the lifecycle's cap
            # (2C+1 references) bounds its finite model, not the code (definition.py `step`)
            cons.append(s0[key] < min(hi[key], lhi[key]))
    # the lifecycle step each entry maps to, from the same shared pre-state
    c0 = z3.BitVec("c0", 16)
    lkinds = {d.name: d.kind for d in lc.vars}
    by_step: dict[str, tuple[Action, list[z3.BoolRef]]] = {}
    for e in entries:
        step, cond = _lifecycle_side(lc, role, e, ls)
        sel = c0 == run.acts.index(e)
        cons.append(z3.Implies(sel, z3.And(*cond)))
        by_step.setdefault(step.kind, (step, []))[1].append(sel)
    lc_post: dict[str, z3.ExprRef] = {}
    for step, sels in by_step.values():
        eff = step.effect(Z3, ls)
        for name in lc.var_names:
            val = as_term(eff.get(name, ls[name]), lkinds[name], width)
            lc_post[name] = val if name not in lc_post else z3.If(z3.Or(*sels), val, lc_post[name])
    solver = bv_solver()
    solver.add(*cons)

    def call_of(m: z3.ModelRef) -> str:
        return run.acts[m.eval(run.choices[0], model_completion=True).as_long()].describe()

    # unroll in strides until every run of the call alone has returned (K need not be minimal: a
    # returned run stutters; a run that blocks stutters before returning, so it would show here)
    k = 0
    while True:
        for _ in range(STRIDE):
            solver.add(*run.extend())
            k += 1
        r, m, why = _query(solver, z3.Not(run.idle(k)), budget)
        if r == z3.unsat:
            break
        not_run = "the call's runs are not all known"
        if r != z3.sat:
            return Case(role, n, "unknown", f"{why} while unrolling to step {k}", "unknown", not_run)
        assert m is not None
        if run.blocked(m):
            return Case(role, n, "violated", f"{call_of(m)} blocks when run alone: {run.describe(m, k)}",
                        "unknown", not_run)
        if k >= MAX_STEPS:
            return Case(role, n, "violated", f"{call_of(m)} has not returned alone within {MAX_STEPS} steps: "
                        f"{run.describe(m, k)}", "unknown", not_run)
    end = run.states[k]

    # 1. sequential refinement: every returned run leaves the abstraction as the atomic step does
    diffs = [(key, end[key] != lc_post[key]) for key in keys]
    # and it returns holding no lock (it started holding none): the atomic step leaves every lock
    # free, a call that keeps one would block the next caller for good
    diffs += [(f"{key} (still held at return)", end[key]) for key in _lock_keys(model, thread)]
    if role == "lookup":
        # what serializer() hands kernel_dispatch: the agent's entry, in the state it has at return
        en = next(cf for cf, _ in pairs if len(cf.args) == 1 and "serializer" in cf.guarded)
        ret: z3.ExprRef = z3.BoolVal(False)
        for e in entries:
            ret = z3.If(c0 == run.acts.index(e), end[model.universe.key(en, [e.params["agent"]])], ret)
        obs = _bool(_lc_step(lc, LOOKUP_STEP).observed(Z3, ls)[LC_RETURNS])
        diffs.append((f"{LC_RETURNS} (the entry's state at return)", obs != ret))
    r, m, why = _query(solver, z3.Or(*[d for _, d in diffs]), budget)
    if r == z3.sat:
        assert m is not None
        which = [key for key, d in diffs if z3.is_true(m.eval(d, model_completion=True))]
        pre = " ".join(f"{key}={m.eval(s0[key], model_completion=True)}" for key in keys)
        seq = ("violated", f"{call_of(m)} run alone leaves {', '.join(which)} other than the lifecycle's "
               f"atomic {_lc_kind(role, m, run)} from {pre}: {run.describe(m, k)}")
    elif r == z3.unsat:
        seq = ("proved", f"every run returns within {k} steps, holding no lock, and leaves {', '.join(keys)} as "
               "the atomic step does")
    else:
        seq = ("unknown", f"{why} on the refinement query")

    # 2. the region lock: one lock held from the call's first access of the abstraction to its
    # last (a step's work is under a lock it holds before the step or acquires in it)
    kset = set(keys)
    touching = [j for j, a in enumerate(run.acts) if accesses(model, a) & kset]
    acc = [z3.simplify(z3.Or(*[run.choices[i] == j for j in touching])) for i in range(k)]
    guarded = {g for cf, _ in pairs for g in cf.guarded}
    found: set[tuple[str, str]] = set()
    missed: list[tuple[tuple[bool, int], str]] = []
    unknown: list[str] = []
    for f in model.protocol.funcs:
        if f.lock is None or f.lock[0] not in guarded:
            continue
        for args in model.universe.applications(f):
            if args[0] != thread:
                continue
            key = model.universe.key(f, args)
            held = [run.states[i][key] for i in range(k + 1)]
            bad = [z3.And(acc[i], z3.Not(held[i]), z3.Not(held[i + 1])) for i in range(k)]
            bad += [z3.And(z3.Not(held[j]), z3.Or(*acc[:j]), z3.Or(*acc[j:])) for j in range(1, k)]
            r, m, why = _query(solver, z3.Or(*bad), budget)
            if r == z3.unsat:
                found.add(f.lock)
            elif m is not None:
                missed.append(_gap(run, m, k, key, touching, kset, call_of(m)))
            else:
                unknown.append(f"{key}: {why}")
    if found:
        region = ("proved", "holds " + ", ".join(f"{c} {md}" for c, md in sorted(found)) +
                  " from its first access of the shared state to its last")
    elif unknown:
        region = ("unknown", "; ".join(unknown))
    else:
        region = ("violated", f"no lock of {', '.join(sorted(guarded))} is held from the call's first access of "
                  f"the shared state to its last: {max(missed, key=lambda x: x[0])[1]}")
    return Case(role, n, *seq, *region, locks=frozenset(found), steps=k)


def _gap(run: Run, m: z3.ModelRef, k: int, key: str, touching: list[int], kset: set[str],
         call: str) -> tuple[tuple[bool, int], str]:
    """Where the witness's run lets go of lock `key` between two accesses of the abstraction (or
    touches it without the lock), and a rank: a lock held at the first access and held longest
    names the gap best (the refcount lock released before the transitions, not a lock never taken)."""
    steps = [m.eval(c, model_completion=True).as_long() for c in run.choices[:k]]
    held = [z3.is_true(m.eval(run.states[i][key], model_completion=True)) for i in range(k + 1)]
    acc = [j in touching for j in steps]
    first = acc.index(True)
    rank = (held[first] or held[first + 1], sum(held))

    def what(i: int) -> str:
        return f"step {i + 1} ({run.acts[steps[i]].describe()})"

    def touched(i: int) -> str:
        return ", ".join(sorted(accesses(run.model, run.acts[steps[i]]) & kset))

    gap = next((j for j in range(first + 1, k) if not held[j]), None)
    later = next((j for j in range(gap, k) if acc[j]), None) if gap is not None else None
    if gap is not None and later is not None:
        if held[gap - 1] and gap - 1 > first:
            return rank, (f"{call}: {key}, held at {what(first)}, is released by {what(gap - 1)}, and "
                          f"{what(later)} still touches {touched(later)}")
        return rank, (f"{call}: {key} is not held between {what(first)} and {what(later)}, which touches "
                      f"{touched(later)}")
    i = next((i for i in range(k) if acc[i] and not held[i] and not held[i + 1]), first)
    return rank, f"{call}: {what(i)} touches {touched(i)} without {key}"


def _lc_kind(role: str, m: z3.ModelRef, run: Run) -> str:
    if role != "updater":
        return LOOKUP_STEP
    e = run.acts[m.eval(run.choices[0], model_completion=True).as_long()]
    return UPDATER_STEPS[bool(e.params["enable"])]


# ---- the region locks exclude each other --------------------------------------------------------
def exclusive(v: Variant, lock: str, budget: float | Budget = 60.0, cfg: Config = Config(2, 2, 2)) -> tuple[str, str]:
    """The lock class `lock` is mutually exclusive in every reachable state of the core: no two
    threads hold it at once unless both hold it shared. One inductive Z3 query over the core's
    whole transition relation (every thread's every step, spec.z3_encoding) at `cfg`: the
    condition holds initially (no lock held) and every step keeps it; built from the lock-holding
    functions' declared modes, so a dropped or weakened availability guard shows here."""
    from .z3_encoding import Transition, init_constraint

    model = Model(cfg, v)
    mine = [f for f in model.protocol.funcs if f.lock is not None and f.lock[0] == lock]
    if not mine:
        return "violated", f"the core has no lock {lock}"
    saved = Z3.width
    try:
        tr = Transition(model)
        u = model.universe

        def holding(s: Mapping[str, z3.ExprRef], mode: str | None) -> dict[Any, list[z3.ExprRef]]:
            out: dict[Any, list[z3.ExprRef]] = {}
            for f in mine:
                if mode is None or f.lock[1] == mode:  # type: ignore[index]
                    for args in u.applications(f):
                        out.setdefault(args[0], []).append(s[u.key(f, args)])
            return out

        def inv(s: Mapping[str, z3.ExprRef]) -> z3.BoolRef:
            excl, anyh = holding(s, "exclusive"), holding(s, None)
            return z3.And(*[z3.Not(z3.And(x, h)) for t in excl for x in excl[t] for t2 in anyh if t2 != t
                            for h in anyh[t2]])

        b = as_budget(budget)
        solver = bv_solver()
        solver.add(init_constraint(model, tr.S), z3.Not(inv(tr.S)))
        r, why = b.check(solver)
        if r != z3.unsat:
            return ("violated", f"{lock} is held in conflicting modes initially") if r == z3.sat else ("unknown", why)
        solver = bv_solver()
        solver.add(inv(tr.S), tr.formula, z3.Not(inv(tr.S2)))
        r, why = b.check(solver)
        if r == z3.unsat:
            return "proved", f"{lock} is mutually exclusive (inductive over the core's transition relation, {cfg.describe()})"
        if r == z3.sat:
            c = solver.model().eval(tr.c, model_completion=True).as_long()
            act = model.actions[c].describe() if c < len(model.actions) else "a stutter"
            return "violated", f"{lock} is not mutually exclusive: {act} takes it while another thread holds it"
        return "unknown", f"{why} on {lock}'s mutual exclusion"
    finally:
        Z3.width = saved


# ---- the verdicts ---------------------------------------------------------------------------------
ROLES = ("updater", "lookup")
CALLS = {"updater": "update_serialization()", "lookup": "serializer()"}


def foreign_reads(v: Variant, cfg: Config = Config(2, 2, 2)) -> list[str]:
    """Steps of the two calls whose effect, next label or observation reads another thread's state
    (`Model` keys of a function applied to another thread). None may: a step moved next to its
    call's other steps by the reduction then does what it did in the interleaving, which is what
    the sequential query (one thread, nothing else running) computes. Guards may read other
    threads' locks (an acquire waits for them): the moved step was enabled where it ran."""
    model = Model(cfg, v)
    u = model.universe
    owned: dict[str, set[str]] = {}  # thread -> the keys of its own state
    others: set[str] = set()
    for f in model.protocol.funcs:
        if not f.args or f.args[0].name not in ("thread", "updater", "lookup"):
            continue
        for args in u.applications(f):
            key = u.key(f, args)
            owned.setdefault(str(args[0]), set()).add(key)
            others.add(key)
    out = []
    for a in model.actions:
        s = ReadRecorder(model.init_state())
        a.effect(CONCRETE, s)
        a.observed(CONCRETE, s)
        bad = sorted((s.seen & others) - owned.get(a.thread, set()))
        if bad:
            out.append(f"{a.describe()} reads {', '.join(bad)}")
    return out


def _concurrent() -> dict[str, int]:
    """How many threads of the lifecycle make each core call at its default size: the role of the
    lifecycle steps the calls map to (two regions of one role must exclude each other only if
    the lifecycle runs more than one thread of that role)."""
    from .lifecycle.model import LifecycleModel
    from .lifecycle.vocabulary import LConfig

    lc = LifecycleModel(LConfig(), "final")
    out = {}
    for role, kinds in (("updater", set(UPDATER_STEPS.values())), ("lookup", {LOOKUP_STEP})):
        acts = [a for a in lc.protocol.actions if a.kind in kinds]
        out[role] = lc.universe.card(acts[0].role)
    return out


def run(variant: Variant | str, sizes: Sequence[int] = SIZES, timeout: float | Budget = 600.0
        ) -> list[RefinementResult]:
    """The two records of one core variant: `sequential` and `atomicity` (`timeout`: seconds of
    solver resource units for the whole run, spec.budget)."""
    v = VARIANTS[variant] if isinstance(variant, str) else variant
    budget = as_budget(timeout)
    t0 = time.monotonic()
    cases = {role: [check_call(v, role, n, budget) for n in sizes] for role in ROLES}
    t1 = time.monotonic()
    at = f"{min(sizes)}..{max(sizes)} agents" if len(sizes) > 1 else f"{sizes[0]} agent(s)"

    def worst(verdicts: Iterable[str]) -> str:
        vs = set(verdicts)
        return "violated" if "violated" in vs else "unknown" if "unknown" in vs else "proved"

    seq = worst(c.sequential for cs in cases.values() for c in cs)
    # the mapping covers the lifecycle: every lifecycle step that writes the shared state is one
    # of the steps a core call maps to (a new one would be an atomic step nobody checked)
    lc = _lifecycle(max(sizes))
    shared = [key for _, lf in abstraction(definition(v), lc.protocol) for _, key in _keys(lc.universe, lf)]
    unmapped = sorted(lifecycle_writers(lc, shared) - set(UPDATER_STEPS.values()) - {LOOKUP_STEP})
    if unmapped:
        seq = "violated"
        seq_why = (f"lifecycle step(s) {', '.join(unmapped)} write the refcounts or serializer entries but map "
                   "to no core call")
    elif seq == "proved":
        seq_why = "; ".join(f"{CALLS[r]} ({'every agent set, enable and disable' if r == 'updater' else 'every agent'}) "
                            f"run alone returns within {max(c.steps for c in cs)} steps in every order, holding no "
                            "lock, and leaves "
                            f"the refcounts and serializer entries as the lifecycle's atomic "
                            f"{'/'.join(UPDATER_STEPS.values()) if r == 'updater' else LOOKUP_STEP}"
                            for r, cs in cases.items())
    else:
        bad = next(c for cs in cases.values() for c in cs if c.sequential == seq)
        seq_why = f"{CALLS[bad.role]} at {bad.agents} agent(s): {bad.seq_reason}"
    records = [RefinementResult(v.name, "sequential", seq, at, seq_why, round(t1 - t0, 2), SOURCE)]

    atom = worst(c.region for cs in cases.values() for c in cs)
    if atom != "proved":
        bad = next(c for cs in cases.values() for c in cs if c.region == atom)
        why = f"{CALLS[bad.role]} at {bad.agents} agent(s): {bad.region_reason}"
    else:
        locks = {r: frozenset.intersection(*[c.locks for c in cs]) for r, cs in cases.items()}
        threads = _concurrent()
        pairs = [(a, b) for i, a in enumerate(ROLES) for b in ROLES[i:] if a != b or threads[a] > 1]
        notes = [f"{CALLS[r]} holds {' / '.join(f'{c} {m}' for c, m in sorted(locks[r]))}" for r in ROLES]
        why = ""
        foreign = foreign_reads(v)
        if foreign:
            atom, why = "violated", f"a step's effect reads another thread's state: {foreign[0]}"
            pairs = []
        classes: set[str] = set()
        for a, b in pairs:
            ok = [(la[0], la[1], lb[1]) for la in locks[a] for lb in locks[b]
                  if la[0] == lb[0] and "exclusive" in (la[1], lb[1])]
            if not ok:
                atom = "violated"
                why = (f"the regions of two {CALLS[a]} calls" if a == b else
                       f"a {CALLS[a]} and a {CALLS[b]} region") + " can overlap: no common lock held exclusively " \
                    f"by one of them ({'; '.join(notes)})"
                break
            classes.add(ok[0][0])
        if atom == "proved":
            for lock in sorted(classes):
                verdict, text = exclusive(v, lock, budget)
                if verdict != "proved":
                    atom, why = verdict, text
                    break
                notes.append(text)
            if atom == "proved":
                single = [CALLS[r] for r in ROLES if threads[r] == 1]
                why = "; ".join(notes) + (f"; one lifecycle thread makes {', '.join(single)} (no pair of those "
                                          "to exclude)" if single else "") + \
                    "; no step's effect reads another thread's state; so every access of the shared state lies " \
                    "in a region under that lock (two-phase locking: the calls reorder to atomic ones)"
    records.append(RefinementResult(v.name, "atomicity", atom, at, why, round(time.monotonic() - t1, 2), SOURCE))
    return records


# ---- expectations and text -------------------------------------------------------------------
# refines = both records proved. Only atomicity breaks are expected to fail: the historical
# variants whose gaps the review named, and G0, whose update is not the refcounted one at all.
EXPECTED: dict[str, tuple[str, str]] = {
    "final": ("proved", "digest §2.1/§2.2 post-fix: W(rc) across the update, R(rc) across lookup+insert"),
    "caller-flag": ("proved", "applied inside W(rc); from the caller's flag, which alone equals the count's crossing"),
    "reversed-lookup-order": ("proved", "atomic all the same; its defect is the lock order (P5)"),
    "stale-lookup": ("violated", "digest §2.1 pre-fix: R(rc) released before the lookup/insert"),
    "apply-after-unlock": ("violated", "digest §2.2 pre-fix: transitions applied after U(rc)"),
    "pre-fix": ("violated", "both pre-fix gaps"),
    "global-flag": ("violated", "digest §2.2 G0: every entry set from the caller's flag, no counting"),
}


def expected(v: Variant) -> str:
    """proved | violated: the table above; a mutant of a variant (spec.lang.mutate) is expected
    not to refine when it is marked known-bad."""
    if v.name in EXPECTED:
        return EXPECTED[v.name][0]
    return "violated" if v.known_bad else "proved"


def verdict_of(records: Sequence[RefinementResult]) -> str:
    """One variant's verdict: proved if both records are, violated if one is, else unknown."""
    vs = {r.verdict for r in records}
    return "violated" if "violated" in vs else "unknown" if "unknown" in vs else "proved"


def render(records: Sequence[RefinementResult], verbose: bool = False) -> list[str]:
    """Text lines: one per (variant, check), the reason for what is not proved (all with -v)."""
    out = []
    for r in records:
        exp = expected(VARIANTS[r.variant]) if r.variant in VARIANTS else "-"
        out.append(f"  {r.variant:22} {r.check:10} {r.verdict:8} (variant expected {exp})")
        if verbose or r.verdict != "proved":
            out.append(f"  {'':22} {r.reason}")
    return out
