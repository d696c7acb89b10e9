"""Explicit-state exploration of the data path's finite reading.

The definition (`spec.datapath.protocol.definition`) is instantiated with `spec.lang.finite`
(`Universe`, `compile_instance`, `compile_closed`) and explored breadth first from the initial
state, exhaustively: the graph is kept (successor lists), so after the search

* an invariant claim's counterexample is the shortest path to the first state that breaks it,
* a step claim's is the shortest path ending in a step fired from a state where the condition
  it lists fails,
* a progress claim ("from every reachable state where `pending` holds, a state where `goal` holds
  is still reachable", CTL AG(pending -> EF goal)) is decided on the whole graph by backward
  reachability from the goal states; its counterexample is the shortest path to a state from
  which no continuation reaches the goal, whatever the scheduler does.

States are tuples in `Universe.declare()` order; BFS discovery order is nondecreasing depth, so the
first offending state found is a shortest one.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from ..lang.finite import Compiled, Universe, compile_instance, static_of
from ..lang.syntax import Action as LAction
from ..lang.syntax import EnumDom, Expr, Protocol
from . import fast


class Instance:
    """One action instance: a thread, an action, a parameter binding. Its two compilations are
    made on first use: the explorer's (`enabled`, `succ`, `checks`, spec.datapath.fast) for every
    instance of a search, the finite reading's (`comp`, for observed values and guard labels) only
    for the instances a counterexample or a replayed certificate fires."""

    def __init__(self, u: Universe, index: dict[str, int], act: LAction, thread: str, env: dict,
                 pc: Any, at: tuple[int, int] = (-1, -1)) -> None:
        self.thread = thread
        self.at = at  # (index of the thread's program counter in the state, the label's value)
        self.act = act
        self.env = {**env, act.thread.name: thread}
        self.static = static_of(act, env)
        self._args = (u, index, env, pc)
        self._text: fast.InstanceText | None = None
        self._enabled: Callable[[tuple], Any] | None = None
        self._succ: Callable[[tuple], tuple] | None = None
        self._checks: list | None = None
        self._observed: Callable[[tuple], dict] | None = None
        self._comp: Compiled | None = None

    @property
    def text(self) -> fast.InstanceText:
        if self._text is None:
            u, index, env, pc = self._args
            self._text = fast.instance_text(u, index, self.act, self.thread, env, u.key(pc, [self.thread]))
        return self._text

    @property
    def enabled(self) -> Callable[[tuple], Any]:
        if self._enabled is None:
            self._enabled = self.text.enabled()
        return self._enabled

    @property
    def succ(self) -> Callable[[tuple], tuple]:
        if self._succ is None:
            self._succ = self.text.succ()
        return self._succ

    @property
    def checks(self) -> list:
        if self._checks is None:
            self._checks = self.text.checks()
        return self._checks

    @property
    def observed(self) -> Callable[[tuple], dict]:
        if self._observed is None:
            self._observed = self.text.observed()
        return self._observed

    @property
    def comp(self) -> Compiled:
        if self._comp is None:
            u, _, env, pc = self._args
            self._comp = compile_instance(u, self.act, self.thread, env, pc)
        return self._comp

    def describe(self) -> str:
        keys = " ".join(f"{k}={v}" for k, v in self.static.items())
        return f"{self.thread} {self.act.kind} {keys}".rstrip()


@dataclass
class Graph:
    """The reachable state graph of one (protocol, sizes)."""

    names: list[str]
    states: list[tuple]
    parent: list[tuple[int, int]]  # (parent state index, instance index); (-1, -1) for init
    succ: list[list[tuple[int, int]]]  # (instance index, successor state index)
    instances: list[Instance]
    seconds: float
    # step claim -> first (state index, instance index) whose check failed, in BFS order
    step_fail: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    step_hit: dict[str, int] = field(default_factory=dict)  # claim -> checked firings
    _preds: list[list[int]] | None = None

    def preds(self) -> list[list[int]]:
        """Predecessor lists (made once per graph: every progress case reads them)."""
        if self._preds is None:
            preds: list[list[int]] = [[] for _ in self.states]
            for i, out in enumerate(self.succ):
                for _, j in out:
                    preds[j].append(i)
            self._preds = preds
        return self._preds

    def as_dict(self, i: int) -> dict[str, Any]:
        return dict(zip(self.names, self.states[i]))

    def path_to(self, i: int) -> list[tuple[int, int]]:
        """[(state before, instance)] from the initial state to state i."""
        out = []
        while self.parent[i][0] >= 0:
            p, inst = self.parent[i]
            out.append((p, inst))
            i = p
        return out[::-1]


class Explorer:
    def __init__(self, proto: Protocol, sizes: dict[str, int]) -> None:
        self.proto = proto
        self.u = Universe(proto, sizes)
        self.decls = self.u.declare()
        self.names = [d.name for d in self.decls]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.instances: list[Instance] = []
        # (pc variable index, pc value) -> instance indices: only the acting thread's label matches
        self.bucket: dict[tuple[int, int], list[int]] = {}
        for role, pc in proto.pc.items():
            sort = next(s for s in proto.leaf_sorts() if s.name == role)
            assert isinstance(pc.dom, EnumDom)
            for t in self.u.elems(sort):
                pc_i = self.index[self.u.key(pc, [t])]
                for act in proto.actions:
                    if act.role.name != role:
                        continue
                    for env in self.u.bindings(act):
                        at = (pc_i, pc.dom.index(act.at))
                        inst = Instance(self.u, self.index, act, t, env, pc, at)
                        self.bucket.setdefault(at, []).append(len(self.instances))
                        self.instances.append(inst)
        self.pcs = sorted({k[0] for k in self.bucket})
        self._tables: tuple[Callable[[tuple], list[int]], list, list] | None = None
        self._by_desc: dict[str, list[int]] | None = None

    def closed(self, e: Expr, name: str = "claim") -> Callable[[tuple], Any]:
        """A closed expression as a predicate of a tuple state."""
        return fast.closed(self.u, self.index, e, name)

    def init(self) -> tuple:
        return tuple(d.init for d in self.decls)

    def tables(self) -> tuple[Callable[[tuple], list[int]], list, list]:
        """(the enabled set of a state, successor and checks of every instance indexed like
        `instances`); compiles every instance."""
        if self._tables is None:
            insts = self.instances
            groups = [(pc_i, [(val, ii, insts[ii].text.enabled_src) for (p, val), iis in self.bucket.items()
                              if p == pc_i for ii in iis]) for pc_i in self.pcs]
            self._tables = (fast.enabled_all(groups), [i.succ for i in insts], [i.checks for i in insts])
        return self._tables

    def enabled(self, tup: tuple) -> list[int]:
        return self.tables()[0](tup)

    def is_enabled(self, ii: int, tup: tuple) -> bool:
        """Instance ii can fire in `tup` (its thread at its label, its condition true); compiles
        only that instance."""
        inst = self.instances[ii]
        return tup[inst.at[0]] == inst.at[1] and bool(inst.enabled(tup))

    def by_describe(self) -> dict[str, list[int]]:
        if self._by_desc is None:
            self._by_desc = {}
            for ii, inst in enumerate(self.instances):
                self._by_desc.setdefault(inst.describe(), []).append(ii)
        return self._by_desc

    def replay(self, lines: list[str]) -> list[tuple[tuple, int]] | None:
        """Re-execute a stored path from the initial state: each line must name exactly one enabled
        instance. [(state before, instance)] plus the final state as (state, -1), or None."""
        by = self.by_describe()
        s = tuple(int(x) if isinstance(x, bool) else x for x in self.init())
        out: list[tuple[tuple, int]] = []
        for ln in lines:
            cands = [ii for ii in by.get(ln, ()) if self.is_enabled(ii, s)]
            if len(cands) != 1:
                return None
            out.append((s, cands[0]))
            s = self.instances[cands[0]].succ(s)
        out.append((s, -1))
        return out

    def explore(self, max_states: int = 2_000_000, avoid_inv: tuple[Callable[[tuple], Any], ...] = (),
                avoid_steps: frozenset[str] = frozenset(), start: tuple | None = None) -> Graph:
        """Breadth first from the initial state. With `avoid_*` the search is restricted to runs
        that break none of those claims before their last step (a state breaking an avoided
        invariant is kept but not expanded; a step breaking an avoided step claim is not taken):
        a counterexample found there is one a trace checker rejects at its last step. `start`:
        explore from that state instead of the initial one (what a stored progress counterexample's
        last state can still reach)."""
        t0 = time.perf_counter()
        init = start if start is not None else tuple(int(x) if isinstance(x, bool) else x for x in self.init())
        seen = {init: 0}
        states, parent, succ = [init], [(-1, -1)], []
        step_fail: dict[str, tuple[int, int, str]] = {}
        step_hit: dict[str, int] = {}
        enabled, succs, checks = self.tables()
        i = 0
        while i < len(states):
            tup = states[i]
            out = []
            if avoid_inv and i and not all(f(tup) for f in avoid_inv):
                succ.append(out)
                i += 1
                continue
            for ii in enabled(tup):
                blocked = False
                for claim, why, chk in checks[ii]:
                    step_hit[claim] = step_hit.get(claim, 0) + 1
                    ok = chk(tup)
                    if claim not in step_fail and not ok:
                        step_fail[claim] = (i, ii, why)
                    blocked = blocked or (not ok and claim in avoid_steps)
                if blocked:
                    continue
                nxt = succs[ii](tup)
                j = seen.get(nxt)
                if j is None:
                    j = len(states)
                    if j >= max_states:
                        raise RuntimeError(f"more than {max_states} states")
                    seen[nxt] = j
                    states.append(nxt)
                    parent.append((i, ii))
                out.append((ii, j))
            succ.append(out)
            i += 1
        return Graph(self.names, states, parent, succ, self.instances, time.perf_counter() - t0,
                     step_fail, step_hit)


def first_state(g: Graph, pred: Callable[[tuple], Any]) -> int | None:
    """The first state (BFS order, so a shallowest one) where `pred` holds."""
    for i, s in enumerate(g.states):
        if pred(s):
            return i
    return None


def can_reach(g: Graph, goal: list[bool]) -> list[bool]:
    """Backward reachability: which states have a path to a goal state."""
    preds = g.preds()
    ok = list(goal)
    work = deque(i for i, x in enumerate(goal) if x)
    while work:
        j = work.popleft()
        for i in preds[j]:
            if not ok[i]:
                ok[i] = True
                work.append(i)
    return ok


def stuck(g: Graph, pending: Callable[[tuple], Any], goal: Callable[[tuple], Any]) -> tuple[int | None, int]:
    """AG(pending -> EF goal): the first reachable state where `pending` holds and no goal state is
    reachable (None if there is none), and how many states satisfy `pending`."""
    ok = can_reach(g, [bool(goal(s)) for s in g.states])
    hits = 0
    first = None
    for i, s in enumerate(g.states):
        if pending(s):
            hits += 1
            if not ok[i] and first is None:
                first = i
    return first, hits
