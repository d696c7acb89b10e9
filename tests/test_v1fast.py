"""Differential test: a core v1 log checked through the compiled engine (checker/v1fast.py, the
default) against the v1 replay alone (`--engine interp`, the reference).

Both check the same bytes and must return the same FileResult, field for field. The compiled run
may only ever say `accepted`; on anything else the v1 replay checks the file, so what this test
guards is that the compiled run never accepts a file v1 does not accept in exactly the same way
(events, lock edges, note), and that it does accept the clean runs (else it would be no faster).
Cases: the corpus, random walks of every core variant against their own model and against
`final`, mutants of the final design, and damage that the open world would take but v1 does not
(an undeclared thread or agent, a thread in the other role, a value spelled `01`, a holder named
both ways, odd blanks). Findings, which the compiled run notes itself: tests/test_v1fast_findings.py.
"""
from __future__ import annotations

import dataclasses
import io
import random
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from spmcheck.checker import openworld_check, v1fast
from spmcheck.checker.replay import check_stream
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.checker.simulate import trace_text
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "traces"
CORE_V1 = sorted(p.name for p in TRACES.glob("*.log") if not p.name.startswith("lc-")
                 and p.open().readline().startswith("spmcheck-trace v1"))


@contextmanager
def engine(name: str) -> Iterator[None]:
    old = openworld_check.ENGINE
    openworld_check.ENGINE = name
    try:
        yield
    finally:
        openworld_check.ENGINE = old


def both(data: bytes) -> tuple[FileResult, bool]:
    """The v1 replay's result, after checking the default's is the same; and whether the
    compiled run gave it (True) or handed the file to the v1 replay."""
    with engine("interp"):
        ref = check_stream(io.BytesIO(data), "t.log")
    before = v1fast.ACCEPTED
    with engine("compiled"):
        got = check_stream(io.BytesIO(data), "t.log")
    assert got == ref, (data[:1500], ref, got)
    fast = v1fast.ACCEPTED > before
    assert not fast or ref.verdict is Verdict.ACCEPTED
    return ref, fast


@pytest.mark.parametrize("name", CORE_V1)
def test_corpus(name: str) -> None:
    ref, fast = both((TRACES / name).read_bytes())
    assert fast == (ref.verdict is Verdict.ACCEPTED)  # findings too: the compiled run notes them


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_random_walks_of_every_core_variant(variant: str) -> None:
    for seed, cfg in enumerate([Config(2, 2, 2), Config(3, 2, 3)][: 2 if variant == "final" else 1]):
        text = trace_text(variant, cfg, 300, seed)
        both(text.encode())
        both(text.replace(f"variant={variant}", "variant=final", 1).encode())


def test_clean_walks_take_the_compiled_run() -> None:
    for seed, cfg in enumerate([Config(2, 2, 2), Config(2, 4, 2)]):
        ref, fast = both(trace_text("final", cfg, 600, seed).encode())
        assert ref.verdict is Verdict.ACCEPTED and fast, ref


@pytest.mark.parametrize("mutation", ["drop-lock:lookup:acq_refcount:lock_acquire:0",
                                      "drop-update:updater:acq_map:lock_acquire:0",
                                      "skip-step:lookup:find:serializer_lookup:0",
                                      "drop-guard:updater:idle:update_begin:0"])
def test_mutants_against_final(mutation: str) -> None:
    v = dataclasses.replace(VARIANTS["final"], name=f"final~{mutation}", mutation=mutation, known_bad=True)
    VARIANTS[v.name] = v
    try:
        for seed in range(2):
            text = trace_text(v.name, Config(2, 2, 3), 250, seed)
            both(text.replace(f"variant={v.name}", "variant=final", 1).encode())
    finally:
        del VARIANTS[v.name]


def _damage(lines: list[str], rng: random.Random) -> str:
    """A change the open world reads as a valid run (or nearly) and v1 need not."""
    out = list(lines)
    i = rng.randrange(1, len(out))
    w = out[i].split(" ")
    how = rng.randrange(9)
    if how == 0:
        w[1] = rng.choice(["u7", "l5", "x1"])  # an undeclared thread
    elif how == 1:  # a thread of the other role, from its first event on
        other = {"u": "l", "l": "u"}[w[1][0]] + w[1][1:]
        out = [ln.replace(f" {w[1]} ", f" {other} ") for ln in out]
        return "\n".join(out) + "\n"
    elif how == 2:  # an agent beyond the declared ones, in all that thread's later events
        out[i:] = [ln.replace("agent=1", "agent=5") for ln in out[i:]]
        return "\n".join(out) + "\n"
    elif how == 3:
        out[i] = out[i].replace("=0", "=00").replace("=1", "=01")  # values as v1 does not write them
        return "\n".join(out) + "\n"
    elif how == 4:  # an explicit holder: its own (c0 for u0), another thread's, or none declared
        if len(w) > 2 and w[2] == "update_begin" and not any(x.startswith("holder=") for x in w):
            w.append("holder=" + rng.choice(["c0", "c1", "c2", "c9"]))
    elif how == 5:
        out[i] = out[i].replace(" ", "  ", 1)
    elif how == 6:
        out.insert(i, rng.choice(["# note", "", "  # indented note"]))
        return "\n".join(out) + "\n"
    elif how == 7:
        return "\n".join(out[:i]) + "\n" + out[i]  # no newline at the end
    elif how == 8:
        return "\n".join(out[:i]) + "\n" + f"{i} run_end\n" + "\n".join(out[i:]) + "\n"
    out[i] = " ".join(w)
    return "\n".join(out) + "\n"


def test_damaged_walks() -> None:
    rng = random.Random(5)
    base = [trace_text("final", Config(2, 2, 2), 300, s).splitlines() for s in range(3)]
    verdicts = set()
    fast = 0
    for k in range(120):
        ref, f = both(_damage(base[k % 3], rng).encode())
        verdicts.add(ref.verdict)
        fast += f
    assert {Verdict.ACCEPTED, Verdict.DIVERGED, Verdict.MALFORMED} <= verdicts, verdicts
    assert fast  # some damage (a comment, a final line without newline) keeps the compiled run


def test_holders_named_both_ways() -> None:
    """u0 acting for its implied holder and u1 naming the same holder (c0): one element in v1."""
    h = "spmcheck-trace v1 variant=final agents=2 updaters=2 lookups=1"
    text = trace_text("final", Config(2, 2, 1), 600, 3)
    lines = text.splitlines()
    for who in ("c0", "c1"):
        mixed = [ln if " update_begin " not in ln or "holder=" not in ln else
                 " ".join(x for x in ln.split(" ") if not x.startswith("holder=")) + f" holder={who}"
                 for ln in lines]
        both(("\n".join([h] + mixed[1:]) + "\n").encode())
        bare = [" ".join(x for x in ln.split(" ") if not x.startswith("holder=")) for ln in lines]
        both(("\n".join([h] + bare[1:]) + "\n").encode())
