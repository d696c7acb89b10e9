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

import ast
import re
from functools import cached_property
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


# a bad-state predicate longer than this (characters of source) is called, not inlined, in `level`
INLINE_CHARS = 100


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
        by_pc: dict[int, dict[int, list[tuple[Action, str, list[str]]]]] = {}
        self.writes: dict[int, list[tuple[int, str]]] = {}
        try:
            for a in self.actions:
                # the guard and the update are read where the search evaluates them: in the
                # bucket of the thread's pc value, so that pc is a constant there (the
                # selector `pc == val` folds away instead of being tested again per state)
                pc = f"pc.{a.thread}"
                val = pc_of(role_of(a.thread), a.label)
                got = self._direct(a, pc, val)
                if got is None:
                    continue
                by_pc.setdefault(self.index[pc], {}).setdefault(val, []).append((a, *got))
        except TypeError as e:
            raise NotCompilable(str(e)) from e
        self.by_pc = by_pc
        self.init = self.as_tuple(model.init_state())
        self.live: Liveness | None = None  # the last `level(reduce=True)`'s analysis
        # threads are emitted in action order and a thread's actions are contiguous and in order,
        # so successors come out in the model's action order (the generic explorer's), unsorted
        spans = [(min(a.index for c in tb.values() for a, _, _ in c), max(a.index for c in tb.values() for a, _, _ in c))
                 for tb in by_pc.values()]
        self.ordered = all(spans[i][1] < spans[i + 1][0] for i in range(len(spans) - 1))

    @cached_property
    def successors(self) -> Callable[[StateT], list[tuple[int, StateT]]]:
        """The successor function (action index, post-state) in action order; built on first use:
        a search that runs on `level` never calls it, and compiling it was a sixth of a small
        rung's fixed cost."""
        lines = ["def f(t):", "    r = []", "    ap = r.append"]
        lines += self._emit("    ", lambda a, ind: [f"{ind}ap(({a.index}, {self.make}(l)))"])
        lines += ([] if self.ordered else ["    r.sort()"]) + ["    return r"]
        return _build("\n".join(lines) + "\n", "succ")  # type: ignore[no-any-return]

    def _emit(self, ind0: str, fire: Callable[[Action, str], list[str]], before: Callable[[Action, str], list[str]]
              = lambda a, ind: [], live: "Liveness | None" = None) -> list[str]:
        """The dispatch on each thread's program counter, each candidate's guard and post-state
        `l`; `before(a, ind)` lines run when a is enabled (pre-state `t`), `fire(a, ind)` after `l`.
        With `live`, invisible actions are left out and dead variables kept at their initial value."""
        lines = []
        for pci, table in self.by_pc.items():
            arms: list[tuple[int, list[str]]] = []
            for val in sorted(table):
                cands = [(a, g, body if live is None else live.body(a)) for a, g, body in table[val]
                         if live is None or a.index in live.visible]
                arm: list[str] = []
                for a, g, body in cands:
                    ind = "    "
                    if g != "True":
                        arm.append(f"{ind}if {g}:")
                        ind += "    "
                    arm += before(a, ind) + [ind + x for x in body] + fire(a, ind)
                if arm:
                    arms.append((val, arm))
            if arms:
                lines.append(f"{ind0}v = t[{pci}]")
                lines += _dispatch(arms, ind0)
        return lines

    def text(self, fn: Callable[[Any, dict], object], var: str = "t") -> str:
        """A predicate's source over the state named `var`."""
        try:
            x = fn(PY, {n: T(f"{var}[{i}]") for i, n in enumerate(self.names)})
        except TypeError as e:
            raise NotCompilable(str(e)) from e
        return _text(x) if isinstance(x, T) else repr(bool(x))

    def level(self, bad: Callable[[Any, dict], object] | None, step: dict[int, Callable[[Any, dict], object]],
              reduce: bool = False) -> Callable[..., tuple | None] | None:
        """One breadth-first level as one function, the target inlined:
        `f(frontier, parent, push, limit, mono, deadline)` expands every state of `frontier`,
        records each new state's parent `(state, action index)` in `parent` and pushes it; it returns
        None (level done), (0, None, 0) (the state limit or the deadline was reached after some
        state), (1, t, i) (action i fires from t and breaks the step target) or (2, n, i) (n, new,
        reached by i, is a bad state). The same visit order and checks as spec.explore._search
        over `successors`; None if the successors need sorting (then `_search` runs).

        reduce: the states are `Liveness` representatives for this target (dead variables at
        their initial value, invisible actions left out): fewer states, the same distances and
        the same verdict; the path is one of the shortest, not necessarily the unreduced
        search's first one."""
        if not self.ordered:
            return None
        bad_src = self.text(bad, "n") if bad is not None else "False"
        step_src = {i: self.text(f, "t") for i, f in step.items()}
        bad_reads = _reads(self.text(bad, "t")) if bad is not None else set()
        self.live = None
        if reduce:
            self.live = Liveness(self, bad_reads, {i: _reads(src) for i, src in step_src.items()})

        def before(a: Action, ind: str) -> list[str]:
            src = step_src.get(a.index)
            if src is None or src == "False":
                return []
            return [f"{ind}if {src}:", f"{ind}    return (1, t, {a.index})"]

        def fire(a: Action, ind: str) -> list[str]:
            out = [f"{ind}n = {self.make}(l)", f"{ind}if n not in parent:", f"{ind}    parent[n] = (t, {a.index})"]
            # every state in `parent` was tested when it was added (the initial state by the
            # caller), so a step that assigns none of the positions the bad-state predicate reads
            # leaves it false: the test is emitted only after steps that may change its value
            assigned = (_assigned(self.live.body(a)) if self.live is not None
                        else {i for i, _ in self.writes[a.index]})
            if bad_src != "False" and assigned & bad_reads:
                out.append(f"{ind}    if {bad_test}:")
                out.append(f"{ind}        return (2, n, {a.index})")
            return out + [f"{ind}    push(n)"]

        # a long predicate (the core's deadlock test reads every thread's pc) is one function
        # called at each test rather than inlined at every step: the inlined copies made the level
        # function 20 times larger and its compile() most of a small rung's cost
        head = ["def bad(n):", f"    return {bad_src}"] if len(bad_src) > INLINE_CHARS else []
        bad_test = "bad(n)" if head else bad_src
        lines = head + ["def f(frontier, parent, push, limit, mono, deadline):", "    for t in frontier:"]
        lines += self._emit("        ", fire, before, self.live)
        lines += ["        if len(parent) >= limit or mono() > deadline:", "            return (0, None, 0)",
                  "    return None"]
        return _build("\n".join(lines) + "\n", "level")  # type: ignore[no-any-return]

    def _direct(self, a: Action, pc: str, val: int) -> tuple[str, list[str]] | None:
        """(guard text, post-state statements) of `a` in its pc bucket, None if it is never
        enabled there. A step compiled from the definition (spec.model's steps) is written straight
        as Python by its instance (`finite.Compiled.python`: the same folding, no compile() of
        its Backend functions and no call of them); any other is read through PY."""
        inst = a.step.instance
        if inst is None:
            pinned = {**self.sym, pc: val}
            g = a.enabled(PY, pinned)
            if g is False or (not isinstance(g, T) and not g):
                return None
            return "True" if g is True else _text(g), self._effect_src(a, pinned)
        en, eff = inst.python(self.index, {pc: val})
        if en.known and not en.lit:
            return None
        writes = [(self.index[k], v.text()) for k, v in eff.items()]
        return "True" if en.known else en.src, self._body(a, writes)

    def _effect_src(self, a: Action, sym: dict[str, object]) -> list[str]:
        """Statements building the post-state `n` from the pre-state `t`: a list copy, the
        written positions, a tuple (the cheapest way to build a tuple of this size in CPython;
        every right-hand side reads the pre-state, as `apply` does). The writes are kept in
        `self.writes` (position, value text) for the liveness analysis (`Liveness`)."""
        eff = a.effect(PY, sym)
        return self._body(a, [(self.index[k], _text(v)) for k, v in eff.items()])

    def _body(self, a: Action, writes: list[tuple[int, str]]) -> list[str]:
        writes = [(i, v) for i, v in writes if v != f"t[{i}]"]
        self.writes[a.index] = writes
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


def _dispatch(arms: list[tuple[int, list[str]]], ind: str) -> list[str]:
    """`v == val` tests choosing one arm (its lines indented one level below `ind`), as a binary
    search on the sorted values: a thread with 16 pc values costs 4-5 comparisons per state, not
    up to 16 (the arms are disjoint, so the one that runs is the same)."""
    if len(arms) <= 3:
        out = []
        for n, (val, arm) in enumerate(arms):
            out.append(f"{ind}{'if' if n == 0 else 'elif'} v == {val}:")
            out += [ind + x for x in arm]
        return out
    mid = len(arms) // 2
    return ([f"{ind}if v < {arms[mid][0]}:"] + _dispatch(arms[:mid], ind + "    ")
            + [f"{ind}else:"] + _dispatch(arms[mid:], ind + "    "))


def _never_written(model: Model) -> dict[str, object]:
    """The variables no step at this size writes, with their initial values: those of a state
    function that no action of a role with threads here updates (read off the definition's
    `updates`; a program counter is written by `goto` and is kept). With no lookup thread, say,
    no serializer entry is ever created, so a claim about entries folds to a constant."""
    from itertools import product

    from .lang.syntax import Every

    proto, u = getattr(model, "protocol", None), getattr(model, "universe", None)
    if proto is None or u is None:
        return {}
    written: set[str] = {f.name for f in proto.pc.values()}
    for act in proto.actions:
        if u.elems(act.role):
            written.update((upd.target if isinstance(upd, Every) else upd[0]).func.name for upd in act.updates)
    names = set(model.var_names)
    out: dict[str, object] = {}
    for f in proto.funcs:
        if f.name in written:
            continue
        for args in product(*(u.elems(a) for a in f.args)):
            d = u.decl(f, tuple(args))
            if d.name in names:
                out[d.name] = d.init
    return out


def constant_target(model: Model, bad: Callable[[Any, dict], object] | None,
                    step: tuple[Callable[[Action], bool], Callable[[Any, dict, Action], object]] | None
                    ) -> bool | None:
    """A state or step target read at this size without a state: False when it folds to the
    constant False (no state, or no watched step from any state, shows it), else None. A state
    target is read before any step is compiled (only the variables' names are needed)."""
    sym: dict[str, object] = {n: T(f"t[{i}]") for i, n in enumerate(model.var_names)}
    sym.update(_never_written(model))
    try:
        if bad is not None:
            x = bad(PY, sym)
            return False if not isinstance(x, T) and not x else None
        if step is not None:
            for a in model.actions:
                if step[0](a):
                    x = step[1](PY, sym, a)
                    if isinstance(x, T) or x:
                        return None
            return False
    except TypeError:
        return None  # not readable as text (NotCompilable is a TypeError): the search decides
    return None


# ---- dead-variable reduction -----------------------------------------------------------------

_REF = re.compile(r"\bt\[(\d+)\]")


def _reads(src: str) -> set[int]:
    """State positions an expression text over `t` reads."""
    return {int(x) for x in _REF.findall(src)}


_ASSIGN = re.compile(r"^\s*l\[(\d+)\] = ", re.M)


def _assigned(lines: list[str]) -> set[int]:
    """State positions a post-state body (`l[i] = ...` statements) assigns."""
    return {int(x) for x in _ASSIGN.findall("\n".join(lines))}


def _pc_values(src: str) -> set[int] | None:
    """The values a program-counter write can take: its constant, or the constant branches of
    nested conditionals (`(7 if c else 9)`, the text of an `Ite` goto); None when a branch is not
    a constant (then every value is assumed)."""
    def go(e: ast.expr) -> set[int] | None:
        if isinstance(e, ast.Constant) and isinstance(e.value, int):
            return {int(e.value)}
        if isinstance(e, ast.IfExp):
            a, b = go(e.body), go(e.orelse)
            return None if a is None or b is None else a | b
        return None
    if src.isdigit():  # most gotos are one constant: no parse (ast.parse was 5 % of a small rung)
        return {int(src)}
    return go(ast.parse(src, mode="eval").body)


class Liveness:
    """Which variables a breadth-first search may forget, derived from the compiled definition.

    Every action is read as its thread's program counter `P` at value `q` (its bucket), its guard
    text and its writes (position -> value text). A variable written by the actions of a single
    thread is *owned* by that thread and may be dead at some of its program-counter values; any
    other variable is live everywhere or dead everywhere. The analysis is the classic backward
    liveness fixpoint, starting from "everything dead":

    * the target's reads (the bad-state predicate) are live everywhere; a watched action's step
      condition, its guard, and the value of a write whose target is live after the step are
      live at the action's own pc (variables owned by another thread: at every pc of that thread);
    * a variable owned by `P` that an action of `P` does not write, live at one of the action's
      possible post-pcs, is live at its pre-pc `q` (the value is carried over);
    * an action is *visible* when it can move its pc, writes a variable that may be live after
      it, or is watched; an invisible action only rewrites dead variables, so it leaves the
      canonical state (below) unchanged and its guard and values do not matter.

    A thread whose pc some other thread's step writes gets no per-pc deadness (its variables count
    as not owned).

    Two states that agree on the variables live at their (equal) program counters then enable the
    same visible actions, whose post-states agree again on what is live there, and agree on the
    target: the relation is a bisimulation for the target. The search keeps one representative per
    class, every dead variable at its initial value, so the initial state is its own representative,
    distances from it are unchanged (a shortest path is still shortest, at the same length), and the
    path found (the same action indices) replays on the unreduced reading. Nothing here names a
    step: it is read off the guard and update texts the definition compiles to."""

    def __init__(self, comp: "Compiled", target_reads: set[int], step_reads: dict[int, set[int]]) -> None:
        self.comp = comp
        pcs = set(comp.by_pc)
        self.pcs = pcs
        doms = {comp.index[d.name]: d for d in comp.model.vars}
        self.pcvals = {p: set(range(int(doms[p].lo), int(doms[p].hi) + 1)) for p in pcs}
        acts: list[tuple[Action, int, int, set[int], list[tuple[int, set[int]]], set[int]]] = []
        writers: dict[int, set[int]] = {}
        foreign: set[int] = set()  # program counters some other thread's step writes
        for P, table in comp.by_pc.items():
            for q, cands in table.items():
                for a, g, _ in cands:
                    ws = comp.writes[a.index]
                    post: set[int] | None = {q}
                    # the guard's reads and the goto's: the pc is always live
                    greads = _reads(g) if g != "True" else set()
                    for i, v in ws:
                        if i == P:
                            post = _pc_values(v)
                            greads |= _reads(v)
                        elif i in pcs:
                            greads |= _reads(v)
                            foreign.add(i)
                        else:
                            writers.setdefault(i, set()).add(P)
                    acts.append((a, P, q, greads,
                                 [(i, _reads(v)) for i, v in ws if i not in pcs], post if post is not None else self.pcvals[P]))
        # a thread whose pc another thread moves has no per-pc deadness (its liveness was derived
        # from its own steps only): its variables are live everywhere or dead everywhere
        self.owner = {i: next(iter(ps)) for i, ps in writers.items() if len(ps) == 1 and next(iter(ps)) not in foreign}
        owned_by: dict[int, list[int]] = {}
        for i, P in self.owner.items():
            owned_by.setdefault(P, []).append(i)
        self.live: dict[int, set[int]] = {i: set() for i in self.owner}  # owned: pc values where live
        self.anywhere: set[int] = set()  # not owned: live everywhere
        watched = set(step_reads)

        def mark(i: int, P: int | None, q: int) -> bool:
            if i in pcs:
                return False
            o = self.owner.get(i)
            if o is None:
                if i in self.anywhere:
                    return False
                self.anywhere.add(i)
                return True
            add = {q} if o == P else self.pcvals[o]
            if add <= self.live[i]:
                return False
            self.live[i] |= add
            return True

        for i in target_reads:
            mark(i, None, 0)
        changed = True
        while changed:
            changed = False
            for a, P, q, greads, ws, post in acts:
                if not self._visible(a.index in watched, P, q, ws, post):
                    continue
                for i in greads | step_reads.get(a.index, set()):
                    changed |= mark(i, P, q)
                for w, reads in ws:
                    if self._live_after(w, P, post):
                        for i in reads:
                            changed |= mark(i, P, q)
                written = {w for w, _ in ws}
                for v in owned_by.get(P, ()):
                    if v not in written and q not in self.live[v] and self.live[v] & post:
                        changed |= mark(v, P, q)
        self.acts = {a.index: (P, q, ws, post) for a, P, q, _, ws, post in acts}
        self.visible = {a.index for a, P, q, _, ws, post in acts if self._visible(a.index in watched, P, q, ws, post)}
        self.owned_by = owned_by

    def _live_after(self, w: int, P: int, post: set[int]) -> bool:
        """May `w` be live after a step of thread `P` that leaves P's pc in `post`?"""
        o = self.owner.get(w)
        if o is None:
            return w in self.anywhere
        return bool(self.live[w] & post) if o == P else bool(self.live[w])

    def _visible(self, watched: bool, P: int, q: int, ws: list[tuple[int, set[int]]], post: set[int]) -> bool:
        return watched or post != {q} or any(self._live_after(w, P, post) for w, _ in ws)

    def dead(self) -> dict[str, str]:
        """Variable name -> where it is dead ("everywhere" or the owner's pc values), for tests and notes."""
        names = self.comp.names
        out = {}
        for i, n in enumerate(names):
            if i in self.pcs:
                continue
            if i in self.owner:
                d = self.pcvals[self.owner[i]] - self.live[i]
                if d == self.pcvals[self.owner[i]]:
                    out[n] = "everywhere"
                elif d:
                    out[n] = f"at {names[self.owner[i]]} in {sorted(d)}"
            elif i not in self.anywhere:
                out[n] = "everywhere"
        return out

    @cached_property
    def _canon_plan(self) -> tuple[tuple[int, ...], tuple[tuple[int, dict[int, tuple[int, ...]], tuple[int, ...]], ...]]:
        """What `canon` reads, once: the variables dead everywhere, and per owning thread's pc
        the owned variables dead at each of its values (the default: at a value none is live at,
        all of them). Tests canonicalize every state of a whole state space, a million calls,
        and per call the per-variable lookups dominated."""
        n = len(self.comp.init)
        always = tuple(i for i in range(n) if i not in self.pcs and i not in self.owner and i not in self.anywhere)
        by_owner: dict[int, list[int]] = {}
        for i, o in sorted(self.owner.items()):
            if i not in self.pcs:
                by_owner.setdefault(o, []).append(i)
        plan = []
        for o, idxs in sorted(by_owner.items()):
            values = set(self.pcvals.get(o, set())).union(*(self.live[i] for i in idxs))
            plan.append((o, {v: tuple(i for i in idxs if v not in self.live[i]) for v in values}, tuple(idxs)))
        return always, tuple(plan)

    def canon(self, t: StateT) -> StateT:
        """The representative of a state: every variable dead at its program counters at its
        initial value (what the reduced search stores; tests compare it with the unreduced one)."""
        init = self.comp.init
        always, owned = self._canon_plan
        l = list(t)
        for i in always:
            l[i] = init[i]
        for o, dead_at, everywhere in owned:
            for i in dead_at.get(t[o], everywhere):
                l[i] = init[i]
        return bytes(l) if isinstance(t, bytes) else tuple(l)

    def body(self, a: Action) -> list[str]:
        """The post-state statements of a visible action with dead variables at their initial
        value: a write to a variable dead after the step is dropped (its pre-state value is
        already the initial one) and an owned variable live before but dead after is reset."""
        P, q, ws, post = self.acts[a.index]
        comp = self.comp
        init = comp.init
        out = [f"l = {comp.copy}(t)"]
        written = dict(comp.writes[a.index])
        for i, v in comp.writes[a.index]:
            if i == P or self._live_after(i, P, post):
                out.append(f"l[{i}] = {v}")
        resets: dict[int, list[int]] = {}
        for p2 in sorted(post):
            resets[p2] = [v for v in self.owned_by.get(P, ()) if p2 not in self.live[v]
                          and (q in self.live[v] or (v in written and self.live[v] & post))]
        if len(post) == 1:
            out += [f"l[{v}] = {init[v]!r}" for v in resets[next(iter(post))]]
        else:
            kw = "if"
            for p2, vs in resets.items():
                if vs:
                    out.append(f"{kw} l[{P}] == {p2}:")
                    out += [f"    l[{v}] = {init[v]!r}" for v in vs]
                    kw = "elif"
        return out
