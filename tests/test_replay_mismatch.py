"""A path the search finds but the concrete reading cannot replay is `unknown` naming the step where
the two disagree: never a counterexample, never an internal error (issue 15, item 6)."""
from __future__ import annotations

from dataclasses import replace

import pytest

import spmcheck.spec.prove as sp
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.bmc import BmcOutcome
from spmcheck.spec.model import Model, apply
from spmcheck.spec.vocabulary import Config


def _first_stuck(model: Model, small: Model, indices: tuple[int, ...], start: dict) -> int:
    """1-based step at which the path stops being executable when matched by key (0: never)."""
    s = start
    for n, i in enumerate(indices, 1):
        sa = small.actions[i]
        key = (sa.thread, sa.kind, tuple((k, str(v)) for k, v in sa.static_args().items()))
        m = [c for c in model.actions_by_key.get(key, []) if c.enabled(CONCRETE, s)]
        if len(m) != 1:
            return n
        s = apply(model, CONCRETE, s, m[0])
    return 0


def test_concretise_names_the_step_that_does_not_replay() -> None:
    m = Model(Config(1, 1, 1), "final")
    # a real path: u0's first update, step by step; then drop its first step (a stored path, mutated)
    path: list[int] = []
    s = m.init_state()
    for _ in range(4):
        i = next(k for k, a in enumerate(m.actions) if a.thread == "u0" and a.enabled(CONCRETE, s))
        path.append(i)
        s = apply(m, CONCRETE, s, m.actions[i])
    mutated = tuple(path[1:])
    expect = _first_stuck(m, m, mutated, m.init_state())
    assert expect >= 1  # the mutation really breaks the path (else the test would prove nothing)
    with pytest.raises(sp.ReplayMismatch) as e:
        sp.concretise(m, m, mutated, [], lambda st, acts: True)
    assert e.value.step == expect and e.value.steps == len(mutated)
    assert "not enabled" in e.value.why
    # the unmutated path replays
    assert len(sp.concretise(m, m, tuple(path), [], lambda st, acts: True)) <= len(path)


def test_non_replaying_bmc_path_is_unknown_with_the_step(monkeypatch: pytest.MonkeyPatch) -> None:
    real = sp.search
    seen: list[tuple[int, ...]] = []

    def mutated(small: Model, *a: object, **k: object) -> BmcOutcome:
        out = real(small, *a, **k)  # type: ignore[arg-type]
        if out.status == "found" and len(out.actions) > 1:
            seen.append(out.actions)
            return replace(out, actions=out.actions[1:])  # the stored path without its first step
        return out

    monkeypatch.setattr(sp, "search", mutated)
    # BMC must run: no stored certificate, no breadth-first search before it
    monkeypatch.setattr(sp, "bfs_ladder", lambda *a, **k: None)
    (r,) = sp.prove_variant("stale-lookup", ["creation-consistent"], Config(2, 2, 2), 60, certs="fresh")
    assert seen, "the search found no path to mutate"
    assert r.verdict == "unknown" and r.counterexample is None
    assert "search and replay disagree at step" in r.reason and "internal error" not in r.reason
