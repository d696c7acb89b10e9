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

Three constructs have a reading here that is not a plain Z3 term (the lifecycle uses them):

* an `OwnerDom` function (a mutex holder, the counter 0..|sort| at the fixed size) is a relation
  over the owner sort: `f(args..., e)` "e holds it". `NOBODY` is the empty relation, `owner(e)`
  the relation true of e alone, Ite picks; `==` compares the relations. The reading admits
  states with two holders, which no finite state encodes (a superset: the invariants state
  mutual exclusion as a proved conjunct); from a state with at most one holder every step
  writes exactly what the finite encoding writes.
* a counter the definition declares abstracted (`Protocol.abstractions`) has no symbol: its
  updates are dropped and an application reads as its `Count`, which is compared with a
  constant only where the comparison depends on emptiness alone (`Count == 0` is "no element
  satisfies the body", `Count > 0` "some element does"); anything else raises.
* a finite-only guard conjunct (`Action.any_size`) reads as its stated replacement (a superset
  of the finite steps: the replacement follows from it on reachable states), and a finite-only
  bound (`Protocol.bounds`, a counter saturating at its finite domain's top) reads as true.
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
    Agg,
    Index,
    Member,
    Op,
    OwnerDom,
    Post,
    Protocol,
    Quant,
    Reported,
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
    # the value an event key reports, read on demand (a Mask has no any-size reading)
    observe: Callable[[str], Any] | None = None

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
        self.abstracted: dict[str, tuple[tuple[Var, ...], Expr]] = {}
        self.bounds: dict[int, Expr] = {}
        for p in protos:
            self.abstracted.update(p.abstractions)
            self.bounds.update(p.bounds)
        for f in proto.funcs:
            if f.name in self.abstracted:
                continue  # read through its count
            for leaves in itertools.product(*[a.leaves() for a in f.args]):
                key = (f.name, tuple(x.name for x in leaves))
                if key not in written:
                    continue  # never written: its initial value everywhere
                name = names(f, leaves)
                self.symbols[key] = name
                dom = tuple(self.sorts[x.name] for x in leaves)
                if isinstance(f.dom, OwnerDom):  # a relation over the holder's sort
                    self.signature[name] = (dom + (self.sorts[_owner_sort(f).name],), z3.BoolSort())
                else:
                    self.signature[name] = (dom, self.range(f))

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

    def initial(self, s: Mapping[str, Fn]) -> z3.BoolRef:
        """Every declared symbol at its initial value everywhere; element-valued functions are
        left free (the fixed size starts them at element 0: any element is a superset)."""
        funcs = {f.name: f for f in self.proto.funcs}
        parts: list[z3.BoolRef] = []
        for (fname, _), name in self.symbols.items():
            f = funcs[fname]
            if isinstance(f.dom, SortDom):
                continue
            doms = self.signature[name][0]
            if isinstance(f.dom, OwnerDom):
                val: Any = z3.BoolVal(False)
            else:
                val = self.init_value(f)

            def body(xs: tuple[z3.ExprRef, ...], name: str = name, val: Any = val) -> z3.BoolRef:
                return s[name](*xs) == val

            parts.append(_forall_all(self.forall, doms, body))
        return z3.And(*parts)

    # ---- evaluation -----------------------------------------------------------------------
    def fire(self, act: LAction, s: Mapping[str, Fn], env: Mapping[str, Any]) -> Fired:
        """`env`: the thread variable and element parameters -> Z3 constants; a scope parameter
        -> (all: BoolRef, member: Agent -> BoolRef)."""
        env = {**env, **dict(act.consts)}
        ev = _Eval(self, s, env, {act.thread.name: act.role}, obs=dict(act.observe))
        pc = self.proto.pc[act.role.name]
        pcname = self.symbol(pc, (act.role,))
        assert pcname is not None and isinstance(pc.dom, EnumDom)
        guards = [(f"at {act.at}", s[pcname](env[act.thread.name]) == self.enum(pc.dom)[1][act.at])]
        relax = dict(act.any_size)
        for lab, x in list(act.select) + list(act.guard):
            if lab in relax:
                x = relax[lab]
                if isinstance(x, Lit) and x.value is True:
                    continue  # a finite-only bound, dropped
            guards.append((lab, ev.bool(x)))
        side: list[z3.BoolRef] = []
        for p in act.params:
            if isinstance(p, ScopeParam):
                is_all, member = env[p.name]
                none = self.forall(self.sorts[p.sort.name], lambda x: z3.Not(member(x)))
                some = self.exists(self.sorts[p.sort.name], lambda x: member(x))
                side.append(z3.If(is_all, none, some))
                if not p.sets:
                    side.append(is_all)
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
            if target.func.name in self.abstracted:
                continue  # read through its count: its own update is not a symbol's
            name, arg_exprs = ev.target(target)
            writes.add(name)
            old = post[name]
            post[name] = _update(ev, old, target, arg_exprs, value, var)
        # checks read the pre-state, and the post-state through `Post`
        after = _Eval(self, s, env, {act.thread.name: act.role}, post, dict(act.observe))
        checks = [(c, why, after.bool(x)) for c, why, x in act.checks]
        obs = dict(act.observe)
        return Fired(guards, side, post, frozenset(writes), checks, lambda key: ev.term(obs[key]))

    def _reads(self, e: Expr) -> frozenset[str]:
        """Symbols expression `e` reads (an abstracted counter: what its count reads)."""
        funcs: set[str] = set()
        todo = [e]
        while todo:
            x = todo.pop()
            if isinstance(x, App):
                if x.func.name in self.abstracted:
                    todo.append(self.abstracted[x.func.name][1])
                funcs.add(x.func.name)
                todo += list(x.args)
            elif isinstance(x, Op):
                todo += list(x.args)
            elif isinstance(x, (Quant, Agg)):
                todo.append(x.body)
            elif isinstance(x, (Member, Index)):
                todo.append(x.elem)
            elif isinstance(x, Post):
                todo.append(x.app)
        return frozenset(name for (f, _), name in self.symbols.items() if f in funcs)

    def learn(self, proto: Protocol) -> None:
        """Take in the finite-only bounds of a definition built after this reading (a mutant's:
        its nodes are new objects); its symbols must be among this reading's."""
        self.bounds.update(proto.bounds)

    def keeps_count(self, act: LAction, s: Mapping[str, Fn], env: Mapping[str, Any], fname: str) -> z3.BoolRef:
        """The step keeps the abstracted counter `fname` equal to what it counts, read locally
        (first-order): for every argument tuple, the step's update of the counter is the old
        value plus an increment built from Ite, the constants 0/+1/-1 and a Count (finite-only
        bounds dropped), and per increment leaf the elements the count gains and loses match it:
        0 -- none gained, none lost; +1 -- exactly one gained, none lost; -1 -- the converse;
        + Count(v, phi) -- none lost, and v is gained iff phi(v). The old counter inside a
        condition reads as its count (so `inf > 0` is "some dispatch is counted"). Any other
        update shape gives false: the check fails rather than guess. This is sufficient for
        `counter = count` to be preserved at every size (a counting argument, not a query about
        cardinalities)."""
        env = {**env, **dict(act.consts)}
        fired = self.fire(act, s, env)
        params, agg = self.abstracted[fname]
        assert isinstance(agg, Agg) and agg.kind == "count"
        sorts = {act.thread.name: act.role}
        pre = _Eval(self, s, env, sorts, obs=dict(act.observe))
        post = _Eval(self, fired.post, env, sorts, obs=dict(act.observe))
        ups = [up for up in act.updates
               if (up.target if isinstance(up, Every) else up[0]).func.name == fname]
        leaves = [p.sort.leaves() for p in params]
        if any(len(x) != 1 for x in leaves) or len(agg.var.sort.leaves()) != 1:
            raise TypeError(f"{fname}: an abstracted counter over union sorts")
        if not ups and not fired.writes & self._reads(agg.body):
            return z3.BoolVal(True)  # the step writes neither the counter nor what it counts
        vleaf = agg.var.sort.leaves()[0]
        vsort = self.sorts[vleaf.name]
        doms = tuple(self.sorts[x[0].name] for x in leaves)

        def one(args: tuple[z3.ExprRef, ...]) -> z3.BoolRef:
            bind = {p.name: a for p, a in zip(params, args)}
            psorts = {p.name: x[0] for p, x in zip(params, leaves)}

            def psi(ev: _Eval, v: z3.ExprRef) -> z3.BoolRef:
                return ev.with_({**bind, agg.var.name: v}, {**psorts, agg.var.name: vleaf}).bool(agg.body)

            def gained(v: z3.ExprRef) -> z3.BoolRef:
                return z3.And(psi(post, v), z3.Not(psi(pre, v)))

            def lost(v: z3.ExprRef) -> z3.BoolRef:
                return z3.And(psi(pre, v), z3.Not(psi(post, v)))

            def none(p: Callable[[z3.ExprRef], z3.BoolRef]) -> z3.BoolRef:
                return self.forall(vsort, lambda v: z3.Not(p(v)))

            def single(p: Callable[[z3.ExprRef], z3.BoolRef]) -> z3.BoolRef:
                return self.exists(vsort, lambda v: z3.And(p(v), self.forall(vsort, lambda w: z3.Implies(p(w), w == v))))

            def ob(d: Any) -> z3.BoolRef:
                tag = d[0]
                if tag == "ite":
                    return z3.If(d[1], ob(d[2]), ob(d[3]))
                if tag == "const":
                    return {0: lambda: z3.And(none(gained), none(lost)), 1: lambda: z3.And(none(lost), single(gained)),
                            -1: lambda: z3.And(none(gained), single(lost))}.get(d[1], lambda: z3.BoolVal(False))()
                if tag == "count":
                    ev2, a2 = d[1], d[2]
                    if [x.name for x in a2.var.sort.leaves()] != [vleaf.name]:
                        return z3.BoolVal(False)
                    return z3.And(none(lost), self.forall(vsort, lambda v: gained(v) == ev2.with_(
                        {a2.var.name: v}, {a2.var.name: vleaf}).bool(a2.body)))
                return z3.BoolVal(False)

            parts = []
            unmatched: list[z3.BoolRef] = []
            for up in ups:
                target, value, var = (up.target, up.value, up.var) if isinstance(up, Every) else (up[0], up[1], None)
                conds, ubind, usorts = [], {}, {}
                for a, y, p in zip(target.args, args, params):
                    if var is not None and isinstance(a, Var) and a.name == var.name:
                        ubind[a.name], usorts[a.name] = y, psorts[p.name]
                    else:
                        conds.append(pre.term(a) == y)
                uev = pre.with_(ubind, usorts)
                matched = z3.And(*conds) if conds else z3.BoolVal(True)
                parts.append(z3.Implies(matched, ob(_delta(uev, lift(value), target, fname))))
                unmatched.append(z3.Not(matched))
            parts.append(z3.Implies(z3.And(*unmatched) if unmatched else z3.BoolVal(True), ob(("const", 0))))
            return z3.And(*parts)

        return _forall_all(self.forall, doms, one)

    def closed(self, e: Expr, s: Mapping[str, Fn]) -> z3.BoolRef:
        """A closed expression (an invariant claim) over the state `s`."""
        return _Eval(self, s, {}, {}).bool(e)

    def open(self, e: Expr, s: Mapping[str, Fn], env: Mapping[str, Any]) -> Any:
        """An expression whose free variables `env` binds (by name) to Z3 terms of their sorts."""
        return _Eval(self, s, env, {}).term(e)


def _update(ev: "_Eval", old: Fn, target: App, args: list[Expr], value: Expr, var: Var | None) -> Fn:
    """new(y..) = If(y.. == args, value, old(y..)); a `var` argument position ranges freely."""
    func = target.func
    dom = func.dom
    if isinstance(dom, OwnerDom):
        def held(*ys: z3.ExprRef) -> z3.ExprRef:
            conds = [y == ev.term(a) for y, a in zip(ys, args)]
            val = ev.owner_rel(value)(ys[-1])
            return z3.If(z3.And(*conds), val, old(*ys)) if conds else val

        return held

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
    def __init__(self, r: Reading, s: Mapping[str, Fn], env: Mapping[str, Any], sorts: Mapping[str, Sort],
                 post: Mapping[str, Fn] | None = None, obs: Mapping[str, Expr] | None = None) -> None:
        self.r, self.s, self.env, self.vsorts = r, s, dict(env), dict(sorts)
        self.post = post  # the step's post-state, for `Post` in its checks
        self.obs = obs  # the step's observations, for `Reported` (the model reports what it computes)

    def with_(self, bind: Mapping[str, z3.ExprRef], sorts: Mapping[str, Sort] | None = None) -> "_Eval":
        return _Eval(self.r, self.s, {**self.env, **bind}, {**self.vsorts, **(sorts or {})}, self.post, self.obs)

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
        if self.r.bounds and id(e) in self.r.bounds:
            return z3.BoolVal(True)  # a bound of the finite model (Protocol.bounds)
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
        if isinstance(e, Post):
            if self.post is None:
                raise TypeError(f"Post({e.app.func.name}) outside an action's checks")
            return _Eval(self.r, self.post, self.env, self.vsorts, None, self.obs).term(e.app, hint)
        if isinstance(e, Reported) and e.at is not None:
            mask = self.reported(e)
            if not (isinstance(mask, Agg) and mask.kind == "mask"):
                raise TypeError(f"Reported({e.key!r}, {e.at.name}) needs a Mask observation")
            # the model's own step: the mask's body at `at` (a bit of a mask is first-order)
            return self.with_({mask.var.name: self.term(e.at)}, {mask.var.name: self.leaf(e.at)}).term(mask.body, hint)
        if isinstance(e, Reported):
            return self.term(self.reported(e), hint)
        if isinstance(e, App):
            if e.func.name in self.r.abstracted or isinstance(e.func.dom, OwnerDom):
                raise TypeError(f"{e.func.name} has an any-size reading only compared with a constant")
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
        if o in ("eq", "ne", "lt", "le", "gt", "ge"):
            special = self.compare(o, l, r)
            if special is not None:
                return special
        dom = _dom_of(l) or _dom_of(r)
        x, y = self.term(l, dom), self.term(r, dom)
        if o in ("lt", "le", "gt", "ge") and not (isinstance(x, z3.ArithRef) and isinstance(y, z3.ArithRef)):
            raise TypeError("elements of a sort have no order in the any-size reading")
        return {"eq": lambda: x == y, "ne": lambda: x != y, "add": lambda: x + y, "sub": lambda: x - y,
                "lt": lambda: x < y, "le": lambda: x <= y, "gt": lambda: x > y, "ge": lambda: x >= y}[o]()


    def reported(self, e: Reported) -> Expr:
        """The observation a `Reported` reads: what the step computes (any size checks the model)."""
        if self.obs is None or e.key not in self.obs:
            raise TypeError(f"Reported({e.key!r}) outside an action that observes it")
        return self.obs[e.key]

    # ---- the constructs with a non-term reading (module docstring) --------------------------
    def count_of(self, e: Expr) -> tuple["_Eval", Agg] | None:
        """A `Count` (or an abstracted counter, as its count) with the evaluator binding it."""
        if isinstance(e, Agg) and e.kind == "count":
            return self, e
        if isinstance(e, App) and e.func.name in self.r.abstracted:
            params, body = self.r.abstracted[e.func.name]
            assert isinstance(body, Agg) and body.kind == "count", e.func.name
            bind = {p.name: self.term(a) for p, a in zip(params, e.args)}
            return self.with_(bind, {p.name: self.leaf(a) for p, a in zip(params, e.args)}), body
        return None

    def some(self, agg: Agg) -> z3.BoolRef:
        parts = [self.r.exists(self.r.sorts[leaf.name], lambda x, leaf=leaf: self.with_(
            {agg.var.name: x}, {agg.var.name: leaf}).bool(agg.body)) for leaf in agg.var.sort.leaves()]
        return z3.Or(*parts)

    def compare(self, o: str, l: Expr, r: Expr) -> z3.BoolRef | None:
        """A comparison of a count with a constant, or of two owner values; None otherwise."""
        flip = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
        for a, b, op in ((l, r, o), (r, l, flip[o])):
            got = self.count_of(a)
            if got is None:
                continue
            if not (isinstance(b, Lit) and isinstance(b.value, int) and not isinstance(b.value, bool)):
                raise TypeError("a count has an any-size reading only compared with a constant")
            n = b.value
            fn = {"eq": lambda c: c == n, "ne": lambda c: c != n, "lt": lambda c: c < n,
                  "le": lambda c: c <= n, "gt": lambda c: c > n, "ge": lambda c: c >= n}[op]
            many = {fn(c) for c in range(1, max(n, 0) + 3)}
            if len(many) != 1:
                raise TypeError(f"count {op} {n} depends on more than emptiness: no any-size reading")
            at0, at_some = fn(0), many.pop()
            ev, agg = got
            if at0 == at_some:
                return z3.BoolVal(at0)
            some = ev.some(agg)
            return some if at_some else z3.Not(some)
        if o in ("eq", "ne") and (self.is_owner(l) or self.is_owner(r)):
            srt = self.owner_sort_of(l if self.is_owner(l) else r)
            rl, rr = self.owner_rel(l), self.owner_rel(r)
            same = self.r.forall(self.r.sorts[srt.name], lambda y: rl(y) == rr(y))
            return same if o == "eq" else z3.Not(same)
        return None

    def is_owner(self, e: Expr) -> bool:
        if isinstance(e, App):
            return isinstance(e.func.dom, OwnerDom)
        if isinstance(e, Op) and e.op == "add" and isinstance(e.args[0], Index):
            return True
        if isinstance(e, Op) and e.op == "ite":
            return self.is_owner(e.args[1]) or self.is_owner(e.args[2])
        return False

    def owner_sort_of(self, e: Expr) -> Sort:
        if isinstance(e, App):
            return _owner_sort(e.func)
        if isinstance(e, Op) and e.op == "add":
            return self.leaf(e.args[0].elem)  # type: ignore[attr-defined]
        assert isinstance(e, Op) and e.op == "ite"
        return self.owner_sort_of(e.args[1] if self.is_owner(e.args[1]) else e.args[2])

    def owner_rel(self, e: Expr) -> Callable[[z3.ExprRef], z3.BoolRef]:
        """An owner value as the relation "y holds it" (NOBODY, owner(x), a state function, Ite)."""
        if isinstance(e, Lit) and e.value == 0 and not isinstance(e.value, bool):
            return lambda y: z3.BoolVal(False)
        if isinstance(e, Op) and e.op == "add" and isinstance(e.args[0], Index) \
                and isinstance(e.args[1], Lit) and e.args[1].value == 1:
            who = self.term(e.args[0].elem)
            return lambda y: y == who
        if isinstance(e, App) and isinstance(e.func.dom, OwnerDom):
            leaves = tuple(self.leaf(x) for x in e.args)
            name = self.r.symbol(e.func, leaves)
            if name is None:  # never written: nobody holds it
                return lambda y: z3.BoolVal(False)
            args = [self.term(x) for x in e.args]
            return lambda y: self.s[name](*args, y)
        if isinstance(e, Op) and e.op == "ite":
            c, a, b = self.bool(e.args[0]), self.owner_rel(e.args[1]), self.owner_rel(e.args[2])
            return lambda y: z3.If(c, a(y), b(y))
        raise TypeError(f"{e!r} is not an owner value (NOBODY, owner(e), Ite of those)")


def _dom_of(e: Expr) -> Any:
    """The value domain of a state application (also one read after the step, `Post`)."""
    if isinstance(e, Post):
        e = e.app
    return e.func.dom if isinstance(e, App) else None


def _same_app(a: Expr, b: Expr) -> bool:
    return isinstance(a, App) and isinstance(b, App) and a.func.name == b.func.name and all(
        isinstance(x, Var) and isinstance(y, Var) and x.name == y.name for x, y in zip(a.args, b.args))


def _delta(ev: "_Eval", value: Expr, target: App, fname: str) -> tuple:
    """The update `value` of counter `target` as old + increment (Reading.keeps_count)."""
    if ev.r.bounds and isinstance(value, Op) and value.op == "ite" and id(value.args[0]) in ev.r.bounds:
        return _delta(ev, value.args[1], target, fname)  # a finite-only cap: any size never saturates
    if _same_app(value, target):
        return ("const", 0)
    if isinstance(value, Op) and value.op == "ite":
        return ("ite", ev.bool(value.args[0]), _delta(ev, value.args[1], target, fname),
                _delta(ev, value.args[2], target, fname))
    if isinstance(value, Op) and value.op in ("add", "sub") and _same_app(value.args[0], target):
        inc = value.args[1]
        if isinstance(inc, Reported):
            inc = ev.reported(inc)  # the model's steps report what they compute
        if isinstance(inc, Lit) and isinstance(inc.value, int) and not isinstance(inc.value, bool):
            return ("const", inc.value if value.op == "add" else -inc.value)
        if value.op == "add" and isinstance(inc, Agg) and inc.kind == "count":
            return ("count", ev, inc)
    return ("unsupported",)


def _owner_sort(f: Func) -> Sort:
    assert isinstance(f.dom, OwnerDom) and f.dom.sort is not None, f.name
    return f.dom.sort


def _forall_all(forall: Quantifier, doms: tuple[z3.SortRef, ...], body: Callable[..., z3.BoolRef],
                bound: tuple[z3.ExprRef, ...] = ()) -> z3.BoolRef:
    if not doms:
        return body(bound)
    return forall(doms[0], lambda x: _forall_all(forall, doms[1:], body, bound + (x,)))


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
