"""`spmcheck check` on a data-path log (v2, `model=datapath`): the open-world verdict, then the
log replayed on the finite reading of its header's revision and scope (spec.datapath.tracecheck)
for what the open world cannot say:

* a header `property=<claim>` (every `spmcheck cex` export has one) names the claim the log is
  evidence for: when the open-world replay stops at another claim's break first, the log is still
  judged for the named claim, which is reported at its own line, the earlier breaks named with it;
* progress at the end of the log (CHK104): a transition barrier that can never clear, a drain
  that can never end — no continuation of the run within the scope reaches it.

The lines are kept as the engines read them (`Tee`), so both engines (compiled, interpreter) are
used unchanged; a log longer than MAX_KEPT bytes is judged by the open world alone (noted).
"""
from __future__ import annotations

import dataclasses
from typing import Any, BinaryIO, Iterator

from .results import Evidence, FileResult, Verdict

MAX_KEPT = 64 << 20  # bytes of a data-path log kept for the finite replay
PROGRESS_CODE = "CHK104"


class _Stream:
    """A binary stream that keeps what is read from it (the compiled engine reads blocks)."""

    def __init__(self, inner: BinaryIO, tee: "Tee") -> None:
        self._inner, self._tee = inner, tee

    def read(self, n: int = -1) -> bytes:
        b = self._inner.read(n)
        self._tee.keep_bytes(b)
        return b

    def readline(self, n: int = -1) -> bytes:
        b = self._inner.readline(n)
        self._tee.keep_bytes(b)
        return b


class Tee:
    """What the engines read after the header: read_lines' tuples (interpreter) or raw blocks
    (compiled engine), whichever is used."""

    def __init__(self, lines: Iterator[tuple[int, str | None, Any, bool]], stream: BinaryIO | None,
                 n0: int) -> None:
        self._lines = lines
        self.stream: Any = _Stream(stream, self) if stream is not None else None
        self.n0 = n0
        self.items: list[tuple[int, str]] = []
        self.chunks: list[bytes] = []
        self.size = 0
        self.overflow = False

    def keep_bytes(self, b: bytes) -> None:
        if not self.overflow:
            self.size += len(b)
            self.overflow = self.size > MAX_KEPT
            self.chunks.append(b)

    def lines(self) -> Iterator[tuple[int, str | None, Any, bool]]:
        for item in self._lines:
            n, text = item[0], item[1]
            if text is not None and not self.overflow:
                self.size += len(text)
                self.overflow = self.size > MAX_KEPT
                self.items.append((n, text))
            yield item

    def texts(self) -> list[tuple[int, str]]:
        """(line number, text) of every line read after the header."""
        if self.chunks:
            data = b"".join(self.chunks).decode("utf-8", "replace")
            return [(self.n0 + 1 + i, t.rstrip("\r")) for i, t in enumerate(data.split("\n"))]
        return self.items


def _events(texts: list[tuple[int, str]]) -> list[Any]:
    from spmcheck.spec.datapath.tracecheck import TEvent

    from .openworld_check import parse_fast

    out = []
    for n, text in texts:
        t = text.strip()
        if not t or t.startswith("#"):
            continue
        ev = parse_fast(t)
        if ev is not None:
            out.append(TEvent(n, ev.thread, ev.kind, ev.keys))
    return out


def _note(r: FileResult, extra: str) -> FileResult:
    return dataclasses.replace(r, note="; ".join(x for x in (r.note, extra) if x))


def finish(header: Any, r: FileResult, tee: Tee) -> FileResult:
    """The data-path verdict of a log whose open-world verdict is `r`."""
    from spmcheck.spec.datapath.verdicts import PROGRESS, check_trace, trace_definition

    if r.verdict not in (Verdict.VIOLATED, Verdict.INCONCLUSIVE, Verdict.ACCEPTED):
        return r  # malformed or diverged: not a run of the definition
    if r.verdict is Verdict.INCONCLUSIVE and r.code not in ("CHK301", "CHK302"):
        return r  # a gap in the sequence numbers, or no events
    variant, scope = header.variant, header.meta.get("scope", "")
    focus = header.meta.get("property", "")
    claims = set(trace_definition(variant, scope).claims) | set(PROGRESS)
    if focus and focus not in claims:
        return _note(r, f"property={focus} in the header is not a claim of the data path")
    if r.verdict is Verdict.VIOLATED and r.prop == focus:
        return r
    first_stands = not focus and r.verdict is Verdict.VIOLATED and r.code != "CHK103"
    if tee.overflow:
        return _note(r, f"log longer than {MAX_KEPT >> 20} MiB: not replayed on the finite reading "
                        "(no progress check at its end)")
    texts = tee.texts()
    events = _events(texts)
    if not events:
        return r
    out = check_trace(variant, scope, events)
    if out.stop is not None:
        ln, why = out.stop
        return _note(r, f"the finite reading of scope {scope} cannot follow line {ln} ({why}): "
                        "no progress check at the end")
    if first_stands:  # the first break is the verdict; a progress claim failing at the end is noted
        ends = [b for b in out.breaks if b.kind == "progress"]
        return _note(r, "; ".join(f"at the end of the log ({PROGRESS_CODE}): {b.message}" for b in ends)) if ends else r
    if focus:
        target = next((b for b in out.breaks if b.claim == focus), None)
    else:
        target = next((b for b in out.breaks if b.kind == "progress"), None)
    if target is None:
        if out.unknown:
            return _note(r, out.unknown)
        if out.finished and r.code in ("CHK103", "CHK301"):
            # a stopped context ends at 'done', a queue with no writes left at 'open': the end of
            # the run at this scope, not threads stuck inside an operation
            r = FileResult(r.file, Verdict.ACCEPTED, r.events, 0, 1, "", "", "", (), (), 0, "", r.lock_edges,
                           note="; ".join(x for x in (r.note, "every thread ended what the scope lets it do "
                                                      "(contexts stopped, writes done, no packet queued)") if x))
        return _note(r, f"the header's property={focus} is not broken by this log") if focus else r
    earlier = [b for b in out.breaks if b.claim != target.claim and b.line < target.line]
    same = [b.claim for b in out.breaks if b.claim != target.claim and b.line == target.line]
    text_of = dict(texts)
    msg = target.message
    if earlier:
        msg += "; on the way: " + "; ".join(f"{b.claim} at line {b.line}" for b in earlier)
    if same:
        msg += f"; also broken at line {target.line}: {', '.join(same)}"
    if r.code == "CHK103":
        msg += "; no thread can move (deadlock)"
    evid = tuple(Evidence(b.line, text_of.get(b.line, ""), f"{b.claim} breaks here first") for b in earlier)
    evid += (Evidence(target.line, text_of.get(target.line, ""),
                      "the last event" if target.kind == "progress" else "this event"),)
    note = ""
    if r.verdict is Verdict.VIOLATED and r.line < target.line:
        note = (f"the open-world replay stopped at line {r.line} ({r.prop}); the rest was replayed on the "
                f"finite reading of scope {scope}")
    return FileResult(r.file, Verdict.VIOLATED, out.events, target.line, 1, target.claim,
                      PROGRESS_CODE if target.kind == "progress" else "CHK101", msg, evid, (), 0, "",
                      r.lock_edges, note="; ".join(x for x in (r.note, note) if x))
