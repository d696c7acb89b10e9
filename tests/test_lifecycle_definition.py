"""The lifecycle written once in spec/lang (spec/lifecycle/definition.py) against the closures it
replaces (spec/lifecycle/programs.py): same variables, same action instances in the same order,
and on sampled reachable states the same selectors and guards (labels and values), effects and
observations, for every variant at the default LConfig and with each scenario switch flipped."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest

from spec.backend import CONCRETE
from spec.lifecycle.model import DefinedLifecycleModel, LifecycleModel
from spec.lifecycle.variants import LVARIANTS
from spec.lifecycle.vocabulary import LConfig
from spec.model import apply

BASE = LConfig()
SCENARIOS = {"default": BASE, "no-timeouts": replace(BASE, timeouts=False),
             "deactivate": replace(BASE, deactivate=True), "destroy": replace(BASE, destroy=True),
             "all-switches-3-agents": LConfig(3, 2, 2, 3, max_ids=2, deactivate=True, destroy=True)}
STATES = 100  # reachable states per (variant, scenario): 55 pairs, 5 500 states in all
RANDOM = 40  # and arbitrary in-range states, where counters reach their caps


def _decls(m: object) -> dict[str, tuple]:
    return {d.name: (d.kind, d.init, d.lo, d.hi) for d in m.vars}  # type: ignore[attr-defined]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("variant", list(LVARIANTS))
def test_definition_matches_closures(variant: str, scenario: str) -> None:
    cfg = SCENARIOS[scenario]
    new, old = DefinedLifecycleModel(cfg, variant), LifecycleModel(cfg, variant)
    assert _decls(new) == _decls(old)
    assert len(new.actions) == len(old.actions)
    for a, b in zip(new.actions, old.actions):
        assert (a.thread, a.kind, a.label, a.static_args(), a.step.source) == \
               (b.thread, b.kind, b.label, b.static_args(), b.step.source), b.describe()
    probe = new.init_state()
    assert {n: sorted(a.effect(CONCRETE, probe)) for n, a in enumerate(new.actions)} == \
           {n: sorted(b.effect(CONCRETE, probe)) for n, b in enumerate(old.actions)}, "written variables differ"
    rng = random.Random(f"{variant}/{scenario}")
    for _ in range(RANDOM):
        s = {d.name: (rng.random() < 0.5) if d.kind == "bool" else rng.randint(d.lo, d.hi) for d in old.vars}
        _agree(new, old, s, every=True)
    s, seen, walked = new.init_state(), 0, 0
    while seen < STATES:
        enabled = _agree(new, old, s)
        seen += 1
        walked += 1
        if not enabled or walked > 60:  # restart: deadlock, or a walk long enough
            s, walked = new.init_state(), 0
            continue
        s = apply(old, CONCRETE, s, rng.choice(enabled))


def _agree(new: DefinedLifecycleModel, old: LifecycleModel, s: dict, every: bool = False) -> list:
    """Both readings agree on `s` (effects and observations of enabled actions, or of `every`
    action); returns the enabled actions of the closures."""
    enabled = []
    for a, b in zip(new.actions, old.actions):
        assert a.selectors(CONCRETE, s) == b.selectors(CONCRETE, s), (b.describe(), s)
        assert a.guards(CONCRETE, s) == b.guards(CONCRETE, s), (b.describe(), s)
        on = bool(b.enabled(CONCRETE, s))
        assert bool(a.enabled(CONCRETE, s)) == on, b.describe()
        if on or every:
            assert a.effect(CONCRETE, s) == b.effect(CONCRETE, s), (b.describe(), s)
            assert a.observed(CONCRETE, s) == b.observed(CONCRETE, s), (b.describe(), s)
        if on:
            enabled.append(b)
    return enabled
