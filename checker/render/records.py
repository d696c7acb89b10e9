"""One `spmcheck prove` run as a record every renderer reads: the prover's results per model, the
sizes, the any-size status of each proof (spec.parametric's recorded table), the exit code."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from spmcheck.spec.results import ProofResult


@dataclass(frozen=True)
class Pair:
    model: str  # "core" | "lifecycle"
    result: ProofResult
    any_size: str  # "any size" | "bounded only: ..." | "-" (not proved)
    finding: bool = False

    @property
    def any(self) -> bool:
        return self.result.verdict == "proved" and self.any_size == "any size"

    @property
    def key(self) -> str:
        return f"{self.model}/{self.result.variant}/{self.result.property}"


@dataclass(frozen=True)
class ProveRun:
    pairs: tuple[Pair, ...]
    core_size: str  # Config.describe()
    lifecycle_size: str  # LConfig.describe()
    config: dict[str, Any]
    exit_code: int
    seconds: float = 0.0
    command: str = "spmcheck prove"
    extra: dict[str, Any] = field(default_factory=dict)

    def model(self, name: str) -> list[Pair]:
        return [p for p in self.pairs if p.model == name]

    @property
    def results(self) -> list[ProofResult]:
        return [p.result for p in self.pairs]


def make_run(core: Sequence[ProofResult], lifecycle: Sequence[ProofResult], core_size: str,
             lifecycle_size: str, config: dict[str, Any], seconds: float = 0.0,
             command: str = "spmcheck prove") -> ProveRun:
    """Attach the any-size status and the finding flag; the exit code is spec.report.exit_code's."""
    from spmcheck.spec.lifecycle.properties import meta
    from spmcheck.spec.parametric.prove import any_size_status
    from spmcheck.spec.report import exit_code

    pairs = [Pair("core", r, ("any size" if r.any_size == "any size" else r.any_size) if r.verdict == "proved" else "-")
             for r in core]
    pairs += [Pair("lifecycle", r, any_size_status(r.variant, r.property, model="lifecycle")
                   if r.verdict == "proved" else "-", meta(r.property).finding) for r in lifecycle]
    return ProveRun(tuple(pairs), core_size, lifecycle_size, config, exit_code(list(core) + list(lifecycle)),
                    seconds, command)
