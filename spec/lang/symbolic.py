"""The any-size reading: sorts as Z3 uninterpreted sorts, state as Z3 functions over them.

An action fires from a pre-state (a mapping from symbol names to callables building Z3 terms)
with its parameters bound to Z3 constants, and yields its guards (selectors first), side
conditions on the parameters, and the post-state as If-terms over the pre-state (no frame
axioms). Quantifiers go through `forall`/`exists` supplied by the caller, so the same terms
can be expanded over a finite universe (the agreement tests and CTI rendering do that).

Union sorts are split: a function over `thread` becomes one symbol per leaf sort (`updater`,
`lookup`), so each role's state is a total function of its own sort and no query needs a role
test. A leaf symbol that no action ever writes is its initial value everywhere (the core's
lookups never take `queues`), so it is not declared at all; that is read off the definition.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import z3

from .syntax import (
    App,
    BoolDom,
    BoolParam,
    EnumDom,
    Every,
    Expr,
    Func,
    IntDom,
    IsAll,
    Lit,
    Member,
    Op,
    Protocol,
    Quant,
    ScopeParam,
    Sort,
    SortDom,
    Var,
    lift,
)
from .syntax import Action as LAction

Fn = Callable[..., z3.ExprRef]
Quantifier = Callable[[z3.SortRef, Callable[[z3.ExprRef], z3.ExprRef]], z3.BoolRef]
Key = tuple[str, tuple[str, ...]]  # (function name, leaf sort names of its arguments)


@dataclass
class Fired:
    guards: list[tuple[str, z3.BoolRef]]
    side: list[z3.BoolRef]  # constraints on the parameters (a scope is `all` or non-empty)
    post: dict[str, Fn]
    writes: frozenset[str] = field(default_factory=frozenset)
    checks: list[tuple[str, str, z3.BoolRef]] = field(default_factory=list)  # (claim, why, cond)

    def claim(self, name: str) -> z3.BoolRef:
        """The conjunction of this step's conditions for claim `name` (true if none)."""
        xs = [x for c, _, x in self.checks if c == name]
        return z3.And(*xs) if xs else z3.BoolVal(True)

    def enabled(self) -> z3.BoolRef:
        return z3.And(*[g for _, g in self.guards]) if self.guards else z3.BoolVal(True)


class Reading:
    """Symbols, enumeration constants and transitions of one protocol definition."""

    def __init__(self, protos: list[Protocol], sorts: Mapping[str, z3.SortRef],
                 names: Callable[[Func, tuple[Sort, ...]], str], forall: Quantifier, exists: Quantifier) -> None:
        """`protos`: definitions sharing one state (the variants of a protocol); a symbol is
        declared when any of them writes it, so one state serves every variant's transitions."""
        proto = protos[0]
        self.proto = proto
        self.sorts = dict(sorts)
        self.forall, self.exists = forall, exists
        self.enums: dict[str, tuple[z3.SortRef, dict[str, z3.ExprRef]]] = {}
        self.symbols: dict[Key, str] = {}
        self.signature: dict[str, tuple[tuple[z3.SortRef, ...], z3.SortRef]] = {}
        written = set().union(*[_written(p) for p in protos])
        for f in proto.funcs:
            for leaves in itertools.product(*[a.leaves() for a in f.args]):
                key = (f.name, tuple(x.name for x in leaves))
                if key not in written:
                    continue  # never written: its initial value everywhere
                name = names(f, leaves)
                self.symbols[key] = name
                self.signature[name] = (tuple(self.sorts[x.name] for x in leaves), self.range(f))

    def range(self, f: Func) -> z3.SortRef:
        d = f.dom
        if isinstance(d, BoolDom):
            return z3.BoolSort()
        if isinstance(d, IntDom):
            return z3.IntSort()
        if isinstance(d, SortDom):
            return self.sorts[d.sort.name]
        assert isinstance(d, EnumDom)
        return self.enum(d)[0]

    def enum(self, d: EnumDom) -> tuple[z3.SortRef, dict[str, z3.ExprRef]]:
        if d.name not in self.enums:
            prefix = d.name[0].lower()
            srt, consts = z3.EnumSort(d.name, [f"{prefix}.{x}" for x in d.labels])
            self.enums[d.name] = (srt, dict(zip(d.labels, consts)))
        return self.enums[d.name]

    def init_value(self, f: Func) -> z3.ExprRef:
        d = f.dom
        if isinstance(d, BoolDom):
            return z3.BoolVal(bool(f.init))
        if isinstance(d, IntDom):
            return z3.IntVal(int(f.init))
        if isinstance(d, EnumDom):
            return self.enum(d)[1][str(f.init)]
        raise TypeError(f"{f.name}: an element-valued function has no initial value any size")

    def symbol(self, f: Func, leaves: tuple[Sort, ...]) -> str | None:
        return self.symbols.get((f.name, tuple(x.name for x in leaves)))

    # ---- evaluation -----------------------------------------------------------------------
    def fire(self, act: LAction, s: Mapping[str, Fn], env: Mapping[str, Any]) -> Fired:
        """`env`: the thread variable and element parameters -> Z3 constants; a scope parameter
        -> (all: BoolRef, member: Agent -> BoolRef)."""
        env = {**env, **dict(act.consts)}
        ev = _Eval(self, s, env, {act.thread.name: act.role})
        pc = self.proto.pc[act.role.name]
        pcname = self.symbol(pc, (act.role,))
        assert pcname is not None and isinstance(pc.dom, EnumDom)
        guards = [(f"at {act.at}", s[pcname](env[act.thread.name]) == self.enum(pc.dom)[1][act.at])]
        guards += [(lab, ev.bool(x)) for lab, x in act.select]
        guards += [(lab, ev.bool(x)) for lab, x in act.guard]
        side: list[z3.BoolRef] = []
        for p in act.params:
            if isinstance(p, ScopeParam):
                is_all, member = env[p.name]
                none = self.forall(self.sorts[p.sort.name], lambda x: z3.Not(member(x)))
                some = self.exists(self.sorts[p.sort.name], lambda x: member(x))
                side.append(z3.If(is_all, none, some))
                if not p.sets:
                    side.append(is_all)
        checks = [(c, why, ev.bool(x)) for c, why, x in act.checks]
        post = dict(s)
        writes: set[str] = set()
        updates = list(act.updates)
        if act.goto is not None:
            updates.append((pc(act.thread), act.goto))
        for up in updates:
            if isinstance(up, Every):
                target, value, var = up.target, lift(up.value), up.var
            else:
                target, value, var = up[0], lift(up[1]), None
            name, arg_exprs = ev.target(target)
            writes.add(name)
            old = post[name]
            post[name] = _update(ev, old, target, arg_exprs, value, var)
        return Fired(guards, side, post, frozenset(writes), checks)

    def closed(self, e: Expr, s: Mapping[str, Fn]) -> z3.BoolRef:
        """A closed expression (an invariant claim) over the state `s`."""
        return _Eval(self, s, {}, {}).bool(e)


def _update(ev: "_Eval", old: Fn, target: App, args: list[Expr], value: Expr, var: Var | None) -> Fn:
    """new(y..) = If(y.. == args, value, old(y..)); a `var` argument position ranges freely."""
    func = target.func
    dom = func.dom

    def new(*ys: z3.ExprRef) -> z3.ExprRef:
        conds, bind = [], {}
        for y, a in zip(ys, args):
            if var is not None and isinstance(a, Var) and a.name == var.name:
                bind[var.name] = y
            else:
                conds.append(y == ev.term(a))
        val = ev.with_(bind).term(value, dom)
        return z3.If(z3.And(*conds), val, old(*ys)) if conds else val

    return new


class _Eval:
    def __init__(self, r: Reading, s: Mapping[str, Fn], env: Mapping[str, Any], sorts: Mapping[str, Sort]) -> None:
        self.r, self.s, self.env, self.vsorts = r, s, dict(env), dict(sorts)

    def with_(self, bind: Mapping[str, z3.ExprRef], sorts: Mapping[str, Sort] | None = None) -> "_Eval":
        return _Eval(self.r, self.s, {**self.env, **bind}, {**self.vsorts, **(sorts or {})})

    def bool(self, e: Expr) -> z3.BoolRef:
        t = self.term(e)
        return t if isinstance(t, z3.BoolRef) else z3.BoolVal(bool(t))

    def leaf(self, e: Expr) -> Sort:
        if isinstance(e, Var):
            return self.vsorts.get(e.name, e.sort)
        if isinstance(e, App) and isinstance(e.func.dom, SortDom):
            return e.func.dom.sort
        raise TypeError(f"no sort for {e!r}")

    def target(self, a: App) -> tuple[str, list[Expr]]:
        leaves = tuple(self.leaf(x) for x in a.args)
        name = self.r.symbol(a.func, leaves)
        if name is None:
            raise TypeError(f"{a.func.name}{leaves} is written but has no symbol")
        return name, list(a.args)

    def term(self, e: Expr, hint: Any = None) -> Any:
        if isinstance(e, Lit):
            v = e.value
            if isinstance(v, str):
                assert isinstance(hint, EnumDom), v
                return self.r.enum(hint)[1][v]
            return z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)
        if isinstance(e, Var):
            return self.env[e.name]
        if isinstance(e, BoolParam):
            return z3.BoolVal(bool(self.env[e.name]))
        if isinstance(e, IsAll):
            return self.env[e.scope.name][0]
        if isinstance(e, Member):
            is_all, member = self.env[e.scope.name]
            return z3.And(z3.Not(is_all), member(self.term(e.elem)))
        if isinstance(e, App):
            leaves = tuple(self.leaf(x) for x in e.args)
            name = self.r.symbol(e.func, leaves)
            if name is None:
                return self.r.init_value(e.func)
            return self.s[name](*[self.term(x) for x in e.args])
        if isinstance(e, Quant):
            parts = []
            for leaf in e.var.sort.leaves():
                srt = self.r.sorts[leaf.name]
                q = self.r.forall if e.kind == "forall" else self.r.exists
                parts.append(q(srt, lambda x, leaf=leaf: self.with_({e.var.name: x}, {e.var.name: leaf}).bool(e.body)))
            return z3.And(*parts) if e.kind == "forall" else z3.Or(*parts)
        if not isinstance(e, Op):  # Agg, Index: counts and positions are not first-order terms
            raise TypeError(f"{type(e).__name__} has no any-size reading")
        o = e.op
        if o == "and":
            return z3.And(*[self.bool(x) for x in e.args]) if e.args else z3.BoolVal(True)
        if o == "or":
            return z3.Or(*[self.bool(x) for x in e.args]) if e.args else z3.BoolVal(False)
        if o == "not":
            return z3.Not(self.bool(e.args[0]))
        if o == "implies":
            return z3.Implies(self.bool(e.args[0]), self.bool(e.args[1]))
        if o == "ite":
            return z3.If(self.bool(e.args[0]), self.term(e.args[1], hint), self.term(e.args[2], hint))
        l, r = e.args
        dom = l.func.dom if isinstance(l, App) else r.func.dom if isinstance(r, App) else None
        x, y = self.term(l, dom), self.term(r, dom)
        if o in ("lt", "le", "gt", "ge") and not (isinstance(x, z3.ArithRef) and isinstance(y, z3.ArithRef)):
            raise TypeError("elements of a sort have no order in the any-size reading")
        return {"eq": lambda: x == y, "ne": lambda: x != y, "add": lambda: x + y, "sub": lambda: x - y,
                "lt": lambda: x < y, "le": lambda: x <= y, "gt": lambda: x > y, "ge": lambda: x >= y}[o]()


def _written(proto: Protocol) -> set[Key]:
    """(function, leaf sorts) pairs some action writes (the pc of every role included)."""
    out: set[Key] = set()
    for act in proto.actions:
        vs = {act.thread.name: act.role}
        ups: list[tuple[App, Var | None]] = []
        for up in act.updates:
            if isinstance(up, Every):
                ups.append((up.target, up.var))
            else:
                ups.append((up[0], None))
        ups.append((proto.pc[act.role.name](act.thread), None))
        for target, var in ups:
            options = []
            for a in target.args:
                if isinstance(a, Var):
                    srt = vs.get(a.name, a.sort)
                    options.append(srt.leaves())
                else:
                    options.append(a.func.dom.sort.leaves() if isinstance(a, App) and isinstance(a.func.dom, SortDom)
                                   else target.func.args[len(options)].leaves())
            for combo in itertools.product(*options):
                out.add((target.func.name, tuple(x.name for x in combo)))
    return out
