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


@dataclass(frozen=True)
class Instance:
    """One action instance: a thread, an action, a parameter binding, compiled."""

    thread: str
    act: LAction
    env: dict
    comp: Compiled
    static: dict
    enabled: Callable[[tuple], Any]
    succ: Callable[[tuple], tuple]
    checks: list

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
                        comp = compile_instance(self.u, act, t, env, pc)
                        key = self.u.key(pc, [t])
                        en, nxt, chk = fast.instance(self.u, self.index, act, t, env, key,
                                                     pc.dom.index(act.at))
                        inst = Instance(t, act, {**env, act.thread.name: t}, comp, static_of(act, env),
                                        en, nxt, chk)
                        self.bucket.setdefault((pc_i, pc.dom.index(act.at)), []).append(len(self.instances))
                        self.instances.append(inst)
        self.pcs = sorted({k[0] for k in self.bucket})

    def closed(self, e: Expr, name: str = "claim") -> Callable[[tuple], Any]:
        """A closed expression as a predicate of a tuple state."""
        return fast.closed(self.u, self.index, e, name)

    def init(self) -> tuple:
        return tuple(d.init for d in self.decls)

    def enabled(self, tup: tuple) -> list[int]:
        insts = self.instances
        return [ii for pc_i in self.pcs for ii in self.bucket.get((pc_i, tup[pc_i]), ())
                if insts[ii].enabled(tup)]

    def explore(self, max_states: int = 2_000_000, avoid_inv: tuple[Callable[[tuple], Any], ...] = (),
                avoid_steps: frozenset[str] = frozenset()) -> Graph:
        """Breadth first from the initial state. With `avoid_*` the search is restricted to runs
        that break none of those claims before their last step (a state breaking an avoided
        invariant is kept but not expanded; a step breaking an avoided step claim is not taken):
        a counterexample found there is one a trace checker rejects at its last step."""
        t0 = time.perf_counter()
        init = tuple(int(x) if isinstance(x, bool) else x for x in self.init())
        seen = {init: 0}
        states, parent, succ = [init], [(-1, -1)], []
        step_fail: dict[str, tuple[int, int, str]] = {}
        step_hit: dict[str, int] = {}
        i = 0
        while i < len(states):
            tup = states[i]
            out = []
            if avoid_inv and i and not all(f(tup) for f in avoid_inv):
                succ.append(out)
                i += 1
                continue
            for ii in self.enabled(tup):
                inst = self.instances[ii]
                blocked = False
                for claim, why, chk in inst.checks:
                    step_hit[claim] = step_hit.get(claim, 0) + 1
                    ok = chk(tup)
                    if claim not in step_fail and not ok:
                        step_fail[claim] = (i, ii, why)
                    blocked = blocked or (not ok and claim in avoid_steps)
                if blocked:
                    continue
                nxt = inst.succ(tup)
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
    preds: list[list[int]] = [[] for _ in g.states]
    for i, out in enumerate(g.succ):
        for _, j in out:
            preds[j].append(i)
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
