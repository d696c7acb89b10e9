"""The shorthand of older logs (spec.lang.shorthand): a `dispatch_write` of an idle dispatch thread
read as `dispatch_gate` immediately followed by `dispatch_write`. The composed step must be exactly
the two steps in a row, on the definition and on a mutant of it (composed after the mutation)."""
from __future__ import annotations

import dataclasses
import random

import pytest

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.lang.mutate import Mutation, apply as mutate
from spmcheck.spec.lang.shorthand import compose, composed, trace_actions
from spmcheck.spec.lang.syntax import Lit
from spmcheck.spec.lifecycle.definition import definition
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Action, apply

CFG = LConfig(agents=2, contexts=2, tools=2, dispatches=3)


def _states(m: LifecycleModel, n: int, seed: int) -> list[dict]:
    """Reached states where d0 is idle, from random walks (the shorthand's pre-states)."""
    rng, out, s = random.Random(seed), [], m.init_state()
    for i in range(n):
        en = [a for a in m.actions if a.enabled(CONCRETE, s)]
        if i % 60 == 0 or not en:
            s = m.init_state()
            continue
        s = apply(m, CONCRETE, s, rng.choice(en))
        if s["pc.d0"] == 0:
            out.append(s)
    return out


def _twin(m: LifecycleModel, short: Action, kind: str, label: str) -> Action:
    (a,) = [x for x in m.actions if x.thread == short.thread and x.kind == kind and x.label == label
            and x.static_args() == {k: v for k, v in short.static_args().items()}]
    return a


@pytest.mark.parametrize("variant", ["final", "process-wide-batching"])
def test_the_shorthand_is_the_gate_then_the_write(variant: str) -> None:
    m = LifecycleModel(CFG, variant)
    shorts = m.shorthand_actions
    assert shorts and {(a.label, a.kind) for a in shorts} == {("idle", "dispatch_write")}
    assert not set(map(id, shorts)) & set(map(id, m.actions))  # never a step of the model
    compared = 0
    for s in _states(m, 3000, 5):
        for sh in shorts:
            gate, write = _twin(m, sh, "dispatch_gate", "idle"), _twin(m, sh, "dispatch_write", "gated")
            assert bool(sh.enabled(CONCRETE, s)) == bool(gate.enabled(CONCRETE, s))
            if not sh.enabled(CONCRETE, s):
                continue
            mid = apply(m, CONCRETE, s, gate)
            assert write.enabled(CONCRETE, mid)
            assert apply(m, CONCRETE, s, sh) == apply(m, CONCRETE, mid, write)
            assert sh.observed(CONCRETE, s) == write.observed(CONCRETE, mid)
            assert sh.observed(CONCRETE, s)["batch"] == gate.observed(CONCRETE, s)["batch"]
            claims = {c for c, _, _ in sh.step.defn.checks}
            assert claims == {c for a in (gate, write) for c, _, _ in a.step.defn.checks}
            for c in claims:
                both = gate.checks(CONCRETE, s, c) + write.checks(CONCRETE, mid, c)
                assert [bool(x) for _, x in sh.checks(CONCRETE, s, c)] == [bool(x) for _, x in both], c
            compared += 1
    assert compared > 50, compared


def test_a_mutants_shorthand_is_the_mutants_composition() -> None:
    """Dropping the write's serialize request (update 5) drops it from the shorthand too."""
    base = definition(LVARIANTS["final"], CFG)
    mut = mutate(base, Mutation.parse("drop-update:dispatch:gated:dispatch_write:5"))
    (sb,), (sm,) = [[a for a in trace_actions(p) if a.shorthand] for p in (base, mut)]
    targets = [{u[0].func.name for u in a.updates if isinstance(u, tuple)} for a in (sb, sm)]
    assert "rq" in targets[0] and "rq" not in targets[1]
    assert len(composed(mut, mut.shorthands[0]).updates) == len(sb.updates) - 1


def test_composition_refuses_what_it_cannot_compose() -> None:
    p = definition(LVARIANTS["final"], CFG)
    gate = next(a for a in p.actions if a.kind == "dispatch_gate")
    write = next(a for a in p.actions if a.kind == "dispatch_write")
    with pytest.raises(AssertionError, match="goes to"):
        compose(dataclasses.replace(gate, goto=Lit("hooked")), write)
    with pytest.raises(AssertionError, match="both write"):
        compose(gate, dataclasses.replace(write, updates=write.updates + gate.updates[:1]))
