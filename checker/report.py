"""Render FileResults: text for people, JSON for tools. No checking logic here."""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from .results import FileResult, Verdict


def text_lines(r: FileResult, verbose: bool = True, shown: set[str] | None = None) -> list[str]:
    """The verdict with its location and evidence, then the findings: every one with `verbose`,
    else one line per property (count, first line, first message) and no per-file note (the
    summary line counts the notes). `shown`: the findings an earlier file of the same run already
    showed; brief output does not repeat them (the file's own line still counts them)."""
    if not verbose and r.note:
        from dataclasses import replace

        r = replace(r, note="")
    return _verdict_lines(r) + (_finding_lines(r) if verbose else _finding_summary(r, shown))


def _finding_lines(r: FileResult) -> list[str]:
    out = [f"{r.file}:{f.line}: finding {f.prop}: {_one_line(f.message)}" for f in r.findings]
    if r.more_findings:
        out.append(f"{r.file}: and {r.more_findings} more findings")
    return out


def _finding_summary(r: FileResult, shown: set[str] | None = None) -> list[str]:
    if not r.findings:
        return []
    counts = Counter(f.prop for f in r.findings)
    first = {}
    for f in r.findings:
        first.setdefault(f.prop, f)
    out = []
    for prop, n in counts.items():
        if shown is not None:
            if prop in shown:
                continue
            shown.add(prop)
        f = first[prop]
        times = f" ({n} times, first here)" if n > 1 else ""
        head = f"{r.file}:{f.line}: finding {prop}{times}: "
        out.append(head + _short(_one_line(f.message), max(40, 120 - len(head))))  # one screen wide
    return out  # findings beyond the cap are counted on the verdict line


def _short(s: str, width: int = 110) -> str:
    return s if len(s) <= width else s[: width - 3] + "..."


def _verdict_lines(r: FileResult) -> list[str]:
    head = f"{r.file}: {r.verdict.value}"
    if r.verdict is Verdict.ACCEPTED:
        n = len(r.findings) + r.more_findings
        return [f"{head} ({r.events} events)" + (f", {n} finding{'s' if n != 1 else ''}" if n else "")
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
    if r.race is not None:
        out.append(f"{r.file}:{r.line}: race: {_one_line(r.race.summary)}")
    for e in r.evidence:
        why = f" ({e.why})" if e.why else ""
        out.append(f"  {r.file}:{e.line}: {_one_line(e.text)}{why}")
    if r.note:  # e.g. a data-path log: where the open-world replay stopped, progress at its end
        out.append(f"{r.file}: note: {_one_line(r.note)}")
    return out


def _one_line(s: str) -> str:
    # trace text is echoed back; keep one finding per line whatever the input held
    return s.replace("\n", "\\n").replace("\r", "\\r")


def to_dict(r: FileResult) -> dict[str, object]:
    return {
        "file": r.file,
        "verdict": r.verdict.value,
        "exit_code": r.exit_code,
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
        "race": None if r.race is None else {
            "kind": r.race.kind, "agent": r.race.agent, "summary": r.race.summary,
            "lines": [{"line": e.line, "text": e.text, "why": e.why} for e in r.race.lines]},
    }


def to_json(results: Iterable[FileResult]) -> str:
    """The `spmcheck check --json` envelope (checker/render/envelope.py) for these results."""
    from .render.envelope import dumps, envelope
    from .render.summary import check_summary
    from .results import combined_exit

    rs = list(results)
    return dumps(envelope("check", combined_exit([r.exit_code for r in rs]), check_summary(rs),
                          [to_dict(r) for r in rs], {}, check_counts(rs)))


def check_counts(results: list[FileResult]) -> dict[str, int]:
    c = Counter(r.verdict.value for r in results)
    out = {v.value: c.get(v.value, 0) for v in Verdict}
    out["files"] = len(results)
    out["findings"] = sum(len(r.findings) + r.more_findings for r in results)
    return out
