"""One `spmcheck prove` run as a record every renderer reads: the prover's results per model, the
sizes, the any-size status of each proof (spec.parametric's recorded table), the exit code."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from spmcheck.spec.results import ProofResult


@dataclass(frozen=True)
class Pair:
    model: str  # "core" | "lifecycle" | "datapath"
    result: ProofResult  # datapath: `property` is the row (H1, H2-fence, ...), unique per variant
    any_size: str  # "any size" | "bounded only: ..." | "-" (not proved)
    finding: bool = False
    # datapath only: what the row decides and where (DatapathRow); None for the other models
    row: "DatapathRow | None" = None

    @property
    def any(self) -> bool:
        return self.result.verdict == "proved" and self.any_size == "any size"

    @property
    def key(self) -> str:
        return f"{self.model}/{self.result.variant}/{self.result.property}"


@dataclass(frozen=True)
class DatapathRow:
    """The data path's part of a pair: the claim the row decides (a claim of spec/datapath's
    definition or a progress claim of spec.datapath.verdicts), how, and at which scope."""

    claim: str
    kind: str  # invariant | step | progress
    scope: str
    scope_text: str
    states: int | None  # reachable states explored, for a proof (None for a violation)
    length: int | None  # steps of the shortest counterexample (the one shown may be longer: clean)
    waits: tuple[str, ...] = ()  # H4: the calls waiting in the stuck state
    clean: bool = True  # the counterexample breaks no other claim before its last step

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.claim, "kind": self.kind, "scope": self.scope, "scope_text": self.scope_text,
                "states": self.states, "length": self.length, "waits": list(self.waits), "clean": self.clean}


DATAPATH_LABELS = {"H2-fence": "H2f", "H2b-grant": "H2bg", "H3-fence": "H3f", "drain-covers": "dc",
                   "late-delivery": "ld", "late-delivery-timeout": "ldt"}


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

    @property
    def datapath_size(self) -> str:
        return "exhaustive breadth-first search at each row's scope" if self.model("datapath") else ""

    def model(self, name: str) -> list[Pair]:
        return [p for p in self.pairs if p.model == name]

    @property
    def results(self) -> list[ProofResult]:
        return [p.result for p in self.pairs]


def datapath_pair(d: Any) -> Pair:
    """A data-path verdict (spec.datapath.verdicts.DVerdict) as the pair every renderer reads."""
    from spmcheck.spec.results import CexStep, WitnessResult

    proved = d.verdict == "proved"
    bound = (f"every reachable state ({d.states}) at scope {d.scope}" if proved else
             f"{d.length} steps (shortest)" if d.verdict == "violated" else f"over {d.states} states: not finished")
    cex = None
    if d.verdict == "violated" and d.events:
        cex = tuple(CexStep(e.seq, e.thread, e.kind, tuple((k, _fmt(v)) for k, v in e.keys), tuple(e.changes))
                    for e in d.events)
    w = WitnessResult(f"{d.row}-witness", d.witness, "reachable" if d.witness_reached else "unreachable",
                      d.witness_steps, 0.0)
    reason = d.failing if d.verdict == "violated" else ""
    if d.waits:
        reason += "; waiting: " + "; ".join(d.waits)
    r = ProofResult(d.variant, d.row, d.verdict, d.expected, d.method, bound,
                    f"bounded only: scope {d.scope}" if proved else "-", d.seconds, cex, (w,), reason, d.why)
    row = DatapathRow(d.prop, d.kind, d.scope, d.scope_text, d.states if proved else None, d.length,
                      tuple(d.waits), d.clean)
    return Pair("datapath", r, r.any_size, d.finding, row)


def _fmt(v: object) -> str:
    return str(int(v)) if isinstance(v, bool) else str(v)


def make_run(core: Sequence[ProofResult], lifecycle: Sequence[ProofResult], core_size: str,
             lifecycle_size: str, config: dict[str, Any], seconds: float = 0.0,
             command: str = "spmcheck prove", datapath: Sequence[Any] = ()) -> ProveRun:
    """Attach the any-size status and the finding flag; the exit code is spec.report.exit_code's."""
    from spmcheck.spec.lifecycle.properties import meta
    from spmcheck.spec.parametric.prove import any_size_status
    from spmcheck.spec.report import exit_code

    from spmcheck.spec.properties import CORE_FINDINGS

    pairs = [Pair("core", r, ("any size" if r.any_size == "any size" else r.any_size) if r.verdict == "proved" else "-",
                  r.property in CORE_FINDINGS) for r in core]
    pairs += [Pair("lifecycle", r, any_size_status(r.variant, r.property, model="lifecycle")
                   if r.verdict == "proved" else "-", meta(r.property).finding) for r in lifecycle]
    pairs += [datapath_pair(d) for d in datapath]
    return ProveRun(tuple(pairs), core_size, lifecycle_size, config, exit_code([p.result for p in pairs]),
                    seconds, command)
