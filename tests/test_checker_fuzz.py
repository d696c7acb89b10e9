"""Mutated traces: no exception escapes, the verdict is one of the five, exit code matches."""
from __future__ import annotations

import io
import random

from spmcheck.checker.replay import check_stream
from spmcheck.checker.results import EXIT_CODE, Verdict
from spmcheck.checker.simulate import trace_text
from spmcheck.spec.vocabulary import Config

SOURCES = (("final", 1), ("stale-lookup", 2), ("global-flag", 3), ("reversed-lookup-order", 4))


def _mutate(rng: random.Random, data: bytes) -> bytes:
    lines = data.split(b"\n")
    op = rng.randrange(7)
    if op == 0:
        return data[: rng.randrange(len(data))]
    if op == 1:
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if op == 2 and len(lines) > 2:
        i = rng.randrange(1, len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif op == 3 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif op == 5 and len(lines) > 1:
        # a number of 5000 digits (past Python's int() limit of 4300) in the header or an event
        import re

        i = rng.randrange(len(lines))
        lines[i] = re.sub(rb"[0-9]+", b"9" * 5000, lines[i], count=1)
    elif op == 4:
        lines.insert(rng.randrange(len(lines)), bytes(rng.randrange(256) for _ in range(rng.randrange(30))))
    else:
        i = rng.randrange(len(lines))
        lines[i] = lines[i].replace(b"=1", b"=0") if rng.random() < 0.5 else lines[i].replace(b"=0", b"=1")
    return b"\n".join(lines)


def test_mutated_traces_never_crash() -> None:
    base = [trace_text(v, Config(2, 2, 2), 120, s).encode() for v, s in SOURCES]  # here, not at collection
    rng = random.Random(11)
    seen = set()
    for k in range(3000):
        data = rng.choice(base)
        for _ in range(rng.randrange(1, 3)):
            data = _mutate(rng, data)
        r = check_stream(io.BytesIO(data), f"m{k}")
        assert r.verdict in set(Verdict)
        assert r.exit_code == EXIT_CODE[r.verdict]
        seen.add(r.verdict)
    assert len(seen) == 5
