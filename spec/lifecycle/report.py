"""Renderings of the lifecycle verdicts: table, reviewers' questions, findings, counterexamples."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..results import ProofResult
from .expected import GATE, P4, P4M, P7, P8, QUESTION_VARIANTS, QUESTIONS
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


@dataclass(frozen=True)
class Question:
    """A reviewers' question worded so that "yes" is the good answer and a proof says yes."""

    text: str
    props: tuple[str, ...]  # every one proved -> yes; none proved -> no; some -> partly


# wording per expected.QUESTIONS entry (same properties, same order); the seed's wording was
# "Open finding: ... races ..." where YES (proved) meant *fixed*, which read backwards
_WORDING: dict[tuple[str, ...], str] = {
    (P4, P4M): "After stop, does an in-flight SPM dispatch still get DISPATCH_END / kfd_stop, "
               "leaving packet_return_map empty?",
    (P7, GATE): "With SPM on GPU-1 only, is GPU-0 left alone (never instrumented or serialized, "
                "still batched)?",
    (P8,): "Is the race between the SPM conflict check and context activation fixed "
           "(never two overlapping SPM contexts active)?",
    (GATE,): "Do unrelated GPU queues stay batched while SPM runs on another GPU "
             "(no process-wide batching disable)?",
}


def questions() -> tuple[Question, ...]:
    return tuple(Question(_WORDING.get(props, q), props) for q, props in QUESTIONS)


def answer(results: Sequence[ProofResult], variant: str, props: Sequence[str],
           any_size: Callable[[str, str], str] | None = None, size: str = "") -> str:
    """A plain answer: "yes, proved for any number of agents" / "no: counterexample (P8)" / ..."""
    from ..names import label

    by = {(r.variant, r.property): r for r in results}
    rs = [by.get((variant, p)) for p in props]
    missing = [p for p, r in zip(props, rs) if r is None]
    if missing:
        return "not answered: " + ", ".join(label(p) for p in missing) + " not run"
    unknown = [r for r in rs if r is not None and r.verdict == "unknown"]
    if unknown:
        return "unknown: " + ", ".join(f"{label(r.property)} inconclusive" for r in unknown)
    proved = [r for r in rs if r is not None and r.verdict == "proved"]
    broken = [r for r in rs if r is not None and r.verdict != "proved"]
    if not broken:
        every = any_size is not None and all(any_size(r.variant, r.property) == "any size" for r in proved)
        return "yes, proved for any number of agents" if every else \
            "yes, proved at the fixed size only"
    bad = ", ".join(label(r.property) for r in broken)
    if proved:
        return f"partly: {', '.join(label(r.property) for r in proved)} proved, {bad} has a counterexample"
    return f"no: counterexample ({bad})"


def render(results: Sequence[ProofResult], describe: str, any_size: Callable[[str, str], str],
           verbose: bool = True) -> str:
    core = [r for r in results if not meta(r.property).finding]
    finds = [r for r in results if meta(r.property).finding]
    head = ("variant", "property", "verdict", "expected", "kind", "any size / bounded", "depth covered", "seconds")
    out = [f"spmcheck prove — SPM context lifecycle — {describe}"]
    out += _table([_row(r, any_size) for r in core + finds], head)
    out.append("\nreviewers' questions (seed 'Questions to Answer', digest §5 open findings):")
    for q in questions():
        out.append(f"  {q.text}")
        for v in QUESTION_VARIANTS:
            out.append(f"    {v:12} {answer(results, v, q.props, any_size)}")
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
