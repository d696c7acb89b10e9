"""One versioned JSON envelope for every command (schema: checker/render/envelope.schema.json).

    {"format": "spmcheck-result", "schema_version": 2, "spmcheck_version": "...",
     "command": "prove" | "prove-parametric" | "check" | "cex" | "record" | "list" | "report",
     "exit_code": N, "ok": bool, "summary": "spmcheck: ...", "counts": {...},
     "config": {...}, "results": [...], "timings": {...}?}

schema_version changes whenever a consumer validating against the previous schema would reject
or misread a new envelope: 2 added the data path (model "datapath", its `datapath` object on
prove results, the `datapath` count).

Timings never sit inside `results`: every `seconds` field is moved to `timings` (keyed by the
JSON path it came from) and `timings` is only written with --timings, so the JSON of two runs on
the same inputs is byte-identical.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 2
FORMAT = "spmcheck-result"
SCHEMA_PATH = Path(__file__).with_name("envelope.schema.json")


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as v

    try:
        return v("spmcheck")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def split_timings(obj: Any, path: str = "", out: dict[str, float] | None = None) -> tuple[Any, dict[str, float]]:
    """`obj` without any `seconds` key (recursively) and {json-path: seconds} of what was removed."""
    out = {} if out is None else out
    if isinstance(obj, dict):
        clean = {}
        for k, v in obj.items():
            if k == "seconds" and isinstance(v, (int, float)):
                out[f"{path}/seconds"] = round(float(v), 3)
                continue
            clean[k] = split_timings(v, f"{path}/{k}", out)[0]
        return clean, out
    if isinstance(obj, (list, tuple)):  # dataclasses.asdict keeps tuples
        return [split_timings(v, f"{path}/{i}", out)[0] for i, v in enumerate(obj)], out
    return obj, out


def envelope(command: str, exit_code: int, summary: str, results: list[dict[str, Any]],
             config: dict[str, Any] | None = None, counts: dict[str, Any] | None = None,
             total_seconds: float | None = None, timings: bool = False) -> dict[str, Any]:
    clean, per = split_timings(results, "/results")
    doc: dict[str, Any] = {
        "format": FORMAT, "schema_version": SCHEMA_VERSION, "spmcheck_version": version(),
        "command": command, "exit_code": exit_code, "ok": exit_code == 0, "summary": summary,
        "counts": counts or {}, "config": config or {}, "results": clean,
    }
    if timings:
        doc["timings"] = {"total_seconds": round(total_seconds or 0.0, 3), "fields": per}
    return doc


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def prove_results(run: Any) -> list[dict[str, Any]]:
    """spmcheck prove: ProofResult.to_json() per pair plus model, label, finding, any-size status;
    a data-path pair also its `datapath` object (claim, kind, scope, states or length, waits)."""
    from spmcheck.spec.names import label

    out = []
    for p in run.pairs:
        d = p.result.to_json()
        d.update(model=p.model, label=label(p.result.property), finding=p.finding, any_size_status=p.any_size)
        if p.row is not None:
            d["datapath"] = p.row.to_json()
        out.append(d)
    return out


def parametric_results(results: list[Any]) -> list[dict[str, Any]]:
    from spmcheck.spec.names import label

    return [dict(r.to_json(), label=label(r.property)) for r in results]
