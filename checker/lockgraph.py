"""Lockdep-style lock-order graph: lock classes, an edge A->B when a thread acquires B holding A.

Each edge keeps the first (file, line) that showed it. A cycle is a potential deadlock even when
the run did not deadlock, which is what makes the check useful on runs that happened to be lucky.
"""
from __future__ import annotations

from typing import Iterable

import networkx as nx


def lock_class(lock: str) -> str:
    """`serializer.0` -> `serializer`: instances of one per-agent lock share a class."""
    return lock.split(".", 1)[0]


class LockGraph:
    def __init__(self) -> None:
        self.g: nx.DiGraph = nx.DiGraph()

    def add(self, a: str, b: str, line: int, file: str = "") -> list[tuple[str, str, int]] | None:
        """Add edge a->b (first sighting wins); return the cycle it closes, as edges, if any."""
        if self.g.has_edge(a, b):
            return None
        self.g.add_edge(a, b, line=line, file=file)
        if a == b:
            return [(a, b, line)]
        try:
            path = nx.shortest_path(self.g, b, a)
        except nx.NetworkXNoPath:
            return None
        nodes = path + [b]
        return [(x, y, int(self.g.edges[x, y]["line"])) for x, y in zip(nodes, nodes[1:])]

    def merge(self, edges: Iterable[tuple[str, str, int]], file: str) -> None:
        for a, b, line in edges:
            if not self.g.has_edge(a, b):
                self.g.add_edge(a, b, line=line, file=file)

    def cycles(self) -> list[list[str]]:
        return [list(c) for c in nx.simple_cycles(self.g)]

    def to_dot(self) -> str:
        """DOT text; edges on a cycle are red. Written by hand: pydot/pygraphviz are not needed."""
        on_cycle = {(c[i], c[(i + 1) % len(c)]) for c in self.cycles() for i in range(len(c))}
        out = ["digraph lock_order {", "  rankdir=LR;"]
        for n in sorted(self.g.nodes):
            out.append(f'  "{n}";')
        for a, b, d in sorted(self.g.edges(data=True)):
            where = f"{d.get('file', '')}:{d['line']}".lstrip(":")
            color = ', color=red' if (a, b) in on_cycle else ""
            out.append(f'  "{a}" -> "{b}" [label="{where}"{color}];')
        out.append("}")
        return "\n".join(out) + "\n"
