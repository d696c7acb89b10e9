"""Explicit-state breadth-first search on the concrete reading: shortest paths to a target.

States are tuples of `Model.var_names` values; successors come from `Action.enabled`/`effect`
with CONCRETE, so the search reads the same definition as the checker and the prover. BFS gives
a shortest path (fewest steps from Init) to the first state, or step, that shows the target.
The search runs on spec.explore_compile's code generated from those same functions (byte states,
one generated function per level); `Explorer` below is the generic reading it falls back to and
the tests compare it against.

Targets: a state predicate (a state property fails), a step predicate (a watched action fires
from a state where its condition fails), or a witness's stage chain (stages reached in order;
the stage index is part of the search state, so "shortest" means shortest for the whole chain).

One reduction, on by default for state and step targets: dead variables are forgotten
(spec.explore_compile.Liveness: a backward liveness analysis of the compiled guard and update
texts, per owning thread's program counter; e.g. a tool's `cx`/`sa` while it is idle, ghost
counters the target never reads). Each state stored stands for the states that differ only in
variables dead there; they are bisimilar for the target, so verdicts and shortest lengths are
unchanged and the path (the same action indices) replays on the unreduced reading
(tests/test_explore_reduction.py). No symmetry or partial-order reduction: permuting agents,
contexts or dispatches does not fix Init (a tool's `cx`, a dispatch's `da`, a lookup's `ag` start
at element 0) and lookup l0 is the setup thread, so permuting ids is not known to preserve the
targets; "shortest" is exact at the size the search ran.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Sequence

from .backend import CONCRETE, Backend, Term
from .model import Action, Model

StateT = tuple
Dict = dict
StatePred = Callable[[Backend, Dict], Term]  # read both ways: symbolically for its reads, concretely for its value
StepPred = Callable[[Backend, Dict, Action], Term]


@dataclass(frozen=True)
class BfsOutcome:
    status: str  # "found" | "none" (state space exhausted: no path) | "cap" (limits hit)
    path: tuple[Action, ...] = ()
    states: int = 0  # distinct states visited
    seconds: float = 0.0
    depth: int = 0  # depth fully explored (for "none"/"cap")


class Explorer:
    """Successor function over tuple states for one model.

    Precomputed once, from the same definition read symbolically (Z3 terms via spec.z3_encoding):
    (1) each action's guard usually has a conjunct `v == c` (its thread's program counter), so
    actions are bucketed by (v, c) and only those whose bucket matches the state are evaluated;
    (2) a guard's, an update's or a predicate's concrete value depends only on the variables its Z3
    term mentions (the two readings agree; tests check that on random states), so each is memoised
    on that projection of the state. Misses are evaluated with CONCRETE on the full state."""

    def __init__(self, model: Model) -> None:
        from .z3_encoding import Z3, make_state

        self.model = model
        self.names = list(model.var_names)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.actions = list(model.actions)
        self._saved = Z3.width
        self.S = make_state(model, "bfs", ints="int")
        Z3.width = self._saved
        self.by_const = {v.get_id(): n for n, v in self.S.items()}
        # per action: (action, guard reads, guard memo, update reads, update memo)
        self.buckets: dict[int, dict[int, list[list]]] = {}
        self.free: list[list] = []
        for a in self.actions:
            g = self._sym(lambda b, s: a.enabled(b, s))
            if isinstance(g, bool) and not g:
                continue
            eff = self._sym(lambda b, s: a.effect(b, s))
            ereads = self._reads(list(eff.values()))
            entry = [a, self._reads([g]), {}, ereads, {}]
            key = None if isinstance(g, bool) else _pinned(g, self.by_const)
            if key is None:
                self.free.append(entry)
            else:
                self.buckets.setdefault(self.index[key[0]], {}).setdefault(key[1], []).append(entry)

    def _sym(self, fn: Callable[[Backend, Dict], object]) -> object:
        from .z3_encoding import Z3

        saved = Z3.width
        Z3.width = None  # Int terms: the encoding induction uses, exact for any value
        try:
            return fn(Z3, self.S)
        finally:
            Z3.width = saved

    def _reads(self, terms: list[object]) -> tuple[int, ...]:
        names: set[str] = set()
        for t in terms:
            names |= _consts(t, self.by_const)
        return tuple(sorted(self.index[n] for n in names))

    def as_dict(self, t: StateT) -> Dict:
        return dict(zip(self.names, t))

    def as_tuple(self, s: Dict) -> StateT:
        return tuple(s[n] for n in self.names)

    def state_pred(self, pred: StatePred) -> Callable[[StateT], bool]:
        reads = self._reads([self._sym(pred)])
        memo: dict[tuple, bool] = {}
        names = self.names

        def f(t: StateT) -> bool:
            k = tuple([t[i] for i in reads])
            v = memo.get(k)
            if v is None:
                v = memo[k] = bool(pred(CONCRETE, dict(zip(names, t))))
            return v

        return f

    def step_pred(self, watch: Callable[[Action], bool], pred: StepPred) -> dict[int, Callable[[StateT], bool]]:
        """Action index -> memoised `pred(s, a)` for the watched actions."""
        return {a.index: self.state_pred(lambda b, s, a=a: pred(b, s, a)) for a in self.actions if watch(a)}

    def successors(self, t: StateT) -> list[tuple[Action, StateT]]:
        out = []
        cands = list(self.free)
        for i, table in self.buckets.items():
            got = table.get(int(t[i]))
            if got:
                cands += got
        s: Dict | None = None
        index = self.index
        for a, greads, gmemo, ereads, ememo in cands:
            k = tuple([t[i] for i in greads])
            en = gmemo.get(k)
            if en is None:
                if s is None:
                    s = dict(zip(self.names, t))
                en = gmemo[k] = bool(a.enabled(CONCRETE, s))
            if not en:
                continue
            k = tuple([t[i] for i in ereads])
            writes = ememo.get(k)
            if writes is None:
                if s is None:
                    s = dict(zip(self.names, t))
                writes = ememo[k] = tuple((index[n], v) for n, v in a.effect(CONCRETE, s).items())
            lst = list(t)
            for i, v in writes:
                lst[i] = v
            out.append((a, tuple(lst)))
        out.sort(key=lambda x: x[0].index)  # deterministic: the model's action order
        return out


def _consts(e: object, by_const: dict[int, str]) -> set[str]:
    """Names of the state variables a Z3 term mentions."""
    import z3

    out: set[str] = set()
    seen: set[int] = set()
    todo = [e]
    while todo:
        x = todo.pop()
        if not isinstance(x, z3.ExprRef):
            continue
        i = x.get_id()
        if i in seen:
            continue
        seen.add(i)
        if i in by_const:
            out.add(by_const[i])
        else:
            todo.extend(x.children())
    return out


def _pinned(g: object, by_const: dict[int, str]) -> tuple[str, int] | None:
    """A conjunct `v == c` (v a state variable, c an int) that every enabling state satisfies."""
    import z3

    conj = g.children() if z3.is_and(g) else [g]  # type: ignore[union-attr]
    for c in conj:
        if z3.is_eq(c):
            lhs, rhs = c.arg(0), c.arg(1)
            if lhs.get_id() in by_const and z3.is_int_value(rhs):
                return by_const[lhs.get_id()], rhs.as_long()
            if rhs.get_id() in by_const and z3.is_int_value(lhs):
                return by_const[rhs.get_id()], lhs.as_long()
    return None


def bfs(model: Model,
        bad_state: StatePred | None = None,
        bad_step: tuple[Callable[[Action], bool], StepPred] | None = None,
        stages: Sequence[StatePred] | None = None,
        max_states: int = 1_000_000, timeout: float = 60.0,
        explorer: Explorer | None = None, reduce: bool = True) -> BfsOutcome:
    """Shortest path from Init to a target; exactly one kind of target is given.

    bad_state(b, s): the path ends in a state where it holds. bad_step = (watch, cond): the path
    ends with a watched action a fired from a state s where cond(b, s, a) holds. stages: state
    predicates that must hold at non-decreasing positions along the path (greedy advancement, as
    the witness check reads them). `max_states` bounds the work deterministically; the timeout
    is a safety net. A result is a candidate: callers replay it on the concrete reading.

    The compiled reading (spec.explore_compile) runs the search unless `explorer` is given or the
    definition cannot be compiled; both visit the same states in the same order, so they return
    the same path.

    reduce (state and step targets on the compiled reading): dead variables forgotten
    (spec.explore_compile.Liveness, derived from the definition's guard and update texts): the
    same verdict and the same shortest length in fewer states; `states` then counts the
    representatives. reduce=False gives the unreduced search (the generic explorer's states and
    path)."""
    if explorer is None:
        from .explore_compile import Compiled, NotCompilable

        t0 = time.monotonic()
        for packed in (True, False):
            try:
                comp = Compiled(model, packed)
                bad = comp.pred(bad_state, "bad") if bad_state is not None else None
                step = ({a.index: comp.pred(lambda b, s, a=a: bad_step[1](b, s, a), "step")
                         for a in model.actions if bad_step[0](a)} if bad_step is not None else {})
                stg = [comp.pred(p, "stage") for p in stages] if stages else []
            except NotCompilable:
                break
            try:
                t_init = comp.as_tuple(model.init_state())
                lvl = comp.level(bad_state, {i: (lambda b, s, a=model.actions[i]: bad_step[1](b, s, a))
                                             for i in step}, reduce) if not stg else None  # type: ignore[index]
                if lvl is not None:
                    return _search_levels(model, lvl, t_init, bad, max_states, t0, timeout)
                return _search(model, comp.successors, t_init, bad, step, stg, max_states, t0, timeout)
            except ValueError:
                if not comp.packed:
                    raise
                # a value left the byte range: search again on tuples (same states, same order)
    t0 = time.monotonic()
    ex = explorer or Explorer(model)
    bad = ex.state_pred(bad_state) if bad_state is not None else None
    step = ex.step_pred(*bad_step) if bad_step is not None else {}
    stg = [ex.state_pred(p) for p in stages] if stages else []

    def succ(t: StateT) -> list[tuple[int, StateT]]:
        return [(a.index, t2) for a, t2 in ex.successors(t)]

    return _search(model, succ, ex.as_tuple(model.init_state()), bad, step, stg, max_states, t0, timeout)


def _path(acts: Sequence[Action], parent: dict, key: object, last: int | None = None) -> tuple[Action, ...]:
    """The actions from the start to `key`, read back through the BFS parent map (key -> (parent
    key, action index)); then `last`, a step property's failing action from `key`, if given."""
    out: list[Action] = [] if last is None else [acts[last]]
    while parent[key] is not None:
        key, ai = parent[key]
        out.append(acts[ai])
    return tuple(reversed(out))


def _outcome(parent: dict, t0: float, status: str, path: tuple[Action, ...] = (), depth: int = 0) -> BfsOutcome:
    return BfsOutcome(status, path, len(parent), time.monotonic() - t0, depth)


def _search(model: Model, succ: Callable[[StateT], list[tuple[int, StateT]]], t_init: StateT,
            bad: Callable[[StateT], bool] | None, step: dict[int, Callable[[StateT], bool]],
            stg: list[Callable[[StateT], bool]], max_states: int, t0: float, timeout: float) -> BfsOutcome:
    """The breadth-first loop over tuple states (successors as (action index, state) in action order)."""
    deadline = t0 + timeout
    acts = model.actions
    nst = len(stg)
    if nst:
        return _search_stages(model, succ, t_init, stg, max_states, t0, deadline)
    # parent map: state -> (parent state, action index); the path is rebuilt from it at the end
    parent: dict[StateT, tuple[StateT, int] | None] = {t_init: None}

    path_to = partial(_path, acts, parent)
    done = partial(_outcome, parent, t0)

    if bad is not None and bad(t_init):
        return done("found")
    frontier = [t_init]
    depth = 0
    get = step.get
    while frontier:
        nxt: list[StateT] = []
        push = nxt.append
        for t in frontier:
            for ai, t2 in succ(t):
                if step:
                    f = get(ai)
                    if f is not None and f(t):
                        return done("found", path_to(t, ai), depth + 1)
                if t2 in parent:
                    continue
                parent[t2] = (t, ai)
                if bad is not None and bad(t2):
                    return done("found", path_to(t2), depth + 1)
                push(t2)
            if len(parent) >= max_states or time.monotonic() > deadline:
                return done("cap", depth=depth)
        frontier = nxt
        depth += 1
    return done("none", depth=depth)


def _search_levels(model: Model, level: Callable[..., tuple | None], t_init: StateT,
                   bad: Callable[[StateT], bool] | None, max_states: int, t0: float, timeout: float) -> BfsOutcome:
    """`_search` with each level expanded by one generated function (spec.explore_compile.level):
    the same states in the same order, the same path."""
    acts = model.actions
    parent: dict[StateT, tuple[StateT, int] | None] = {t_init: None}

    path_to = partial(_path, acts, parent)
    done = partial(_outcome, parent, t0)

    if bad is not None and bad(t_init):
        return done("found")
    frontier = [t_init]
    depth = 0
    while frontier:
        nxt: list[StateT] = []
        got = level(frontier, parent, nxt.append, max_states, time.monotonic, t0 + timeout)
        if got is not None:
            kind, t, ai = got
            if kind == 0:
                return done("cap", depth=depth)
            return done("found", path_to(t, ai) if kind == 1 else path_to(t), depth + 1)
        frontier = nxt
        depth += 1
    return done("none", depth=depth)


def _search_stages(model: Model, succ: Callable[[StateT], list[tuple[int, StateT]]], t_init: StateT,
                   stg: list[Callable[[StateT], bool]], max_states: int, t0: float, deadline: float) -> BfsOutcome:
    """As `_search` for a stage chain: the stage index is part of the search state."""
    acts = model.actions
    nst = len(stg)

    def advance(j: int, t: StateT) -> int:
        while j < nst and stg[j](t):
            j += 1
        return j

    key0 = (t_init, advance(0, t_init))
    parent: dict[tuple, tuple[tuple, int] | None] = {key0: None}

    path_to = partial(_path, acts, parent)
    done = partial(_outcome, parent, t0)

    if key0[1] == nst:
        return done("found")
    frontier = [key0]
    depth = 0
    while frontier:
        nxt: list[tuple] = []
        for key in frontier:
            t, j = key
            for ai, t2 in succ(t):
                k2 = (t2, advance(j, t2))
                if k2 in parent:
                    continue
                parent[k2] = (key, ai)
                if k2[1] == nst:
                    return done("found", path_to(k2), depth + 1)
                nxt.append(k2)
            if len(parent) >= max_states or time.monotonic() > deadline:
                return done("cap", depth=depth)
        frontier = nxt
        depth += 1
    return done("none", depth=depth)


def reachable_count(model: Model, max_states: int = 2_000_000, timeout: float = 60.0) -> BfsOutcome:
    """Exhaust the state space (no target): how many states, how deep (used by the benchmark)."""
    return bfs(model, bad_state=lambda b, s: b.false(), max_states=max_states, timeout=timeout, reduce=False)
