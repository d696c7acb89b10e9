"""The concrete reading compiled to straight-line Python over tuple states, for the BFS loop.

Guards, effects and predicates are written once against a `Backend` (spec.backend). Read with
`PY`, a fourth backend whose terms are Python expression text over a state tuple `t` (`t[7]`),
the very same functions give their source: `Action.enabled(PY, s)` is the guard's text,
`Action.effect(PY, s)` the update's. That text is compiled once per model into one successor
function (candidates bucketed by each thread's program counter, effects inlined) and one function
per predicate, so the search never builds a state dictionary. Nothing here restates a guard or an
update: a definition that branched on a state value in Python raises `NotCompilable` (a text term
has no truth value) and the search falls back to spec.explore.Explorer. tests/test_explore.py
checks that both give the same successors on every reachable state of small instances.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from .model import Action, Model
from .textterm import P

StateT = tuple


class NotCompilable(TypeError):
    """A function of the definition could not be read as text (it branched on state in Python)."""


def _lit(x: object) -> str:
    if isinstance(x, T):
        return x.src
    if isinstance(x, bool) or isinstance(x, int):
        return repr(x)
    raise NotCompilable(f"cannot compile the value {x!r}")


class T(P):
    """A Python expression over the state tuple `t`: spec.textterm's expression text (the
    comparison and arithmetic operators are spelled alike in Python and Promela) with Python's
    literals, failing as NotCompilable."""

    __slots__ = ()

    @property
    def src(self) -> str:
        return self.text

    def _lit(self, x: object) -> str:
        return _lit(x)

    def __bool__(self) -> bool:
        raise NotCompilable("a compiled term has no Python truth value (the definition branched on state)")


class PyBackend:
    """spec.backend.Backend over Python source; constants fold as in CONCRETE (so a guard that is
    constant at this size costs nothing). `and`/`or` short-circuit: the terms are pure, so the
    value is CONCRETE's."""

    def And(self, *xs: object) -> object:
        rest = []
        for x in xs:
            if isinstance(x, T):
                rest.append(x.src)
            elif not x:
                return False
        if not rest:
            return True
        return T(rest[0]) if len(rest) == 1 else T("(" + " and ".join(rest) + ")")

    def Or(self, *xs: object) -> object:
        rest = []
        for x in xs:
            if isinstance(x, T):
                rest.append(x.src)
            elif x:
                return True
        if not rest:
            return False
        return T(rest[0]) if len(rest) == 1 else T("(" + " or ".join(rest) + ")")

    def Not(self, x: object) -> object:
        return T(f"(not {x.src})") if isinstance(x, T) else (not x)

    def If(self, c: object, a: object, b: object) -> object:
        if not isinstance(c, T):
            return a if c else b
        return T(f"({_lit(a)} if {c.src} else {_lit(b)})")

    def Implies(self, a: object, b: object) -> object:
        return self.Or(self.Not(a), b)

    def Sum(self, xs: Iterable[object]) -> object:
        total, parts = 0, []
        for x in xs:
            if isinstance(x, T):
                parts.append(x.src)
            else:
                total += int(x)  # type: ignore[call-overload]
        if not parts:
            return total
        # bools add as 0/1 in Python, as CONCRETE's int(x) reads them
        return T("(" + " + ".join(parts + ([str(total)] if total else [])) + ")")

    def true(self) -> object:
        return True

    def false(self) -> object:
        return False


PY = PyBackend()


def _build(src: str, name: str) -> Any:
    ns: dict[str, Any] = {}
    exec(compile(src, f"<spmcheck-bfs:{name}>", "exec"), ns)  # generated here from the definition, never input
    return ns["f"]


def _text(x: object) -> str:
    try:
        return _lit(x)
    except NotCompilable:
        raise
    except TypeError as e:  # a term refused bool() deeper inside the definition's Python
        raise NotCompilable(str(e)) from e


class Compiled:
    """One model's successor function and predicates over tuple states."""

    def __init__(self, model: Model, packed: bool = True) -> None:
        from .programs import pc_of, role_of

        self.model = model
        # states as `bytes` when every variable fits a byte (hashing and copying are then C
        # loops over 60-80 bytes instead of tuples of Python ints); a value outside a byte
        # raises ValueError in the search, which then reruns on tuples (never a wrong state)
        self.packed = packed and all(0 <= d.lo and d.hi <= 255 for d in model.vars)
        self.make, self.copy = ("bytes", "bytearray") if self.packed else ("tuple", "list")
        self.names = list(model.var_names)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.sym = {n: T(f"t[{i}]") for i, n in enumerate(self.names)}
        self.actions = list(model.actions)
        # per thread: its program counter's position, then per pc value the candidate actions
        by_pc: dict[int, dict[int, list[tuple[Action, str, str]]]] = {}
        try:
            for a in self.actions:
                g = a.enabled(PY, self.sym)
                if g is False or (not isinstance(g, T) and not g):
                    continue
                body = self._effect_src(a)
                pci = self.index[f"pc.{a.thread}"]
                val = pc_of(role_of(a.thread), a.label)
                by_pc.setdefault(pci, {}).setdefault(val, []).append((a, "True" if g is True else _text(g), body))
        except TypeError as e:
            raise NotCompilable(str(e)) from e
        self.by_pc = by_pc
        # threads are emitted in action order and a thread's actions are contiguous and in order,
        # so successors come out in the model's action order (the generic explorer's), unsorted
        spans = [(min(a.index for c in tb.values() for a, _, _ in c), max(a.index for c in tb.values() for a, _, _ in c))
                 for tb in by_pc.values()]
        self.ordered = all(spans[i][1] < spans[i + 1][0] for i in range(len(spans) - 1))
        lines = ["def f(t):", "    r = []", "    ap = r.append"]
        lines += self._emit("    ", lambda a, ind: [f"{ind}ap(({a.index}, {self.make}(l)))"])
        lines += ([] if self.ordered else ["    r.sort()"]) + ["    return r"]
        self.successors: Callable[[StateT], list[tuple[int, StateT]]] = _build("\n".join(lines) + "\n", "succ")

    def _emit(self, ind0: str, fire: Callable[[Action, str], list[str]], before: Callable[[Action, str], list[str]]
              = lambda a, ind: []) -> list[str]:
        """The dispatch on each thread's program counter, each candidate's guard and post-state
        `l`; `before(a, ind)` lines run when a is enabled (pre-state `t`), `fire(a, ind)` after `l`."""
        lines = []
        for pci, table in self.by_pc.items():
            lines.append(f"{ind0}v = t[{pci}]")
            kw = "if"
            for val in sorted(table):
                lines.append(f"{ind0}{kw} v == {val}:")
                for a, g, body in table[val]:
                    ind = ind0 + "    "
                    if g != "True":
                        lines.append(f"{ind}if {g}:")
                        ind += "    "
                    lines += before(a, ind) + [ind + x for x in body] + fire(a, ind)
                kw = "elif"
        return lines

    def text(self, fn: Callable[[Any, dict], object], var: str = "t") -> str:
        """A predicate's source over the state named `var`."""
        try:
            x = fn(PY, {n: T(f"{var}[{i}]") for i, n in enumerate(self.names)})
        except TypeError as e:
            raise NotCompilable(str(e)) from e
        return _text(x) if isinstance(x, T) else repr(bool(x))

    def level(self, bad: Callable[[Any, dict], object] | None, step: dict[int, Callable[[Any, dict], object]]
              ) -> Callable[..., tuple | None] | None:
        """One breadth-first level as one function, the target inlined:
        `f(frontier, parent, push, limit, mono, deadline)` expands every state of `frontier`,
        records each new state's parent `(state, action index)` in `parent` and pushes it; it returns
        None (level done), (0, None, 0) (the state limit or the deadline was reached after some
        state), (1, t, i) (action i fires from t and breaks the step target) or (2, n, i) (n, new,
        reached by i, is a bad state). The same visit order and checks as spec.explore._search
        over `successors`; None if the successors need sorting (then `_search` runs)."""
        if not self.ordered:
            return None
        bad_src = self.text(bad, "n") if bad is not None else "False"
        step_src = {i: self.text(f, "t") for i, f in step.items()}

        def before(a: Action, ind: str) -> list[str]:
            src = step_src.get(a.index)
            if src is None or src == "False":
                return []
            return [f"{ind}if {src}:", f"{ind}    return (1, t, {a.index})"]

        def fire(a: Action, ind: str) -> list[str]:
            out = [f"{ind}n = {self.make}(l)", f"{ind}if n not in parent:", f"{ind}    parent[n] = (t, {a.index})"]
            if bad_src != "False":
                out.append(f"{ind}    if {bad_src}:")
                out.append(f"{ind}        return (2, n, {a.index})")
            return out + [f"{ind}    push(n)"]

        lines = ["def f(frontier, parent, push, limit, mono, deadline):", "    for t in frontier:"]
        lines += self._emit("        ", fire, before)
        lines += ["        if len(parent) >= limit or mono() > deadline:", "            return (0, None, 0)",
                  "    return None"]
        return _build("\n".join(lines) + "\n", "level")  # type: ignore[no-any-return]

    def _effect_src(self, a: Action) -> list[str]:
        """Statements building the post-state `n` from the pre-state `t`: a list copy, the
        written positions, a tuple (the cheapest way to build a tuple of this size in CPython;
        every right-hand side reads the pre-state, as `apply` does)."""
        eff = a.effect(PY, self.sym)
        writes = [(self.index[k], _text(v)) for k, v in eff.items()]
        writes = [(i, v) for i, v in writes if v != f"t[{i}]"]
        return [f"l = {self.copy}(t)"] + [f"l[{i}] = {v}" for i, v in writes]

    def pred(self, fn: Callable[[Any, dict], object], name: str = "pred") -> Callable[[StateT], bool]:
        """A state predicate `fn(backend, state)` as a function of the tuple."""
        try:
            x = fn(PY, self.sym)
        except TypeError as e:
            raise NotCompilable(str(e)) from e
        if not isinstance(x, T):
            c = bool(x)
            return lambda t: c
        return _build(f"def f(t):\n    return {_text(x)}\n", name)

    def as_tuple(self, s: dict) -> StateT:
        vals = [s[n] for n in self.names]
        return bytes(vals) if self.packed else tuple(vals)

    def as_dict(self, t: StateT) -> dict:
        return dict(zip(self.names, t))
