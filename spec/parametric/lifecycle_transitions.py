"""The lifecycle's parametric transitions: spec/lifecycle/definition.py read by `spec.lang.symbolic`.

Nothing here restates a guard or an update (as spec/parametric/transitions.py for the core). Each
action of the definition becomes an `LAction` whose `fire` hands the pre-state and the step's
existential parameters (tool t, context c, agent a, dispatch k, agent set) to the symbolic
reading. Where the finite model has a bound or a cursor, the definition itself says what any
size reads (spec.lang.syntax: `Action.any_size`, `Protocol.abstractions`, `OwnerDom`):

* the contexts mutex `mtx` (0 free, i+1 held by tool i) is the relation `mo(t)`;
* `inf` (Queue::_active_kernels) and `ks` (deliveries) are read through what they count;
* `dispatch_write` takes any dispatch not yet written, `dispatch_submit` the hooked one (the
  fixed size numbers them in write order); `add_callback` has no registry cap; reference
  counts do not saturate at the fixed size's caps.

Sorts: `Agent` (shared with the core), `Ctx`, `Tool`, `Dispatch` uninterpreted; the dispatch
thread and the completion thread are one each at every size, as in the fixed-size model (the
definition's `dn` / `hk` are theirs), so their sorts are one-element enumerations `DThread`,
`HThread` with the constants `D0`, `H0`. Symbol names are the definition's, except three kept
from the earlier encoding the invariants are written in: `ex` -> `ser_ex`, `tpc` -> `pc`,
`mtx` -> `mo`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import z3

from ..lang.symbolic import Reading
from ..lang.syntax import Action, Func, Lit, ScopeParam, Sort, Var
from ..lifecycle.definition import definition, language
from ..lifecycle.variants import LVARIANTS, LVariant
from ..lifecycle.vocabulary import LConfig
from .encoding import Agent, Fn, PState, exists, forall
from .transitions import _labels

T, F = z3.BoolVal(True), z3.BoolVal(False)
Ctx = z3.DeclareSort("Ctx")
Tool = z3.DeclareSort("Tool")
Dispatch = z3.DeclareSort("Dispatch")
DThread, (D0,) = z3.EnumSort("DThread", ["d0"])
HThread, (H0,) = z3.EnumSort("HThread", ["h0"])
SORTS: dict[str, z3.SortRef] = {"agent": Agent, "context": Ctx, "tool": Tool, "kernel": Dispatch,
                                 "dispatch": DThread, "complete": HThread}
RENAMED = {"ex": "ser_ex", "tpc": "pc", "mtx": "mo"}


@dataclass(frozen=True)
class Scenario:
    """The definition's scenario switches (spec.lifecycle.vocabulary.LConfig)."""

    timeouts: bool = True
    deactivate: bool = False
    destroy: bool = False


def config(sc: Scenario) -> LConfig:
    """The configuration the definition is built with for the any-size reading: only its
    scenario switches matter (the registry cap and the refcount caps are finite-only bounds,
    which any size does not read)."""
    return LConfig(timeouts=sc.timeouts, deactivate=sc.deactivate, destroy=sc.destroy)


def symbol_name(f: Func, leaves: tuple[Sort, ...]) -> str:
    return RENAMED.get(f.name, f.name)


def _protocols() -> list:
    scs = [Scenario(), Scenario(False, True, True)]
    return [definition(v, config(sc)) for v in LVARIANTS.values() if not v.mutation for sc in scs]


READING = Reading(_protocols(), SORTS, symbol_name, forall, exists)
SYMBOLS: dict[str, tuple[tuple[z3.SortRef, ...], z3.SortRef]] = READING.signature
LANG = language(LVARIANTS["final"], config(Scenario()))  # the definition's sorts and functions


def enum_consts(func: str) -> dict[str, z3.ExprRef]:
    dom = LANG.b.p.func(func).dom
    return READING.enum(dom)[1]  # type: ignore[arg-type]


TPC, DPC, HPC = enum_consts("tpc"), enum_consts("dpc"), enum_consts("hpc")
_SL, _ST, _PK = enum_consts("slot"), enum_consts("st"), enum_consts("pk")
FREE, RESERVED, PUBLISHED = _SL["free"], _SL["reserved"], _SL["published"]
D_NONE, D_HOOKED, D_FLIGHT, D_EXITED, D_DONE = (_ST[x] for x in ("none", "hooked", "flight", "exited", "done"))
P_NONE, P_EMPTY, P_SPM = _PK["none"], _PK["empty"], _PK["spm"]


def fresh_state(tag: str) -> PState:
    fns: dict[str, Fn] = {}
    for name, (dom, rng) in SYMBOLS.items():
        if dom:
            fns[name] = z3.Function(f"L{name}@{tag}", *dom, rng)
        else:
            c = z3.Const(f"L{name}@{tag}", rng)
            fns[name] = (lambda c=c: c)
    return PState(fns)


def init(s: PState) -> z3.BoolRef:
    """The definition's initial values (element-valued locals `cx`, `da`, `hk` left free)."""
    return READING.initial(s.fns)


@dataclass(frozen=True)
class LParams:
    t: z3.ExprRef
    c: z3.ExprRef
    a: z3.ExprRef
    k: z3.ExprRef
    setp: Callable[[z3.ExprRef], z3.ExprRef]
    tag: str = "p"
    all_p: z3.ExprRef | None = None  # the agent set is `all` (None: a fresh Boolean)


@dataclass(frozen=True)
class LFired:
    guards: list[tuple[str, z3.BoolRef]]
    side: list[z3.BoolRef]
    post: PState
    obs: Callable[[str], Any]  # the value an event key reports
    checks: tuple[tuple[str, str, z3.BoolRef], ...] = ()  # (claim, requirement, condition): Action.checks

    def claim(self, name: str) -> z3.BoolRef:
        """This step's conditions for the definition's step claim `name` (true if it lists none)."""
        xs = [x for c, _, x in self.checks if c == name]
        return z3.And(*xs) if xs else T

    def enabled(self) -> z3.BoolRef:
        return z3.And(*[g for _, g in self.guards]) if self.guards else T


@dataclass(frozen=True)
class LAction:
    name: str
    role: str  # tool | dispatch | complete
    at: str
    kind: str
    per: str  # "" | ctx | ctxset | agent_id | id  (which parameters the step's event names)
    defn: Action
    source: str
    targets: tuple[str, ...]
    variant_of: str = ""  # distinguishes two steps with the same (role, at, kind): queue_sync ok/timeout

    def env(self, p: LParams) -> dict[str, Any]:
        """The definition's thread and parameter names bound to the firing's elements."""
        act = self.defn
        env: dict[str, Any] = {act.thread.name: {"tool": p.t, "dispatch": D0, "complete": H0}[self.role]}
        for prm in act.params:
            if isinstance(prm, ScopeParam):
                is_all = p.all_p if p.all_p is not None else z3.Bool(f"all@{p.tag}")
                env[prm.name] = (is_all, p.setp)
            elif isinstance(prm, Var):
                env[prm.name] = {"context": p.c, "agent": p.a, "kernel": p.k}[prm.sort.name]
        return env

    def fire(self, s: PState, p: LParams, claims: bool = False) -> LFired:
        """The step from `s`; `claims`: with its step claims' conditions (`LFired.claim`), which
        only the implication queries read (building them costs z3py terms on every firing)."""
        f = READING.fire(self.defn if claims else _unclaimed(self.defn), s.fns, self.env(p))
        assert f.observe is not None
        return LFired(f.guards, f.side, PState(f.post), f.observe, tuple(f.checks))

    def claims(self) -> frozenset[str]:
        """The step claims this step lists a condition for (its `checks`)."""
        return frozenset(c for c, _, _ in self.defn.checks)

    def keeps(self, s: PState, p: LParams, counter: str) -> z3.BoolRef:
        """This step keeps the abstracted `counter` equal to what it counts (Reading.keeps_count)."""
        return READING.keeps_count(self.defn, s.fns, self.env(p), counter)


_UNCLAIMED: dict[int, tuple[Action, Action]] = {}  # id(action) -> (action, without its checks)


def _unclaimed(act: Action) -> Action:
    """The same step without its claims' conditions (guards, updates, observations unchanged);
    by identity: expressions compare into trees, so actions are never compared with ==."""
    got = _UNCLAIMED.get(id(act))
    if got is None or got[0] is not act:
        got = _UNCLAIMED[id(act)] = (act, dataclasses.replace(act, checks=()) if act.checks else act)
    return got[1]


def _per(act: Action) -> str:
    sorts = [p.sort.name for p in act.params if isinstance(p, Var)]
    if any(isinstance(p, ScopeParam) for p in act.params):
        return "ctxset"
    if sorts == ["context"]:
        return "ctx"
    if sorts == ["kernel", "agent"]:
        return "agent_id"
    if sorts == ["kernel"]:
        return "id"
    assert not sorts, sorts
    return ""


def _variant_of(act: Action, twins: int) -> str:
    """queue_sync drained / timed out: the two steps differ in the `drained` they report (named
    so in every scenario, with or without the timeout step)."""
    drained = dict(act.observe).get("drained")
    if drained is None:
        assert twins < 2, act.kind
        return ""
    assert isinstance(drained, Lit), act.kind
    return "ok" if drained.value else "timeout"


def actions_of(proto: Any) -> list[LAction]:
    out: list[LAction] = []
    for act in proto.actions:
        twins = sum(1 for b in proto.actions if (b.role.name, b.at, b.kind) == (act.role.name, act.at, act.kind))
        vo = _variant_of(act, twins)
        name = f"{act.role.name[0]}.{act.at}.{act.kind}" + (f"[{vo}]" if vo else "")
        out.append(LAction(name, act.role.name, act.at, act.kind, _per(act), act, act.source,
                           tuple(dict.fromkeys(_labels(act.goto))), vo))
    names = [a.name for a in out]
    assert len(set(names)) == len(names), "two actions of one variant share a name"
    return out


@lru_cache(maxsize=None)
def _cached(v: LVariant, sc: Scenario) -> tuple[LAction, ...]:
    proto = definition(v, config(sc))
    READING.learn(proto)  # a mutant's definition is built after the reading
    return tuple(actions_of(proto))


def build_lifecycle_actions(v: LVariant, sc: Scenario = Scenario()) -> list[LAction]:
    """The definition's actions for variant `v` (a mutant too: `v.mutation`) and scenario `sc`."""
    return list(_cached(v, sc))


def lparams(tag: str, t: z3.ExprRef | None = None, c: z3.ExprRef | None = None, a: z3.ExprRef | None = None,
            k: z3.ExprRef | None = None) -> LParams:
    """Skolem constants for a step's parameters (or the given elements)."""
    return LParams(t if t is not None else z3.Const(f"t@{tag}", Tool),
                   c if c is not None else z3.Const(f"c@{tag}", Ctx),
                   a if a is not None else z3.Const(f"a@{tag}", Agent),
                   k if k is not None else z3.Const(f"k@{tag}", Dispatch),
                   z3.Function(f"set@{tag}", Agent, z3.BoolSort()), tag)


def open_expr(e: Any, s: PState, **env: z3.ExprRef) -> Any:
    """A derived expression of the definition (`Lifecycle.collects_on(c, a)`, `intersects`, ...)
    over the state `s`, its free variables bound by name: one definition of each notion."""
    return READING.open(e, s.fns, env)


def var(name: str, sort: str) -> Var:
    by = {x.name: x for x in LANG.b.p.sorts}
    return Var(name, by[sort])


__all__ = ["READING", "SYMBOLS", "LAction", "LParams", "LFired", "Scenario", "build_lifecycle_actions", "lparams",
           "fresh_state", "init", "open_expr", "var", "Ctx", "Tool", "Dispatch", "D0", "H0"]
