"""The floors every checker benchmark reads the same file with (issue 14: "`for line in f`,
`str.split` to tuples"), defined once so that bench_check.py, bench_jobs.py and openworld.py
divide by the same thing.

`split_to_tuples` is the parse issue 14 measured its 886 k lines/s floor with: each line decoded
and split, and an event line turned into the tuple a reader needs (sequence number as an int,
thread, kind, and every key=value as a pair) -- no model, no checks. `read_lines` only iterates.
"""
from __future__ import annotations

from pathlib import Path


def read_lines(path: str | Path) -> int:
    n = 0
    with open(path, "rb") as f:
        for _ in f:
            n += 1
    return n


def split_to_tuples(path: str | Path) -> int:
    """Event lines parsed to (seq, thread, kind, ((key, value), ...)); returns how many."""
    n = 0
    with open(path, "rb") as f:
        for raw in f:
            p = raw.decode().split()
            if p and p[0][0].isdigit():
                _ = (int(p[0]), *p[1:3], tuple(tuple(x.split("=", 1)) for x in p[3:]))
                n += 1
    return n
