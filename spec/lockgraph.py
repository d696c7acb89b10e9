"""Static lock-acquisition graph (P5), derived from the actions by exhaustive exploration.

Every reachable state of a small instance (each role once, two agents) is visited with the
concrete reading; each enabled `lock_acquire` contributes edges held-class -> acquired-class.
Lock classes follow lockdep: `serializer.<a>` are one class `serializer`.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .backend import CONCRETE
from .model import Model, apply
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


def explore_edges(variant: str, cfg: Config = Config(1, 1, 1), cap: int = 200_000) -> LockGraph:
    import networkx as nx

    m = Model(cfg, variant)
    start = m.init_state()
    key = lambda s: tuple(s[n] for n in m.var_names)  # noqa: E731
    seen = {key(start)}
    todo = deque([start])
    edges: dict[tuple[str, str], LockEdge] = {}
    locks = cfg.lock_instances()
    while todo and len(seen) < cap:
        s = todo.popleft()
        for a in m.actions:
            if not a.enabled(CONCRETE, s):
                continue
            if a.kind == "lock_acquire":
                dst = str(a.static_args()["lock"])
                for held in locks:
                    if any(s[lv(held, mode, a.thread)] for mode in lock_modes(held)):
                        e = (lock_class(held), lock_class(dst))
                        edges.setdefault(e, LockEdge(e[0], e[1], a.thread, a.label))
            n = apply(m, CONCRETE, s, a)
            k = key(n)
            if k not in seen:
                seen.add(k)
                todo.append(n)
    g = nx.DiGraph()
    g.add_edges_from(edges)
    cycles = tuple(tuple(c) for c in nx.simple_cycles(g))
    return LockGraph(variant, tuple(edges.values()), cycles, len(seen))
