"""The open-world reading compiled to straight-line Python (the trace checker's fast engine).

`spec.lang.openworld` interprets the definition per event (closures over expression trees,
`Incremental` monitors that record what each evaluation read). This module reads the same
definition once and writes Python source for it: one function per action, specialised to the
action's role, label and kind, taking its bound parameters and the event's expected observations
as arguments; guards, selectors, step claims, observations and updates inlined (literals folded by
`spec.lang.finite.Compiler`, whose folding this reuses through its target-text hooks); quantifiers
as loops over a narrowed candidate set; invariant claims re-evaluated only after the actions whose
writes can change them, and then only at the elements those writes reach (a static dependency
analysis of the claim's reads against the action's writes). Nothing here restates a guard or an
update: every line of the generated source comes from an expression of the definition.

State is openworld's, relative to an unnamed element: a unary function is a dict of the cells
that differ from its default, a binary one a dict of rows `[default, cells]` keyed by the first
argument (a tuple prefix from three arguments on). `export()` gives the state in `Table` form, so
on a failure the interpreter takes over from the exact pre-state and writes the message
(`checker/openworld_check.py`): a compiled action that cannot fire leaves the state untouched
(updates computed into locals first; an invariant failure after the writes undoes them).

Quantifiers: `forall x. B` is `B(unnamed)` and `B` at the elements where B can be false. That set
is read off B: an atom K with `not K -> B` (a boolean cell that is false by default: only the
elements with a cell can make B false; a program counter at a label set that excludes the
initial label: the threads currently in that window, kept in a set as gotos cross it), else every
element the trace has named in that sort (exact too: unnamed elements behave like the
representative). `exists` is its dual.
"""
from __future__ import annotations

import itertools
import keyword
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .finite import Compiler as _FoldCompiler
from .finite import PythonText
from .finite import _Fold, reported_keys
from .openworld import INF, Fresh, _one_of, _owner_of, as_set, render
from .syntax import (
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


class NotCompilable(Exception):
    """The definition uses something this compiler does not handle; the interpreter reads it."""


_INT = re.compile(r"-?[0-9]+\Z")
MISS = object()  # an absent cell (undo of a write)
IMPOSSIBLE = object()  # an observed text no value of the expression's type renders as


def _v(name: str) -> str:
    return "v_" + name


def _init(f: Func) -> Any:
    d = f.dom
    if isinstance(d, SortDom):
        return None
    if isinstance(d, BoolDom):
        return bool(f.init)
    if isinstance(d, IntDom):
        return int(f.init)
    return str(f.init)


def kind_of(e: Expr) -> str:
    """'bool' | 'int' | 'label' | 'elem': how an observed value is written and compared."""
    if isinstance(e, Lit):
        v = e.value
        return "bool" if isinstance(v, bool) else "int" if isinstance(v, int) else "label"
    if isinstance(e, Agg):
        return "int" if e.kind == "count" else "set"
    if isinstance(e, App):
        d = e.func.dom
        return ("bool" if isinstance(d, BoolDom) else "int" if isinstance(d, IntDom)
                else "label" if isinstance(d, EnumDom) else "elem")
    if isinstance(e, Op):
        if e.op in ("add", "sub"):
            return "int"
        if e.op == "ite":
            ks = [kind_of(a) for a in e.args[1:]]
            return next((k for a, k in zip(e.args[1:], ks) if not isinstance(a, Lit)), ks[0])
        return "bool"
    if isinstance(e, Var):
        return "elem"
    return "bool"


def expected(kind: str, got: str) -> Any:
    """The value an observation must have for the trace to write `got` (already normalised)."""
    if kind == "bool":
        return True if got == "1" else False if got == "0" else IMPOSSIBLE
    if kind == "int":
        return int(got) if _INT.match(got) else IMPOSSIBLE
    if kind == "set":
        s = as_set(got)
        return IMPOSSIBLE if s is None else s
    return got  # labels compare as text; elements through render()


def _cost(e: Expr) -> int:
    if isinstance(e, (Quant, Agg)):
        return 100 + _cost(e.body)
    if isinstance(e, (Op, App)):
        return 1 + sum(_cost(a) for a in e.args)
    return 0


def _mentions(e: Expr, name: str) -> bool:
    if isinstance(e, Var):
        return e.name == name
    if isinstance(e, (App, Op)):
        return any(_mentions(a, name) for a in e.args)
    if isinstance(e, (Quant, Agg)):
        return e.var.name != name and _mentions(e.body, name)
    if isinstance(e, (Member, Index)):
        return _mentions(e.elem, name)
    return False


# ---- candidate atoms (see the module docstring) ------------------------------------------------


@dataclass(frozen=True)
class _Atom:
    kind: str  # "win" (pc in labels) | "scope" (x in a scope param) | "cell" (f(.., x) != value) | "union"
    # | "eqv" (x == an expression not naming x: that one value)
    app: App | None = None
    expr: Expr | None = None
    value: Any = False  # "cell": the function's initial value; only cells can differ from it
    labels: frozenset[str] = frozenset()
    scope: str = ""
    parts: tuple["_Atom", ...] = ()


class _Atoms:
    def __init__(self, gen: "Gen", x: Var) -> None:
        self.g, self.x = gen, x

    def if_true(self, e: Expr) -> list[_Atom]:
        """Atoms K with e -> K."""
        x = self.x
        if isinstance(e, Op):
            if e.op == "and":
                return [k for a in e.args for k in self.if_true(a)]
            if e.op == "or":
                one = _one_of(e)
                if one is not None:
                    return self._win(one[0], one[1])
                per = [self.if_true(a) for a in e.args]
                if per and all(per):
                    return [_Atom("union", parts=tuple(p[0] for p in per))]
                return []
            if e.op == "not":
                return self.if_false(e.args[0])
            if e.op == "eq" and isinstance(e.args[0], App) and isinstance(e.args[1], Lit) \
                    and isinstance(e.args[1].value, str):
                return self._win(e.args[0], frozenset([e.args[1].value])) or self._cell(e.args[0], e.args[1], False)
            if e.op in ("eq", "ne") and isinstance(e.args[0], App) and isinstance(e.args[1], Lit):
                return self._cell(e.args[0], e.args[1], e.op == "ne")
            if e.op == "eq":
                for a, b in (e.args, e.args[::-1]):
                    if isinstance(a, Var) and a.name == x.name and not isinstance(b, Lit) and not _mentions(b, x.name):
                        return [_Atom("eqv", expr=b)]
            return []
        if isinstance(e, Member) and isinstance(e.elem, Var) and e.elem.name == x.name:
            return [_Atom("scope", scope=e.scope.name)]
        if isinstance(e, App) and isinstance(e.func.dom, BoolDom) and not bool(e.func.init) \
                and e.args and isinstance(e.args[-1], Var) and e.args[-1].name == x.name \
                and not any(_mentions(a, x.name) for a in e.args[:-1]):
            return [_Atom("cell", app=e)]
        return []

    def if_false(self, e: Expr) -> list[_Atom]:
        """Atoms K with not K -> e (e can be false only where K holds)."""
        if isinstance(e, Op):
            if e.op == "not":
                return self.if_true(e.args[0])
            if e.op == "or":
                if _one_of(e) is not None:
                    return []
                return [k for a in e.args for k in self.if_false(a)]
            if e.op == "implies":
                return self.if_true(e.args[0]) + self.if_false(e.args[1])
            if e.op in ("eq", "ne") and isinstance(e.args[0], App) and isinstance(e.args[1], Lit):
                return self._cell(e.args[0], e.args[1], e.op == "eq")
            if e.op == "and":
                per = [self.if_false(a) for a in e.args]
                if per and all(per):
                    return [_Atom("union", parts=tuple(p[0] for p in per))]
        return []

    def _cell(self, app: App, lit: Lit, at_init: bool) -> list[_Atom]:
        """`f(.., x) == lit` holding with lit != init (at_init False), or `f(.., x) != lit` with
        lit == init (at_init True), implies f(.., x) != init: only x with a cell (when the row's
        default is init) can satisfy it."""
        x, f = self.x, app.func
        if isinstance(f.dom, SortDom) or not app.args or not isinstance(app.args[-1], Var) \
                or app.args[-1].name != x.name or any(_mentions(a, x.name) for a in app.args[:-1]):
            return []
        init = _init(f)
        v = lit.value
        if type(v) is not type(init) or (v == init) != at_init:
            return []
        return [_Atom("cell", app=app, value=init)]

    def _win(self, app: App, labels: frozenset[str]) -> list[_Atom]:
        f = app.func
        if len(app.args) == 1 and isinstance(app.args[0], Var) and app.args[0].name == self.x.name \
                and f.name in self.g.pcs and str(f.init) not in labels and f.name not in self.g.row_written:
            return [_Atom("win", app=app, labels=labels)]
        return []


def _rank(a: _Atom) -> int:
    return {"eqv": -1, "win": 0, "scope": 1, "cell": 2, "union": 3}[a.kind]


# ---- expressions to Python source ---------------------------------------------------------------


class Src(PythonText, _FoldCompiler):
    """Expressions -> Python source over the generated state; the folding (literals, and/or/not,
    implies, ite, comparisons with a boolean) is spec.lang.finite's, only the target text differs.
    `env` maps a variable to a `_Fold`: a literal, or the source of a local (`v_name`), or the name
    of an unnamed representative (a `Fresh`)."""

    def __init__(self, gen: "Gen", env: dict[str, _Fold]) -> None:
        super().__init__(None, env)  # type: ignore[arg-type]  # no universe: nothing is unrolled
        self.g = gen

    def expr(self, e: Expr, hint: Any = None) -> _Fold:
        if isinstance(e, Lit):
            return _Fold(e.value)
        if isinstance(e, Var):
            return self.env[e.name]
        if isinstance(e, BoolParam):
            return self.env[e.name]
        if isinstance(e, IsAll):
            s = self.env[e.scope.name]
            return _Fold(s.lit is None) if s.known else _Fold(src=f"({s.src} is None)")
        if isinstance(e, Member):
            s, x = self.env[e.scope.name], self.expr(e.elem)
            if s.known and s.lit is None:
                return _Fold(False)
            return _Fold(src=f"({s.text()} is not None and {x.text()} in {s.text()})")
        if isinstance(e, App):
            return self.g.read(e.func, [self.expr(a) for a in e.args])
        if isinstance(e, Quant):
            return self.g.quant(e, self.env)
        if isinstance(e, Agg):
            return self.g.agg(e, self.env)
        if isinstance(e, Reported):
            got = self.g.reported.get(e.key)
            if got is None:
                raise NotCompilable(f"Reported({e.key!r}) outside an action that observes it")
            if e.at is None:
                return _Fold(src=got)
            # the element's bit of the reported mask: its membership in the set the event
            # reports, or (emitting) in the mask the step computed, i.e. the mask's body at it
            if self.g.reported_kind.get(e.key) != "set":
                raise NotCompilable(f"Reported({e.key!r}, {e.at.name}) needs a Mask observation")
            return _Fold(src=f"({self.expr(e.at).text()} in {got})")
        if isinstance(e, Post):
            return self.g.post_value(e, self)
        if isinstance(e, Index):
            raise NotCompilable("an element's position is read only as a mutex owner, owner(e) = Index(e) + 1")
        assert isinstance(e, Op)
        own = _owner_of(e)
        if own is not None:
            return self.expr(own)  # owner(e): the holding element itself (spec.lang.openworld)
        if e.op == "or":
            one = _one_of(e)
            if one is not None:
                x = self.expr(one[0])
                if x.known:
                    return _Fold(x.lit in one[1])
                return _Fold(src=f"({x.src} in {self.g.const(frozenset(one[1]))})")
        if e.op in ("and", "or"):
            args = sorted(e.args, key=_cost)  # no side effects: cheap parts first
            return self._conn(e.op, [self.expr(a) for a in args])
        return self.op(e, hint)


# ---- the generator ------------------------------------------------------------------------------


@dataclass
class CAction:
    """One compiled action: its function's name and how the checker calls it."""

    index: int
    defn: Action
    fn: str
    args: list[str]  # parameter names bound from the event's static keys, in call order
    obs: list[tuple[str, str]]  # (key, kind) of each observation, in call order
    edges: bool  # a lock acquire: may leave new lock-order edges in PEND (returns 2)


@dataclass
class Gen:
    proto: Protocol
    consts: dict[str, Any] = field(default_factory=dict)
    helpers: list[str] = field(default_factory=list)
    windows: dict[tuple[str, frozenset[str]], str] = field(default_factory=dict)
    counter: itertools.count = field(default_factory=itertools.count)  # type: ignore[type-arg]

    def __post_init__(self) -> None:
        # while one action is generated: observation key -> its local (`Reported`), and per
        # function the step's writes (`Post` in its checks), see Program._action
        self.reported: dict[str, str] = {}
        self.reported_kind: dict[str, str] = {}  # observation key -> its value kind (kind_of)
        self.post: dict[str, list[tuple[Any, ...]]] | None = None
        p = self.proto
        self.funcs = {f.name: f for f in p.funcs}
        self.pcs = {f.name: role for role, f in p.pc.items()}
        self.row_written: set[str] = set()
        self.written: set[str] = set()
        for a in p.actions:
            for up in a.updates:
                if isinstance(up, Every):
                    self.row_written.add(up.target.func.name)
                    self.written.add(up.target.func.name)
                else:
                    self.written.add(up[0].func.name)
                    if up[0].func.name in self.pcs:
                        raise NotCompilable(f"{up[0].func.name}: a program counter written by an update")
            if a.goto is not None:
                self.written.add(p.pc[a.role.name].name)
        # leaf sorts that are parts of a union (threads): a candidate taken from a function over
        # the union is filtered by the role the thread took
        self.role_sorts = {leaf.name for s in p.sorts if s.parts for leaf in s.leaves()}
        self.sorts: dict[str, Sort] = {}
        for s in p.sorts:
            for x in (s, *s.leaves()):
                self.sorts[x.name] = x

    def const(self, v: Any) -> str:
        for k, x in self.consts.items():
            if x is v or (type(x) is type(v) and not isinstance(v, Fresh) and x == v):
                return k
        name = f"_K{next(self.counter)}"
        self.consts[name] = v
        return name

    def fresh(self, sort: Sort) -> _Fold:
        name = f"_F{next(self.counter)}"
        self.consts[name] = Fresh(sort.name, next(self.counter))
        return _Fold(src=name)

    def is_fresh(self, x: _Fold) -> bool:
        return not x.known and x.src in self.consts and isinstance(self.consts[x.src], Fresh)

    # ---- state reads ----
    def post_value(self, e: Post, c: "Src") -> _Fold:
        """`Post(f(args))`: the local the step computed for that cell or row when its arguments
        are the written ones (compared when the step runs), else the pre-state value."""
        if self.post is None:
            raise NotCompilable("Post outside an action's checks")
        f = e.app.func
        args = [c.expr(a) for a in e.app.args]
        out = self.read(f, args).text()
        for w in self.post.get(f.name, ()):
            if w[0] == "cell":
                _, keys, val = w
                cond = " and ".join(f"{a.text()} == {k}" for a, k in zip(args, keys)) or "True"
                out = f"({val} if {cond} else {out})"
            else:
                _, keys, d, cells = w
                cond = " and ".join(f"{a.text()} == {k}" for a, k in zip(args[:-1], keys)) or "True"
                out = f"({cells}.get({args[-1].text()}, {d}) if {cond} else {out})"
        return _Fold(src=out)

    def default(self, f: Func) -> str:
        return repr(_init(f)) if f.name not in self.row_written else f"D_{f.name}"

    def read(self, f: Func, args: list[_Fold]) -> _Fold:
        init = _init(f)
        if f.name not in self.written:
            return _Fold(init)
        n = len(args)
        if n == 0:
            return _Fold(src=f"V_{f.name}")
        if n == 1:
            d = self.default(f)
            if self.is_fresh(args[0]):
                return _Fold(init) if f.name not in self.row_written else _Fold(src=d)
            return _Fold(src=f"C_{f.name}.get({args[0].text()}, {d})")
        if any(self.is_fresh(a) for a in args[:-1]):
            return _Fold(init)  # no row is kept for an unnamed prefix
        p = self.prefix(args[:-1])
        r = f"_r{next(self.counter)}"
        if self.is_fresh(args[-1]):
            return _Fold(src=f"({r}[0] if ({r} := R_{f.name}.get({p})) is not None else {init!r})")
        return _Fold(src=f"({r}[1].get({args[-1].text()}, {r}[0]) if ({r} := R_{f.name}.get({p})) is not None "
                         f"else {init!r})")

    @staticmethod
    def prefix(args: list[_Fold]) -> str:
        return args[0].text() if len(args) == 1 else "(" + ", ".join(a.text() for a in args) + ",)"

    # ---- candidates ----
    def named(self, sort: Sort) -> str:
        names = [sort.name] + [p.name for p in sort.leaves() if p.name != sort.name]
        if len(names) == 1:
            return f"N_{sort.name}"
        return "_chain(" + ", ".join(f"N_{n}" for n in names) + ")"

    def cands(self, body: Expr, x: Var, forall: bool, env: dict[str, _Fold]) -> tuple[str, bool]:
        """Source of an iterable of candidates, and whether it holds elements of x's sort only."""
        at = _Atoms(self, x)
        atoms = at.if_false(body) if forall else at.if_true(body)
        atoms = [a for a in atoms if self._atom_ok(a)]
        if not atoms:
            return self.named(x.sort), True
        best = min(atoms, key=_rank)
        return self._atom_src(best, x, env), best.kind == "win" or x.sort.name not in self.role_sorts

    def _atom_ok(self, a: _Atom) -> bool:
        if a.kind == "union":
            return all(self._atom_ok(p) for p in a.parts)
        if a.kind == "cell":
            return a.app is not None and a.app.func.name in self.written
        return True

    def _atom_src(self, a: _Atom, x: Var, env: dict[str, _Fold]) -> str:
        if a.kind == "union":
            return "_chain(" + ", ".join(self._atom_src(p, x, env) for p in a.parts) + ")"
        if a.kind == "scope":
            s = env[a.scope]
            return "()" if s.known and s.lit is None else f"({s.text()} or ())"
        if a.kind == "eqv":
            assert a.expr is not None
            v = Src(self, env).expr(a.expr)
            if v.known:
                return "()" if v.lit is None else f"({v.text()},)"
            e = f"_e{next(self.counter)}"
            return f"(({e},) if ({e} := {v.src}) is not None else ())"
        assert a.app is not None
        f = a.app.func
        if a.kind == "win":
            key = (f.name, a.labels)
            if key not in self.windows:
                self.windows[key] = f"W_{len(self.windows)}"
            return self.windows[key]
        named = self.named(x.sort)
        if len(a.app.args) == 1:
            if f.name in self.row_written:
                return f"(C_{f.name} if D_{f.name} == {a.value!r} else {named})"
            return f"C_{f.name}"
        c = Src(self, env)
        pre = [c.expr(y) for y in a.app.args[:-1]]
        if any(self.is_fresh(y) for y in pre):
            return "()"
        r = f"_r{next(self.counter)}"
        return (f"(({r}[1] if {r}[0] == {a.value!r} else {named}) if ({r} := R_{f.name}.get({self.prefix(pre)})) "
                f"is not None else ())")

    def differ(self, e: Expr, x: Var, env: dict[str, _Fold], at_fresh: str) -> str:
        """Source of a superset of the elements where `e` (naming x) can differ from its value at
        an unnamed element (`at_fresh`, a local holding it): an `Every` update visits these, not
        every element named so far. Read off e: a constant or the row being written adds nothing
        (the old row's cells are visited anyway); an Ite, the elements where its condition can
        differ from the unnamed one's and where the branch taken there can differ; a condition,
        the atoms of the other truth value. Every named element when nothing narrows."""
        named = self.named(x.sort)
        if x.sort.name in self.role_sorts:
            return named
        got = self._differ(e, x, env, at_fresh)
        return named if got is None else got

    def _differ(self, e: Expr, x: Var, env: dict[str, _Fold], at_fresh: str | None) -> str | None:
        if not _mentions(e, x.name):
            return "()"
        if isinstance(e, App) and e.args and isinstance(e.args[-1], Var) and e.args[-1].name == x.name \
                and not any(_mentions(a, x.name) for a in e.args[:-1]):
            f = e.func
            if f.name not in self.written:
                return "()"
            if len(e.args) == 1:
                return f"C_{f.name}"
            pre = [Src(self, env).expr(y) for y in e.args[:-1]]
            if any(self.is_fresh(y) for y in pre):
                return None
            r = f"_r{next(self.counter)}"
            return f"({r}[1] if ({r} := R_{f.name}.get({self.prefix(pre)})) is not None else ())"
        if isinstance(e, Op) and e.op == "ite":
            c, a, b = e.args
            fr = self.fresh(x.sort)
            cf = Src(self, {**env, x.name: fr}).expr(c)
            at = _Atoms(self, x)
            t_atoms = [k for k in at.if_true(c) if self._atom_ok(k)]
            f_atoms = [k for k in at.if_false(c) if self._atom_ok(k)]
            da, db = self._differ(a, x, env, None), self._differ(b, x, env, None)
            # the unnamed element takes branch b: elements where c holds, and where b differs
            when_b = None if not t_atoms or db is None else f"_chain({self._atom_src(min(t_atoms, key=_rank), x, env)}, {db})"
            when_a = None if not f_atoms or da is None else f"_chain({self._atom_src(min(f_atoms, key=_rank), x, env)}, {da})"
            if cf.known:
                return when_a if cf.lit else when_b
            if when_a is None and when_b is None:
                return None
            named = self.named(x.sort)
            return f"({when_a or named} if {cf.src} else {when_b or named})"
        if kind_of(e) == "bool" and not isinstance(e, (Lit, Var)):
            at = _Atoms(self, x)
            t_atoms = [k for k in at.if_true(e) if self._atom_ok(k)]
            f_atoms = [k for k in at.if_false(e) if self._atom_ok(k)]
            if at_fresh is None:
                fr = self.fresh(x.sort)
                ef = Src(self, {**env, x.name: fr}).expr(e)
                if not ef.known:
                    return None
                atoms = f_atoms if ef.lit else t_atoms
                return self._atom_src(min(atoms, key=_rank), x, env) if atoms else None
            if not t_atoms or not f_atoms:
                one = t_atoms or f_atoms
                if not one:
                    return None
                # only one side narrows: usable when the unnamed value is the other one
                src = self._atom_src(min(one, key=_rank), x, env)
                return f"({src} if {'not ' if t_atoms else ''}{at_fresh} else {self.named(x.sort)})"
            return (f"({self._atom_src(min(f_atoms, key=_rank), x, env)} if {at_fresh} else "
                    f"{self._atom_src(min(t_atoms, key=_rank), x, env)})")
        return None

    def role_ok(self, x: Var, var: str) -> str:
        if x.sort.parts:
            return ""
        return f"ROLE.get({var}, {x.sort.name!r}) == {x.sort.name!r}"

    # ---- quantifiers ----
    def _no_cell(self, e: Quant) -> str | None:
        """`forall x. not (f(x) or g(x) ...)` over boolean functions whose cells are exactly their
        true elements (false by default, never written by rows): no cell at all (`not (C_f or
        C_g)`), when x's sort needs no role filter for them."""
        body = e.body
        if e.kind != "forall" or not (isinstance(body, Op) and body.op == "not"):
            return None
        inner = body.args[0]
        apps = inner.args if isinstance(inner, Op) and inner.op == "or" else (inner,)
        names = []
        for a in apps:
            if not (isinstance(a, App) and len(a.args) == 1 and isinstance(a.args[0], Var)
                    and a.args[0].name == e.var.name and isinstance(a.func.dom, BoolDom)
                    and not bool(a.func.init) and a.func.name not in self.row_written):
                return None
            if e.var.sort.name in self.role_sorts and a.func.args[0].name != e.var.sort.name:
                return None
            names.append(a.func.name)
        live = [n for n in names if n in self.written]
        if not live:
            return "True"
        return "(not (" + " or ".join(f"C_{n}" for n in live) + "))"

    def _bound(self, x: Var, body: Expr, env: dict[str, _Fold]
               ) -> tuple[list[str], dict[str, _Fold], _Fold, _Fold, str, _Fold]:
        """What a binder over `x` (a count, a mask, a quantifier) compiles from: the free
        variables its helper takes, the environment without `x`, the unnamed representative,
        the body at it, the loop variable, and the body at the loop variable."""
        free = sorted(k for k, v in env.items() if not v.known and not self.is_fresh(v) and k != x.name)
        inner = {k: env[k] for k in env if k != x.name}
        fr = self.fresh(x.sort)
        at_fresh = Src(self, {**inner, x.name: fr}).expr(body)
        loopvar = _v(x.name)
        at_x = Src(self, {**inner, x.name: _Fold(src=loopvar)}).expr(body)
        return free, inner, fr, at_fresh, loopvar, at_x

    def agg(self, e: Agg, env: dict[str, _Fold]) -> _Fold:
        """count / mask over the candidates where the body can hold (a set comprehension: each
        element once); INF, or the unnamed representative in the mask, when it holds unnamed."""
        x = e.var
        count = e.kind == "count"
        free, inner, fr, at_fresh, loopvar, at_x = self._bound(x, e.body, env)
        self.consts["_INF"] = INF
        everyone = "_INF" if count else f"frozenset([{fr.src}])"
        if at_fresh.known and at_fresh.lit:
            return _Fold(src=everyone)
        if at_x.known and not at_x.lit:
            return _Fold(0 if count else frozenset())
        name = f"_a{next(self.counter)}"
        params = ", ".join(env[k].src for k in free)  # type: ignore[misc]
        lines = [f"def {name}({params}):"]
        if not at_fresh.known:
            lines.append(f"    if {at_fresh.src}:")
            lines.append(f"        return {everyone}")
        cands, exact = self.cands(e.body, x, False, inner)
        rok = "" if exact else self.role_ok(x, loopvar)
        cond = (rok + " and " if rok else "") + at_x.text()
        lines.append(f"    _cands = {cands}")  # (an assignment expression may not stand in a comprehension's iterable)
        lines.append(f"    return {'len' if count else 'frozenset'}({{{loopvar} for {loopvar} in _cands if {cond}}})")
        self.helpers.append("\n".join(lines))
        return _Fold(src=f"{name}({params})")

    def quant(self, e: Quant, env: dict[str, _Fold]) -> _Fold:
        x = e.var
        forall = e.kind == "forall"
        quick = self._no_cell(e)
        if quick is not None:
            return _Fold(True) if quick == "True" else _Fold(src=quick)
        free, inner, fr, at_fresh, loopvar, at_x = self._bound(x, e.body, env)
        name = f"_q{next(self.counter)}"
        params = ", ".join(env[k].src for k in free)  # type: ignore[misc]
        lines = [f"def {name}({params}):"]
        if at_fresh.known:
            if bool(at_fresh.lit) != forall:
                return _Fold(not forall)  # the unnamed element decides it
        else:
            lines.append(f"    if {'not ' if forall else ''}{at_fresh.src}:")
            lines.append(f"        return {not forall}")
        if at_x.known and bool(at_x.lit) == forall:
            if at_fresh.known:
                return _Fold(forall)
        else:
            cands, exact = self.cands(e.body, x, forall, inner)
            rok = "" if exact else self.role_ok(x, loopvar)
            lines.append(f"    for {loopvar} in {cands}:")
            lines.append(f"        if {rok + ' and ' if rok else ''}{'not ' if forall else ''}{at_x.text()}:")
            lines.append(f"            return {not forall}")
        lines.append(f"    return {forall}")
        self.helpers.append("\n".join(lines))
        return _Fold(src=f"{name}({params})")


# ---- actions ------------------------------------------------------------------------------------


def _goto_labels(e: Expr | None) -> set[str] | None:
    """Every label a goto can name, or None if it is not built from literals and ites."""
    if e is None:
        return set()
    if isinstance(e, Lit) and isinstance(e.value, str):
        return {e.value}
    if isinstance(e, Op) and e.op == "ite":
        a, b = _goto_labels(e.args[1]), _goto_labels(e.args[2])
        return None if a is None or b is None else a | b
    return None


@dataclass
class _Read:
    func: str
    args: tuple[Expr, ...]
    labels: frozenset[str] | None  # read only as membership in these labels
    value_of: str = ""  # read only as `f(..) == var`: a write matters at the old and new value


def _reads(e: Expr, out: list[_Read]) -> None:
    if isinstance(e, Op) and e.op == "eq" and any(isinstance(a, Var) for a in e.args) \
            and any(isinstance(a, App) for a in e.args):
        app = next(a for a in e.args if isinstance(a, App))
        var = next(a for a in e.args if isinstance(a, Var))
        if isinstance(app.func.dom, SortDom):
            out.append(_Read(app.func.name, app.args, None, var.name))
            for a in app.args:
                _reads(a, out)
            return
    if isinstance(e, Op) and e.op == "or" and _one_of(e) is not None:
        app, labs = _one_of(e)  # type: ignore[misc]
        out.append(_Read(app.func.name, app.args, labs))
        for a in app.args:
            _reads(a, out)
        return
    if isinstance(e, Op) and e.op == "eq" and isinstance(e.args[0], App) and isinstance(e.args[1], Lit) \
            and isinstance(e.args[1].value, str):
        out.append(_Read(e.args[0].func.name, e.args[0].args, frozenset([e.args[1].value])))
        for a in e.args[0].args:
            _reads(a, out)
        return
    if isinstance(e, App):
        out.append(_Read(e.func.name, e.args, None))
        for a in e.args:
            _reads(a, out)
    elif isinstance(e, Op):
        for a in e.args:
            _reads(a, out)
    elif isinstance(e, (Quant, Agg)):
        _reads(e.body, out)
    elif isinstance(e, (Member, Index)):
        _reads(e.elem, out)


@dataclass
class _Claim:
    name: str
    expr: Expr
    var: Var | None  # the top-level forall's variable, if any
    body: Expr
    reads: list[_Read]


class Program:
    """A definition compiled for the open world: `new_run(...)` gives one run's state and the
    compiled actions bound to it."""

    def __init__(self, proto: Protocol, emit: bool = False, findings: bool = False) -> None:
        """`emit`: also generate, per action, a function that fires the step when it may fire
        and returns the values it observes (`E_i(params..., thread)`, None when it cannot fire;
        no claims checked): a simulator's step (checker/simulate_v2.py) at the compiled speed.
        `findings`: also monitor the definition's findings (`Protocol.findings`, invariants only:
        a step finding is NotCompilable), which never stop a step: each has a failing flag
        (`failing` in new_run's namespace), re-evaluated after every step that can change its
        value (at the elements the writes reach while it holds, whole while it fails), and a
        step that makes one fail appends its name to new_run's `found` list and returns 2 (as
        for a new lock-order edge: the caller takes note after the step)."""
        self.proto = proto
        self.emit = emit
        self.findings = findings
        gen = None
        for _ in range(2):  # the second pass knows every window set the first one asked for
            prev = gen.windows if gen is not None else {}
            gen = Gen(proto)
            gen.windows = dict(prev)
            src, actions = self._generate(gen)
            if gen.windows == prev:
                # nothing asked for a window set the pass did not know: a second pass, given the
                # same sets, would generate the same text (most definitions ask for none)
                break
        assert gen is not None
        self.gen = gen
        self.source = src
        self.actions: list[CAction] = actions
        ns: dict[str, Any] = {"_chain": itertools.chain, "_MISS": MISS, **gen.consts}
        exec(compile(src, f"<spmcheck:owcompile:{proto.name}>", "exec"), ns)  # generated above, never input
        self._make: Callable[..., dict[str, Any]] = ns["make"]

    def new_run(self, role: dict[str, str], where: dict[Any, Any], edges: set[tuple[str, str]],
                pend: list[tuple[str, str]], disp: dict[tuple[str, str], Any],
                found: list[str] | None = None) -> dict[str, Any]:
        return self._make(role, where, edges, pend, disp, found)

    # ---- source ----
    def _generate(self, g: Gen) -> tuple[str, list[CAction]]:
        p = self.proto
        self.may = may_hold(p)
        self.lockf = {f.name for f in p.funcs if f.lock is not None}
        claims = [_claim(name, cl) for name, cl in p.claims.items() if cl.kind == "invariant" and cl.expr is not None]
        notes: list[_Claim] = []
        if self.findings:
            for name, cl in p.findings.items():
                if cl.kind != "invariant" or cl.expr is None:
                    raise NotCompilable(f"finding {name}: only invariant findings are monitored")
                notes.append(_claim(name, cl))
            if any(a.finding_checks for a in p.actions):
                raise NotCompilable("a step finding: only invariant findings are monitored")
        full: dict[str, str] = {}
        for c in claims + notes:
            f = Src(g, {}).expr(c.expr)
            full[c.name] = f.text()
        acts = []
        bodies = []
        for i, a in enumerate(p.actions):
            ca, src = self._action(g, i, a, claims, full, notes=notes)
            acts.append(ca)
            bodies.append(src)
            if self.emit:
                bodies.append(self._action(g, i, a, [], full, emit=True)[1])
        state = []
        export = []
        for f in p.funcs:
            init = _init(f)
            if len(f.args) == 0:
                state.append(f"    V_{f.name} = {init!r}")
                export.append(f"{f.name!r}: (0, V_{f.name})")
            elif len(f.args) == 1:
                state.append(f"    C_{f.name} = {{}}")
                if f.name in g.row_written:
                    state.append(f"    D_{f.name} = {init!r}")
                export.append(f"{f.name!r}: (1, {g.default(f)}, C_{f.name})")
            else:
                state.append(f"    R_{f.name} = {{}}")
                export.append(f"{f.name!r}: ({len(f.args)}, R_{f.name})")
        for s in g.sorts:
            state.append(f"    N_{s} = set()")
        for w in g.windows.values():
            state.append(f"    {w} = set()")
        disp = []
        for role, pcf in p.pc.items():
            assert isinstance(pcf.dom, EnumDom)
            for lab in pcf.dom.labels:
                disp.append(f"    P_{role}_{pcf.dom.labels.index(lab)} = DISP[({role!r}, {lab!r})]")
        if notes:
            state.append("    FAILING = {" + ", ".join(f"{c.name!r}: False" for c in notes) + "}")
        out = ["def make(ROLE, WHERE, EDGES, PEND, DISP, FOUND=None):", *state, *disp]
        for h in g.helpers:
            out.append(_indent(h))
        out += [_indent(b) for b in bodies]
        out.append("    def export():\n        return {" + ", ".join(export) + "}")
        names = ", ".join(f"{s!r}: N_{s}" for s in g.sorts)
        wins = ", ".join(f"{k!r}: {v}" for k, v in g.windows.items())
        fulls = ", ".join(f"{c.name!r}: (lambda: {full[c.name]})" for c in claims + notes)
        emitters = ", ".join(f"E_{a.index}" for a in acts) if self.emit else ""
        out.append("    return {'actions': [" + ", ".join(a.fn for a in acts) + "], 'export': export, "
                   "'emitters': [" + emitters + "], "
                   "'named': {" + names + "}, 'windows': {" + wins + "}, 'claims': {" + fulls + "}, "
                   "'failing': " + ("FAILING" if notes else "{}") + "}")
        return "\n".join(out) + "\n", acts

    def _action(self, g: Gen, i: int, a: Action, claims: list[_Claim], full: dict[str, str],
                emit: bool = False, notes: list[_Claim] = ()) -> tuple[CAction, str]:  # type: ignore[assignment]
        consts = dict(a.consts)
        env: dict[str, _Fold] = {a.thread.name: _Fold(src=_v(a.thread.name))}
        bound_by_keys: set[str] = set()
        for _, spec in a.static:
            if isinstance(spec, str):
                bound_by_keys.update(re.findall(r"\{(\w+)\}", spec))
            elif isinstance(spec, (ScopeParam, BoolParam, Var)):
                bound_by_keys.add(spec.name)
        args: list[str] = []
        free: list[Var] = []
        for prm in a.params:
            if prm.name in consts:
                env[prm.name] = _Fold(consts[prm.name])
            elif isinstance(prm, Var) and prm.name not in bound_by_keys:
                free.append(prm)
                env[prm.name] = _Fold(src=_v(prm.name))
            else:
                env[prm.name] = _Fold(src=_v(prm.name))
                args.append(prm.name)
        for k, v in consts.items():
            env.setdefault(k, _Fold(v))
        for _, spec in a.static:  # a BoolParam selected by a key, fixed by consts
            if isinstance(spec, BoolParam) and spec.name not in env:
                env[spec.name] = _Fold(src=_v(spec.name))
                args.append(spec.name)
        c = Src(g, env)
        body: list[str] = []
        nonlocal_names: set[str] = set()
        # a parameter no key names (a lookup's lock steps: the agent) is the value a selector
        # compares it with (`ag(t) == agent`), as the interpreter's candidates reduce to
        sel_used: set[int] = set()
        for prm in free:
            got = None
            for j, (_, s) in enumerate(a.select):
                if isinstance(s, Op) and s.op == "eq":
                    l, r = s.args
                    if isinstance(r, Var) and r.name == prm.name:
                        l, r = r, l
                    if isinstance(l, Var) and l.name == prm.name and isinstance(r, App) and len(r.args) == 1 \
                            and isinstance(r.args[0], Var) and r.args[0].name == a.thread.name \
                            and isinstance(r.func.dom, SortDom):
                        got = (j, r)
                        break
            if got is None or len(free) > 1:
                raise NotCompilable(f"{a.role.name}.{a.at}.{a.kind}: parameter {prm.name} is named by no key")
            sel_used.add(got[0])
            body.append(f"{_v(prm.name)} = {c.expr(got[1]).text()}")
            body.append(f"if {_v(prm.name)} is None:\n    return None")
        for j, (_, s) in enumerate(a.select):
            if j in sel_used:
                continue
            body += [x for x in _test(c.expr(s), "None") if x not in body]
        for _, gd in a.guard:
            body += [x for x in _test(c.expr(gd), "None") if x not in body]
        obs: list[tuple[str, str]] = []
        g.reported = {}
        g.reported_kind = {}
        g.post = None
        rep = set(reported_keys(a))
        for k, e in a.observe:
            kind = kind_of(e)
            o = f"o_{len(obs)}"
            obs.append((k, kind))
            x = c.expr(e)
            g.reported[k] = o
            g.reported_kind[k] = kind
            env["#" + o] = _Fold(src=o)  # a helper reading `Reported(k)` takes it as a parameter
            if emit:
                body.append(f"{o} = {x.text()}")
            elif k in rep:
                continue  # the step reads the reported value: not compared (spec.lang.syntax.Reported)
            elif kind == "elem":
                body.append(f"if _render({x.text()}) != {o}:\n    return None")
                g.consts["_render"] = _render
            else:
                body.append(f"if {x.text()} != {o}:\n    return None")
        edges = not emit and a.kind == "lock_acquire" and _acquired(a) is not None and \
            bool(self.may.get((a.role.name, a.at), set()) & self.lockf)
        if edges:
            # each lock class the thread may hold here (may_hold) is an edge to the acquired class
            # when the thread holds it and the run has not seen that edge yet: inline, per lock
            # function, the held test first (false for most, one dict read)
            acq = _acquired(a)
            tv = _v(a.thread.name)
            can = self.may.get((a.role.name, a.at), set())
            for f in self.proto.funcs:
                if f.lock is None or f.name not in can:
                    continue
                e = (f.lock[0], acq)
                if len(f.args) == 1:
                    held = f"C_{f.name}.get({tv}, {g.default(f)})"
                else:
                    h = f"_h{next(g.counter)}"
                    held = f"(({h} := R_{f.name}.get({tv})) is not None and (bool({h}[0]) or any({h}[1].values())))"
                body.append(f"if {held} and {e!r} not in EDGES:\n    PEND.append({e!r})")
        # ---- the updates, read in the pre-state ----
        pre: list[str] = []
        apply: list[str] = []
        undo: list[str] = []
        posts: dict[str, list[tuple[Any, ...]]] = {}  # func -> the step's writes, for `Post`
        written: list[tuple[Func, list[str] | None, bool, int]] = []  # (func, arg locals, every, update index)
        for u, up in enumerate(a.updates):
            if isinstance(up, Every):
                f = up.target.func
                tgt = up.target
                if not tgt.args or not isinstance(tgt.args[-1], Var) or tgt.args[-1].name != up.var.name:
                    raise NotCompilable(f"{f.name}: an Every update must range over the last argument")
                pk = [f"k{u}_{j}" for j in range(len(tgt.args) - 1)]
                for j, y in enumerate(tgt.args[:-1]):
                    pre.append(f"{pk[j]} = {c.expr(y).text()}")
                fr = g.fresh(up.var.sort)
                d = Src(g, {**env, up.var.name: fr}).expr(lift(up.value))
                lv = _v(up.var.name)
                val = Src(g, {**env, up.var.name: _Fold(src=lv)}).expr(lift(up.value))
                pre.append(f"d{u} = {d.text()}")
                pre.append(f"c{u} = {{}}")
                if len(tgt.args) == 1:
                    old = f"C_{f.name}"
                else:
                    pre.append(f"o{u} = R_{f.name}.get({Gen.prefix([_Fold(src=k) for k in pk])})")
                    old = f"(o{u}[1] if o{u} is not None else ())"
                pre.append(f"for {lv} in _chain({g.differ(lift(up.value), up.var, env, f'd{u}')}, {old}):\n"
                           f"    _v = {val.text()}\n"
                           f"    if _v != d{u}:\n"
                           f"        c{u}[{lv}] = _v")
                init = repr(_init(f))
                if len(tgt.args) == 1:
                    nonlocal_names.update({f"C_{f.name}", f"D_{f.name}"})
                    pre.append(f"\0o{u} = (D_{f.name}, C_{f.name})")
                    apply.append(f"D_{f.name} = d{u}\nC_{f.name} = c{u}")
                    undo.append(f"D_{f.name}, C_{f.name} = o{u}")
                else:
                    p = Gen.prefix([_Fold(src=k) for k in pk])
                    apply.append(f"if d{u} == {init} and not c{u}:\n    R_{f.name}.pop({p}, None)\n"
                                 f"else:\n    R_{f.name}[{p}] = [d{u}, c{u}]")
                    undo.append(f"if o{u} is None:\n    R_{f.name}.pop({p}, None)\nelse:\n    R_{f.name}[{p}] = o{u}")
                written.append((f, pk, True, u))
                posts.setdefault(f.name, []).append(("row", pk, f"d{u}", f"c{u}"))
                continue
            target, value = up
            f = target.func
            ks = []
            for j, y in enumerate(target.args):
                ky = c.expr(y)
                if not ky.known and ky.src.isidentifier():
                    ks.append(ky.src)  # a parameter: no copy needed
                else:
                    ks.append(f"k{u}_{j}")
                    pre.append(f"{ks[j]} = {ky.text()}")
            nv = c.expr(lift(value))
            if nv.known:
                nval = repr(nv.lit)
            else:
                nval = f"n{u}"
                pre.append(f"n{u} = {nv.src}")
            if nv.known and f"n{u}" != nval:
                pre.append(f"\0n{u} = {nval}")  # the claims below may name it
            init = repr(_init(f))
            if not ks:
                nonlocal_names.add(f"V_{f.name}")
                pre.append(f"\0o{u} = V_{f.name}")
                apply.append(f"V_{f.name} = {nval}")
                undo.append(f"V_{f.name} = o{u}")
            elif len(ks) == 1:
                d = g.default(f)
                pre.append(f"\0o{u} = C_{f.name}.get({ks[0]}, _MISS)")
                if nv.known and f.name not in g.row_written:
                    apply.append(f"C_{f.name}.pop({ks[0]}, None)" if nv.lit == _init(f) else f"C_{f.name}[{ks[0]}] = {nval}")
                else:
                    apply.append(f"if {nval} == {d}:\n    C_{f.name}.pop({ks[0]}, None)\nelse:\n    C_{f.name}[{ks[0]}] = {nval}")
                undo.append(f"if o{u} is _MISS:\n    C_{f.name}.pop({ks[0]}, None)\nelse:\n    C_{f.name}[{ks[0]}] = o{u}")
            else:
                p = Gen.prefix([_Fold(src=k) for k in ks[:-1]])
                k = ks[-1]
                pre.append(f"\0o{u} = R_{f.name}.get({p})")
                # the row as the earlier writes of this step left it (two cells of one row may be
                # written); copied on write when an undo may need the pre-state row intact
                apply.append(f"_r = R_{f.name}.get({p})\n"
                             f"if _r is None:\n    if {nval} != {init}:\n        R_{f.name}[{p}] = [{init}, {{{k}: {nval}}}]\n"
                             f"\1elif {nval} == _r[0]:\n    _c = {{x: y for x, y in _r[1].items() if x != {k}}}\n"
                             f"    if not _c and _r[0] == {init}:\n        del R_{f.name}[{p}]\n"
                             f"    else:\n        R_{f.name}[{p}] = [_r[0], _c]\n"
                             f"else:\n    R_{f.name}[{p}] = [_r[0], {{**_r[1], {k}: {nval}}}]\1"
                             f"elif {nval} == _r[0]:\n    _r[1].pop({k}, None)\n"
                             f"    if not _r[1] and _r[0] == {init}:\n        del R_{f.name}[{p}]\n"
                             f"else:\n    _r[1][{k}] = {nval}")
                undo.append(f"if o{u} is None:\n    R_{f.name}.pop({p}, None)\nelse:\n    R_{f.name}[{p}] = o{u}")
            written.append((f, ks, False, u))
            posts.setdefault(f.name, []).append(("cell", list(ks), nval))
        # ---- goto: the program counter, the thread's dispatch table, the window sets ----
        pcf = self.proto.pc[a.role.name]
        role = a.role.name
        tv = _v(a.thread.name)
        targets = _goto_labels(a.goto)
        if a.goto is not None:
            gt = c.expr(a.goto)
            if not gt.known:
                pre.append(f"ng = {gt.src}")
            pinit = str(pcf.init)
            if gt.known:
                lab = gt.lit
                apply.append(f"C_{pcf.name}.pop({tv}, None)" if lab == pinit else f"C_{pcf.name}[{tv}] = {lab!r}")
                apply.append(f"WHERE[{tv}] = " + (f"P_{role}_{pcf.dom.labels.index(lab)}" if lab in pcf.dom.labels
                                                          else f"DISP[({role!r}, {lab!r})]"))
            else:
                apply.append(f"if ng == {pinit!r}:\n    C_{pcf.name}.pop({tv}, None)\nelse:\n    C_{pcf.name}[{tv}] = ng")
                apply.append(f"WHERE[{tv}] = DISP[({role!r}, ng)]")
            undo.append(f"C_{pcf.name}.pop({tv}, None)" if a.at == pinit else f"C_{pcf.name}[{tv}] = {a.at!r}")
            undo.append(f"WHERE[{tv}] = DISP[({role!r}, {a.at!r})]")
            for (fname, labs), w in g.windows.items():
                if fname != pcf.name:
                    continue
                was = a.at in labs
                if targets is not None and all((x in labs) == was for x in targets):
                    continue
                if gt.known:
                    apply.append(f"{w}.{'add' if gt.lit in labs else 'discard'}({tv})")
                else:
                    apply.append(f"if ng in {g.const(frozenset(labs))}:\n    {w}.add({tv})\nelse:\n    {w}.discard({tv})")
                undo.append(f"{w}.{'add' if was else 'discard'}({tv})")
        # ---- step claims: in the pre-state, after the writes are computed (what `Post` reads) ----
        chks: list[str] = []
        if not emit and a.checks:
            g.post = posts
            for ws in posts.values():
                for w in ws:
                    for name in (w[1] + list(w[2:])):
                        if isinstance(name, str) and name.isidentifier() and not name.startswith("v_") \
                                and not keyword.iskeyword(name):
                            env["#" + name] = _Fold(src=name)  # helpers take the step's locals as parameters
            for _, _, chk in a.checks:
                chks += [x for x in _test(c.expr(chk), "False") if x not in chks]
            g.post = None
        # ---- invariant claims this action's writes can change ----
        post: list[str] = []
        for cl in claims:
            elems, whole = _affected(cl, written, pcf.name if a.goto is not None else None, a.at, targets)
            if whole:
                post.append(f"if not ({full[cl.name]}):\n    _UNDO_")
            elif elems:
                assert cl.var is not None
                for j, el in enumerate(elems):
                    loc = f"e{j}"
                    e = Src(g, {cl.var.name: _Fold(src=loc)}).expr(cl.body)
                    post.append(f"{loc} = {el}\nif {loc} is not None and not ({e.text()}):\n    _UNDO_")
        # ---- findings this action's writes can change: noted, never a failure ----
        found: list[str] = []
        for cl in notes:
            elems, whole = _affected(cl, written, pcf.name if a.goto is not None else None, a.at, targets)
            nm = repr(cl.name)
            flip = f"FAILING[{nm}] = True\nFOUND.append({nm})"
            if whole:
                found.append(f"if FAILING[{nm}] == bool({full[cl.name]}):\n"
                             f"    FAILING[{nm}] = not FAILING[{nm}]\n"
                             f"    if FAILING[{nm}]:\n        FOUND.append({nm})")
            elif elems:
                # holding, only the reached elements can make it fail; failing, any element may
                # still fail when the reached ones stop failing: the whole claim says
                assert cl.var is not None
                tests = []
                for j, el in enumerate(elems):
                    loc = f"e{j}"
                    e = Src(g, {cl.var.name: _Fold(src=loc)}).expr(cl.body)
                    tests.append(f"{loc} = {el}\nif {loc} is not None and not ({e.text()}):\n"
                                 + _indent(flip) + ("\nelse:\n" if j + 1 < len(elems) else ""))
                nested = tests[-1]
                for t_ in reversed(tests[:-1]):
                    nested = t_ + _indent(nested)
                found.append(f"if FAILING[{nm}]:\n    if {full[cl.name]}:\n        FAILING[{nm}] = False\n"
                             f"else:\n" + _indent(nested))
        if post:
            undo_src = "\n".join(reversed(undo)) + "\nreturn False"
            post = [s.replace("_UNDO_", _indent(undo_src, 4).lstrip()) for s in post]
            apply = [x.split("\1")[0] + x.split("\1")[1] if "\1" in x else x for x in apply]
        else:
            apply = [x.split("\1")[0] + x.split("\1")[2] if "\1" in x else x for x in apply]
        if post or found:  # the claims may name the step's locals
            pre = [x.lstrip("\0") for x in pre]
        else:
            pre = [x for x in pre if not x.startswith("\0")]
        post += found
        ret = f"return 2 if PEND else True" if edges else "return True"
        if found:
            ret = "return 2 if PEND or FOUND else True" if edges else "return 2 if FOUND else True"
        fn = f"A_{i}"
        sig = ", ".join([_v(n) for n in args] + [f"o_{j}" for j in range(len(obs))] + [tv])
        if emit:
            ret = "return (" + "".join(f"o_{j}, " for j in range(len(obs))) + ")"
            fn = f"E_{i}"
            sig = ", ".join([_v(n) for n in args] + [tv])
        lines = [f"def {fn}({sig}):"]
        if nonlocal_names:
            lines.append("    nonlocal " + ", ".join(sorted(nonlocal_names)))
        for s in body + pre + chks + apply + post + [ret]:
            lines.append(_indent(s))
        return CAction(i, a, fn, args, obs, edges), "\n".join(lines)


def _claim(name: str, cl: Any) -> _Claim:
    e = cl.expr
    var = e.var if isinstance(e, Quant) and e.kind == "forall" else None
    body = e.body if var is not None else e
    rs: list[_Read] = []
    _reads(e, rs)
    return _Claim(name, e, var, body, rs)


def _affected(cl: _Claim, written: list[tuple[Func, list[str] | None, bool, int]], pc: str | None, at: str,
              targets: set[str] | None) -> tuple[list[str], bool]:
    """The elements of the claim's variable whose value the writes can change (sources of
    locals holding them; None among them is skipped), or whole=True when any element (or the
    unnamed one) can change."""
    elems: list[str] = []
    writes: list[tuple[str, list[str] | None, bool, int]] = [(f.name, ks, every, u) for f, ks, every, u in written]
    if pc is not None:
        writes.append((pc, ["v_t_goto"], False, -1))
    for fname, ks, every, u in writes:
        for r in cl.reads:
            if r.func != fname:
                continue
            if fname == pc and u == -1:
                if r.labels is not None and targets is not None and all((x in r.labels) == (at in r.labels) for x in targets):
                    continue  # the goto stays inside (or outside) every label set the claim reads
                return [], True
            if cl.var is None:
                return [], True
            pos = [j for j, y in enumerate(r.args) if isinstance(y, Var) and y.name == cl.var.name]
            if not pos:
                if r.value_of == cl.var.name and not every and ks is not None and len(ks) == 1:
                    # `f(t) == x`: only x = the old and the new value of the written cell
                    for el in (f"n{u}", f"(o{u} if o{u} is not _MISS else None)"):
                        if el not in elems:
                            elems.append(el)
                    continue
                return [], True
            j = pos[0]
            assert ks is not None
            if every and j == len(r.args) - 1:
                return [], True
            if j < len(ks):
                if ks[j] not in elems:
                    elems.append(ks[j])
            else:
                return [], True
    return elems, False


def may_hold(p: Protocol) -> dict[tuple[str, str], set[str]]:
    """(role, label) -> the lock-holding functions a thread at that label may hold (a dataflow
    over the program's gotos, guards ignored: an over-approximation). A lock function written in
    a way this does not follow (another thread's cell, a computed value, a whole row) may be held
    anywhere."""
    lockf = {f.name for f in p.funcs if f.lock is not None}
    anywhere = {f.name for f in p.funcs if f.lock is not None and bool(f.init)}
    for a in p.actions:
        for up in a.updates:
            if isinstance(up, Every):
                if up.target.func.name in lockf:
                    anywhere.add(up.target.func.name)
                continue
            tgt, val = up
            if tgt.func.name not in lockf:
                continue
            v = lift(val)
            if not (tgt.args and isinstance(tgt.args[0], Var) and tgt.args[0].name == a.thread.name) \
                    or not (isinstance(v, Lit) and isinstance(v.value, bool)):
                anywhere.add(tgt.func.name)
    held: dict[tuple[str, str], set[str]] = {(r, str(f.init)): set() for r, f in p.pc.items()}
    changed = True
    while changed:
        changed = False
        for a in p.actions:
            role = a.role.name
            here = held.get((role, a.at))
            if here is None:
                continue
            out = set(here)
            for up in a.updates:
                if isinstance(up, Every) or up[0].func.name not in lockf:
                    continue
                v = lift(up[1])
                if isinstance(v, Lit) and v.value is True:
                    out.add(up[0].func.name)
                elif len(up[0].args) == 1:
                    out.discard(up[0].func.name)  # a per-instance lock may still hold another instance
            pcf = p.pc[role]
            labels = _goto_labels(a.goto) if a.goto is not None else {a.at}
            if labels is None:
                assert isinstance(pcf.dom, EnumDom)
                labels = set(pcf.dom.labels)
            for lab in labels:
                cur = held.setdefault((role, lab), set())
                if not out <= cur:
                    cur |= out
                    changed = True
    return {k: v | anywhere for k, v in held.items()}


def _acquired(a: Action) -> str | None:
    acq = None
    for up in a.updates:
        if isinstance(up, tuple) and up[0].func.lock is not None:
            acq = up[0].func.lock[0]
    return acq


def _test(x: _Fold, fail: str) -> list[str]:
    if x.known:
        return [] if x.lit else [f"return {fail}"]
    return [f"if not {x.src}:\n    return {fail}"]


def _indent(s: str, n: int = 4) -> str:
    pad = " " * n
    return "\n".join(pad + ln if ln else ln for ln in s.split("\n"))


_render = render