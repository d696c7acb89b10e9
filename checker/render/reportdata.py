"""What `spmcheck report` renders: a prove run (run here or read back from a `prove --json`
envelope), checked trace files, lock-order graphs and provenance. Records only; the HTML and
Markdown renderers read these, nothing is re-derived."""
from __future__ import annotations

import datetime as _dt
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from spmcheck.spec.results import CexStep, ProofResult, WitnessResult

from .records import DatapathRow, Pair, ProveRun

SPEC_DIR = Path(__file__).resolve().parent.parent.parent / "spec"


@dataclass(frozen=True)
class TraceView:
    result: Any  # checker.results.FileResult
    events: tuple[Any, ...]  # the last events up to the failing line (spec.events.Event)


@dataclass(frozen=True)
class ReportData:
    run: ProveRun
    traces: tuple[TraceView, ...] = ()
    graphs: tuple[Any, ...] = ()  # lockgraph_svg.Graph
    provenance: dict[str, str] = field(default_factory=dict)


def definition_hash() -> str:
    """sha256 over the protocol definition's sources (spec/**/*.py, sorted by path)."""
    h = hashlib.sha256()
    for p in sorted(SPEC_DIR.rglob("*.py")):
        h.update(str(p.relative_to(SPEC_DIR)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def provenance(run: ProveRun, command: str, layout: str) -> dict[str, str]:
    from .envelope import version

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch and epoch.isdigit() \
        else _dt.datetime.now(_dt.timezone.utc)
    return {"spmcheck version": version(), "definition hash (sha256 of spec/**/*.py)": definition_hash(),
            "core size": run.core_size, "lifecycle size": run.lifecycle_size,
            "date (UTC)": when.strftime("%Y-%m-%d %H:%M:%S"), "command": command,
            "prove command": run.command, "lock-graph layout": layout}


def run_from_envelope(doc: dict[str, Any]) -> ProveRun:
    """A `spmcheck prove --json` envelope back as the records it was written from."""
    from spmcheck.spec.lifecycle.vocabulary import LConfig
    from spmcheck.spec.vocabulary import Config

    if doc.get("format") != "spmcheck-result" or doc.get("command") != "prove":
        raise ValueError("not the JSON of `spmcheck prove --json` (format spmcheck-result, command prove)")
    secs = (doc.get("timings") or {}).get("fields", {})
    pairs = []
    for i, d in enumerate(doc["results"]):
        cex = None if d["counterexample"] is None else tuple(
            CexStep(s["index"], s["thread"], s["action"], tuple(s["args"].items()),
                    tuple((c["var"], c["before"], c["after"]) for c in s["changes"]), s["setup"])
            for s in d["counterexample"])
        ws = tuple(WitnessResult(w["name"], w["summary"], w["verdict"], w["steps"], 0.0, w["detail"])
                   for w in d["witnesses"])
        r = ProofResult(d["variant"], d["property"], d["verdict"], d["expected"], d["method"], d["bound"],
                        d["any_size"], float(secs.get(f"/results/{i}/seconds", 0.0)), cex, ws, d["reason"], d["source"])
        row = None
        if isinstance(d.get("datapath"), dict):
            x = d["datapath"]
            row = DatapathRow(x["claim"], x["kind"], x["scope"], x["scope_text"], x["states"], x["length"],
                              tuple(x["waits"]), x["clean"])
        pairs.append(Pair(d["model"], r, d["any_size_status"], d["finding"], row))
    cfg = doc.get("config", {})
    core = Config(**cfg["core"]).describe() if "core" in cfg else ""
    lc = LConfig(**cfg["lifecycle"]).describe() if "lifecycle" in cfg else ""
    return ProveRun(tuple(pairs), core, lc, cfg, int(doc["exit_code"]),
                    float((doc.get("timings") or {}).get("total_seconds", 0.0)), "spmcheck prove (from JSON)")


def trace_view(r: Any, keep: int = 40) -> TraceView:
    """The events of a rejected trace up to its failing line (the last `keep`)."""
    from spmcheck.checker.parse import iter_records
    from spmcheck.spec.events import Event

    events: list[Any] = []
    if r.verdict.value not in ("violated", "diverged") or not r.line:
        return TraceView(r, ())
    try:
        with open(r.file, "rb") as f:
            for rec in iter_records(f, r.file):
                if isinstance(rec, Event):
                    if rec.line > r.line:
                        break
                    events.append(rec)
    except OSError:
        return TraceView(r, ())
    return TraceView(r, tuple(events[-keep:]))


def graphs_for(run: ProveRun, traces: Sequence[TraceView]) -> tuple[Any, ...]:
    """Static lock graphs: each core variant the run covered (the cycle of reversed-lookup-order
    shows), the lifecycle's final design; the dynamic graph of the checked traces."""
    from . import lockgraph_svg as lg

    out = []
    for v in dict.fromkeys(p.result.variant for p in run.model("core")):
        out.append(lg.static_core(v))
    if run.model("lifecycle"):
        out.append(lg.static_lifecycle("final"))
    edges = [(a, b, f"{Path(t.result.file).name}:{line}") for t in traces for a, b, line in t.result.lock_edges]
    if edges:
        seen: dict[tuple[str, str], str] = {}
        for a, b, lab in edges:
            seen.setdefault((a, b), lab)
        out.append(lg.dynamic([(a, b, lab) for (a, b), lab in seen.items()], "checked traces: dynamic lock order"))
    return tuple(out)
