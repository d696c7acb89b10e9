"""Lock discipline, derived from the definition: every shared write holds its lock exclusively,
every shared read holds it in some mode (issue 15 item 1).

State functions name the lock classes that protect them (`Func.guarded`); this module reads
every action of a protocol and adds, as `lock-discipline` checks, the condition that the acting
thread holds such a lock when the step touches the state. The lock counts as held if the thread
holds it in the pre-state or this very step acquires it: work done under a lock is attached to
the step that begins it (an acquire) or ends it (a release), `spec/programs.py`'s convention.
Nothing here restates a guard: the conditions are built from the lock-holding functions the
actions already write, so every reading (finite, open-world, any-size) checks the same claim.
"""
from __future__ import annotations

import dataclasses

from .syntax import (
    App,
    Action,
    Claim,
    Every,
    Expr,
    Func,
    Lit,
    Op,
    Or,
    And,
    Protocol,
    Quant,
    Var,
    lift,
)

CLAIM = "lock-discipline"
SUMMARY = ("LD (lock discipline): every write of shared state (refcounts, map entries, entry state) "
           "holds the lock that protects it exclusively, every read holds it in some mode")
SOURCE = ("issue 15 item 1; digest §1.3 lock inventory (what each lock protects); "
          "queue_controller.cpp Synchronized<> members [SRC amd-vkale@5d4ce3a9]")


def _apps(e: Expr, bound: frozenset[str], out: list[tuple[App, frozenset[str]]]) -> None:
    """Every application in `e` with the quantified variables in scope at it."""
    if isinstance(e, App):
        out.append((e, bound))
        for a in e.args:
            _apps(a, bound, out)
    elif isinstance(e, Op):
        for a in e.args:
            _apps(a, bound, out)
    elif isinstance(e, Quant):
        _apps(e.body, bound | {e.var.name}, out)


def _same(x: Expr, y: Expr) -> bool:
    if isinstance(x, Var) and isinstance(y, Var):
        return x.name == y.name
    return x is y


def _acquires(act: Action, lock: Func, args: tuple[Expr, ...]) -> bool:
    for up in act.updates:
        if isinstance(up, Every):
            continue
        target, value = up
        if target.func is lock and isinstance(lift(value), Lit) and lift(value).value is True \
                and all(_same(a, b) for a, b in zip(target.args, args)):  # type: ignore[union-attr]
            return True
    return False


def _held(proto: Protocol, act: Action, app: App, bound: frozenset[str], write: bool) -> Expr | None:
    """The condition that the acting thread holds a lock protecting `app` (None: unprotected)."""
    f = app.func
    if not f.guarded or f.name in act.ghost:
        return None
    opts: list[Expr] = []
    for lk in proto.funcs:
        if lk.lock is None or lk.lock[0] not in f.guarded or (write and lk.lock[1] != "exclusive"):
            continue
        extra = lk.args[1:]  # a per-instance lock (serializer.<a>): its instance is app's argument
        inst: list[Expr] = []
        for s in extra:
            match = [a for a in app.args if isinstance(a, Var) and s.contains(a.sort)]
            if not match:
                break
            if match[0].name in bound:
                raise ValueError(f"{act.role.name}.{act.at}: {f.name} touched at a quantified "
                                 f"{s.name}; lock discipline needs the lock instance bound")
            inst.append(match[0])
        if len(inst) != len(extra):
            continue
        args = (act.thread, *inst)
        opts.append(Lit(True) if _acquires(act, lk, args) else lk(*args))
    return Or(*opts)


def _describe(app: App, write: bool, guarded: tuple[str, ...], bound: frozenset[str]) -> str:
    args = ".".join("*" if isinstance(a, Var) and a.name in bound else "{" + a.name + "}"
                    if isinstance(a, Var) else "?" for a in app.args)
    what = app.func.key.split("{")[0].rstrip(".") + (f".{args}" if args else "")
    need = " or ".join(guarded)
    return f"{{t}} {'writes' if write else 'reads'} {what} holding {need}" + \
        (" exclusive" if write else "")


def checks_of(proto: Protocol, act: Action) -> tuple[tuple[str, str, Expr], ...]:
    reads: list[tuple[App, frozenset[str]]] = []
    writes: list[tuple[App, frozenset[str]]] = []
    exprs: list[tuple[Expr, frozenset[str]]] = [(e, frozenset()) for _, e in act.select + act.guard]
    exprs += [(e, frozenset()) for _, e in act.observe]
    if act.goto is not None:
        exprs.append((act.goto, frozenset()))
    for up in act.updates:
        if isinstance(up, Every):
            bound = frozenset({up.var.name})
            writes.append((up.target, bound))
            exprs.append((lift(up.value), bound))
        else:
            writes.append((up[0], frozenset()))
            exprs.append((lift(up[1]), frozenset()))
    for e, bound in exprs:
        _apps(e, bound, reads)
    out: list[tuple[str, str, Expr]] = []
    seen: set[str] = set()
    for items, write in ((writes, True), (reads, False)):
        for app, bound in items:
            cond = _held(proto, act, app, bound, write)
            if cond is None:
                continue
            why = _describe(app, write, app.func.guarded, bound)
            if why in seen:
                continue
            seen.add(why)
            out.append((CLAIM, why, cond))
    return tuple(out)


def derive(proto: Protocol) -> Protocol:
    """`proto` with the lock-discipline claim and its checks on every action that needs one."""
    acts = [dataclasses.replace(a, checks=tuple(c for c in a.checks if c[0] != CLAIM) + checks_of(proto, a))
            for a in proto.actions]
    claims = {**proto.claims, CLAIM: Claim(CLAIM, "step", SUMMARY, SOURCE)}
    return dataclasses.replace(proto, actions=acts, claims=claims)


__all__ = ["CLAIM", "derive", "checks_of", "And"]
