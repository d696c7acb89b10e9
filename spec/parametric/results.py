"""Typed records of the parametric proofs and their text table."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence


@dataclass(frozen=True)
class Cti:
    """A finite model of a failed query: sizes, pre-state, the step (as a trace event line) and
    what it changed. For initiation / implication failures `event` is empty and `post` is ()."""

    sizes: tuple[int, int, int]  # agents, updaters, lookups in the finite model
    pre: tuple[tuple[str, str], ...]  # every variable, fixed-size names (rc.0, pc.u0, ...)
    event: str  # "<seq> <thread> <kind> key=value ..." (traces/FORMAT.md)
    changes: tuple[tuple[str, str, str], ...]  # (variable, before, after)
    note: str = ""
    size_text: str = ""  # lifecycle: "N agents, N contexts, N tools, N dispatches"
    header: str = ""  # lifecycle: the trace header line (spec.lifecycle.trace.header_for) of that size

    def lines(self) -> list[str]:
        a, u, l = self.sizes
        sizes = self.size_text or f"{a} agents, {u} updaters, {l} lookups"
        out = [f"# CTI at {sizes}" + (f": {self.note}" if self.note else "")]
        if self.header:
            out.append(self.header)
        out += [f"#   {k} = {v}" for k, v in self.pre if not k.startswith("lk.") or v == "1"]
        if self.event:
            out.append(self.event)
            out += [f"#   {n}: {o} -> {w}" for n, o, w in self.changes]
        return out


@dataclass(frozen=True)
class Check:
    name: str  # "initiation" | "consecution:<action>" | "implies-property" | "lock-graph" | "deadlock:<case>"
    status: str  # "valid" | "fails" | "unknown"
    fragment: str
    seconds: float
    cti: Cti | None = None
    reason: str = ""


@dataclass(frozen=True)
class WitnessRec:
    name: str
    verdict: str  # reachable | unreachable | unknown
    how: str


@dataclass(frozen=True)
class ParamResult:
    variant: str
    property: str
    verdict: str  # proved | violated | unknown
    expected: str
    checks: tuple[Check, ...]
    witnesses: tuple[WitnessRec, ...]
    seconds: float
    reason: str = ""
    conjuncts: int = 0
    counterexample: tuple[str, ...] = field(default=())  # confirming concrete trace (violated only)
    model: str = "core"  # "core" (spec.programs) | "lifecycle" (spec.lifecycle)

    @property
    def matches(self) -> bool:
        return self.verdict == self.expected

    @property
    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.status != "valid")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["matches"] = self.matches
        for c, cd in zip(self.checks, d["checks"]):
            if c.cti is not None:
                cd["cti"]["lines"] = c.cti.lines()
        return d


def conclude(checks: Sequence[Check], witnesses: Callable[[], tuple[WitnessRec, ...]],
             confirm: Callable[[], tuple[str, ...]]) -> tuple[str, str, tuple[WitnessRec, ...], tuple[str, ...]]:
    """(verdict, reason, witnesses, counterexample) from a pair's checks, the same rule for both
    models: proved needs every check valid and every witness reachable; violated needs a failing
    check confirmed by a concrete trace; anything else is unknown."""
    failed = [c for c in checks if c.status == "fails"]
    unknown = [c for c in checks if c.status == "unknown"]
    if not failed and not unknown:
        ws = witnesses()
        missing = [w for w in ws if w.verdict != "reachable"]
        reason = ("a non-vacuity witness was not reached: " + ", ".join(w.name for w in missing)) if missing else ""
        return ("unknown" if missing else "proved"), reason, ws, ()
    if failed:
        cex = confirm()
        first = failed[0]
        what = f"{first.name} fails" + (f" ({first.cti.note})" if first.cti and first.cti.note else
                                        f" ({first.reason})" if first.reason else "")
        return ("violated" if cex else "unknown"), what + (
            "; confirmed by a concrete trace" if cex else "; no concrete trace confirms it"), (), cex
    return "unknown", "; ".join(f"{c.name}: solver unknown ({c.reason})" for c in unknown), (), ()


def any_size_text(r: ParamResult) -> str:
    """The any-size column of `spmcheck prove`: short and stable (no CTI details, no timings)."""
    if r.verdict == "proved":
        return "any size"
    if r.verdict == "unknown" and not r.failed:
        gone = [w.name for w in r.witnesses if w.verdict == "unreachable"]
        if gone:
            return ("bounded only: every query valid at any size, but the non-vacuity witness "
                    f"{', '.join(gone)} is unreachable at every size")
        return "bounded only: parametric proof inconclusive"
    bad = r.failed[0]
    what = "solver unknown on" if bad.status == "unknown" else "parametric check fails:"
    tail = "; violation confirmed by a concrete trace" if r.verdict == "violated" else ""
    return f"bounded only: {what} {bad.name}{tail}"


def render_text(results: Sequence[ParamResult]) -> str:
    """Stable, diff-friendly: one row per (variant, property); no timings inside the verdict."""
    head = f"{'model':<9} {'variant':<22} {'property':<38} {'verdict':<9} {'expected':<9} {'any size':<10} {'queries':>7} {'seconds':>8}"
    rows = [head, "-" * len(head)]
    for r in results:
        ok = sum(c.status == "valid" for c in r.checks)
        rows.append(f"{r.model:<9} {r.variant:<22} {r.property:<38} {r.verdict:<9} {r.expected:<9} "
                    f"{'yes' if r.verdict == 'proved' else 'no':<10} {f'{ok}/{len(r.checks)}':>7} {r.seconds:>8.2f}")
    for r in results:
        if r.verdict != "proved":
            bad = r.failed[0] if r.failed else None
            rows.append(f"  {r.variant} / {r.property}: {r.reason}" +
                        (f" [{bad.name}: {bad.status}]" if bad else ""))
    return "\n".join(rows) + "\n"
