"""A concrete-only compilation of `spec.lang` expressions for the explorer's inner loop.

`spec.lang.finite.Compiler` emits Python that goes through a `Backend` (`b.And(...)`), so one
source serves the Z3 reading and the concrete one; every argument of `b.And` is evaluated before
the call. The data-path exploration only evaluates concretely, so it uses `finite.PyCompiler`,
which emits plain short-circuit Python (`and`, `or`, `x if c else y`) over a state tuple indexed by position. It
reads the same definition with the same folding and the same key template; only the target
language of the generated text differs, and tests/test_datapath.py checks that both compilations
agree on every explored state's guards and effects.
"""
from __future__ import annotations

from typing import Any, Callable

from ..lang.finite import PyCompiler, Universe
from ..lang.syntax import Every, Expr, lift
from ..lang.syntax import Action as LAction

StateFn = Callable[[tuple], Any]


def _build(src: str, name: str) -> StateFn:
    ns: dict[str, Any] = {}
    exec(compile(src, f"<spmcheck-datapath:{name}>", "exec"), ns)  # generated above, never input
    return ns["f"]  # type: ignore[no-any-return]


def closed(u: Universe, index: dict[str, int], e: Expr, name: str = "pred") -> StateFn:
    return _build(f"def f(s):\n    return {PyCompiler(u, {}, index).expr(lift(e)).text()}\n", name)


class InstanceText:
    """The generated source of one action instance over tuple states: its enabling condition (the
    program counter test left to the caller), its successor body, its step checks."""

    def __init__(self, tag: str, enabled: str, succ_body: str, checks: list[tuple[str, str, str]],
                 observe: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
        self.tag = tag
        self.enabled_src = enabled
        self.succ_body = succ_body
        self.checks_src = checks
        self.observe_src = list(observe)

    def observed(self) -> StateFn:
        """The values the event reports, {key: value}, read in the pre-state."""
        body = ", ".join(f"{k!r}: {v}" for k, v in self.observe_src)
        return _build(f"def f(s):\n    return {{{body}}}\n", self.tag)

    def enabled(self) -> StateFn:
        return _build(f"def f(s):\n    return {self.enabled_src}\n", self.tag)

    def succ(self) -> StateFn:
        return _build(f"def f(s):\n    l = list(s)\n{self.succ_body}    return tuple(l)\n", self.tag)

    def checks(self) -> list[tuple[str, str, StateFn]]:
        return [(name, why, _build(f"def f(s):\n    return {src}\n", self.tag)) for name, why, src in self.checks_src]


def instance_text(u: Universe, index: dict[str, int], act: LAction, thread: Any, env: dict,
                  pc_key: str) -> InstanceText:
    """The source of one action instance over tuple states (see `InstanceText`)."""
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
        upd[index[pc_key]] = c.expr(act.goto, u.proto.pc[act.role.name].dom).text()
    body = "".join(f"    l[{i}] = {v}\n" for i, v in upd.items())
    return InstanceText(tag, en.text(), body, [(name, _text(why, env), c.expr(x).text()) for name, why, x in act.checks],
                        [(k, c.expr(v).text()) for k, v in act.observe])


def enabled_all(groups: list[tuple[int, list[tuple[int, int, str]]]]) -> Callable[[tuple], list[int]]:
    """One function for the whole enabled set of a state: per program counter variable (index in
    the state), per label value, the instances there whose condition holds; groups:
    [(pc index, [(label value, instance index, condition source)])]. One call per state instead
    of one per candidate instance: the explorer's inner loop."""
    lines = ["def f(s):", "    r = []", "    a = r.append"]
    for pc_i, cands in groups:
        lines.append(f"    v = s[{pc_i}]")
        by: dict[int, list[tuple[int, str]]] = {}
        for val, ii, src in cands:
            by.setdefault(val, []).append((ii, src))
        kw = "if"
        for val, items in sorted(by.items()):
            lines.append(f"    {kw} v == {val}:")
            for ii, src in items:
                lines.append(f"        if {src}: a({ii})" if src != "True" else f"        a({ii})")
            kw = "elif"
    lines.append("    return r")
    return _build("\n".join(lines) + "\n", "enabled")


def instance(u: Universe, index: dict[str, int], act: LAction, thread: Any, env: dict,
             pc_key: str) -> tuple[StateFn, StateFn, list[tuple[str, str, StateFn]]]:
    """(enabled, successor, checks) of one action instance over tuple states; the program counter
    test is left to the caller's bucket."""
    t = instance_text(u, index, act, thread, env, pc_key)
    return t.enabled(), t.succ(), t.checks()
