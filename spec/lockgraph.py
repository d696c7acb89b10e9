"""Static lock-acquisition graph (P5), derived from the actions by exhaustive exploration.

Every reachable state of a small instance (each role once, two agents) is visited with the
concrete reading (spec.explore's successor function, breadth first); each enabled `lock_acquire` contributes edges held-class -> acquired-class.
Lock classes follow lockdep: `serializer.<a>` are one class `serializer`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache

from .model import Model
from .vocabulary import Config, lock_modes, lv


def lock_class(lock: str) -> str:
    return lock.split(".", 1)[0]


@dataclass(frozen=True)
class LockEdge:
    src: str
    dst: str
    thread: str
    label: str  # program counter of the acquiring step


@dataclass(frozen=True)
class LockGraph:
    variant: str
    edges: tuple[LockEdge, ...]
    cycles: tuple[tuple[str, ...], ...]
    states: int


@lru_cache(maxsize=None)  # a pure function of its arguments; the core and the lifecycle both ask
def explore_edges(variant: str, cfg: Config = Config(1, 1, 1), cap: int = 200_000) -> LockGraph:
    import networkx as nx

    from .explore import Explorer

    m = Model(cfg, variant)
    ex = Explorer(m)
    start = ex.as_tuple(m.init_state())
    seen = {start}
    todo = deque([start])
    edges: dict[tuple[str, str], LockEdge] = {}
    locks = cfg.lock_instances()
    held_idx = {(t, lk): [ex.index[lv(lk, mode, t)] for mode in lock_modes(lk)] for t in cfg.threads() for lk in locks}
    while todo and len(seen) < cap:
        t = todo.popleft()
        for a, n in ex.successors(t):
            if a.kind == "lock_acquire":
                dst = str(a.static_args()["lock"])
                for held in locks:
                    if any(t[i] for i in held_idx[(a.thread, held)]):
                        e = (lock_class(held), lock_class(dst))
                        edges.setdefault(e, LockEdge(e[0], e[1], a.thread, a.label))
            if n not in seen:
                seen.add(n)
                todo.append(n)
    g = nx.DiGraph()
    g.add_edges_from(edges)
    return LockGraph(variant, tuple(edges.values()), sorted_cycles(g), len(seen))


def sorted_cycles(g: "nx.DiGraph") -> tuple[tuple[str, ...], ...]:
    """Every simple cycle once, rotated to start at its least lock, in sorted order. networkx
    starts a cycle where the node order puts it, and that order follows set iteration, which
    varies with the hash seed: without this a report names the same cycle differently per run."""
    import networkx as nx

    out = []
    for c in nx.simple_cycles(g):
        i = c.index(min(c))
        out.append(tuple(c[i:] + c[:i]))
    return tuple(sorted(out))
