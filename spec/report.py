"""Renderings of prover results: the text table, and counterexamples as format-v1 traces."""
from __future__ import annotations

from typing import Sequence

from .events import Event, Header, render_event, render_header
from .results import ProofResult
from .vocabulary import Config


def exit_code(results: Sequence[ProofResult]) -> int:
    """0 all as expected; 1 a mismatch, or a non-vacuity witness the model should reach is
    unreachable (a model that cannot do the scenario proves nothing); 3 something unknown."""
    if any(r.verdict not in ("unknown",) and not r.matches for r in results):
        return 1
    if any(w.verdict == "unreachable" for r in results for w in r.witnesses):
        return 1
    if any(r.verdict == "unknown" for r in results):
        return 3
    return 0


def render_table(results: Sequence[ProofResult], cfg: Config, verbose: bool = True) -> str:
    head = ("variant", "property", "verdict", "expected", "any size / bounded", "depth covered", "method", "seconds")
    rows = [(r.variant, r.property, r.verdict + ("" if r.matches else "  <-- UNKNOWN" if r.verdict == "unknown" else "  <-- MISMATCH"), r.expected,
             r.any_size if r.verdict == "proved" else "-", r.bound, r.method, f"{r.seconds:.1f}")
            for r in results]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [f"spmcheck prove — {cfg.describe()}", line(head), line(tuple("-" * w for w in widths))]
    out += [line(r) for r in rows]
    if not verbose:
        return "\n".join(out)
    for r in results:
        if r.reason:
            out.append(f"\nnote {r.variant} / {r.property}: {r.reason}")
    out.append("\nnon-vacuity witnesses (must be reachable):")
    seen = set()
    for r in results:
        for w in r.witnesses:
            key = (r.variant, w.name)
            if key in seen:
                continue
            seen.add(key)
            out.append(f"  {r.variant:22} {w.name:24} {w.verdict:11} {w.steps:>3} steps  {w.summary}")
    for r in results:
        if r.counterexample is None:
            continue
        setup = [s for s in r.counterexample if s.setup]
        out.append(f"\ncounterexample: {r.variant} violates {r.property} ({r.reason})")
        if setup:
            out.append(f"  steps 1-{len(setup)}: setup, calls run one at a time to reach the start state")
        out += ["  " + s.text() for s in r.counterexample if not s.setup]
    return "\n".join(out)


def cex_trace(r: ProofResult, cfg: Config) -> str:
    assert r.counterexample is not None
    h = Header(1, r.variant, cfg.agents, cfg.updaters, cfg.lookups,
               (("source", "spmcheck-cex"), ("property", r.property)))
    lines = [f"# counterexample from spmcheck prove: {r.variant} violates {r.property}",
             f"# steps 1-{sum(1 for s in r.counterexample if s.setup)} are setup (sequential calls)",
             render_header(h)]
    for s in r.counterexample:
        lines.append(render_event(Event(s.index, s.thread, s.action, s.args)))
    return "\n".join(lines) + "\n"
