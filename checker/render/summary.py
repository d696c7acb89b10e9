"""The one line every command ends with (like pytest's), and the counts behind it."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from spmcheck.spec.names import label

from .records import ProveRun


@dataclass(frozen=True)
class ProveCounts:
    total: int
    as_expected: int
    mismatched: int  # a verdict other than expected (unknowns not counted here)
    unknown: int
    unreachable: int  # non-vacuity witnesses the model should reach but did not
    final_any: int  # final's non-finding pairs proved for any size
    final_total: int
    caught: int  # known-bad pairs whose bug was found (expected violated, violated)
    findings: int  # residual-risk findings shown with a counterexample
    datapath: int = 0  # of `total`, the data path's (hazard row, revision) verdicts
    # final's own properties it violates as expected (a modelling correction made one reachable:
    # lifecycle map-empty-after-drain since the per-queue drain); not "known bugs caught", which
    # counts the historical variants
    final_violated: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        if not self.datapath:
            del d["datapath"]  # a run without the data path keeps its counts as before
        if not self.final_violated:
            del d["final_violated"]
        else:
            d["final_violated"] = list(self.final_violated)
        return d


def prove_counts(run: ProveRun) -> ProveCounts:
    rs = run.pairs
    final = [p for p in rs if p.result.variant == "final" and not p.finding]
    return ProveCounts(
        total=len(rs),
        as_expected=sum(p.result.matches for p in rs),
        mismatched=sum(not p.result.matches and p.result.verdict != "unknown" for p in rs),
        unknown=sum(p.result.verdict == "unknown" for p in rs),
        unreachable=sum(w.verdict == "unreachable" for p in rs for w in p.result.witnesses),
        final_any=sum(p.any for p in final), final_total=len(final),
        caught=sum(p.result.expected == "violated" and p.result.verdict == "violated" and not p.finding
                   and p.result.variant != "final" for p in rs),
        findings=sum(p.finding and p.result.verdict == "violated" for p in rs),
        datapath=sum(p.model == "datapath" for p in rs),
        final_violated=tuple(label(p.result.property) for p in final
                             if p.result.expected == "violated" and p.result.verdict == "violated"))


def _took(seconds: float, timings: bool) -> str:
    return f" in {seconds:.1f} s" if timings else ""


def prove_summary(run: ProveRun, timings: bool = False) -> str:
    c = prove_counts(run)
    if c.total == 0:
        return "spmcheck: no (variant, property) pair selected" + _took(run.seconds, timings)
    detail = []
    if c.final_total:
        detail.append(f"final proved for any size: {c.final_any}/{c.final_total}")
    if c.caught:
        detail.append(f"{c.caught} known bug{'s' if c.caught != 1 else ''} caught")
    # a property final violates as expected is a residual of the design, reported with the findings
    # (the brief output's matrix shows which; the JSON counts keep `final_violated` apart)
    n = c.findings + len(c.final_violated)
    if n:
        detail.append(f"{n} finding{'s' if n != 1 else ''}")
    if c.datapath:
        detail.append(f"data path: {c.datapath}, bounded")
    bad = [p for p in run.pairs if not p.result.matches]
    if not bad and not c.unreachable:
        return (f"spmcheck: {c.total} verdict{'s' if c.total != 1 else ''} as expected"
                + (f" ({'; '.join(detail)})" if detail else "") + _took(run.seconds, timings))
    parts = []
    if c.mismatched:
        parts.append(f"{c.mismatched} NOT as expected")
    if c.unknown:
        parts.append(f"{c.unknown} unknown")
    if c.unreachable:
        parts.append(f"{c.unreachable} witness{'es' if c.unreachable != 1 else ''} unreachable")
    first = bad[0].result if bad else None
    where = f"; first: {first.variant}/{label(first.property)} {first.verdict}, expected {first.expected}" if first else ""
    head = "FAILED" if c.mismatched or c.unreachable else "INCONCLUSIVE"
    return (f"spmcheck: {head}: {', '.join(parts)}, {c.as_expected} of {c.total} as expected{where}"
            + _took(run.seconds, timings))


def check_summary(results: Sequence[Any], seconds: float = 0.0, timings: bool = False) -> str:
    """`spmcheck: 3 files: 2 accepted, 1 violated (stale.log: creation-consistent at line 40)`."""
    n = len(results)
    counts = Counter(r.verdict.value for r in results)
    order = ("violated", "diverged", "error", "unreadable", "malformed", "inconclusive", "accepted")
    parts = [f"{counts[v]} {v}" for v in order if counts.get(v)]
    finds = sum(len(r.findings) + r.more_findings for r in results)
    worst = next((r for v in order[:-1] for r in results if r.verdict.value == v), None)
    where = ""
    if worst is not None:
        at = f" {worst.prop}" if worst.prop else ""
        at += f" at line {worst.line}" if worst.line else ""
        where = f" (first: {worst.file}: {worst.verdict.value}{at})"
    tail = f"; {finds} finding{'s' if finds != 1 else ''} noted" if finds else ""
    notes = sum(1 for r in results if getattr(r, "note", ""))
    if notes:
        tail += f"; {notes} with a note (-v shows it)"
    return (f"spmcheck: {n} file{'s' if n != 1 else ''}: {', '.join(parts) or 'none'}{where}{tail}"
            + _took(seconds, timings))


def parametric_summary(results: Sequence[Any], seconds: float = 0.0, timings: bool = False) -> str:
    n = len(results)
    ok = sum(r.matches for r in results)
    anys = sum(r.verdict == "proved" for r in results)
    confirmed = sum(r.verdict == "violated" for r in results)
    if ok == n:
        return (f"spmcheck: {n} parametric verdict{'s' if n != 1 else ''} as expected ({anys} proved for any size; "
                f"{confirmed} violations confirmed by concrete traces)" + _took(seconds, timings))
    bad = next(r for r in results if not r.matches)
    unknown = sum(r.verdict == "unknown" for r in results)
    head = "INCONCLUSIVE" if all(r.verdict == "unknown" for r in results if not r.matches) else "FAILED"
    return (f"spmcheck: {head}: {n - ok} of {n} parametric verdicts not as expected ({unknown} unknown); first: "
            f"{bad.model} {bad.variant}/{label(bad.property)} {bad.verdict}, expected {bad.expected}"
            + _took(seconds, timings))
