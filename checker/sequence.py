"""The sequence-number rule of every trace format (traces/FORMAT.md), in one place.

Numbers start at 0 or 1 and increase by exactly 1: a repeated number is TRC011, a decreasing one
TRC012 (both bad lines), a jump is a gap (the state after it is unknown: the verdict becomes
inconclusive, TRC013, unless something worse was found before it).
"""
from __future__ import annotations

from dataclasses import dataclass


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
