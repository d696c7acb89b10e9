"""Lockdep-style lock-order graph: lock classes, an edge A->B when a thread acquires B holding A.

Each edge keeps the first (file, line) that showed it. A cycle is a potential deadlock even when
the run did not deadlock, which is what makes the check useful on runs that happened to be lucky.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable


def lock_class(lock: str) -> str:
    """`serializer.0` -> `serializer`: instances of one per-agent lock share a class."""
    return lock.split(".", 1)[0]


class LockGraph:
    """Edges in insertion order as {a: {b: (line, file)}}. Replay only adds edges and asks whether
    the new one closes a cycle (a breadth-first search over a handful of lock classes), so the
    checker does not import networkx (0.2-0.5 s of every `spmcheck check` process, measured
    2026-12-02); networkx enumerates the cycles of a finished graph (`cycles`, `to_dot`)."""

    def __init__(self) -> None:
        self.adj: dict[str, dict[str, tuple[int, str]]] = {}

    def add(self, a: str, b: str, line: int, file: str = "") -> list[tuple[str, str, int]] | None:
        """Add edge a->b (first sighting wins); return the cycle it closes, as edges, if any."""
        out = self.adj.setdefault(a, {})
        if b in out:
            return None
        out[b] = (line, file)
        self.adj.setdefault(b, {})
        if a == b:
            return [(a, b, line)]
        path = self._shortest_path(b, a)
        if path is None:
            return None
        nodes = path + [b]
        return [(x, y, self.adj[x][y][0]) for x, y in zip(nodes, nodes[1:])]

    def _shortest_path(self, src: str, dst: str) -> list[str] | None:
        """Nodes of a shortest src->dst path (successors in insertion order), or None."""
        parent: dict[str, str | None] = {src: None}
        todo = deque([src])
        while todo:
            n = todo.popleft()
            if n == dst:
                path = [n]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])  # type: ignore[arg-type]
                return path[::-1]
            for m in self.adj.get(n, ()):
                if m not in parent:
                    parent[m] = n
                    todo.append(m)
        return None

    def edges(self) -> list[tuple[str, str, int]]:
        """(a, b, first line) of every edge, in the order first seen."""
        return [(a, b, d[0]) for a, out in self.adj.items() for b, d in out.items()]

    def merge(self, edges: Iterable[tuple[str, str, int]], file: str) -> None:
        for a, b, line in edges:
            out = self.adj.setdefault(a, {})
            if b not in out:
                out[b] = (line, file)
            self.adj.setdefault(b, {})

    def _nx(self):  # -> networkx.DiGraph
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(self.adj)
        for a, out in self.adj.items():
            for b, (line, file) in out.items():
                g.add_edge(a, b, line=line, file=file)
        return g

    def cycles(self) -> list[list[str]]:
        from spmcheck.spec.lockgraph import sorted_cycles

        return [list(c) for c in sorted_cycles(self._nx())]

    def to_dot(self) -> str:
        """DOT text; edges on a cycle are red. Written by hand: pydot/pygraphviz are not needed."""
        on_cycle = {(c[i], c[(i + 1) % len(c)]) for c in self.cycles() for i in range(len(c))}
        out = ["digraph lock_order {", "  rankdir=LR;"]
        g = self._nx()
        for n in sorted(g.nodes):
            out.append(f'  "{n}";')
        for a, b, d in sorted(g.edges(data=True)):
            where = f"{d.get('file', '')}:{d['line']}".lstrip(":")
            color = ', color=red' if (a, b) in on_cycle else ""
            out.append(f'  "{a}" -> "{b}" [label="{where}"{color}];')
        out.append("}")
        return "\n".join(out) + "\n"
