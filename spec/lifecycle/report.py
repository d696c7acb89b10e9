"""Renderings of the lifecycle verdicts: table, reviewers' questions, findings, counterexamples."""
from __future__ import annotations

from typing import Callable, Sequence

from ..results import ProofResult
from .expected import QUESTION_VARIANTS, QUESTIONS
from .properties import meta


def _row(r: ProofResult, any_size: Callable[[str, str], str]) -> tuple[str, ...]:
    mark = "" if r.matches else "  <-- UNKNOWN" if r.verdict == "unknown" else "  <-- MISMATCH"
    kind = "finding" if meta(r.property).finding else ""
    size = any_size(r.variant, r.property) if r.verdict == "proved" else "-"
    return (r.variant, r.property, r.verdict + mark, r.expected, kind, size, r.bound, f"{r.seconds:.1f}")


def _table(rows: list[tuple[str, ...]], head: tuple[str, ...]) -> list[str]:
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return [line(head), line(tuple("-" * w for w in widths))] + [line(r) for r in rows]


def answer(results: Sequence[ProofResult], variant: str, props: Sequence[str]) -> str:
    by = {(r.variant, r.property): r for r in results}
    parts = []
    for p in props:
        r = by.get((variant, p))
        parts.append(f"{p}: {r.verdict if r else 'not run'}")
    rs = [by.get((variant, p)) for p in props]
    if any(r is None or r.verdict == "unknown" for r in rs):
        head = "UNKNOWN"
    elif all(r is not None and r.verdict == "proved" for r in rs):
        head = "YES (proved)"
    elif any(r is not None and r.verdict == "proved" for r in rs):
        head = "PARTLY (some proved, some with a counterexample)"
    else:
        head = "NO (counterexample)"
    return f"{head}  [{'; '.join(parts)}]"


def render(results: Sequence[ProofResult], describe: str, any_size: Callable[[str, str], str],
           verbose: bool = True) -> str:
    core = [r for r in results if not meta(r.property).finding]
    finds = [r for r in results if meta(r.property).finding]
    head = ("variant", "property", "verdict", "expected", "kind", "any size / bounded", "depth covered", "seconds")
    out = [f"spmcheck prove — SPM context lifecycle — {describe}"]
    out += _table([_row(r, any_size) for r in core + finds], head)
    out.append("\nreviewers' questions (seed 'Questions to Answer', digest §5 open findings):")
    for q, props in QUESTIONS:
        out.append(f"  {q}")
        for v in QUESTION_VARIANTS:
            out.append(f"    {v:12} {answer(results, v, props)}")
    if finds:
        out.append("\nfindings — residual risks of the final design (expected; each with a counterexample):")
        for r in finds:
            out.append(f"  {r.property}: {r.verdict}; {r.source}")
    if not verbose:
        return "\n".join(out)
    for r in results:
        if r.reason and r.verdict != "violated":
            out.append(f"\nnote {r.variant} / {r.property}: {r.reason}")
    out.append("\nnon-vacuity witnesses (must be reachable):")
    seen = set()
    for r in results:
        for w in r.witnesses:
            if (r.variant, w.name) in seen:
                continue
            seen.add((r.variant, w.name))
            out.append(f"  {r.variant:12} {w.name:38} {w.verdict:11} {w.steps:>3} steps  {w.summary}")
    for r in results:
        if r.counterexample is None:
            continue
        what = "finding" if meta(r.property).finding else "counterexample"
        out.append(f"\n{what}: {r.variant} violates {r.property} ({r.reason})")
        out += ["  " + s.text() for s in r.counterexample]
    return "\n".join(out)
