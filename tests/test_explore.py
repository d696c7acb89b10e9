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


# ---- the compiled reading (spec.explore_compile) against the generic explorer ----------------

def _lc_small(variant: str, **kw: int):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.vocabulary import LConfig

    sizes = {"agents": 1, "contexts": 1, "tools": 1, "dispatches": 1, **kw}
    return LifecycleModel(replace(LConfig(), **sizes), variant)


def _first_states(ex: Explorer, n: int) -> list[tuple]:
    """The first n states breadth-first from Init, by the generic explorer."""
    t0 = ex.as_tuple(ex.model.init_state())
    seen, order = {t0}, [t0]
    i = 0
    while i < len(order) and len(order) < n:
        for _, t2 in ex.successors(order[i]):
            if t2 not in seen:
                seen.add(t2)
                order.append(t2)
        i += 1
    return order[:n]


@pytest.mark.parametrize("make", [lambda: Model(SMALL, "final"), lambda: Model(Config(1, 2, 1), "apply-after-unlock"),
                                  lambda: _lc_small("final"), lambda: _lc_small("pr-758072b", tools=2)],
                         ids=["core-final", "core-apply-after-unlock-1/2/1", "lc-final", "lc-pr-758072b-2tools"])
@pytest.mark.parametrize("packed", [True, False], ids=["bytes", "tuples"])
def test_compiled_successors_equal_the_generic_explorers(make, packed: bool) -> None:  # type: ignore[no-untyped-def]
    """Same enabled actions, same post-states, same order, on the first 1500 reachable states."""
    from spmcheck.spec.explore_compile import Compiled

    m = make()
    ex, comp = Explorer(m), Compiled(m, packed)
    assert comp.packed == packed
    for t in _first_states(ex, 1500):
        want = [(a.index, t2) for a, t2 in ex.successors(t)]
        got = comp.successors(comp.as_tuple(ex.as_dict(t)))
        assert [(i, tuple(t2)) for i, t2 in got] == [(i, tuple(int(x) for x in t2)) for i, t2 in want]


@pytest.mark.parametrize("variant,prop", [("stale-lookup", "creation-consistent"),
                                          ("pre-fix", "serializer-mirrors-refcount"),
                                          ("reversed-lookup-order", "lock-order-acyclic")])
def test_compiled_predicates_agree_with_the_concrete_reading(variant: str, prop: str) -> None:
    from spmcheck.spec.explore_compile import Compiled

    m = Model(SMALL, variant)
    ex, comp = Explorer(m), Compiled(m)
    p = PROPERTIES[prop]
    tg = bfs_violation(p)(m)
    if "bad_state" in tg:
        f = comp.pred(tg["bad_state"])
        checks = [(lambda s: tg["bad_state"](CONCRETE, s), f)]
    else:
        watch, cond = tg["bad_step"]
        checks = [(lambda s, a=a: cond(CONCRETE, s, a), comp.pred(lambda b, s, a=a: cond(b, s, a)))
                  for a in m.actions if watch(a)]
    seen = 0
    for t in _first_states(ex, 400):
        s = ex.as_dict(t)
        for want, got in checks:
            w = bool(want(s))
            assert bool(got(comp.as_tuple(s))) == w
            seen += w
    assert seen  # the violation is among these states (found within 301 states at 1/1/1)


@pytest.mark.parametrize("variant,prop", [("stale-lookup", "creation-consistent"),
                                          ("global-flag", "creation-consistent"),
                                          ("reversed-lookup-order", "lock-order-acyclic")])
def test_compiled_and_generic_search_return_the_same_path(variant: str, prop: str) -> None:
    m = Model(Config(1, 2, 1), variant)
    tg = bfs_violation(PROPERTIES[prop])(m)
    # unreduced: the dead-variable reduction (tests/test_explore_reduction.py) may pick another
    # shortest path; the compiled reading itself visits the generic explorer's states in its order
    fast, slow = bfs(m, **tg, reduce=False), bfs(m, **tg, explorer=Explorer(m))
    assert fast.status == slow.status == "found"
    assert [a.index for a in fast.path] == [a.index for a in slow.path] and fast.states == slow.states


@pytest.mark.parametrize("sizes,variant", [((1, 2, 0), "apply-after-unlock"), ((2, 1, 0), "final"),
                                           ((1, 0, 2), "stale-lookup")])
def test_never_written_variables_stay_at_their_initial_value(sizes: tuple[int, int, int], variant: str) -> None:
    """The ladder folds a target with the variables no step at the size writes (read off the
    definition's updates): random walks at that size never change them, and with no lookup
    thread no serializer entry exists, so P1/P2 fold to False there (the rung is skipped)."""
    import random

    from spmcheck.spec.backend import CONCRETE
    from spmcheck.spec.explore_compile import _never_written, constant_target
    from spmcheck.spec.model import Model
    from spmcheck.spec.properties import PROPERTIES
    from spmcheck.spec.prove import bfs_violation
    from spmcheck.spec.vocabulary import Config

    m = Model(Config(*sizes), variant)
    fixed = _never_written(m)
    rng = random.Random(7)
    for _ in range(20):
        s = dict(m.init_state())
        for _ in range(300):
            en = [a for a in m.actions if all(v for _, v in a.selectors(CONCRETE, s)) and
                  all(v for _, v in a.guards(CONCRETE, s))]
            if not en:
                break
            s.update(rng.choice(en).effect(CONCRETE, s))
            assert all(s[n] == v for n, v in fixed.items()), {n: s[n] for n in fixed if s[n] != fixed[n]}
    if sizes[2] == 0:
        assert any(n.startswith("ser.ex.") for n in fixed), fixed
        for p in ("serializer-mirrors-refcount", "creation-consistent"):
            t = bfs_violation(PROPERTIES[p])(m)
            assert constant_target(m, t.get("bad_state"), t.get("bad_step")) is False
    assert _never_written(Model(Config(1, 2, 1), variant)) == {}
