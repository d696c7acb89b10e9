"""Render FileResults: text for people, JSON for tools. No checking logic here."""
from __future__ import annotations

import json
from typing import Iterable

from .results import FileResult, Verdict


def text_lines(r: FileResult) -> list[str]:
    return _verdict_lines(r) + _finding_lines(r)


def _finding_lines(r: FileResult) -> list[str]:
    out = [f"{r.file}:{f.line}: finding {f.prop}: {_one_line(f.message)}" for f in r.findings]
    if r.more_findings:
        out.append(f"{r.file}: and {r.more_findings} more findings")
    return out


def _verdict_lines(r: FileResult) -> list[str]:
    head = f"{r.file}: {r.verdict.value}"
    if r.verdict is Verdict.ACCEPTED:
        return [f"{head} ({r.events} events)" + (f", {len(r.findings) + r.more_findings} findings" if r.findings else "")
                + (f"; note: {r.note}" if r.note else "")]
    if r.verdict is Verdict.VIOLATED:
        head += f" {r.prop} at line {r.line}"
    elif r.line:
        head += f" at line {r.line}"
    out = [head]
    if r.problems:
        out += [f"{r.file}:{p.line}:{p.col}: [{p.code}] {p.message}" for p in r.problems]
        if r.more_problems:
            out.append(f"{r.file}: and {r.more_problems} more bad lines")
        if r.partial:
            out.append(f"{r.file}: note: {r.partial}")
    elif r.line == 0:  # nothing of the file was read (unreadable) or no line is to blame (internal error)
        out.append(f"{r.file}: [{r.code}] {_one_line(r.message)}")
    else:
        out.append(f"{r.file}:{r.line}:{r.col}: [{r.code}] {_one_line(r.message)}")
    for e in r.evidence:
        why = f" ({e.why})" if e.why else ""
        out.append(f"  {r.file}:{e.line}: {_one_line(e.text)}{why}")
    return out


def _one_line(s: str) -> str:
    # trace text is echoed back; keep one finding per line whatever the input held
    return s.replace("\n", "\\n").replace("\r", "\\r")


def to_dict(r: FileResult) -> dict[str, object]:
    return {
        "file": r.file,
        "verdict": r.verdict.value,
        "line": r.line,
        "col": r.col,
        "property": r.prop or None,
        "code": r.code or None,
        "message": r.message or None,
        "evidence": [{"line": e.line, "text": e.text, "why": e.why} for e in r.evidence],
        "events": r.events,
        "problems": [{"code": p.code, "line": p.line, "col": p.col, "message": p.message} for p in r.problems],
        "more_problems": r.more_problems,
        "partial": r.partial or None,
        "findings": [{"property": f.prop, "line": f.line, "message": f.message} for f in r.findings],
        "more_findings": r.more_findings,
        "note": r.note or None,
    }


def to_json(results: Iterable[FileResult]) -> str:
    return json.dumps({"files": [to_dict(r) for r in results]}, indent=2) + "\n"
