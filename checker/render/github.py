"""GitHub Actions workflow commands (`--format github`): `::error file=F,line=L::message` lines
that the runner turns into annotations on the PR diff."""
from __future__ import annotations

from typing import Any, Sequence

from spmcheck.spec.names import label

from .locations import pair_location
from .records import ProveRun


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, file: str = "", line: int = 0, col: int = 0, title: str = "") -> str:
    props = [f"file={_prop(file)}"] if file else []
    if file and line >= 1:
        props.append(f"line={line}")
        if col >= 1:
            props.append(f"col={col}")
    if title:
        props.append(f"title={_prop(title)}")
    return f"::{level} {','.join(props)}::{_data(message)}" if props else f"::{level}::{_data(message)}"


def prove_annotations(run: ProveRun) -> list[str]:
    """An error per verdict not as expected and per unreachable witness, a warning per unknown,
    a notice per finding; verdicts as expected need no annotation."""
    out = []
    for p in run.pairs:
        r = p.result
        path, line = pair_location(p)
        title = f"spmcheck {p.model} {r.variant} / {label(r.property)}"
        if r.verdict == "unknown":
            out.append(annotation("warning", f"{r.property}: unknown, expected {r.expected}: {r.reason}", path, line,
                                  title=title))
        elif not r.matches:
            out.append(annotation("error", f"{r.property}: {r.verdict}, expected {r.expected}: {r.reason}", path, line,
                                  title=title))
        elif p.finding:
            out.append(annotation("notice", f"finding {r.property}: {r.source}", path, line, title=title))
        for w in r.witnesses:
            if w.verdict == "unreachable":
                out.append(annotation("error", f"non-vacuity witness {w.name} unreachable: {w.summary}", path, line,
                                      title=title))
    return list(dict.fromkeys(out))


def check_annotations(results: Sequence[Any]) -> list[str]:
    out = []
    for r in results:
        v = r.verdict.value
        if v != "accepted":
            level = "warning" if v == "inconclusive" else "error"
            what = f"{v}" + (f" {r.prop}" if r.prop else "") + f": [{r.code}] {r.message}"
            out.append(annotation(level, what, r.file, r.line, r.col, title=f"spmcheck check: {v}"))
        seen: dict[str, int] = {}
        for f in r.findings:
            seen[f.prop] = seen.get(f.prop, 0) + 1
        for prop, n in seen.items():
            f = next(x for x in r.findings if x.prop == prop)
            out.append(annotation("notice", f"finding {prop} ({n}x): {f.message}", r.file, f.line,
                                  title="spmcheck finding"))
    return out
