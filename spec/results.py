"""Prover results as typed records; renderings live in spec.report."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class CexStep:
    index: int  # 1-based position in the trace
    thread: str
    action: str
    args: tuple[tuple[str, str], ...]  # static args then observed values, as written in a trace
    changes: tuple[tuple[str, str, str], ...]  # (variable, before, after)
    setup: bool = False  # part of the sequential prefix that reaches the start state

    def text(self) -> str:
        a = " ".join(f"{k}={v}" for k, v in self.args)
        ch = ", ".join(f"{n}: {o}->{w}" for n, o, w in self.changes if not n.startswith(("pc.", "lk.")))
        tag = "setup " if self.setup else ""
        return f"{tag}{self.index:>3} {self.thread} {self.action} {a}".rstrip() + (f"   [{ch}]" if ch else "")


@dataclass(frozen=True)
class WitnessResult:
    name: str
    summary: str
    verdict: str  # reachable | unreachable | unknown
    steps: int
    seconds: float
    detail: str = ""


@dataclass(frozen=True)
class ProofResult:
    variant: str
    property: str
    verdict: str  # proved | violated | unknown
    expected: str
    method: str
    bound: str  # what the verdict covers: "any depth" (unbounded at this size) or "<= k steps"
    any_size: str  # "fixed size only" until the parametric proofs land
    seconds: float
    counterexample: tuple[CexStep, ...] | None = None
    witnesses: tuple[WitnessResult, ...] = field(default=())
    reason: str = ""
    source: str = ""

    @property
    def matches(self) -> bool:
        return self.verdict == self.expected

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["counterexample"] = None if self.counterexample is None else [
            {"index": s.index, "thread": s.thread, "action": s.action, "args": dict(s.args),
             "changes": [{"var": n, "before": o, "after": w} for n, o, w in s.changes], "setup": s.setup}
            for s in self.counterexample]
        d["witnesses"] = [asdict(w) for w in self.witnesses]
        d["matches"] = self.matches
        return d


@dataclass(frozen=True)
class RefinementResult:
    """The core's lock-step call against the lifecycle's atomic step (spec.refinement): one record
    per (variant, check); `check` is `sequential` (the call alone leaves the shared state as the
    atomic step does), `atomicity` (two-phase locking on the refcount lock) or `refines` (both)."""

    variant: str
    check: str
    verdict: str  # proved | violated | unknown
    sizes: str  # the agent counts checked, e.g. "1..3 agents"
    reason: str
    seconds: float
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
