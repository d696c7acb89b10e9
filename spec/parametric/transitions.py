"""The core's parametric transitions: spec/programs.py's actions read by `spec.lang.symbolic`.

Nothing here restates a guard or an update. Each action of the definition becomes a `PAction`
whose `fire` hands the pre-state and the step's existential parameters (the acting thread `t`,
the agent `a` of a per-agent step, the scope of an `update_begin`) to the symbolic reading; the
metadata the queries need (lock class and mode of a lock step, the labels a step can go to, the
`enable` of a begin) is read off the same action.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import z3

from ..lang.syntax import Action, Expr, Lit, Op, ScopeParam, Var
from ..programs import definition
from ..variants import Variant
from .encoding import READING, Holder, PState

T, F = z3.BoolVal(True), z3.BoolVal(False)


@dataclass(frozen=True)
class Params:
    """The existential parameters of one firing."""

    t: z3.ExprRef
    a: z3.ExprRef
    all_p: z3.ExprRef = T
    scope: Callable[[z3.ExprRef], z3.ExprRef] = lambda x: F
    tag: str = "p"
    h: z3.ExprRef | None = None  # the holder an update_begin acts for (a fresh one if None)


@dataclass(frozen=True)
class Fired:
    guards: list[tuple[str, z3.BoolRef]]
    side: list[z3.BoolRef]  # constraints on the parameters (asserted with the step)
    post: PState
    claim: Callable[[str], z3.BoolRef] = lambda name: T  # the step's conditions for a claim

    def enabled(self) -> z3.BoolRef:
        return z3.And(*[g for _, g in self.guards]) if self.guards else T


@dataclass(frozen=True)
class PAction:
    name: str
    role: str
    at: str
    kind: str
    per: str  # "" | "agent" | "scope" (spec.lang.syntax.Action.per)
    defn: Action
    source: str
    targets: tuple[str, ...]  # labels the thread can be at afterwards (lock-table dataflow)
    lock: tuple[str, str, bool] | None = None  # (class, mode, acquire) for lock steps
    enable: bool | None = None  # update_begin only

    def fire(self, s: PState, p: Params) -> Fired:
        act = self.defn
        env: dict[str, object] = {act.thread.name: p.t}
        for prm in act.params:
            if isinstance(prm, ScopeParam):
                env[prm.name] = (p.all_p, p.scope)
            elif isinstance(prm, Var) and prm.sort.name == "holder":
                env[prm.name] = p.h if p.h is not None else z3.Const(f"h@{p.tag}", Holder)
            elif isinstance(prm, Var):
                env[prm.name] = p.a
        f = READING.fire(act, s.fns, env)
        return Fired(f.guards, f.side, PState(f.post), f.claim)


def _labels(e: Expr | None) -> tuple[str, ...]:
    """Enumeration labels a goto expression can take."""
    if e is None:
        return ()
    if isinstance(e, Lit):
        return (e.value,) if isinstance(e.value, str) else ()
    if isinstance(e, Op) and e.op == "ite":
        return _labels(e.args[1]) + _labels(e.args[2])
    return ()


def _lock_of(act: Action) -> tuple[str, str, bool] | None:
    if act.kind not in ("lock_acquire", "lock_release"):
        return None
    for up in act.updates:
        if isinstance(up, tuple) and up[0].func.lock is not None:
            cls, mode = up[0].func.lock
            return cls, mode, act.kind == "lock_acquire"
    return None  # a lock event that takes no lock (a mutant's dropped lock)


@lru_cache(maxsize=None)
def build_actions(v: Variant) -> list[PAction]:
    out: list[PAction] = []
    for act in definition(v).actions:
        per = act.per
        enable = dict(act.consts).get("enable")
        name = f"{act.role.name[0]}.{act.at}.{act.kind}"
        if per == "agent":
            name += "[a]"
        if enable is not None:
            name += "[enable]" if enable else "[disable]"
        targets = tuple(dict.fromkeys(_labels(act.goto)))
        out.append(PAction(name, act.role.name, act.at, act.kind, per, act, act.source, targets,
                           _lock_of(act), None if enable is None else bool(enable)))
    names = [a.name for a in out]
    assert len(set(names)) == len(names), "two actions of one variant share a name"
    return out
