"""Breadth-first search on the concrete reading: shortest paths that replay."""
from __future__ import annotations

import pytest

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.bmc import search, violation_target
from spmcheck.spec.explore import Explorer, bfs, reachable_count
from spmcheck.spec.model import Model, apply
from spmcheck.spec.properties import PROPERTIES
from spmcheck.spec.prove import _violates, bfs_violation, execute
from spmcheck.spec.vocabulary import Config
from spmcheck.spec.z3_encoding import Transition

SMALL = Config(1, 1, 1)


def _naive_reachable(m: Model) -> int:
    """Every action's guard evaluated on every state: no buckets, no memo."""
    start = m.init_state()
    key = lambda s: tuple(s[n] for n in m.var_names)  # noqa: E731
    seen, todo = {key(start)}, [start]
    while todo:
        s = todo.pop()
        for a in m.actions:
            if a.enabled(CONCRETE, s):
                n = apply(m, CONCRETE, s, a)
                if key(n) not in seen:
                    seen.add(key(n))
                    todo.append(n)
    return len(seen)


@pytest.mark.parametrize("variant", ["final", "stale-lookup", "global-flag"])
def test_indexed_memoised_successors_reach_the_same_states(variant: str) -> None:
    m = Model(SMALL, variant)
    got = reachable_count(m)
    assert got.status == "none" and got.states == _naive_reachable(m)


@pytest.mark.parametrize("variant,prop", [("stale-lookup", "creation-consistent"),
                                          ("stale-lookup", "serializer-mirrors-refcount"),
                                          ("reversed-lookup-order", "lock-order-acyclic")])
def test_bfs_path_is_shortest_by_bmc_and_replays(variant: str, prop: str) -> None:
    """BFS's length equals the depth at which iterative-deepening BMC (the symbolic reading)
    first finds a violation from Init, and the path breaks the property on the concrete reading."""
    m = Model(SMALL, variant)
    p = PROPERTIES[prop]
    out = bfs(m, **bfs_violation(p)(m))
    assert out.status == "found"
    states = execute(m, m.init_state(), list(out.path))
    assert states is not None and _violates(m, p, states, list(out.path))
    bad_at, needs_step = violation_target(m, p)
    got = search(m, bad_at, needs_step, len(out.path), 60, Transition(m))
    assert got.status == "found" and got.depth == len(out.path)


def test_explorer_buckets_every_core_action_by_its_program_counter() -> None:
    ex = Explorer(Model(Config(2, 2, 2), "final"))
    assert not ex.free
    assert {ex.names[i] for i in ex.buckets} == {"pc.u0", "pc.u1", "pc.l0", "pc.l1"}
