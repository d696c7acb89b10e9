"""A concrete-only compilation of `spec.lang` expressions for the explorer's inner loop.

`spec.lang.finite.Compiler` emits Python that goes through a `Backend` (`b.And(...)`), so one
source serves the Z3 reading and the concrete one; every argument of `b.And` is evaluated before
the call. The data-path exploration only evaluates concretely, so this subclass emits plain
short-circuit Python (`and`, `or`, `x if c else y`) over a state tuple indexed by position. It
reads the same definition with the same folding and the same key template; only the target
language of the generated text differs, and tests/test_datapath.py checks that both compilations
agree on every explored state's guards and effects.
"""
from __future__ import annotations

from typing import Any, Callable

from ..lang.finite import Compiler, Universe, _Fold, _FOLD
from ..lang.syntax import App, Every, Expr, Op, Quant, lift
from ..lang.syntax import Action as LAction

StateFn = Callable[[tuple], Any]


class PyCompiler(Compiler):
    def __init__(self, u: Universe, env: dict, index: dict[str, int]) -> None:
        super().__init__(u, env)
        self.index = index

    def expr(self, e: Expr, hint: Any = None) -> _Fold:
        if isinstance(e, App):
            return _Fold(src=f"s[{self.index[self.key(e)]}]")
        if isinstance(e, Quant):
            parts = [PyCompiler(self.u, {**self.env, e.var.name: x}, self.index).expr(e.body)
                     for x in self.u.elems(e.var.sort)]
            return self._conn("and" if e.kind == "forall" else "or", parts)
        return super().expr(e, hint)

    def op(self, e: Op, hint: Any) -> _Fold:
        o = e.op
        if o in ("and", "or"):
            return self._conn(o, [self.expr(x) for x in e.args])
        if o == "not":
            x = self.expr(e.args[0])
            return _Fold(not x.lit) if x.known else _Fold(src=f"(not {x.src})")
        if o == "implies":
            a, c = self.expr(e.args[0]), self.expr(e.args[1])
            if a.known:
                return c if a.lit else _Fold(True)
            if c.known and c.lit:
                return _Fold(True)
            return _Fold(src=f"((not {a.src}) or {c.text()})")
        if o == "ite":
            c = self.expr(e.args[0])
            if c.known:
                return self.expr(e.args[1] if c.lit else e.args[2], hint)
            a, b = self.expr(e.args[1], hint), self.expr(e.args[2], hint)
            return _Fold(src=f"({a.text()} if {c.src} else {b.text()})")
        l, r = e.args
        dl = self._dom(l) or self._dom(r)
        x, y = self.expr(l, dl), self.expr(r, dl)
        if x.known and y.known:
            return _Fold(_FOLD[o](x.lit, y.lit))
        sym = {"eq": "==", "ne": "!=", "add": "+", "sub": "-", "lt": "<", "le": "<=", "gt": ">",
               "ge": ">="}[o]
        return _Fold(src=f"({x.text()} {sym} {y.text()})")

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
        return _Fold(src="(" + f" {o} ".join(rest) + ")")


def _build(src: str, name: str) -> StateFn:
    ns: dict[str, Any] = {}
    exec(compile(src, f"<spmcheck-datapath:{name}>", "exec"), ns)  # generated above, never input
    return ns["f"]  # type: ignore[no-any-return]


def closed(u: Universe, index: dict[str, int], e: Expr, name: str = "pred") -> StateFn:
    return _build(f"def f(s):\n    return {PyCompiler(u, {}, index).expr(lift(e)).text()}\n", name)


def instance(u: Universe, index: dict[str, int], act: LAction, thread: Any, env: dict,
             pc_key: str, pc_value: int) -> tuple[StateFn, StateFn, list[tuple[str, str, StateFn]]]:
    """(enabled, successor, checks) of one action instance over tuple states; the program counter
    test is left to the caller's bucket."""
    from ..lang.finite import _text

    env = {**env, **dict(act.consts), act.thread.name: thread}
    c = PyCompiler(u, env, index)
    tag = f"{act.role.name}.{act.at}.{act.kind}"
    conds = [x for _, x in act.select] + [x for _, x in act.guard]
    en = c._conn("and", [c.expr(x) for x in conds])
    upd: dict[int, str] = {}
    for up in act.updates:
        if isinstance(up, Every):
            for x in u.elems(up.var.sort):
                c2 = PyCompiler(u, {**env, up.var.name: x}, index)
                upd[index[c2.key(up.target)]] = c2.expr(lift(up.value), up.target.func.dom).text()
        else:
            target, value = up
            upd[index[c.key(target)]] = c.expr(lift(value), target.func.dom).text()
    if act.goto is not None:
        pc = act.role  # the pc key is given by the caller
        upd[index[pc_key]] = c.expr(act.goto, u.proto.pc[pc.name].dom).text()
    body = "".join(f"    l[{i}] = {v}\n" for i, v in upd.items())
    succ = _build(f"def f(s):\n    l = list(s)\n{body}    return tuple(l)\n", tag)
    enabled = _build(f"def f(s):\n    return {en.text()}\n", tag)
    checks = [(name, _text(why, env), _build(f"def f(s):\n    return {c.expr(x).text()}\n", tag))
              for name, why, x in act.checks]
    return enabled, succ, checks
