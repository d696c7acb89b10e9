"""SARIF 2.1.0 for `spmcheck prove --sarif` and `spmcheck check --sarif`.

prove: one result per (variant, property) pair; kind `pass` for a proof, `fail` for a violation
(level `error` when not as expected, `warning` for a finding of the final design, `note` for a
known-bad variant caught as expected), `open` for unknown (level `none`, as SARIF requires for
any kind but `fail`). Location: the property's definition;
the counterexample rides along as a code flow with one thread flow per thread.
check: one result per rejected trace (at its file:line:col, evidence lines as related locations)
and per finding (level `note`).
"""
from __future__ import annotations

from typing import Any, Sequence

from spmcheck.spec.names import label

from .envelope import version
from .locations import pair_location, variant_location
from .records import Pair, ProveRun

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _log(rules: dict[str, dict[str, Any]], results: list[dict[str, Any]], command: str) -> dict[str, Any]:
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "spmcheck", "version": version(), "semanticVersion": version(),
                                "rules": [rules[k] for k in sorted(rules)]}},
            "invocations": [{"executionSuccessful": True, "commandLine": command}],
            "results": results,
        }],
    }


def _loc(path: str, line: int, col: int = 0, message: str = "") -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": path}}
    if line >= 1:
        phys["region"] = {"startLine": line, **({"startColumn": col} if col >= 1 else {})}
    out: dict[str, Any] = {"physicalLocation": phys}
    if message:
        out["message"] = {"text": message}
    return out


def _datapath_rule(pair: Pair) -> dict[str, Any]:
    """A data-path row as a rule: the claim it decides (its text in the definition) and its scope."""
    from spmcheck.checker.datapath_cli import row_meaning
    from spmcheck.spec.datapath.verdicts import ROWS

    row = pair.row
    assert row is not None
    spec = next(r for r in ROWS if r.id == pair.result.property)
    _, summary, source = row_meaning(spec.id)
    return {"id": f"datapath/{spec.id}", "name": row.claim, "shortDescription": {"text": summary[:200]},
            "fullDescription": {"text": f"{summary} (source: {source}; decided at scope {row.scope}: "
                                        f"{row.scope_text})"},
            "properties": {"label": spec.id, "model": "datapath", "kind": row.kind, "scope": row.scope,
                           "finding": spec.finding}}


def _rule(prop: str, model: str) -> dict[str, Any]:
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.properties import PROPERTIES

    from spmcheck.spec.properties import CORE_FINDINGS

    p = ({**PROPERTIES, **CORE_FINDINGS} if model == "core" else LPROPERTIES).get(prop)
    summary = p.summary if p is not None else prop
    return {"id": f"{model}/{prop}", "name": prop, "shortDescription": {"text": summary[:200]},
            "fullDescription": {"text": summary + (f" (source: {p.source})" if p is not None else "")},
            "properties": {"label": label(prop), "model": model}}


def _level(p: Pair) -> tuple[str, str]:
    r = p.result
    if r.verdict == "proved" and r.matches:
        return "pass", "none"
    if r.verdict == "unknown":
        return "open", "none"  # SARIF: a kind other than fail carries level none
    if not r.matches:
        return "fail", "error"
    return "fail", ("warning" if p.finding else "note")


def _code_flow(p: Pair) -> list[dict[str, Any]]:
    assert p.result.counterexample is not None
    by: dict[str, list[dict[str, Any]]] = {}
    last = p.result.counterexample[-1].index
    for s in p.result.counterexample:
        text = f"{s.index} {s.thread} {s.action} " + " ".join(f"{k}={v}" for k, v in s.args)
        ch = ", ".join(f"{n}: {o}->{w}" for n, o, w in s.changes if not n.startswith(("pc.", "lk.")))
        loc: dict[str, Any] = {"location": {"message": {"text": text.strip() + (f" [{ch}]" if ch else "")
                                                        + (" <- violates the property" if s.index == last else "")}},
                               "executionOrder": s.index, "importance": "essential" if s.index == last else
                               ("unimportant" if s.setup else "important")}
        by.setdefault(s.thread, []).append(loc)
    return [{"message": {"text": f"{p.result.variant} violates {p.result.property}"},
             "threadFlows": [{"id": t, "locations": locs} for t, locs in by.items()]}]


def prove_sarif(run: ProveRun) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for p in run.pairs:
        r = p.result
        rid = f"{p.model}/{r.property}"
        if rid not in rules:
            rules[rid] = _datapath_rule(p) if p.row is not None else _rule(r.property, p.model)
        kind, level = _level(p)
        path, line = pair_location(p)
        vpath, vline = variant_location(r.variant, p.model)
        what = (f"{p.model} {r.variant}: {r.property} ({label(r.property)}) {r.verdict}, expected {r.expected}"
                + (f"; {r.reason}" if r.reason else ""))
        res: dict[str, Any] = {
            "ruleId": rid, "kind": kind, "level": level, "message": {"text": what},
            "locations": [_loc(path, line)],
            "relatedLocations": [dict(_loc(vpath, vline, message=f"variant {r.variant}"), id=1)],
            "properties": {"model": p.model, "variant": r.variant, "verdict": r.verdict, "expected": r.expected,
                           "finding": p.finding, "any_size": p.any_size},
        }
        if p.row is not None:
            res["properties"]["datapath"] = p.row.to_json()
        if r.counterexample:
            res["codeFlows"] = _code_flow(p)
        results.append(res)
    return _log(rules, results, run.command)


_CHECK_LEVEL = {"violated": "error", "diverged": "error", "malformed": "error", "unreadable": "error",
                "inconclusive": "warning"}


def check_sarif(results: Sequence[Any], command: str = "spmcheck check") -> dict[str, Any]:
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.properties import PROPERTIES

    rules: dict[str, dict[str, Any]] = {}
    out = []

    def rule(rid: str, text: str) -> None:
        rules.setdefault(rid, {"id": rid, "shortDescription": {"text": text[:200]}})

    for r in results:
        v = r.verdict.value
        if v != "accepted":
            rid = r.prop or r.code or v
            p = PROPERTIES.get(rid) or LPROPERTIES.get(rid)
            rule(rid, p.summary if p is not None else f"trace {v} ({r.code})")
            res: dict[str, Any] = {
                "ruleId": rid, "kind": "fail", "level": _CHECK_LEVEL.get(v, "error"),
                "message": {"text": f"{v}" + (f" {r.prop}" if r.prop else "") + f": [{r.code}] {r.message}"},
                "locations": [_loc(r.file, r.line, r.col)],
                "properties": {"verdict": v, "code": r.code},
            }
            rel = [dict(_loc(r.file, e.line, message=e.text + (f" ({e.why})" if e.why else "")), id=i + 1)
                   for i, e in enumerate(r.evidence) if e.line >= 1]
            rel += [dict(_loc(r.file, q.line, q.col, message=f"[{q.code}] {q.message}"), id=len(rel) + i + 1)
                    for i, q in enumerate(r.problems) if q.line >= 1]
            if rel:
                res["relatedLocations"] = rel
            out.append(res)
        for f in r.findings:
            p = LPROPERTIES.get(f.prop)
            rule(f.prop, p.summary if p is not None else f.prop)
            out.append({"ruleId": f.prop, "kind": "fail", "level": "note",
                        "message": {"text": f"finding {f.prop}: {f.message}"},
                        "locations": [_loc(r.file, f.line)]})
    return _log(rules, out, command)
