"""The fixed-size reading: sorts instantiated with k elements, compiled to Python once.

Every application of a state function to concrete elements becomes one named scalar (the
function's `key` template), which is what the Z3 encoding (BMC, induction, Houdini), the stored
certificates and the concrete replay work on. Each action instance is compiled from the
definition into three small Python functions of a `Backend` and a state mapping (selectors and
guards, effect, observations); quantifiers are unrolled over the instance's elements and
literals folded, so the concrete evaluation costs what a hand-written closure would and the Z3
reading gets the same terms. A claim is also compiled for the checker's replay with the keys it
reads recorded (`compile_closed_recording`: the same folding, other target texts).
"""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Any, Callable, Mapping, Sequence

from ..backend import Backend, Term
from .syntax import (
    Agg,
    App,
    BoolDom,
    BoolParam,
    Card,
    Dom,
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
from .syntax import Action as LAction

Elem = Any  # int (agents) or str (threads)
Env = dict[str, Any]  # bound variable name -> element / scope tuple / bool
State = Mapping[str, Term]


@dataclass(frozen=True)
class VarDecl:
    name: str
    kind: str  # "bool" or "int"
    init: int | bool
    lo: int = 0
    hi: int = 1


class Universe:
    """The elements of every sort at one size: `{leaf sort name: count}`."""

    def __init__(self, proto: Protocol, sizes: Mapping[str, int]) -> None:
        self.proto = proto
        self.sizes = dict(sizes)

    def elems(self, s: Sort) -> list[Elem]:
        if s.parts:
            return [e for p in s.parts for e in self.elems(p)]
        n = self.sizes[s.name]
        return list(range(n)) if not s.prefix else [f"{s.prefix}{i}" for i in range(n)]

    def card(self, s: Sort) -> int:
        return len(self.elems(s))

    def bound(self, x: int | Card) -> int:
        return x if isinstance(x, int) else self.card(x.sort) - x.minus

    def key(self, f: Func, args: Sequence[Elem]) -> str:
        return f.key.format(*args)

    def applications(self, f: Func) -> list[tuple[Elem, ...]]:
        out: list[tuple[Elem, ...]] = [()]
        for s in f.args:
            out = [a + (e,) for a in out for e in self.elems(s)]
        return out

    def decl(self, f: Func, args: tuple[Elem, ...]) -> VarDecl:
        d = f.dom
        name = self.key(f, args)
        if isinstance(d, BoolDom):
            return VarDecl(name, "bool", bool(f.init))
        if isinstance(d, IntDom):
            return VarDecl(name, "int", int(f.init), self.bound(d.lo), self.bound(d.hi))
        if isinstance(d, EnumDom):
            return VarDecl(name, "int", d.index(str(f.init)), 0, len(d.labels) - 1)
        assert isinstance(d, SortDom)
        el = self.elems(d.sort)
        if not all(isinstance(e, int) for e in el):
            raise TypeError(f"{f.name}: only integer-named sorts can be stored in the finite reading")
        return VarDecl(name, "int", int(f.init), 0, max(len(el) - 1, 0))

    def declare(self) -> list[VarDecl]:
        """Variables in layout order: a layout group iterates its first argument jointly."""
        out: list[VarDecl] = []
        seen: set[str] = set()
        groups = list(self.proto.layout) + [(f,) for f in self.proto.funcs]
        for group in groups:
            if all(f.name in seen for f in group):
                continue
            self._emit(group, (), out)
            seen.update(f.name for f in group)
        return out

    def _emit(self, group: Sequence[Func], prefix: tuple[Elem, ...], out: list[VarDecl]) -> None:
        """Functions of the group whose arity equals the prefix first, then the longer ones
        iterated jointly over their next argument (pc.u0, hold.u0, in.u0.0, pend.u0.0, ...)."""
        k = len(prefix)
        here = [f for f in group if len(f.args) == k]
        longer = [f for f in group if len(f.args) > k]
        out += [self.decl(f, prefix) for f in here]
        if longer:
            for e in self.elems(longer[0].args[k]):
                self._emit(longer, prefix + (e,), out)

    def bindings(self, act: LAction) -> list[Env]:
        """Parameter instances in a fixed order (agents ascending; `all` first, then subsets)."""
        envs: list[Env] = [{}]
        for p in act.params:
            nxt: list[Env] = []
            for env in envs:
                if isinstance(p, Var):
                    nxt += [{**env, p.name: e} for e in self.elems(p.sort)]
                elif isinstance(p, ScopeParam):
                    for members in scope_values(self.elems(p.sort) if p.sets else []):
                        nxt.append({**env, p.name: members})
                else:
                    nxt += [{**env, p.name: v} for v in (True, False)]
            envs = nxt
        return envs


def scope_values(elems: Sequence[Elem]) -> list[tuple[Elem, ...] | None]:
    """`None` is the `all` scope; then every non-empty subset, smallest first."""
    out: list[tuple[Elem, ...] | None] = [None]
    for k in range(1, len(elems) + 1):
        out += list(combinations(elems, k))
    return out


# ---- compiling expressions to Python source --------------------------------------------------


_FOLD: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq, "ne": operator.ne, "add": operator.add, "sub": operator.sub,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}


class _Fold:
    """A folded literal (known at compile time) or a piece of Python source."""

    __slots__ = ("lit", "src")

    def __init__(self, lit: Any = None, src: str | None = None) -> None:
        self.lit, self.src = lit, src

    @property
    def known(self) -> bool:
        return self.src is None

    def text(self) -> str:
        return repr(self.lit) if self.src is None else self.src


class Compiler:
    """Compiles expressions of one action instance (its environment fixed) to Python source."""

    # the step's writes (key -> folded value) while its `checks` are compiled: what `Post` reads
    post: "dict[str, _Fold] | None" = None
    # the step's reported observations (key -> folded value): what `Reported` reads
    reported: "dict[str, _Fold] | None" = None
    # the step's observation expressions and the values an event reported (`Reported(key, at)`)
    report_src: "tuple[dict[str, Expr], dict[str, int]] | None" = None

    def __init__(self, u: Universe, env: Env) -> None:
        self.u = u
        self.env = env

    def elem(self, e: Expr) -> Elem:
        if isinstance(e, Var):
            return self.env[e.name]
        if isinstance(e, Lit) and not isinstance(e.value, bool):
            return e.value
        raise TypeError(f"the finite reading needs a bound element here, got {e!r}")

    def key(self, a: App) -> str:
        return self.u.key(a.func, [self.elem(x) for x in a.args])

    def expr(self, e: Expr, hint: Dom | None = None) -> _Fold:
        if isinstance(e, Lit):
            if isinstance(e.value, str):
                if not isinstance(hint, EnumDom):
                    raise TypeError(f"label {e.value!r} outside an enumeration context")
                return _Fold(hint.index(e.value))
            return _Fold(e.value)
        if isinstance(e, Var):
            return _Fold(self.env[e.name])
        if isinstance(e, App):
            return _Fold(src=self._read(self.key(e)))
        if isinstance(e, Post):
            if self.post is None:
                raise TypeError(f"Post({e.app.func.name}) outside an action's checks")
            key = self.key(e.app)
            got = self.post.get(key)
            return got if got is not None else _Fold(src=self._read(key))
        if isinstance(e, Reported):
            if self.reported is None or e.key not in self.reported:
                raise TypeError(f"Reported({e.key!r}) outside an action that observes it")
            if e.at is None:
                return self.reported[e.key]
            return self.reported_bit(e)
        if isinstance(e, Member):
            members = self.env[e.scope.name]
            return _Fold(members is not None and self.elem(e.elem) in members)
        if isinstance(e, BoolParam):
            return _Fold(self.env[e.name])
        if isinstance(e, IsAll):
            return _Fold(self.env[e.scope.name] is None)
        if isinstance(e, Quant):
            parts = [self._child({**self.env, e.var.name: x}).expr(e.body)
                     for x in self.u.elems(e.var.sort)]
            return self._conn("and" if e.kind == "forall" else "or", parts)
        if isinstance(e, Agg):
            return self.agg(e)
        if isinstance(e, Index):
            s = _sort_of_elem(e.elem)
            return _Fold(self.u.elems(s).index(self.elem(e.elem)))
        assert isinstance(e, Op)
        return self.op(e, hint)

    def reported_bit(self, e: Reported) -> _Fold:
        """Bit `e.at` of the reported mask `e.key`: the event's bit when it reported the mask,
        else the mask observation's body at `e.at` (what the model's own step computes)."""
        assert self.report_src is not None and e.at is not None
        observe, given = self.report_src
        mask = observe[e.key]
        if not (isinstance(mask, Agg) and mask.kind == "mask"):
            raise TypeError(f"Reported({e.key!r}, {e.at.name}) needs a Mask observation")
        x = self.elem(e.at)
        if e.key in given:
            return _Fold(bool(given[e.key] >> self.u.elems(mask.var.sort).index(x) & 1))
        return self._child({**self.env, mask.var.name: x}).expr(mask.body)

    def agg(self, e: Agg) -> _Fold:
        """A count or a mask, unrolled: known terms folded into one constant."""
        total, rest = 0, []
        for i, x in enumerate(self.u.elems(e.var.sort)):
            part = self._child({**self.env, e.var.name: x}).expr(e.body)
            weight = 1 if e.kind == "count" else 1 << i
            if part.known:
                total += weight * int(part.lit)
            elif e.kind == "count":
                rest.append(part.src)
            else:
                rest.append(self._ite(part.src, str(weight), "0"))  # type: ignore[arg-type]
        if not rest:
            return _Fold(total)
        src = self._sum(rest)  # type: ignore[arg-type]
        return _Fold(src=f"({src} + {total})" if total else src)

    def op(self, e: Op, hint: Dom | None) -> _Fold:
        o = e.op
        if o in ("and", "or"):
            return self._conn(o, [self.expr(x) for x in e.args])
        if o == "not":
            x = self.expr(e.args[0])
            return _Fold(not x.lit) if x.known else _Fold(src=self._not(x.src))
        if o == "implies":
            a, c = self.expr(e.args[0]), self.expr(e.args[1])
            if a.known:
                return c if a.lit else _Fold(True)
            if c.known and c.lit:
                return _Fold(True)
            return _Fold(src=self._implies(a.text(), c.text()))
        if o == "ite":
            c = self.expr(e.args[0])
            if c.known:
                return self.expr(e.args[1] if c.lit else e.args[2], hint)
            a, b = self.expr(e.args[1], hint), self.expr(e.args[2], hint)
            return _Fold(src=self._ite(c.src, a.text(), b.text()))
        # binary arithmetic / comparison: an enum label meets the enum function it is compared to
        l, r = e.args
        dl = self._dom(l) or self._dom(r)
        x, y = self.expr(l, dl), self.expr(r, dl)
        sym = {"eq": "==", "ne": "!=", "add": "+", "sub": "-", "lt": "<", "le": "<=", "gt": ">",
               "ge": ">="}[o]
        if x.known and y.known:
            return _Fold(_FOLD[o](x.lit, y.lit))
        if o in ("eq", "ne") and (x.known or y.known):
            lit, other = (x, y) if x.known else (y, x)
            if isinstance(lit.lit, bool):  # b == True is b, b == False is not b
                positive = lit.lit == (o == "eq")
                return _Fold(src=other.src if positive else self._not(other.src))
        return _Fold(src=f"({x.text()} {sym} {y.text()})")

    def _dom(self, e: Expr) -> Dom | None:
        if isinstance(e, Post):
            return e.app.func.dom
        return e.func.dom if isinstance(e, App) else None

    def _conn(self, o: str, parts: list[_Fold]) -> _Fold:
        absorbing, unit = (False, True) if o == "and" else (True, False)
        rest = []
        for x in parts:
            if x.known:
                if bool(x.lit) == absorbing:
                    return _Fold(absorbing)
                continue
            rest.append(x.src)
        if not rest:
            return _Fold(unit)
        if len(rest) == 1:
            return _Fold(src=rest[0])
        return _Fold(src=self._join(o, rest))  # type: ignore[arg-type]

    # ---- the target text: Backend calls, so one source serves the Z3 and the concrete reading;
    # a subclass may emit another target from the same folding (spec/datapath/fast.py) ----
    def _child(self, env: Env) -> "Compiler":
        c = self._spawn(env)
        c.post, c.reported, c.report_src = self.post, self.reported, self.report_src
        return c

    def _spawn(self, env: Env) -> "Compiler":
        """A compiler of the same kind for a nested scope (a subclass passes its own settings)."""
        return Compiler(self.u, env)

    def _read(self, key: str) -> str:
        return f"s[{key!r}]"

    def _not(self, src: str) -> str:
        return f"b.Not({src})"

    def _implies(self, a: str, c: str) -> str:
        return f"b.Implies({a}, {c})"

    def _ite(self, c: str, a: str, b: str) -> str:
        return f"b.If({c}, {a}, {b})"

    def _join(self, o: str, parts: list[str]) -> str:
        return f"b.{'And' if o == 'and' else 'Or'}({', '.join(parts)})"

    def _sum(self, parts: list[str]) -> str:
        return f"b.Sum([{', '.join(parts)}])"


class PythonText:
    """The connectives as plain short-circuit Python text (mixed into a Compiler subclass ahead of
    it): the BFS/data-path PyCompiler and the open-world checker's compiler (spec/lang/owcompile.py)."""

    def _not(self, src: str) -> str:
        return f"(not {src})"

    def _implies(self, a: str, c: str) -> str:
        return f"((not {a}) or {c})"

    def _ite(self, c: str, a: str, b: str) -> str:
        return f"({a} if {c} else {b})"

    def _join(self, o: str, parts: list[str]) -> str:
        return "(" + f" {o} ".join(parts) + ")"


class PyCompiler(PythonText, Compiler):
    """The finite reading's compiler with another target text: plain short-circuit Python over a
    state tuple `s` indexed by position (the folding, quantifier unrolling and key templates are
    the base class's; bools add as 0/1, as CONCRETE reads them). `pins`: keys whose value is known
    where the text runs (a thread's program counter inside its bucket), folded as literals. Used by
    the data path's explorer (spec/datapath/fast.py) and the BFS code (spec/explore_compile.py)."""

    def __init__(self, u: Universe, env: Env, index: dict[str, int], pins: Mapping[str, int] | None = None,
                 var: str = "s") -> None:
        super().__init__(u, env)
        self.index, self.pins, self.var = index, pins or {}, var

    def expr(self, e: Expr, hint: Dom | None = None) -> _Fold:
        if self.pins and isinstance(e, App):
            got = self.pins.get(self.key(e))
            if got is not None:
                return _Fold(got)
        return super().expr(e, hint)

    def _spawn(self, env: Env) -> "PyCompiler":
        return PyCompiler(self.u, env, self.index, self.pins, self.var)

    def _read(self, key: str) -> str:
        return f"{self.var}[{self.index[key]}]"

    def _sum(self, parts: list[str]) -> str:
        return "(" + " + ".join(parts) + ")"


# ---- action instances -----------------------------------------------------------------------

Fn = Callable[[Backend, State], Any]


@lru_cache(maxsize=1 << 16)
def _code(src: str, name: str) -> Any:
    # variants of one definition share most actions, and their instances compile to the same
    # source: compile() was a third of building a model (11 lifecycle variants at 40 dispatches)
    return compile(src, f"<spmcheck:{name}>", "exec")


def _build(src: str, name: str) -> Fn:
    ns: dict[str, Any] = {}
    exec(_code(src, name), ns)  # the source is generated above, never input
    return ns["f"]  # type: ignore[no-any-return]


def _labelled(pairs: list[tuple[str, _Fold]]) -> str:
    return "[" + ", ".join(f"({lab!r}, {x.text()})" for lab, x in pairs) + "]"


class _Observed(dict):  # type: ignore[type-arg]
    """The step's observations (key -> folded value), each folded when an expression first reads
    it (`Reported(key)`): a reading that needs only the guards never folds them."""

    def __init__(self, c: "Compiler", observe: Mapping[str, Expr], given: Mapping[str, int]) -> None:
        super().__init__()
        self._c, self._observe, self._given = c, observe, given

    def __contains__(self, k: object) -> bool:
        return k in self._observe

    def __missing__(self, k: str) -> _Fold:
        if k not in self._observe:
            raise KeyError(k)
        v = self[k] = _Fold(self._given[k]) if k in self._given else self._c.expr(self._observe[k])
        return v


_PARTS = ("selectors", "guards", "effect", "observed", "writes", "checks")


class Compiled:
    """One action instance's functions of (backend, state): selectors, guards, effect (the
    post-state's written keys -> values, `writes` those keys), observed and checks. Each is
    generated from the definition and compiled the first time it is used: a breadth-first search
    reads only the guards and the effect of every instance, a replay only those of the steps it
    takes, so most observations and step checks are never generated (they were most of building
    a small instance, paid once per ladder rung). The values are those the eager compilation gave."""

    def __init__(self, u: Universe, act: LAction, thread: Elem, env: Env, pc: Func,
                 reported: Mapping[str, int] | None) -> None:
        self._u, self._act, self._thread, self._pc = u, act, thread, pc
        self._env = env = {**env, **dict(act.consts), act.thread.name: thread}
        self._c = c = Compiler(u, env)
        self._given = given = dict(reported or {})
        c.report_src = (dict(act.observe), given)
        c.reported = _Observed(c, dict(act.observe), given)
        assert isinstance(pc.dom, EnumDom)
        self._tag = f"{act.role.name}.{act.at}.{act.kind}"
        self._upd: dict[str, _Fold] | None = None

    def __getattr__(self, name: str) -> Any:
        # only called for a part not made yet: made once, then an ordinary attribute
        if name not in _PARTS:
            raise AttributeError(name)
        val = getattr(self, f"_make_{name}")()
        setattr(self, name, val)
        return val

    def _make_selectors(self) -> Fn:
        sel = [(_text(lab, self._env), self._c.expr(x)) for lab, x in self._act.select]
        return _build(f"def f(b, s):\n    return {_labelled(sel)}\n", self._tag)

    def _make_guards(self) -> Fn:
        guards = [(_text(lab, self._env), self._c.expr(x)) for lab, x in self._act.guard]
        return _build(f"def f(b, s):\n    return {_labelled(guards)}\n", self._tag)

    def _updates(self) -> dict[str, _Fold]:
        if self._upd is None:
            self._upd = self._fold_updates(self._c)
        return self._upd

    def _fold_updates(self, c: Compiler) -> dict[str, _Fold]:
        """The step's writes (key -> folded value) in `c`'s target text."""
        u, act, env = self._u, self._act, self._env
        upd: dict[str, _Fold] = {}

        def put(key: str, val: _Fold) -> None:
            if key in upd:
                raise ValueError(f"{self._tag}: {key} is written twice by one step")
            upd[key] = val

        for up in act.updates:
            if isinstance(up, Every):
                for x in u.elems(up.var.sort):
                    c2 = c._child({**env, up.var.name: x})
                    put(c2.key(up.target), c2.expr(lift(up.value), up.target.func.dom))
            else:
                target, value = up
                put(c.key(target), c.expr(lift(value), target.func.dom))
        if act.goto is not None:
            put(u.key(self._pc, [self._thread]), c.expr(act.goto, self._pc.dom))
        return upd

    def python(self, index: dict[str, int], pins: Mapping[str, int], var: str = "t"
               ) -> tuple[_Fold, dict[str, _Fold]]:
        """The step as plain Python over the state tuple `var` (PyCompiler), `pins` folded as
        literals: (its selectors and guards as one condition, its writes). The program counter
        selector Action.selectors adds is not included (the caller's bucket tests it). What a
        Backend reading of `selectors`, `guards` and `effect` gives, without compiling them."""
        c = PyCompiler(self._u, self._env, index, pins, var)
        c.report_src = self._c.report_src
        c.reported = _Observed(c, dict(self._act.observe), self._given)
        en = c._conn("and", [c.expr(x) for _, x in [*self._act.select, *self._act.guard]])
        return en, self._fold_updates(c)

    def _make_effect(self) -> Fn:
        upd = self._updates()
        return _build("def f(b, s):\n    return {" + ", ".join(f"{k!r}: {v.text()}" for k, v in upd.items())
                      + "}\n", self._tag)

    def _make_writes(self) -> tuple[str, ...]:
        return tuple(self._updates())

    def _make_observed(self) -> Fn:
        obs = [(k, self._c.reported[k]) for k, _ in self._act.observe if k not in self._given]  # type: ignore[index]
        return _build("def f(b, s):\n    return {" + ", ".join(f"{k!r}: {v.text()}" for k, v in obs) + "}\n",
                      self._tag)

    def _make_checks(self) -> Fn:
        # a check's `Post(f(..))` is the value this step writes there (only checks may read Post:
        # the guards' compiler has no post-state); step findings' conditions too, the properties
        # that read them are told apart by name
        c = self._c._child(self._env)
        c.post = self._updates()
        act, env = self._act, self._env
        chk = "[" + ", ".join(f"({name!r}, {_text(why, env)!r}, {c.expr(x).text()})"
                              for name, why, x in act.checks + act.finding_checks) + "]"
        return _build(f"def f(b, s):\n    return {chk}\n", self._tag)


def compile_instance(u: Universe, act: LAction, thread: Elem, env: Env, pc: Func,
                     reported: Mapping[str, int] | None = None) -> Compiled:
    """`reported`: observation key -> the value an event reported instead of the one the step
    computes (the checker's off-model instance, `Reported`): `Reported(key)` reads it and the
    observation is not compared. None: the model's own step. The functions are made on first use
    (`Compiled`)."""
    return Compiled(u, act, thread, env, pc, reported)


def reported_keys(act: LAction) -> tuple[str, ...]:
    """The observations whose reported value the step reads (`Reported` in its updates or checks):
    an event reporting another value is still this step, judged by the claims."""
    out: list[str] = []
    todo: list[Any] = [up.value if isinstance(up, Every) else up[1] for up in act.updates]
    todo += [x for _, _, x in act.checks + act.finding_checks]
    while todo:
        x = todo.pop()
        if isinstance(x, Reported):
            if x.key not in out:
                out.append(x.key)
        elif isinstance(x, (Op, App)):
            todo += list(x.args)
        elif isinstance(x, (Quant, Agg)):
            todo.append(x.body)
        elif isinstance(x, Post):
            todo.append(x.app)
    return tuple(out)


def compile_closed(u: Universe, e: Expr, name: str = "claim") -> Fn:
    """A closed expression (an invariant claim) as a function of (backend, state)."""
    return _build(f"def f(b, s):\n    return {Compiler(u, {}).expr(e).text()}\n", name)


class RecordingCompiler(Compiler):
    """The base compiler's text (Backend connectives, same folding) over a state list `s` indexed
    by position, each read noting its key first: `s[ap('key') or i]`, `ap` a list's C-level
    append (None, so `or` gives the index). Evaluated on a state, it returns what the base text
    returns on the same state as a mapping and appends the keys that a recording mapping
    (checker/replay.py `_Reads`) would see read, in the same order and number: the reads are the
    same subscripts in the same places, only the bookkeeping moved inline (a Python-level
    `__getitem__` per read was most of checking a lifecycle log: ~875 reads per evaluation of a
    claim over 40 dispatches)."""

    def __init__(self, u: Universe, env: Env, index: Mapping[str, int]) -> None:
        super().__init__(u, env)
        self.index = index

    def _spawn(self, env: Env) -> "RecordingCompiler":
        return RecordingCompiler(self.u, env, self.index)

    def _read(self, key: str) -> str:
        return f"s[ap({key!r}) or {self.index[key]}]"


@lru_cache(maxsize=256)
def fixed_reads(src: str) -> tuple[str, ...] | None:
    """The keys a RecordingCompiler expression text reads on every state, in order and number, or
    None when some read may not happen or happen again (a node that evaluates a child
    conditionally or repeatedly: `and`/`or`, `x if c else y`, a chained comparison, a
    comprehension, a lambda). The nodes allowed evaluate each child once, left to right (a
    Backend connective is a call: its operands are evaluated before it runs), so each
    `s[ap(k) or i]` runs once per evaluation, in the order of the text. Cached by text: the
    variants of a definition at one size share their claims' texts (parsing is most of the cost)."""
    keys: list[tuple[int, int, str]] = []
    todo: list[ast.AST] = [ast.parse(src, mode="eval").body]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call):
            if n.keywords:
                return None
            todo.append(n.func)
            todo += n.args
        elif isinstance(n, ast.Subscript):
            todo += (n.value, n.slice)
        elif isinstance(n, ast.BoolOp):  # only a read's own `ap(k) or i`
            f = n.values[0]
            if not (isinstance(n.op, ast.Or) and len(n.values) == 2 and isinstance(f, ast.Call)
                    and isinstance(f.func, ast.Name) and f.func.id == "ap" and not f.keywords
                    and len(f.args) == 1 and isinstance(f.args[0], ast.Constant)):
                return None
            keys.append((f.lineno, f.col_offset, f.args[0].value))
            todo.append(n.values[1])
        elif isinstance(n, ast.Compare):
            if len(n.ops) != 1:
                return None  # a < b < c evaluates c only if a < b
            todo += (n.left, *n.comparators)
        elif isinstance(n, ast.BinOp):
            todo += (n.left, n.right)
        elif isinstance(n, ast.UnaryOp):
            todo.append(n.operand)
        elif isinstance(n, (ast.List, ast.Tuple)):
            todo += n.elts
        elif isinstance(n, ast.Attribute):
            todo.append(n.value)
        elif not isinstance(n, (ast.Name, ast.Constant)):
            return None
    return tuple(k for _, _, k in sorted(keys))


RecordingFn = Callable[[Backend, Sequence[Term], list[str]], Any]


def compile_closed_recording(u: Universe, e: Expr, index: Mapping[str, int], name: str = "claim",
                             fixed: bool = True) -> RecordingFn:
    """`compile_closed`'s claim as a function of (backend, state list, reads) that appends to
    `reads` the keys the claim reads (RecordingCompiler's, in order and number): the checker's
    replay evaluates the definition's claims after every event and keys its memo and its evidence
    on exactly those reads. When they are the same on every state (`fixed_reads`: the Backend
    text is eager, so they always are for a claim), they are appended as one constant and the
    value comes from the same folding as plain short-circuit Python (PyCompiler): a value with the
    truth value of the Backend text's. Otherwise (or `fixed=False`) the recording text runs."""
    rec = RecordingCompiler(u, {}, index).expr(e).text()
    reads = fixed_reads(rec) if fixed else None
    if reads is None:
        src = f"def f(b, s, read):\n    ap = read.append\n    return {rec}\n"
    else:
        val = PyCompiler(u, {}, dict(index)).expr(e).text()
        src = f"def f(b, s, read):\n    read += {reads!r}\n    return {val}\n"
    return _build(src, f"{name}:reads")  # type: ignore[return-value]


def _sort_of_elem(e: Expr) -> Sort:
    if isinstance(e, Var):
        return e.sort
    if isinstance(e, App) and isinstance(e.func.dom, SortDom):
        return e.func.dom.sort
    raise TypeError(f"no sort for {e!r}")


def _text(label: str, env: Env) -> str:
    """Guard labels may name bound variables: `{t}`, `{a}` (scopes render as `all` or `0,1`)."""
    return label.format(**{k: render(v) for k, v in env.items()})


def render(v: Any) -> str:
    if v is None:
        return "all"
    if isinstance(v, tuple):
        return ",".join(str(x) for x in v)
    if isinstance(v, bool):
        return str(int(v))
    return str(v)


def static_of(act: LAction, env: Env) -> dict[str, object]:
    """The event keys that select this instance, as the trace writes them."""
    env = {**env, **dict(act.consts)}
    out: dict[str, object] = {}
    for k, v in act.static:
        if isinstance(v, str):
            out[k] = v.format(**{n: render(x) for n, x in env.items()})
        elif isinstance(v, ScopeParam):
            out[k] = render(env[v.name])
        elif isinstance(v, BoolParam):
            out[k] = int(bool(env[v.name]))
        else:
            out[k] = env[v.name]
    return out
