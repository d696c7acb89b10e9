"""The open-world reading: no sizes; a sort's elements are the ids that have appeared.

Used by the trace checker for format v2 (opaque thread ids, agents named by the trace, no header
sizes). It reads the same definition as the fixed-size and any-size readings and restates
nothing: each expression is compiled once into a Python closure; actions are instantiated from
the event that fires them.

State is kept *relative to an unnamed element*. A function of arity n is a table of rows (one per
prefix of its first n-1 arguments), each with a default value (what every element not listed
has) and the cells that differ from it; a function never written is its initial value everywhere.
An `Every` update writes a row's default from one representative unnamed element (`Fresh`) and
the cells of the elements that can differ. All elements the trace never named are alike (nothing
the protocol does can tell them apart), so one representative stands for all of them.

Quantifiers do not range over every named element: `forall x. body` is `body(fresh)` and `body`
at the elements where it can differ from `body(fresh)`. Those are found from the rows' cells at
the positions where `x` occurs (the support), narrowed through conjunctions and disjunctions: in
`forall u. not (pc(u) != idle and ...)` only threads whose pc differs from its default (threads
inside a call) are visited, however many threads the run has. That is what keeps the cost per
event independent of the size of the system.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterable, Mapping

from .syntax import (
    TRUE,
    Action,
    Agg,
    App,
    BoolDom,
    BoolParam,
    EnumDom,
    Every,
    Expr,
    Func,
    Index,
    IntDom,
    IsAll,
    Lit,
    Member,
    Op,
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

INF = float("inf")  # a count whose body holds at the unnamed element: every unnamed one counts


def open_definition(proto: Protocol) -> Protocol:
    """The definition as the open world reads it: no sizes, so what bounds only the finite model
    is dropped the way the any-size reading drops it. A `Protocol.bounds` condition (a counter
    saturating at its finite top) reads as true; an `Action.any_size` conjunct (a finite cursor
    or cap: "the next dispatch index", "registry ids left in the model") reads as its stated
    replacement ("a dispatch not yet written"), since opaque ids have no index and a v2 header
    declares no cap. Counters the any-size reading abstracts (`Protocol.abstractions`) are kept
    as stored, as the finite reading keeps them. The open world reads traces only, so the
    definition's shorthands (spec.lang.shorthand: an older log's one event for two steps) are
    composed into its actions first. A definition without any of these is returned as is."""
    from .shorthand import trace_reading

    proto = trace_reading(proto)
    if not proto.bounds and not any(a.any_size for a in proto.actions):
        return proto
    import dataclasses

    bounds = proto.bounds
    memo: dict[int, Expr] = {}

    def rw(e: Any) -> Any:
        if not isinstance(e, Expr):
            return e
        if id(e) in bounds:
            return TRUE
        got = memo.get(id(e))
        if got is not None:
            return got
        out: Expr = e
        if isinstance(e, Op):
            args = tuple(rw(a) for a in e.args)
            if any(x is not y for x, y in zip(args, e.args)):
                out = Op(e.op, args)
        elif isinstance(e, App):
            args = tuple(rw(a) for a in e.args)
            if any(x is not y for x, y in zip(args, e.args)):
                out = App(e.func, args)
        elif isinstance(e, (Quant, Agg)):
            body = rw(e.body)
            if body is not e.body:
                out = type(e)(e.kind, e.var, body)
        elif isinstance(e, Index):
            el = rw(e.elem)
            if el is not e.elem:
                out = Index(el)
        elif isinstance(e, Post):
            app = rw(e.app)
            if app is not e.app:
                out = Post(app)
        memo[id(e)] = out
        return out

    def up(u: Any) -> Any:
        if isinstance(u, Every):
            return Every(u.var, u.target, rw(lift(u.value)))
        return (u[0], rw(lift(u[1])))

    acts = []
    for a in proto.actions:
        relax = dict(a.any_size)
        acts.append(dataclasses.replace(
            a, select=tuple((k, rw(relax.get(k, x))) for k, x in a.select),
            guard=tuple((k, rw(relax.get(k, x))) for k, x in a.guard),
            updates=tuple(up(u) for u in a.updates), observe=tuple((k, rw(x)) for k, x in a.observe),
            goto=rw(a.goto), checks=tuple((n, why, rw(x)) for n, why, x in a.checks),
            finding_checks=tuple((n, why, rw(x)) for n, why, x in a.finding_checks)))
    claims = {n: dataclasses.replace(c, expr=rw(c.expr)) if c.expr is not None else c for n, c in proto.claims.items()}
    return dataclasses.replace(proto, actions=acts, claims=claims, bounds={})


class Fresh:
    """A representative of the elements of a sort the trace has not named (one per quantifier
    depth, so two nested quantifiers over one sort can pick two different unnamed elements)."""

    __slots__ = ("sort", "depth")

    def __init__(self, sort: str, depth: int) -> None:
        self.sort, self.depth = sort, depth

    def __repr__(self) -> str:
        return f"<an unnamed {self.sort}>"


NO_ELEMENT = None  # the initial value of an element-valued function (no element yet)
MISSING = object()


class Table:
    """One state function: rows keyed by argument prefix, each [default, {last arg: value}]."""

    __slots__ = ("func", "name", "init", "arity", "rows", "val", "log", "by_value")

    def __init__(self, f: Func, log: list[tuple[Any, ...]]) -> None:
        self.func = f
        self.name = f.name
        self.init = _init(f)
        self.arity = len(f.args)
        self.rows: dict[tuple, list] = {}  # type: ignore[type-arg]
        self.val: Any = self.init
        self.log = log  # what each write changed: cells (name, prefix, key), rows (name, prefix), supports
        # a unary enumeration (a program counter): value -> the elements holding it, so "threads at
        # one of these labels" is found without visiting every thread inside a call
        self.by_value: dict[Any, set[Any]] | None = {} if self.arity == 1 and isinstance(f.dom, EnumDom) else None

    def get(self, args: tuple) -> Any:  # type: ignore[type-arg]
        if not self.arity:
            return self.val
        r = self.rows.get(args[:-1])
        return self.init if r is None else r[1].get(args[-1], r[0])

    def set(self, args: tuple, v: Any) -> None:  # type: ignore[type-arg]
        if not self.arity:
            if v != self.val:
                self.log.append((self.name, (), None, self.val, v))
                self.val = v
            return
        p, k = args[:-1], args[-1]
        r = self.rows.get(p)
        if r is None:
            if v == self.init:
                return
            r = self.rows[p] = [self.init, {}]
        cells = r[1]
        bv = self.by_value
        if v == r[0]:
            if k in cells:
                old = cells.pop(k)
                self.log.append((self.name, p, k, old, v))
                self.log.append(("#supp", self.name))
                self.log.append(("#suppr", self.name, p))
                if bv is not None:
                    bv[old].discard(k)
                    self.log.append(("#val", self.name, old))
                if not cells and r[0] == self.init:
                    del self.rows[p]
        else:
            old = cells.get(k, r[0])
            if old != v:
                if k not in cells:
                    self.log.append(("#supp", self.name))
                    self.log.append(("#suppr", self.name, p))
                cells[k] = v
                self.log.append((self.name, p, k, old, v))
                if bv is not None:
                    if old in bv:
                        bv[old].discard(k)
                        self.log.append(("#val", self.name, old))
                    bv.setdefault(v, set()).add(k)
                    self.log.append(("#val", self.name, v))

    def set_row(self, p: tuple, default: Any, cells: Mapping[Any, Any]) -> None:  # type: ignore[type-arg]
        kept = {k: v for k, v in cells.items() if v != default}
        old = self.rows.get(p)
        if old is not None and old[0] == default and old[1] == kept:
            return
        if default == self.init and not kept:
            if old is None:
                return
            del self.rows[p]
        else:
            self.rows[p] = [default, kept]
        self.log.append((self.name, p))
        self.log.append(("#supp", self.name))
        self.log.append(("#suppr", self.name, p))
        if self.by_value is not None:  # rebuilt (a row write of a program counter does not occur)
            self.by_value = {}
            for k, v in kept.items():
                self.by_value.setdefault(v, set()).add(k)
            for v in list(self.by_value) + [default]:
                self.log.append(("#val", self.name, v))

    def support(self, pos: int, prefix: tuple | None) -> Collection[Any]:  # type: ignore[type-arg]
        """Elements at argument `pos` whose value can differ from the unnamed one's."""
        if pos == self.arity - 1 and prefix is not None:
            r = self.rows.get(prefix)
            return () if r is None else r[1].keys()
        return {p[pos] for p in self.rows} if pos < self.arity - 1 else \
            {k for r in self.rows.values() for k in r[1]}

    def items(self) -> Iterable[tuple[tuple, Any]]:  # type: ignore[type-arg]
        """Every named cell (for reports): (arguments, value)."""
        if not self.arity:
            yield (), self.val
            return
        for p, (_, cells) in self.rows.items():
            for k, v in cells.items():
                yield p + (k,), v


def _init(f: Func) -> Any:
    d = f.dom
    if isinstance(d, SortDom):
        return NO_ELEMENT
    if isinstance(d, BoolDom):
        return bool(f.init)
    if isinstance(d, IntDom):
        return int(f.init)
    return str(f.init)


class World:
    """The state of one run: a table per function, and the role each thread id took."""

    def __init__(self, proto: Protocol) -> None:
        self.proto = proto
        self.log: list[tuple[Any, ...]] = []  # changes since the caller last cleared it
        self.t: dict[str, Table] = {f.name: Table(f, self.log) for f in proto.funcs}
        self.role: dict[Any, str] = {}  # element of a union sort (a thread) -> its leaf sort
        self.reads: list[tuple[Any, ...]] = []  # filled by recording closures (invariants)


Env = dict[str, Any]
Fn = Callable[[World, Env], Any]
Cand = Callable[[World, Env], Collection[Any]]


@dataclass
class _Ctx:
    """Compile-time context: quantifier depth per sort (for distinct fresh representatives)."""

    depth: dict[str, int] = field(default_factory=dict)


def _leaf_filter(sort: Sort) -> Callable[[World, Any], bool]:
    names = {s.name for s in sort.leaves()}
    if sort.parts or len(names) != 1:
        return lambda w, e: True
    name = sort.name

    def ok(w: World, e: Any) -> bool:
        r = w.role.get(e)
        return r is None or r == name

    return ok


class Compiler:
    """Expressions -> closures of (world, env); candidate sets for quantified variables."""

    def __init__(self, proto: Protocol, record: bool = False) -> None:
        self.proto = proto
        self.record = record  # closures append what they read to World.reads (incremental claims)
        # while one action is compiled: its observations, which `Reported(key)` reads when the
        # event did not report another value (env["#rep"], set by the replay)
        self.observed: dict[str, Fn] = {}
        self.observed_src: dict[str, Expr] = {}  # and their expressions (`Reported(key, at)`)

    # ---- values -----------------------------------------------------------------------------
    def value(self, e: Expr, hint: Any = None) -> Fn:
        if isinstance(e, Lit):
            v = e.value
            return lambda w, env: v
        if isinstance(e, Var):
            n = e.name
            return lambda w, env: env[n]
        if isinstance(e, BoolParam):
            n = e.name
            return lambda w, env: bool(env[n])
        if isinstance(e, IsAll):
            n = e.scope.name
            return lambda w, env: env[n] is None
        if isinstance(e, Member):
            n, x = e.scope.name, self.value(e.elem)
            return lambda w, env: env[n] is not None and x(w, env) in env[n]
        if isinstance(e, App):
            return self._app(e)
        if isinstance(e, Quant):
            return self._quant(e)
        if isinstance(e, Agg):
            return self._agg(e)
        if isinstance(e, Reported):
            key, own = e.key, self.observed.get(e.key)
            if own is None:
                raise NotImplementedError(f"Reported({key!r}) outside an action that observes it")
            if e.at is None:
                return lambda w, env: env["#rep"][key] if key in env.get("#rep", ()) else own(w, env)
            return self._reported_bit(e)
        if isinstance(e, Post):
            return self._post(e)
        if isinstance(e, Index):
            raise NotImplementedError("an element's position is read only as a mutex owner, owner(e) = Index(e) + 1")
        assert isinstance(e, Op)
        if _owner_of(e) is not None:
            # owner(e): the open world stores the holding element itself (NOBODY stays 0), as
            # the any-size reading's relation `held(e)` does; elements have no positions
            return self.value(_owner_of(e))  # type: ignore[arg-type]
        return self._op(e)

    def _app(self, e: App) -> Fn:
        name = e.func.name
        args = [self.value(a) for a in e.args]
        if self.record:
            return self._app_recorded(name, args)
        if not args:
            return lambda w, env: w.t[name].val
        if len(args) == 1:
            a0 = args[0]

            def one(w: World, env: Env) -> Any:
                r = w.t[name].rows.get(())
                return w.t[name].init if r is None else r[1].get(a0(w, env), r[0])

            return one
        if len(args) == 2:
            a0, a1 = args

            def two(w: World, env: Env) -> Any:
                t = w.t[name]
                r = t.rows.get((a0(w, env),))
                return t.init if r is None else r[1].get(a1(w, env), r[0])

            return two
        return lambda w, env: w.t[name].get(tuple(a(w, env) for a in args))

    def _app_recorded(self, name: str, args: list[Fn]) -> Fn:
        if not args:
            def zero(w: World, env: Env) -> Any:
                w.reads.append((name, (), None))
                return w.t[name].val

            return zero
        pre, last = args[:-1], args[-1]

        def rec(w: World, env: Env) -> Any:
            p = tuple(f(w, env) for f in pre)
            k = last(w, env)
            w.reads.append((name, p, k))
            t = w.t[name]
            r = t.rows.get(p)
            return t.init if r is None else r[1].get(k, r[0])

        return rec

    def _op(self, e: Op) -> Fn:
        o = e.op
        labels = _one_of(e) if o == "or" else None
        if labels is not None:
            # `f(..) == l1 or f(..) == l2 ...`: one read, a set membership; an incremental claim
            # depends on the membership, not on the value (a pc moving inside a window is no change)
            app, lits = labels
            if self.record and app.args:
                name = app.func.name
                pre = [Compiler(self.proto).value(a) for a in app.args[:-1]]
                last = Compiler(self.proto).value(app.args[-1])

                def member(w: World, env: Env) -> bool:
                    p = tuple(f(w, env) for f in pre)
                    k = last(w, env)
                    w.reads.append(("#in", name, p, k, lits))
                    t = w.t[name]
                    r = t.rows.get(p)
                    return (t.init if r is None else r[1].get(k, r[0])) in lits

                return member
            x = self.value(app)
            return lambda w, env: x(w, env) in lits
        xs = [self.value(a) for a in e.args]
        if o == "and":
            order = _cheap_first(e.args, xs)
            return lambda w, env: all(x(w, env) for x in order)
        if o == "or":
            order = _cheap_first(e.args, xs)
            return lambda w, env: any(x(w, env) for x in order)
        if o == "not":
            x = xs[0]
            return lambda w, env: not x(w, env)
        if o == "implies":
            a, b = xs
            return lambda w, env: (not a(w, env)) or b(w, env)
        if o == "ite":
            c, a, b = xs
            return lambda w, env: a(w, env) if c(w, env) else b(w, env)
        a, b = xs
        if o == "eq":
            return lambda w, env: a(w, env) == b(w, env)
        if o == "ne":
            return lambda w, env: a(w, env) != b(w, env)
        if o == "add":
            return lambda w, env: a(w, env) + b(w, env)
        if o == "sub":
            return lambda w, env: a(w, env) - b(w, env)
        if o == "lt":
            return lambda w, env: a(w, env) < b(w, env)
        if o == "le":
            return lambda w, env: a(w, env) <= b(w, env)
        if o == "gt":
            return lambda w, env: a(w, env) > b(w, env)
        if o == "ge":
            return lambda w, env: a(w, env) >= b(w, env)
        raise ValueError(f"unknown operator {o}")

    def _quant(self, e: Quant) -> Fn:
        var = e.var
        body = self.value(e.body)
        cand = self.candidates(e.body, var)
        leafok = _leaf_filter(var.sort)
        fresh = Fresh(var.sort.name, id(e))  # one representative per quantifier node
        n = var.name
        forall = e.kind == "forall"
        record = self.record

        def q(w: World, env: Env) -> bool:
            inner = dict(env)
            inner[n] = fresh
            start = len(w.reads) if record else 0
            if body(w, inner) != forall:
                return not forall
            for c in cand(w, env):
                if not leafok(w, c):
                    continue
                inner[n] = c
                mark = len(w.reads) if record else 0
                if body(w, inner) != forall:
                    if record:
                        # the value rests on this witness alone (more elements cannot undo a
                        # counterexample): forget the other reads, so only its changes matter
                        del w.reads[start:mark]
                    return not forall
            return forall

        return q

    def _post(self, e: Post) -> Fn:
        """What the acting step leaves at `e.app`: its write there (env["#post"], the step's
        pending writes, set before its checks), else the pre-state value."""
        name = e.app.func.name
        args = [self.value(a) for a in e.app.args]
        plain = self.value(e.app)

        def post(w: World, env: Env) -> Any:
            pend = env.get("#post")
            if pend is not None:
                xs = tuple(f(w, env) for f in args)
                got = pend.get((name, xs), MISSING)
                if got is not MISSING:
                    return got
                row = pend.get((name, xs[:-1], "#row")) if xs else None
                if row is not None:
                    return row[1].get(xs[-1], row[0])
            return plain(w, env)

        return post

    def _reported_bit(self, e: Reported) -> Fn:
        """`Reported(key, at)`: whether element `at` is in the mask the event reports for `key`
        (a v2 mask is the set of its elements), else the mask observation's body at `at` (the
        model's own step, as the finite and any-size readings read it)."""
        key, mask = e.key, self.observed_src.get(e.key)
        if not (isinstance(mask, Agg) and mask.kind == "mask") or e.at is None:
            raise NotImplementedError(f"Reported({key!r}, ...) needs a Mask observation")
        x, n, body = self.value(e.at), mask.var.name, self.value(mask.body)

        def bit(w: Any, env: dict[str, Any]) -> Any:
            at = x(w, env)
            rep = env.get("#rep")
            if rep is not None and key in rep:
                return at in rep[key]
            return body(w, {**env, n: at})

        return bit

    def _agg(self, e: Agg) -> Fn:
        """`count`: how many elements satisfy the body (INF when the unnamed one does: every
        element the trace never names counts); `mask`: the set of them (a frozenset: sets of ids
        compare equal in any order). Only the candidates can differ from the unnamed element."""
        var = e.var
        body = self.value(e.body)
        cand = self.candidates(e.body, var)
        leafok = _leaf_filter(var.sort)
        fresh = Fresh(var.sort.name, id(e))
        n = var.name
        count = e.kind == "count"

        def agg(w: World, env: Env) -> Any:
            inner = dict(env)
            inner[n] = fresh
            if body(w, inner):
                if count:
                    return INF
                raise ValueError(f"mask over {var.sort.name}: the body holds for every unnamed element")
            hit: set[Any] = set()
            seen: set[Any] = set()
            for c in cand(w, env):
                if c in seen or not leafok(w, c):
                    continue
                seen.add(c)
                inner[n] = c
                if body(w, inner):
                    hit.add(c)
            return len(hit) if count else frozenset(hit)

        return agg

    # ---- candidate sets ---------------------------------------------------------------------
    def candidates(self, e: Expr, x: Var) -> Callable[[World, Env], Iterable[Any]]:
        """A superset of the elements c where e[x := c] can differ from e[x := unnamed]: the
        narrowed support, plus every element bound around the quantifier (x == a can hold only
        at a's value; a bound element of another sort is just one more element to try).
        Duplicates are harmless (one more evaluation); nothing is copied."""
        fn = self._cand(e, x)

        def out(w: World, env: Env) -> Iterable[Any]:
            bound = [v for v in env.values() if isinstance(v, (str, int)) and not isinstance(v, bool)]
            cs = fn(w, env)
            return itertools.chain(cs, bound) if bound else cs

        return out

    def _cand(self, e: Expr, x: Var) -> Cand:
        if not _mentions(e, x):
            return lambda w, env: ()
        if isinstance(e, Op) and e.op == "or" and _one_of(e) is not None:
            app, lits = _one_of(e)  # type: ignore[misc]
            if len(app.args) == 1 and isinstance(app.args[0], Var) and app.args[0].name == x.name \
                    and isinstance(app.func.dom, EnumDom):
                return self._at_labels(app.func.name, lits)
            return self._support(app, x)  # one application, whatever labels it is compared with
        if isinstance(e, Op) and e.op in ("and", "or"):
            # cheapest part first: a quantifier-free part that narrows spares evaluating (and, for
            # an incremental claim, depending on) a quantified one
            args = sorted((a for a in e.args if _mentions(a, x)), key=_cost)
            parts = [(self.value(a), self._cand(a, x)) for a in args]
            absorbing = e.op == "and"  # a conjunct false for the unnamed element narrows
            fresh = Fresh(x.sort.name, -1)
            n = x.name

            cheap = [not _has_quant(a) for a in args]

            def narrowed(w: World, env: Env) -> Collection[Any]:
                inner = dict(env)
                inner[n] = fresh
                best: Collection[Any] | None = None
                for (val, c), q_free in zip(parts, cheap):
                    if best is not None and not q_free:
                        break  # a quantifier-free part already narrows: spare the quantified ones
                    if bool(val(w, inner)) != absorbing:
                        # this part has the absorbing value at the unnamed element: only where it
                        # differs can the whole differ; the smallest such set is enough
                        cs = c(w, env)
                        if best is None or len(cs) < len(best):
                            best = cs
                if best is not None:
                    return best
                return list(itertools.chain.from_iterable(c(w, env) for _, c in parts))

            return narrowed
        if isinstance(e, Op) and e.op == "not":
            return self._cand(e.args[0], x)
        if isinstance(e, Op) and e.op == "implies":
            from .syntax import Not, Or

            return self._cand(Or(Not(e.args[0]), e.args[1]), x)
        if isinstance(e, Member) and isinstance(e.elem, Var) and e.elem.name == x.name:
            n = e.scope.name
            return lambda w, env: env[n] or ()
        return self._support(e, x)

    def _at_labels(self, name: str, lits: frozenset[Any]) -> Cand:
        """Elements whose value of a unary enumeration is one of `lits` (by the value index);
        every element with a non-default value if the default itself is one of them."""
        keys = [("#val", name, lab) for lab in sorted(lits)]
        record = self.record

        def at(w: World, env: Env) -> Collection[Any]:
            t = w.t[name]
            r = t.rows.get(())
            default = t.init if r is None else r[0]
            if record:
                w.reads.append((name, ()))  # the default (a row write) decides which way this goes
            if default in lits or t.by_value is None:
                if record:
                    w.reads.append(("#supp", name))
                return () if r is None else r[1].keys()
            if record:
                w.reads.extend(keys)
            bv = t.by_value
            hit = [bv[lab] for lab in lits if bv.get(lab)]
            if not hit:
                return ()
            return hit[0] if len(hit) == 1 else set().union(*hit)

        return at

    def _support(self, e: Expr, x: Var) -> Cand:
        """The union, over applications with x among their arguments, of their support; plus
        the values of element-valued applications x is compared with."""
        getters: list[Cand] = []
        for m in _members(e):  # x in an agent-set parameter: the set's members
            if isinstance(m.elem, Var) and m.elem.name == x.name:
                getters.append(lambda w, env, n=m.scope.name: env[n] or ())
        for app in _apps(e):
            for pos, a in enumerate(app.args):
                if isinstance(a, Var) and a.name == x.name:
                    getters.append(self._support_at(app, pos))
            esort = _elem_sort(app.func)
            if esort is not None and (esort.contains(x.sort) or x.sort.contains(esort)):
                name = app.func.name
                rec = self.record
                at = None if any(_mentions(a, x) for a in app.args) else self.value(app)

                def values(w: World, env: Env, name: str = name, rec: bool = rec, at: Fn | None = at) -> Collection[Any]:
                    if at is not None:
                        # arguments bound here (`da(k) == x` at the dispatch k): that one value, not
                        # every value the function holds (which grows with the run)
                        try:
                            v = at(w, env)
                        except KeyError:  # an argument bound by a quantifier inside: every value
                            pass
                        else:
                            return () if v is None else (v,)
                    if rec:
                        w.reads.append(("#supp", name))
                    return {v for _, v in w.t[name].items()}

                getters.append(values)
        if len(getters) == 1:
            return getters[0]

        def union(w: World, env: Env) -> Collection[Any]:
            return list(itertools.chain.from_iterable(g(w, env) for g in getters))

        return union

    def _support_at(self, app: App, pos: int) -> Cand:
        inner = self._support_at_plain(app, pos)
        if not self.record:
            return inner
        key = ("#supp", app.func.name)
        if pos == len(app.args) - 1:
            # the cells of one row: depend on that row's support only (`pk(k, c)` over c at one
            # dispatch k), not on the function's, which every other dispatch's write changes
            name = app.func.name
            pf = [self.value(a) for a in app.args[:-1]]

            def row(w: World, env: Env) -> Collection[Any]:
                try:
                    p = tuple(f(w, env) for f in pf)
                except KeyError:
                    w.reads.append(key)
                    return inner(w, env)
                w.reads.append(("#suppr", name, p))
                return inner(w, env)

            return row

        def recorded(w: World, env: Env) -> Collection[Any]:
            w.reads.append(key)
            return inner(w, env)

        return recorded

    def _support_at_plain(self, app: App, pos: int) -> Cand:
        name = app.func.name
        n = len(app.args)
        if pos == n - 1:
            pf = [self.value(a) for a in app.args[:-1]]

            def at_last(w: World, env: Env) -> Collection[Any]:
                try:
                    key = tuple(p(w, env) for p in pf)
                except KeyError:  # a prefix variable not bound yet: take every row
                    return w.t[name].support(pos, None)
                return w.t[name].support(pos, key)

            return at_last
        return lambda w, env: w.t[name].support(pos, None)


def _owner_of(e: Expr) -> Expr | None:
    """e if `e` is owner(x) = Index(x) + 1 (the value of a mutex x holds), else None."""
    if isinstance(e, Op) and e.op == "add" and isinstance(e.args[0], Index) and isinstance(e.args[1], Lit) \
            and e.args[1].value == 1:
        return e.args[0].elem
    return None


def _elem_sort(f: Func) -> Sort | None:
    """The sort of the elements a function's values are (an element, or a mutex's holder)."""
    from .syntax import OwnerDom

    if isinstance(f.dom, SortDom):
        return f.dom.sort
    if isinstance(f.dom, OwnerDom) and f.dom.sort is not None:
        return f.dom.sort
    return None


def _mentions(e: Expr, x: Var) -> bool:
    if isinstance(e, Var):
        return e.name == x.name
    if isinstance(e, App):
        return any(_mentions(a, x) for a in e.args)
    if isinstance(e, Op):
        return any(_mentions(a, x) for a in e.args)
    if isinstance(e, (Quant, Agg)):
        return e.var.name != x.name and _mentions(e.body, x)
    if isinstance(e, Member):
        return _mentions(e.elem, x)
    if isinstance(e, Index):
        return _mentions(e.elem, x)
    if isinstance(e, Post):
        return _mentions(e.app, x)
    return False


def _apps(e: Expr) -> Iterable[App]:
    if isinstance(e, App):
        yield e
        for a in e.args:
            yield from _apps(a)
    elif isinstance(e, Op):
        for a in e.args:
            yield from _apps(a)
    elif isinstance(e, (Quant, Agg)):
        yield from _apps(e.body)
    elif isinstance(e, Member):
        yield from _apps(e.elem)
    elif isinstance(e, Index):
        yield from _apps(e.elem)
    elif isinstance(e, Post):
        yield from _apps(e.app)


def _one_of(e: Op) -> tuple[App, frozenset[Any]] | None:
    """An `or` of equalities between one application and literals, else None."""
    app: App | None = None
    lits = []
    for a in e.args:
        if not (isinstance(a, Op) and a.op == "eq" and isinstance(a.args[0], App) and isinstance(a.args[1], Lit)):
            return None
        f = a.args[0]
        if app is None:
            app = f
        elif not _same_app(app, f):
            return None
        lits.append(a.args[1].value)
    if app is None or not all(isinstance(v, str) for v in lits):
        return None
    return app, frozenset(lits)


def _same_app(a: Expr, b: Expr) -> bool:
    if isinstance(a, Var) and isinstance(b, Var):
        return a.name == b.name
    if isinstance(a, App) and isinstance(b, App):
        return a.func is b.func and len(a.args) == len(b.args) and all(map(_same_app, a.args, b.args))
    return a is b


def _has_quant(e: Expr) -> bool:
    if isinstance(e, (Quant, Agg)):
        return True
    if isinstance(e, (Op, App)):
        return any(_has_quant(a) for a in e.args)
    return False


def _members(e: Expr) -> Iterable[Member]:
    if isinstance(e, Member):
        yield e
    elif isinstance(e, (Op, App)):
        for a in e.args:
            yield from _members(a)
    elif isinstance(e, (Quant, Agg)):
        yield from _members(e.body)


def _cost(e: Expr) -> int:
    if isinstance(e, (Quant, Agg)):
        return 100 + _cost(e.body)
    if isinstance(e, Op):
        return 1 + sum(_cost(a) for a in e.args)
    if isinstance(e, App):
        return 1 + sum(_cost(a) for a in e.args)
    return 0


def _cheap_first(args: tuple[Expr, ...], fns: list[Fn]) -> list[Fn]:
    """Conjuncts/disjuncts without quantifiers first: the result is the same (no side effects),
    and a cheap false conjunct spares a quantifier."""
    return [f for _, _, f in sorted(((_cost(a), i, f) for i, (a, f) in enumerate(zip(args, fns))),
                                    key=lambda t: (t[0], t[1]))]


# ---- actions -----------------------------------------------------------------------------------


@dataclass
class OAction:
    """One action of the definition, compiled for the open world."""

    defn: Action
    role: str
    at: str
    kind: str
    static: list[tuple[str, Any]]  # (key, literal str | (regex, [param names]) | ScopeParam | BoolParam | Var)
    select: list[tuple[str, Fn]]
    guard: list[tuple[str, Fn]]
    checks: list[tuple[str, str, Fn]]
    observe: list[tuple[str, Fn]]
    writes: list[Callable[[World, Env], list[tuple[Any, ...]]]]  # -> [(table, args, value)] / rows
    goto: Fn | None
    pc: str


def _template(t: str) -> tuple[re.Pattern[str], list[str]] | None:
    names = re.findall(r"\{(\w+)\}", t)
    if not names:
        return None
    rx = re.escape(t)
    for n in names:
        rx = rx.replace(re.escape("{" + n + "}"), f"(?P<{n}>.+?)")
    return re.compile(rx + r"\Z"), names


class OpenWorld:
    """A definition compiled for the open world: match an event to its action, fire it."""

    def __init__(self, proto: Protocol) -> None:
        self.proto = proto = open_definition(proto)
        c = self.c = Compiler(proto)
        self.actions: list[OAction] = [self._action(a) for a in proto.actions]
        self.by: dict[tuple[str, str, str], list[OAction]] = {}
        for a in self.actions:
            self.by.setdefault((a.role, a.at, a.kind), []).append(a)
        self.begins: dict[str, list[str]] = {}  # event kind -> roles whose idle step it is
        for a in self.actions:
            if a.at == "idle" and a.role not in self.begins.get(a.kind, []):
                self.begins.setdefault(a.kind, []).append(a.role)
        self.kinds = {a.kind for a in self.actions}
        self.invariants = [(name, cl.summary, c.value(cl.expr)) for name, cl in proto.claims.items()
                           if cl.kind == "invariant" and cl.expr is not None]
        self.static_keys: dict[str, set[str]] = {}
        self.observed_keys: dict[str, set[str]] = {}
        for a in self.actions:
            self.static_keys.setdefault(a.kind, set()).update(k for k, _ in a.static)
            self.observed_keys.setdefault(a.kind, set()).update(k for k, _ in a.observe)

    def _action(self, a: Action) -> OAction:
        c = self.c
        c.observed_src = dict(a.observe)
        c.observed = {k: c.value(x) for k, x in a.observe}
        pc = self.proto.pc[a.role.name]
        static: list[tuple[str, Any]] = []
        for k, v in a.static:
            if isinstance(v, str):
                static.append((k, _template(v) or v))
            else:
                static.append((k, v))
        writes = []
        for up in a.updates:
            writes.append(self._write(up))
        goto = c.value(a.goto) if a.goto is not None else None
        return OAction(a, a.role.name, a.at, a.kind, static,
                       [(lab, c.value(x)) for lab, x in a.select],
                       [(lab, c.value(x)) for lab, x in a.guard],
                       [(name, why, c.value(x)) for name, why, x in a.checks],
                       [(k, c.value(x)) for k, x in a.observe], writes, goto, pc.name)

    def _write(self, up: Any) -> Callable[[World, Env], list[tuple[Any, ...]]]:
        c = self.c
        if isinstance(up, Every):
            target, var = up.target, up.var
            if not target.args or not isinstance(target.args[-1], Var) or target.args[-1].name != var.name:
                raise NotImplementedError(f"{target.func.name}: an Every update must range over the last argument")
            name = target.func.name
            prefix = [c.value(a) for a in target.args[:-1]]
            val = c.value(lift(up.value))
            cand = c.candidates(lift(up.value), var)
            fresh = Fresh(var.sort.name, -2)
            n = var.name

            def every(w: World, env: Env) -> list[tuple[Any, ...]]:
                p = tuple(f(w, env) for f in prefix)
                inner = dict(env)
                inner[n] = fresh
                default = val(w, inner)
                t = w.t[name]
                r = t.rows.get(p)
                ks = set(cand(w, env)) | (set(r[1]) if r is not None else set())
                cells = {}
                for k in ks:
                    inner[n] = k
                    cells[k] = val(w, inner)
                return [("row", t, p, default, cells)]

            return every
        target, value = up
        name = target.func.name
        args = [c.value(x) for x in target.args]
        val = c.value(lift(value))
        return lambda w, env: [("cell", w.t[name], tuple(f(w, env) for f in args), val(w, env))]

    # ---- matching ---------------------------------------------------------------------------
    def bind(self, a: OAction, keys: Mapping[str, str], env: Env) -> bool:
        """Bind the action's parameters from the event's static keys; False if they do not fit."""
        for k, spec in a.static:
            got = keys.get(k)
            if got is None and k in a.defn.implied:  # omitted: the thread acts for itself (Action.implied)
                me = env[a.defn.thread.name]
                if not isinstance(me, str):  # bound without a thread (a per-line cache): the
                    env[spec.name] = me      # parameter is the thread's, whichever it is
                    continue
                got = me
            if got is None:
                return False
            if isinstance(spec, str):
                if got != spec:
                    return False
            elif isinstance(spec, tuple):
                rx, names = spec
                m = rx.match(got)
                if m is None:
                    return False
                for n in names:
                    if n in env and str(env[n]) != m.group(n):
                        return False
                    env.setdefault(n, m.group(n))
            elif isinstance(spec, ScopeParam):
                if got == "all":
                    env[spec.name] = None
                else:
                    if not spec.sets:
                        return False
                    members = frozenset(got.split(","))
                    if "" in members or len(members) != len(got.split(",")):
                        return False
                    env[spec.name] = members
            elif isinstance(spec, BoolParam):
                want = dict(a.defn.consts).get(spec.name)
                if got not in ("0", "1") or (want is not None and bool(int(got)) != bool(want)):
                    return False
                env[spec.name] = bool(int(got))
            elif isinstance(spec, Var):
                if spec.name in env and env[spec.name] != got:
                    return False
                env[spec.name] = got
        for k, v in a.defn.consts:
            env.setdefault(k, v)
        return True

    def pending(self, w: World, a: OAction, env: Env) -> dict[Any, Any]:
        """The step's writes, not applied: (name, args) -> value, (name, prefix, "#row") ->
        (default, cells); what `Post` reads in its checks."""
        out: dict[Any, Any] = {}
        for f in a.writes:
            for op in f(w, env):
                if op[0] == "row":
                    out[(op[1].name, op[2], "#row")] = (op[3], op[4])
                else:
                    out[(op[1].name, op[2])] = op[3]
        return out

    def fire(self, w: World, a: OAction, env: Env, thread: Any) -> None:
        """Apply `a`'s updates (all read the pre-state) and its goto."""
        ops: list[tuple[Any, ...]] = []
        for f in a.writes:
            ops += f(w, env)
        nxt = a.goto(w, env) if a.goto is not None else None
        for op in ops:
            if op[0] == "row":
                _, t, p, d, cells = op
                t.set_row(p, d, cells)
            else:
                _, t, args, v = op
                t.set(args, v)
        if nxt is not None:
            w.t[a.pc].set((thread,), nxt)

    def pc_of(self, w: World, role: str, thread: Any) -> str:
        return w.t[self.proto.pc[role].name].get((thread,))  # type: ignore[no-any-return]


def render(v: Any) -> str:
    """A value as a trace writes it."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if v is None:
        return "none"
    if isinstance(v, frozenset):  # a mask: its elements in any order; the empty set is `none`
        return ",".join(sorted(map(str, v))) if v else "none"
    return str(v)


def _order(x: Any) -> tuple[int, str]:
    """A total order on elements of any sort (ids are strings; the unnamed ones sort first), so
    that the element a failing claim names does not depend on set iteration order."""
    return (0, repr(x)) if isinstance(x, Fresh) else (1, str(x))


def as_set(text: str) -> frozenset[str] | None:
    """The set a mask observation writes (`gpu3,gpu0`, `none` for the empty set); None if it
    names an element twice or an empty one."""
    if text == "none":
        return frozenset()
    parts = text.split(",")
    got = frozenset(parts)
    return None if "" in got or len(got) != len(parts) else got


class Incremental:
    """An invariant claim evaluated only where an event can have changed it.

    For `forall x. body`, each element's `body(x)` is evaluated by closures that record what they
    read (cells, and the supports a quantifier enumerated); after an event, only the elements
    whose reads the event's writes touched are evaluated again, plus any element that entered
    the candidate set. A value is a function of what it read, so an element not touched keeps its
    value: this is exact, not a sample. Other claims are re-evaluated when anything they read
    changed.
    """

    def __init__(self, proto: Protocol, name: str, expr: Expr) -> None:
        self.name = name
        c = Compiler(proto, record=True)
        self.forall = isinstance(expr, Quant) and expr.kind == "forall"
        if self.forall:
            assert isinstance(expr, Quant)
            self.var = expr.var.name
            self.body = c.value(expr.body)
            self.top = c.candidates(expr.body, expr.var)
            self.fresh = Fresh(expr.var.sort.name, 0)
        else:
            self.body = c.value(expr)
        self.deps: dict[tuple[Any, ...], set[Any]] = {}
        self.keys: dict[Any, set[tuple[Any, ...]]] = {}
        self.last: dict[Any, list[tuple[Any, ...]]] = {}  # each element's reads at its last evaluation
        self.pdeps: dict[tuple[Any, ...], dict[Any, frozenset[Any]]] = {}  # cell -> {element: labels}
        self.known: set[Any] = set()
        self._TOP = object()

    def _eval(self, w: World, x: Any) -> bool:
        w.reads = []
        ok = bool(self.body(w, {self.var: x}) if self.forall else self.body(w, {}))
        self._index(x, w.reads)
        return ok

    def _index(self, x: Any, reads: list[tuple[Any, ...]]) -> None:
        if self.last.get(x) == reads:
            return  # read the same cells as last time: the index already says so
        self.last[x] = reads
        for k in self.keys.pop(x, ()):
            if k[0] == "#in" and len(k) == 4:
                pd = self.pdeps.get(k[1:])
                if pd is not None:
                    pd.pop(x, None)
                continue
            s = self.deps.get(k)
            if s is not None:
                s.discard(x)
        ks: set[tuple[Any, ...]] = set()
        for r in reads:
            if len(r) == 5:  # ("#in", name, prefix, key, labels): depends on the membership only
                cell = (r[1], r[2], r[3])
                self.pdeps.setdefault(cell, {})[x] = r[4]
                ks.add(("#in",) + cell)
                ks.add((r[1], r[2]))
                continue
            ks.add(r)
            if len(r) == 3:
                ks.add((r[0], r[1]))  # a row write (an `Every`) changes every cell of the row
        for k in ks:
            if k[0] == "#in" and len(k) == 4:
                continue
            self.deps.setdefault(k, set()).add(x)
        self.keys[x] = ks

    def start(self, w: World) -> Any:
        """Evaluate everything once; the failing element (or True for a closed claim), else None."""
        if not self.forall:
            return None if self._eval(w, None) else True
        for x in [self.fresh, *sorted(self._candidates(w), key=_order)]:
            if not self._eval(w, x):
                return x
        return None

    def _candidates(self, w: World) -> set[Any]:
        w.reads = []
        cs = set(self.top(w, {}))
        self._index(self._TOP, w.reads)
        new = cs - self.known
        self.known |= new
        return new

    def _entered(self, w: World, log: list[tuple[Any, ...]]) -> set[Any]:
        """Elements that may have entered the candidate set with this event's writes. A support
        gains an element only through a write that names it (a cell's key or row prefix, a row's
        cells, an element-valued cell's value), so those are enough: recomputing the whole set
        would cost what the run has named so far (every dispatch), per event. Elements of other
        sorts among them are evaluated too, harmlessly: one with no state is the unnamed one."""
        out: set[Any] = set()
        for k in log:
            if len(k) == 5:
                out.update(k[1])
                out.add(k[2])
                for v in (k[3], k[4]):
                    if isinstance(v, str):
                        out.add(v)
            elif len(k) == 2 and not k[0].startswith("#"):
                out.update(k[1])
                r = w.t[k[0]].rows.get(k[1])
                if r is not None:
                    out.update(r[1])
        out.discard(None)
        new = out - self.known
        self.known |= new
        return new

    def after(self, w: World, log: list[tuple[Any, ...]]) -> Any:
        """After an event whose writes are `log`: the failing element, or None."""
        dirty: set[Any] = set()
        deps, pdeps = self.deps, self.pdeps
        for k in log:
            if len(k) == 5:  # a cell write: (name, prefix, key, old, new)
                cell = k[:3]
                s = deps.get(cell)
                if s:
                    dirty |= s
                pd = pdeps.get(cell)
                if pd:
                    old, new = k[3], k[4]
                    dirty.update(x for x, lits in pd.items() if (old in lits) != (new in lits))
                continue
            s = deps.get(k)
            if s:
                dirty |= s
        if not dirty:
            return None
        if not self.forall:
            return None if self._eval(w, None) else True
        if self._TOP in dirty:
            dirty.discard(self._TOP)
            dirty |= self._entered(w, log)
        for x in sorted(dirty, key=_order):  # the failing element named is the least, whatever the hash seed
            if not self._eval(w, x):
                return x
        return None
