"""Composing two consecutive steps of one thread into the one step an older trace writes.

A `Shorthand` (spec.lang.syntax) says that an event of kind `second` at label `first[0]` is step
`first` immediately followed by step `second`. `compose` builds that step from the two actions
as the definition (or a mutant of it) has them, so nothing is restated: the first step's
selectors, guards, updates and checks in the pre-state, then the second's read in the state the
first leaves (each read of a function the first writes replaced by what it writes there), the
second's observations and goto. The composed step is a path of the model, so a trace reading
that takes it accepts nothing the model does not do.

Shapes refused (an assertion, not a silent misreading): a first step with an `Every` update,
functions written by both steps, a first step whose goto is not the second's label, observations
of the first the second does not report, static keys of the first the second does not have, a
`Post` in the first's checks of something the second writes.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from .syntax import (
    Action,
    Agg,
    App,
    Every,
    Expr,
    Index,
    Lit,
    Member,
    Op,
    Post,
    Protocol,
    Quant,
    Shorthand,
    Var,
    lift,
)


def _writes(a: Action) -> dict[str, list[tuple[App, Expr]]]:
    out: dict[str, list[tuple[App, Expr]]] = {}
    for u in a.updates:
        assert not isinstance(u, Every), f"{a.kind}: a shorthand's first step writes single cells only"
        out.setdefault(u[0].func.name, []).append((u[0], lift(u[1])))
    return out


def _same(x: Expr, y: Expr) -> Expr | None:
    """`x == y` as an expression, or None when the two are one node (always equal)."""
    return None if x is y else (x == y)


def _subst(e: Any, writes: dict[str, list[tuple[App, Expr]]], memo: dict[int, Expr]) -> Any:
    """`e` read in the state the first step leaves: each application of a function the first step
    writes becomes `Ite(args == target args, written value, e)` (just the value when the
    arguments are the target's own nodes)."""
    if not isinstance(e, Expr):
        return e
    got = memo.get(id(e))
    if got is not None:
        return got
    out: Expr = e
    if isinstance(e, App):
        args = tuple(_subst(x, writes, memo) for x in e.args)
        out = App(e.func, args) if any(x is not y for x, y in zip(args, e.args)) else e
        for tgt, val in reversed(writes.get(e.func.name, [])):
            eqs = [c for c in (_same(x, y) for x, y in zip(args, tgt.args)) if c is not None]
            out = val if not eqs else Op("ite", (Op("and", tuple(eqs)) if len(eqs) > 1 else eqs[0], val, out))
    elif isinstance(e, Op):
        args = tuple(_subst(x, writes, memo) for x in e.args)
        if any(x is not y for x, y in zip(args, e.args)):
            out = Op(e.op, args)
    elif isinstance(e, (Quant, Agg)):
        body = _subst(e.body, writes, memo)
        if body is not e.body:
            out = type(e)(e.kind, e.var, body)
    elif isinstance(e, Index):
        el = _subst(e.elem, writes, memo)
        if el is not e.elem:
            out = Index(el)
    elif isinstance(e, Member):
        el = _subst(e.elem, writes, memo)
        if el is not e.elem:
            out = Member(el, e.scope)
    elif isinstance(e, Post):
        # the composed step leaves what the second step leaves; the second's Post reads its own
        # writes, or the first's where it writes nothing, and the composed step writes both
        args = tuple(_subst(x, writes, memo) for x in e.app.args)
        if any(x is not y for x, y in zip(args, e.app.args)):
            out = Post(App(e.app.func, args))
    memo[id(e)] = out
    return out


def _posts(e: Any, out: set[str]) -> None:
    if isinstance(e, Post):
        out.add(e.app.func.name)
    for f in ("args", "body", "elem", "app"):
        x = getattr(e, f, None)
        for y in (x if isinstance(x, tuple) else (x,)):
            if isinstance(y, Expr):
                _posts(y, out)


def compose(first: Action, second: Action) -> Action:
    """The step `first; second` of one thread (see the module comment)."""
    assert first.role.name == second.role.name and first.thread.name == second.thread.name
    assert isinstance(first.goto, Lit) and first.goto.value == second.at, \
        f"{first.kind} goes to {first.goto}, not to {second.at}"
    w1 = _writes(first)
    w2 = {(u.target.func.name if isinstance(u, Every) else u[0].func.name) for u in second.updates}
    assert not (set(w1) & w2), f"{first.kind} and {second.kind} both write {sorted(set(w1) & w2)}"
    s1, s2 = dict(first.static), dict(second.static)
    assert all(k in s2 and s2[k] is v for k, v in s1.items()), f"{second.kind} names every key of {first.kind}"
    assert {k for k, _ in first.observe} <= {k for k, _ in second.observe}, \
        f"{second.kind} reports every observation of {first.kind}"
    posts: set[str] = set()
    for _, _, x in first.checks + first.finding_checks:
        _posts(x, posts)
    assert not (posts & w2), f"{first.kind}'s checks read what {second.kind} writes"
    memo: dict[int, Expr] = {}

    def sub(x: Any) -> Any:
        return _subst(x, w1, memo)

    def conj(a: tuple[tuple[str, Expr], ...], b: tuple[tuple[str, Expr], ...]) -> tuple[tuple[str, Expr], ...]:
        seen = {(lab, id(x)) for lab, x in a}
        return a + tuple((lab, sub(x)) for lab, x in b if (lab, id(x)) not in seen)

    names = {p.name for p in first.params}
    ups = list(first.updates) + [Every(u.var, u.target, sub(u.value)) if isinstance(u, Every)
                                 else (App(u[0].func, tuple(sub(x) for x in u[0].args)), sub(lift(u[1])))
                                 for u in second.updates]
    return dataclasses.replace(
        second, at=first.at, params=first.params + tuple(p for p in second.params if p.name not in names),
        select=conj(first.select, second.select), guard=conj(first.guard, second.guard), updates=tuple(ups),
        observe=tuple((k, sub(x)) for k, x in second.observe),
        goto=None if second.goto is None else sub(second.goto),
        consts=first.consts + tuple(c for c in second.consts if c not in first.consts),
        checks=first.checks + tuple((n, why, sub(x)) for n, why, x in second.checks),
        ghost=first.ghost + tuple(g for g in second.ghost if g not in first.ghost),
        any_size=first.any_size + tuple(kv for kv in second.any_size if kv[0] not in dict(first.any_size)),
        finding_checks=first.finding_checks + tuple((n, why, sub(x)) for n, why, x in second.finding_checks),
        source=f"{first.kind} then {second.kind} with nothing between (a log without the first event); "
               f"{first.source}; {second.source}",
        shorthand=True)


def _find(p: Protocol, role: str, at: str, kind: str) -> Action:
    hits = [a for a in p.actions if (a.role.name, a.at, a.kind) == (role, at, kind)]
    assert len(hits) == 1, f"a shorthand names {len(hits)} steps {role} {at} {kind}"
    return hits[0]


def composed(p: Protocol, sh: Shorthand) -> Action:
    return compose(_find(p, sh.role, *sh.first), _find(p, sh.role, *sh.second))


def trace_actions(p: Protocol) -> list[Action]:
    """Every step a trace's event may be: the model's own steps, then the shorthands composed."""
    return list(p.actions) + [composed(p, sh) for sh in p.shorthands]


def trace_reading(p: Protocol) -> Protocol:
    """The definition as the trace readings take it: the shorthands composed into its actions."""
    if not p.shorthands:
        return p
    return dataclasses.replace(p, actions=trace_actions(p), shorthands=[])
