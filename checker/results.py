"""Typed results of checking one trace file; rendering lives in report.py."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from . import exitcodes


class Verdict(str, Enum):
    ACCEPTED = "accepted"
    VIOLATED = "violated"
    DIVERGED = "diverged"
    MALFORMED = "malformed"
    INCONCLUSIVE = "inconclusive"
    UNREADABLE = "unreadable"  # the path cannot be read at all (missing, directory, device, FIFO)
    ERROR = "error"  # a bug in the checker while checking this file (never a verdict on the trace)


# exit status per verdict (checker/exitcodes.py, documented in traces/FORMAT.md and the README)
EXIT_CODE = {Verdict.ACCEPTED: exitcodes.OK, Verdict.VIOLATED: exitcodes.VIOLATED,
             Verdict.DIVERGED: exitcodes.VIOLATED, Verdict.MALFORMED: exitcodes.USAGE,
             Verdict.INCONCLUSIVE: exitcodes.UNKNOWN, Verdict.UNREADABLE: exitcodes.IO_ERROR,
             Verdict.ERROR: exitcodes.INTERNAL}
# across files (and across a command's outcomes) the first code in this order that any of them has
# wins: a violation is never hidden by another file's internal error, unreadable path, malformed
# input or inconclusive replay; after it, the louder failure of spmcheck itself
PRECEDENCE = (exitcodes.VIOLATED, exitcodes.INTERNAL, exitcodes.IO_ERROR, exitcodes.USAGE, exitcodes.UNKNOWN,
              exitcodes.OK)


def combined_exit(codes: "list[int] | tuple[int, ...]") -> int:
    """One exit code for several outcomes: by PRECEDENCE (violated first), unlisted codes last."""
    present = set(codes)
    for c in PRECEDENCE:
        if c in present:
            return c
    return max(present, default=0)


@dataclass(frozen=True)
class Evidence:
    line: int
    text: str  # the event as rendered (or why the line matters)
    why: str = ""


@dataclass(frozen=True)
class Race:
    """The race behind a core P1/P2 violation, by its trace lines (checker/race_lines.py)."""

    kind: str  # "stale-read" (a lookup inserted/enabled from a stale count) | "late-apply" (crossed updates)
    #   | "global-switch" (G0: one process-wide switch, a stop disables under another holder)
    agent: str  # the agent, as the trace names it
    summary: str  # one sentence with the threads, line numbers and counts
    lines: tuple[Evidence, ...]  # the cited lines, in file order, each with its part in the race


@dataclass(frozen=True)
class Problem:
    """One reported finding: an input error or the replay's verdict reason."""

    code: str
    line: int
    col: int
    message: str


@dataclass(frozen=True)
class Finding:
    """A residual-risk property of the final design (spec.lifecycle.properties.FINDINGS) failed at
    `line`. Reported, but it fails the verdict only with `spmcheck check --findings-fail`."""

    prop: str  # JSON key "property"
    line: int
    message: str


@dataclass(frozen=True)
class FileResult:
    file: str
    verdict: Verdict
    events: int = 0
    line: int = 0
    col: int = 1
    prop: str = ""  # JSON key "property"
    code: str = ""
    message: str = ""
    evidence: tuple[Evidence, ...] = ()
    problems: tuple[Problem, ...] = ()  # every bad line, capped
    more_problems: int = 0  # bad lines beyond the cap
    partial: str = ""  # what the replay had established before the input went bad
    lock_edges: tuple[tuple[str, str, int], ...] = field(default=())  # (from, to, first line)
    findings: tuple[Finding, ...] = field(default=())  # capped; lifecycle traces only
    more_findings: int = 0  # findings beyond the cap
    note: str = ""  # a caveat on the verdict, e.g. an accepted v1 trace without its run_end marker
    race: Race | None = None  # core P1/P2 violations: the race's lines (checker/race_lines.py)

    @property
    def exit_code(self) -> int:
        return EXIT_CODE[self.verdict]
