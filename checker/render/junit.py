"""JUnit XML: `spmcheck prove --junit` has one test case per (variant, property) pair (a suite
per model; a case fails when its verdict is not the expected one, errors when unknown);
`spmcheck check --junit` one per trace file (violated/diverged fail; unreadable, malformed and
inconclusive are errors). No times unless the run had --timings: the file diffs cleanly."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Sequence

from spmcheck.spec.names import label

from .records import ProveRun


def _suite(root: ET.Element, name: str, cases: list[tuple[str, str, str, str, str]]) -> None:
    """cases: (classname, name, outcome 'pass'|'failure'|'error', message, details)."""
    s = ET.SubElement(root, "testsuite", name=name, tests=str(len(cases)),
                      failures=str(sum(c[2] == "failure" for c in cases)),
                      errors=str(sum(c[2] == "error" for c in cases)), skipped="0")
    for cls, nm, outcome, msg, details in cases:
        tc = ET.SubElement(s, "testcase", classname=cls, name=nm)
        if outcome != "pass":
            el = ET.SubElement(tc, outcome, message=msg, type=outcome)
            el.text = details
        elif details:
            ET.SubElement(tc, "system-out").text = details


def _dump(root: ET.Element) -> str:
    root.set("tests", str(sum(int(s.get("tests", "0")) for s in root)))
    root.set("failures", str(sum(int(s.get("failures", "0")) for s in root)))
    root.set("errors", str(sum(int(s.get("errors", "0")) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def prove_junit(run: ProveRun) -> str:
    root = ET.Element("testsuites", name="spmcheck prove")
    for model in ("core", "lifecycle", "datapath"):
        cases = []
        for p in run.model(model):
            r = p.result
            outcome = "pass" if r.matches else ("error" if r.verdict == "unknown" else "failure")
            msg = f"{r.verdict}, expected {r.expected}"
            details = f"{r.variant} / {r.property} ({label(r.property)}): {msg}" + (f"\n{r.reason}" if r.reason else "")
            if r.counterexample:
                details += "\n" + "\n".join(s.text() for s in r.counterexample)
            cases.append((f"spmcheck.prove.{model}.{r.variant}", r.property, outcome, msg, details))
        if cases:
            _suite(root, f"spmcheck prove {model}", cases)
    return _dump(root)


def check_junit(results: Sequence[Any]) -> str:
    root = ET.Element("testsuites", name="spmcheck check")
    cases = []
    for r in results:
        v = r.verdict.value
        outcome = "pass" if v == "accepted" else ("failure" if v in ("violated", "diverged") else "error")
        msg = v + (f" {r.prop}" if r.prop else "") + (f" at line {r.line}" if r.line else "")
        details = f"{r.file}:{r.line}:{r.col}: [{r.code}] {r.message}" if v != "accepted" else f"{r.events} events"
        if r.findings:
            details += "\n" + "\n".join(f"{r.file}:{f.line}: finding {f.prop}: {f.message}" for f in r.findings)
        cases.append(("spmcheck.check", r.file, outcome, msg, details))
    _suite(root, "spmcheck check", cases)
    return _dump(root)
