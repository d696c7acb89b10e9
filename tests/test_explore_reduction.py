"""The dead-variable reduction of the breadth-first search (spec.explore_compile.Liveness): the
same verdicts and the same shortest lengths as the unreduced search, paths that replay, and (on
whole small state spaces) exactly the unreduced reachable states read through the
representative, each at the same distance from Init. Not timed."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import pytest

from spmcheck.spec.explore import bfs
from spmcheck.spec.explore_compile import Compiled
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import LPROPERTIES, scenario
from spmcheck.spec.lifecycle.prove import bfs_rungs
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Model
from spmcheck.spec.properties import PROPERTIES
from spmcheck.spec.prove import _violates, bfs_violation, execute
from spmcheck.spec.vocabulary import Config


def _lc(variant: str, prop: str, a: int, c: int, t: int, **switches: object) -> LifecycleModel:
    cfg = replace(scenario(LConfig(), prop), agents=a, contexts=c, tools=t, dispatches=1, **switches)
    return LifecycleModel(cfg, variant)


CASES = [  # (model, property): a state target and step targets, found and not found
    (lambda: _lc("pr-758072b", "refcount-balanced", 1, 1, 2), LPROPERTIES, "refcount-balanced"),
    (lambda: _lc("pr-758072b", "refcount-balanced", 1, 1, 1), LPROPERTIES, "refcount-balanced"),
    (lambda: _lc("exit-over-active", "in-flight-completion-delivered", 1, 1, 1), LPROPERTIES,
     "in-flight-completion-delivered"),
    (lambda: _lc("unconditional-stop-disable", "no-unserialized-dispatch-while-enabled", 1, 1, 2), LPROPERTIES,
     "no-unserialized-dispatch-while-enabled"),
    (lambda: _lc("final", "stop-returns-after-delivery", 1, 1, 1), LPROPERTIES, "stop-returns-after-delivery"),
    (lambda: _lc("pr-758072b", "spm-contexts-disjoint", 1, 2, 2), LPROPERTIES, "spm-contexts-disjoint"),
    (lambda: Model(Config(1, 1, 1), "stale-lookup"), PROPERTIES, "creation-consistent"),
    (lambda: Model(Config(1, 2, 1), "global-flag"), PROPERTIES, "creation-consistent"),
    (lambda: Model(Config(1, 1, 1), "reversed-lookup-order"), PROPERTIES, "lock-order-acyclic"),
]


@pytest.mark.parametrize("n", range(len(CASES)))
def test_reduced_search_keeps_verdict_and_shortest_length(n: int) -> None:
    make, reg, pname = CASES[n]
    m = make()
    prop = reg[pname]
    tg = bfs_violation(prop)(m)
    full, red = bfs(m, **tg, reduce=False), bfs(m, **tg, reduce=True)
    assert full.status == red.status and full.status in ("found", "none")
    assert len(full.path) == len(red.path)
    assert red.states <= full.states
    if red.status == "found":
        states = execute(m, m.init_state(), list(red.path))
        assert states is not None and _violates(m, prop, states, list(red.path))


def _levels(succ: Callable[[bytes], list[bytes]], start: bytes) -> dict[bytes, int]:
    """Every reachable state with its distance from `start`."""
    dist, frontier, d = {start: 0}, [start], 0
    while frontier:
        d += 1
        nxt = []
        for t in frontier:
            for t2 in succ(t):
                if t2 not in dist:
                    dist[t2] = d
                    nxt.append(t2)
        frontier = nxt
    return dist


# the two-context space without drain timeouts and with two registry ids: 0.5 M unreduced states
# (2.2 M with both, 11 s of the suite), still two contexts whose slots the reduction must not merge
SMALL2 = {"timeouts": False, "max_ids": 2}


@pytest.mark.parametrize("variant,prop,size,switches", [("final", "refcount-balanced", (1, 1, 1), {}),
                                                        ("final", "no-unserialized-dispatch-while-enabled", (1, 1, 1), {}),
                                                        ("final", "spm-contexts-disjoint", (1, 2, 1), SMALL2)])
def test_representatives_are_the_unreduced_states_at_the_same_distance(variant: str, prop: str,
                                                                       size: tuple[int, int, int],
                                                                       switches: dict[str, object]) -> None:
    """On a whole state space (the property holds there): the states the reduced search visits are
    exactly the representatives of the unreduced reachable states, each at the smallest distance of
    the states it represents — the bisimulation the reduction rests on, observed."""
    m = _lc(variant, prop, *size, **switches)
    comp = Compiled(m)
    tg = bfs_violation(LPROPERTIES[prop])(m)
    step = ({a.index: (lambda b, s, a=a: tg["bad_step"][1](b, s, a)) for a in m.actions if tg["bad_step"][0](a)}
            if "bad_step" in tg else {})
    level = comp.level(tg.get("bad_state"), step, reduce=True)
    live = comp.live
    assert level is not None and live is not None
    start = comp.as_tuple(m.init_state())
    assert live.canon(start) == start
    full = _levels(lambda t: [t2 for _, t2 in comp.successors(t)], start)
    want: dict[bytes, int] = {}
    for t, d in full.items():
        k = live.canon(t)
        want[k] = min(d, want.get(k, d))
    got, frontier, d = {start: 0}, [start], 0
    parent: dict[bytes, tuple[bytes, int] | None] = {start: None}
    while frontier:
        d += 1
        nxt: list[bytes] = []
        assert level(frontier, parent, nxt.append, 10**9, lambda: 0.0, 1.0) is None  # never violated here
        for t in nxt:
            got[t] = d
        frontier = nxt
    assert got == want
    assert len(got) < len(full)


def test_analysis_names_no_step_and_forgets_stale_tool_locals() -> None:
    """Read off the texts: a tool's `cx`/`sa` are dead while it is idle (they are rewritten by every
    operation that reads them), ghost counters no target reads are dead everywhere."""
    m = _lc("set-agents-race", "spm-contexts-disjoint", 2, 2, 2)
    comp = Compiled(m)
    tg = bfs_violation(LPROPERTIES["spm-contexts-disjoint"])(m)
    comp.level(tg["bad_state"], {}, reduce=True)
    dead = comp.live.dead()  # type: ignore[union-attr]
    assert dead["g.timeout"] == "everywhere" and dead["ids"] == "everywhere"
    assert dead["cx.t0"].startswith("at pc.t0 in [0,") and dead["sa.t1.0"].startswith("at pc.t1 in [0,")


def test_bfs_rungs_start_smallest_and_end_at_the_requested_size() -> None:
    cfg = LConfig()
    rungs = bfs_rungs(cfg)
    assert (rungs[0].agents, rungs[0].contexts, rungs[0].tools, rungs[0].dispatches) == (1, 1, 1, 1)
    assert rungs[-1] == cfg and len(rungs) == len(set(rungs))
    assert all(r.dispatches == 1 for r in rungs[:8])
