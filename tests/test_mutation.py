"""Cross-reading mutation test: a change to the one definition reaches every reading.

Each mutant is the final design with one mutation applied by an operator on the definition
(spec.lang.mutate: drop a guard conjunct or an update, skip a step, weaken or drop a lock), not
by editing files. For a mutant that breaks a property:

* the fixed-size prover's counterexample search finds a path C that violates it;
* the any-size prover does not report the property proved for the mutant;
* the trace checker, run with the *unmutated* final model, rejects C as `diverged` at the step the
  mutation changed (an instance of the mutated action, or the next step of the same thread when
  the mutation changed only where the thread goes next).

Mutants that break none of the core properties are listed in NEUTRAL with the reason, and the
test checks that the fixed-size search finds no violation of any property for them within the
bound (so the reason is not just a claim).
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from checker.replay import check_path
from checker.results import Verdict
from spec.backend import CONCRETE
from spec.lang.mutate import Mutation, apply, candidates, changed
from spec.model import Action, Model
from spec.model import apply as apply_step
from spec.programs import definition
from spec.prove import counterexample
from spec.report import cex_trace
from spec.variants import VARIANTS, Variant
from spec.vocabulary import Config

P1, P2, P5 = "serializer-mirrors-refcount", "creation-consistent", "lock-order-acyclic"
CFG = Config(2, 2, 2)

# mutation -> the property it breaks (the bug it stands for)
BREAKING: dict[str, str] = {
    "drop-lock:lookup:acq_refcount:lock_acquire:0": P2,  # serializer() without R(rc): stale lookup
}

NEUTRAL: dict[str, str] = {}


@contextmanager
def mutant(name: str) -> Iterator[Variant]:
    v = dataclasses.replace(VARIANTS["final"], name=f"final~{name}", mutation=name, known_bad=True)
    VARIANTS[v.name] = v
    try:
        yield v
    finally:
        del VARIANTS[v.name]


def test_every_listed_mutation_is_a_candidate_of_the_operators() -> None:
    cands = {m.name for m in candidates(definition(VARIANTS["final"]))}
    assert set(BREAKING) | set(NEUTRAL) <= cands
    ops = {Mutation.parse(m).op for m in BREAKING}
    assert len(ops) >= 4, ops  # the suite exercises most operators
    assert len(BREAKING) >= 12


def test_a_mutation_changes_exactly_one_action() -> None:
    base = definition(VARIANTS["final"])
    for name in BREAKING:
        mutated = apply(base, Mutation.parse(name))
        changed = [a for a, b in zip(base.actions, mutated.actions) if a != b]
        assert 1 <= len(changed) <= 3, name  # lock operators touch an acquire and its releases
        assert all(a.role.name == Mutation.parse(name).role for a in changed)


def _fired(model: Model, text: str) -> list[Action]:
    """The action instance of each event of a trace, replayed on `model`."""
    s = model.init_state()
    out: list[Action] = []
    for line in text.splitlines():
        if not line or not line[0].isdigit():
            continue
        _, thread, kind, *kvs = line.split()
        args = dict(kv.split("=", 1) for kv in kvs)
        key = (thread, kind, tuple((k, args[k]) for k in model.static_keys[kind]))
        acts = [a for a in model.actions_by_key.get(key, []) if a.enabled(CONCRETE, s)]
        assert acts, line
        out.append(acts[0])
        s = apply_step(model, CONCRETE, s, acts[0])
    return out


@pytest.mark.parametrize("name,prop", sorted(BREAKING.items()))
def test_mutant_is_caught_by_every_reading(name: str, prop: str, tmp_path: Path) -> None:
    from spec.parametric.prove import prove_pair

    with mutant(name) as v:
        r = counterexample(v.name, prop, CFG, timeout=120)
        assert r is not None, f"{name}: no counterexample for {prop}"
        par = prove_pair(v.name, prop, timeout=30)
        assert par.verdict != "proved", f"{name}: any-size prover still proves {prop}"
        text = cex_trace(dataclasses.replace(r, variant="final"), CFG)
        fired = _fired(Model(CFG, v.name), text)
    # the counterexample, as a trace of the unmutated final design, is rejected where it changed
    path = tmp_path / "cex.log"
    path.write_text(text)
    res = check_path(str(path))
    assert res.verdict == Verdict.DIVERGED, (name, res.verdict, res.message)
    events = [ln for ln in text.splitlines() if ln and ln[0].isdigit()]
    k = events.index(text.splitlines()[res.line - 1])
    steps = changed(definition(VARIANTS["final"]), Mutation.parse(name))
    here = fired[k]
    before = [a for a in fired[:k] if a.thread == here.thread]
    hit = (here.step.role, here.label, here.kind) in steps or (
        bool(before) and (before[-1].step.role, before[-1].label, before[-1].kind) in steps)
    assert hit, (name, events[k], sorted(steps))
