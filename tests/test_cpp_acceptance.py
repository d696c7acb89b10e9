"""Issue 11's acceptance run: C++ runs of `final` (cpp/, the code's semantics) are accepted at 2, 4
and 8 agents with 4 to 64 threads, each of at least EVENTS events, over SEEDS seeds -- every one.

Each configuration is its own test (so `pytest -n` spreads them over the cores), 20 seeds each:
120 runs of about 100 k events, about 12 M events replayed. What a run costs (measured,
`python bench/cpp_rates.py --acceptance`): recording about 0.2 s of CPU, mostly the
kernel's share of the pauses' sleeps; the compiled replay about 0.3 s. So the runs are pipelined:
IN_FLIGHT recorders run while this process replays the runs that have finished (in seed order),
and the replay's compiled engine (checker/owfast.py `program`, cached per process) is built once
for all of them. An accepted log is deleted once checked (120 logs are about 600 MB); a rejected
one stays in tmp_path for the failure message.

Runs are written as format v2 (opaque thread ids, no sizes, the format for real runs); v1 runs of
the C++ implementation are accepted in tests/test_cpp_semantics.py. `spmcheck-impl --events N`
keeps every thread calling until the trace holds N events, so a run is as large as asked, not a
guess scaled up.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections import deque
from pathlib import Path
from typing import Iterator

import pytest

from spmcheck.checker import cpp_build
from spmcheck.checker.replay import check_path

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("g++") is None or shutil.which("make") is None,
                                 reason="g++/make not installed (.ci/run installs them)")]

EVENTS = 100_000  # at least this many events per run
SEEDS = 20  # per configuration, the issue's count
IN_FLIGHT = 4  # recorders running at once (a run mostly sleeps in its pauses)
# (agents, updaters, lookups): 2, 4 and 8 agents, each with 4 and with 64 threads (64 as a real
# process has them: a few tool threads, many queue threads)
CONFIGS = ((2, 2, 2), (2, 8, 56), (4, 2, 2), (4, 8, 56), (8, 2, 2), (8, 8, 56))


def seeds_of(agents: int, upd: int, look: int) -> list[int]:
    """SEEDS seeds, distinct across configurations."""
    return [agents * 1000 + (upd + look) * 10 + i for i in range(SEEDS)]


@pytest.fixture(scope="session")  # cached build: shared, groups no tests (conftest.py)
def exe() -> Path:
    os.environ.setdefault("SPMCHECK_CPP_SRC", str(ROOT / "cpp"))
    return cpp_build.binary()


def recorded(exe: Path, tmp: Path, seeds: list[int], agents: int, upd: int, look: int,
             extra: tuple[str, ...] = ()) -> Iterator[tuple[int, Path, int]]:
    """Format-v2 runs of `final`, one per seed, of at least EVENTS events each, yielded in seed
    order as (seed, log, events the recorder reports), with up to IN_FLIGHT recorders running
    while the caller checks the ones yielded (`final` must be accepted under any interleaving, so
    runs sharing the cores with each other and with the checker is one more schedule)."""
    def start(seed: int) -> tuple[int, Path, subprocess.Popen[str]]:
        out = tmp / f"final-{seed}.log"
        cmd = [str(exe), "--model", "core", "--variant", "final", "--seed", str(seed), "--format", "2",
               "--agents", str(agents), "--updaters", str(upd), "--lookups", str(look),
               "--events", str(EVENTS), *extra, "-o", str(out)]
        return seed, out, subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)

    todo = deque(seeds)
    running: deque[tuple[int, Path, subprocess.Popen[str]]] = deque()
    try:
        while todo or running:
            while todo and len(running) < IN_FLIGHT:
                running.append(start(todo.popleft()))
            seed, out, p = running.popleft()
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-2000:]
            yield seed, out, int(err.split("spmcheck-impl: ")[-1].split()[0])
    finally:
        for _, _, p in running:  # a failed assertion in the caller: no recorder outlives the test
            p.kill()
            p.wait()


def test_configurations_cover_the_issue() -> None:
    for agents in (2, 4, 8):
        assert {u + lk for a, u, lk in CONFIGS if a == agents} >= {4, 64}
    assert SEEDS >= 20


@pytest.mark.parametrize("agents,upd,look", CONFIGS)
def test_final_cpp_runs_are_accepted(exe: Path, tmp_path: Path, agents: int, upd: int, look: int) -> None:
    bad, few, checked = [], [], 0
    for seed, out, wrote in recorded(exe, tmp_path, seeds_of(agents, upd, look), agents, upd, look):
        with out.open() as f:
            head = f.readline()
        assert head.startswith("spmcheck-trace v2") and "agents=" not in head, head
        r = check_path(str(out))
        checked += 1
        if r.verdict.value != "accepted":
            bad.append((seed, r.verdict.value, r.code, r.message, str(out)))
            continue
        if r.events < EVENTS:
            few.append((seed, wrote, r.events))
        out.unlink()
    assert checked == SEEDS
    assert not bad, bad
    assert not few, few
