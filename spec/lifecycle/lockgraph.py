"""Static lock graph of the lifecycle (P5): the nesting chains each step takes (digest §1.3),
united with the core's explored graph for the final core; a cycle is a potential deadlock."""
from __future__ import annotations

from dataclasses import dataclass

from ..model import Model


@dataclass(frozen=True)
class LGraph:
    edges: tuple[tuple[str, str, str], ...]  # (outer, inner, step kind)
    cycles: tuple[tuple[str, ...], ...]


def lock_graph(m: Model) -> LGraph:
    import networkx as nx

    from ..lockgraph import explore_edges, sorted_cycles
    from .locks import lock_chains

    edges: dict[tuple[str, str], str] = {}
    for a in m.actions:
        for chain in lock_chains(a.kind, m.variant.slot_cleared_first):  # type: ignore[attr-defined]
            for x, y in zip(chain, chain[1:]):
                edges.setdefault((x, y), a.kind)
    for e in explore_edges("final").edges:
        edges.setdefault((e.src, e.dst), f"core {e.label}")
    g = nx.DiGraph()
    g.add_edges_from(edges)
    return LGraph(tuple((x, y, k) for (x, y), k in edges.items()),
                  sorted_cycles(g))
