"""Lock-order graphs as SVG: lock classes as nodes, an edge A -> B when some step acquires B while
holding A, edges on a cycle (a potential deadlock) in red. Laid out by Graphviz `dot` when it is
installed, else by a built-in circular layout; the report says which."""
from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from html import escape
from typing import Sequence


@dataclass(frozen=True)
class Graph:
    title: str
    edges: tuple[tuple[str, str, str], ...]  # (from, to, label)
    cycles: tuple[tuple[str, ...], ...]

    def cycle_edges(self) -> set[tuple[str, str]]:
        return {(c[i], c[(i + 1) % len(c)]) for c in self.cycles for i in range(len(c))}

    def nodes(self) -> list[str]:
        return sorted({n for a, b, _ in self.edges for n in (a, b)})


def static_core(variant: str) -> Graph:
    from spmcheck.spec.lockgraph import explore_edges

    g = explore_edges(variant)
    return Graph(f"core {variant}: static lock order", tuple((e.src, e.dst, e.label) for e in g.edges), g.cycles)


def static_lifecycle(variant: str) -> Graph:
    from spmcheck.spec.lifecycle.lockgraph import lock_graph
    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.vocabulary import LConfig

    g = lock_graph(LifecycleModel(LConfig(dispatches=1), variant))
    return Graph(f"lifecycle {variant}: static lock order", g.edges, g.cycles)


def dynamic(edges: Sequence[tuple[str, str, str]], title: str) -> Graph:
    import networkx as nx

    from spmcheck.spec.lockgraph import sorted_cycles

    dg = nx.DiGraph()
    dg.add_edges_from((a, b) for a, b, _ in edges)
    return Graph(title, tuple(edges), sorted_cycles(dg))


def layout_engine() -> str:
    return "graphviz dot" if shutil.which("dot") else "built-in circular layout"


def render(g: Graph, ident: str) -> str:
    if shutil.which("dot"):
        got = _graphviz(g, ident)
        if got:
            return got
    return _builtin(g, ident)


def _graphviz(g: Graph, ident: str) -> str | None:
    red = g.cycle_edges()
    lines = ["digraph G {", '  rankdir=LR; node [shape=box, fontname="sans-serif", fontsize=11];',
             '  edge [fontname="sans-serif", fontsize=9];']
    for n in g.nodes():
        lines.append(f'  "{n}";')
    for a, b, lab in g.edges:
        color = ', color="#c0392b", fontcolor="#c0392b", penwidth=2' if (a, b) in red else ""
        lines.append(f'  "{a}" -> "{b}" [label="{lab}"{color}];')
    lines.append("}")
    try:
        out = subprocess.run(["dot", "-Tsvg"], input="\n".join(lines), capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or "<svg" not in out.stdout:
        return None
    svg = out.stdout[out.stdout.index("<svg"):]
    return svg.replace("<svg", f'<svg id="{escape(ident)}" class="lockgraph"', 1)


def _builtin(g: Graph, ident: str) -> str:
    nodes = g.nodes()
    w, h, r = 520, 300, 105
    cx, cy = w / 2, h / 2 + 6
    pos = {n: (cx + r * 1.6 * math.cos(2 * math.pi * i / max(len(nodes), 1) - math.pi / 2),
               cy + r * math.sin(2 * math.pi * i / max(len(nodes), 1) - math.pi / 2)) for i, n in enumerate(nodes)}
    red = g.cycle_edges()
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{escape(ident)}" class="lockgraph" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" role="img"><title>{escape(g.title)}</title>',
           '<defs><marker id="arr-' + escape(ident) + '" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" /></marker></defs>']
    for a, b, lab in g.edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        dx, dy = x2 - x1, y2 - y1
        d = math.hypot(dx, dy) or 1.0
        # stop short of the node boxes; bend so that a->b and b->a do not overlap
        sx, sy, ex, ey = x1 + dx / d * 40, y1 + dy / d * 16, x2 - dx / d * 40, y2 - dy / d * 16
        mx, my = (sx + ex) / 2 - dy / d * 18, (sy + ey) / 2 + dx / d * 18
        cls = "edge cycle" if (a, b) in red else "edge"
        out.append(f'<g class="{cls}"><title>{escape(a)} held while acquiring {escape(b)} ({escape(lab)})</title>'
                   f'<path d="M {sx:.1f} {sy:.1f} Q {mx:.1f} {my:.1f} {ex:.1f} {ey:.1f}" fill="none" '
                   f'marker-end="url(#arr-{escape(ident)})" /></g>')
    for n, (x, y) in pos.items():
        out.append(f'<g class="node"><rect x="{x - 44:.1f}" y="{y - 13:.1f}" width="88" height="26" rx="5" />'
                   f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle">{escape(n)}</text></g>')
    out.append("</svg>")
    return "\n".join(out)
