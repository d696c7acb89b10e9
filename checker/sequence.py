"""The sequence-number rule of every trace format (traces/FORMAT.md), in one place.

Numbers start at 0 or 1 and increase by exactly 1: a repeated number is TRC011, a decreasing one
TRC012 (both bad lines), a jump is a gap (the state after it is unknown: the verdict becomes
inconclusive, TRC013, unless something worse was found before it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator


@dataclass
class Sequence:
    last: int = -1  # the last number read (-1: none yet)
    expect: int = -1  # the next number expected (-1: before the first)

    def step(self, seq: int) -> tuple[str, str]:
        """Take one number: ('', '') if it follows, ('TRC011'|'TRC012', message) for a bad line,
        ('gap', message) for a jump (the number is taken)."""
        if self.last >= 0 and seq == self.last:
            return "TRC011", f"repeated sequence number {seq}"
        if self.last >= 0 and seq < self.last:
            msg = f"sequence number {seq} after {self.last}"
            self.last = seq
            return "TRC012", msg
        if self.expect == -1 and seq in (0, 1):
            self.expect = seq
        out = ("", "")
        if seq != self.expect:
            first = 1 if self.expect == -1 else self.expect
            out = ("gap", f"gap in sequence numbers: {first}..{seq - 1} missing before this line")
        self.last, self.expect = seq, seq + 1
        return out


# ---- bounded reordering (`spmcheck check --reorder-window N`) ----------------------------------
# A writer with per-thread buffers that flushes each buffer on its own (no merge) writes every
# event near, but not at, its place in sequence order. With a window of N the checker holds up to
# N sequenced lines and releases them in sequence order: a line is released when it is the next
# number, or, when N+1 are held, the lowest one is (the numbers it skips are missing so far: a gap
# for the replay, TRC013, unless they turn up later). So every event at most N lines from its place
# is restored. An event whose number was released past (it came more than N lines late) is TRC021,
# a number that was already released is TRC011. Lines without a sequence number (the header,
# comments, blank and bad lines) pass at once; `run_end` is sequenced like an event.

Line = tuple  # (line number, text | None, LineError | None, has newline), as parse.read_lines yields

REORDER_CODE = "TRC021"


def _seq_of(text: str | None) -> int | None:
    if text is None:
        return None
    head = text.split(None, 1)[0] if text.strip() else ""
    return int(head) if head.isdigit() and len(head) <= 20 else None


def reordered(lines: "Iterator[Line]", window: int) -> "Iterator[Line]":
    """`lines` with the sequenced ones restored to sequence order within `window` (0: unchanged)."""
    if window <= 0:
        yield from lines
        return
    import heapq

    from .parse import LineError

    held: list[tuple[int, int, Line]] = []  # (seq, arrival, line)
    expect: int | None = None  # the next number to release (None: the first not yet known)
    skipped: list[tuple[int, int]] = []  # numbers released past, as closed intervals
    arrival = 0

    def release() -> Line:
        nonlocal expect
        seq, _, item = heapq.heappop(held)
        if expect is None and seq > 0:
            skipped.append((0, seq - 1))  # the first number is 0 or 1: anything below seq is late
        elif expect is not None and seq > expect:
            skipped.append((expect, seq - 1))
        expect = seq + 1 if expect is None or seq >= expect else expect
        return item

    for item in lines:
        seq = _seq_of(item[1]) if item[2] is None else None
        if seq is None:
            yield item
            continue
        if expect is not None and seq < expect:
            n = item[0]
            if any(lo <= seq <= hi for lo, hi in skipped):
                msg = (f"sequence number {seq} comes more than the reorder window ({window} lines) after its "
                       f"place: number {expect - 1} was already checked")
                yield n, None, LineError(REORDER_CODE, n, 1, msg), item[3]
            else:
                yield n, None, LineError("TRC011", n, 1, f"repeated sequence number {seq}"), item[3]
            continue
        arrival += 1
        heapq.heappush(held, (seq, arrival, item))
        if expect is None and held[0][0] == 0:
            expect = 0
        while held and expect is not None and held[0][0] == expect:
            yield release()
        if len(held) > window:
            yield release()
            while held and held[0][0] == expect:
                yield release()
    while held:
        yield release()
