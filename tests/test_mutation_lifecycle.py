"""Cross-reading mutation test for the lifecycle (the core's is tests/test_mutation.py).

Each mutant is the final lifecycle with one mutation applied by an operator on its definition
(spec/lifecycle/definition.py through spec.lang.mutate), not by editing files. For a mutant that
breaks a property:

* the fixed-size counterexample search finds a path C that violates it;
* the trace checker, run with the *unmutated* final model, rejects C as `diverged`, never before
  the first step where the mutant fired a changed action;
* the any-size prover (`prove --parametric`, which reads the same definition through
  spec.lang.symbolic) does not report the property proved on the mutant: some check fails (a
  mutant of an abstracted counter's update, `inf` / `ks`, is caught by the
  `abstraction` check, which the symbolic reading of the drain guard and of P4 rests on).

PARTIAL lists mutants that meet the first and the last line but not the checker's, with the
reason; OUTSIDE_ANY_SIZE mutants the any-size reading cannot see (they break the premise of a
finite-only guard conjunct), each caught by the search and by the agreement test instead;
NEUTRAL mutants that break none of final's proved properties within the same search.
"""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from spmcheck.checker.replay import check_path
from ._fired import fired
from spmcheck.checker.results import Verdict
from spmcheck.spec.bmc import violation_target
from spmcheck.spec.lang.mutate import Mutation, apply, candidates, changed
from spmcheck.spec.lifecycle.definition import definition
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import LPROPERTIES, scenario
from spmcheck.spec.lifecycle.prove import find_path
from spmcheck.spec.lifecycle.trace import cex_trace
from spmcheck.spec.lifecycle.variants import LVARIANTS, LVariant
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.parametric.lifecycle_prove import prove_pair
from spmcheck.spec.model import Action
from spmcheck.spec.prove import _violates, bfs_violation, render
from spmcheck.spec.results import ProofResult

CFG = LConfig()

# mutation -> the property of final it breaks (the bug it stands for)
BREAKING: dict[str, str] = {
    # start does not wait for an in-progress stop (wait_for_stopping_contexts dropped): two
    # overlapping contexts end up active together (digest §5.1)
    "drop-guard:tool:idle:start_begin:1": "spm-contexts-disjoint",
    # set_dispatch_agents does not wait for an in-progress start: the agent set changes under a
    # context holding references (digest §4 P7, the set-agents-race variant)
    "drop-guard:tool:idle:set_agents_check:1": "refcount-balanced",
}

# mutants that break a property but cannot meet every line above, with the reason. A dropped
# update changes state no event of the counterexample reports: the property fails in the state the
# counterexample ends in, the unmutated model accepts every event up to there (the difference
# would show at a later event), so the checker reports the trace inconclusive, not diverged.
UNSEEN = "every event up to the violation is one the unmutated model allows: the checker says inconclusive"
PARTIAL: dict[str, tuple[str, str]] = {
    # the "exit hook that keeps the map entry"
    "drop-update:complete:idle:completion_exit:3": ("map-empty-after-drain",
        "post_kernel_call never erases its packet; " + UNSEEN),
    "drop-update:complete:idle:completion_exit:2": ("in-flight-completion-delivered",
        "the delivery (kfd_stop + DISPATCH_END) is not counted; " + UNSEEN),
    "drop-update:dispatch:gated:dispatch_write:5": ("no-unserialized-dispatch-while-enabled",
        "the enter hooks' serialize request is lost (the event still reports it; the submit that "
        "would show serialized=0 comes after the violation); " + UNSEEN),
    "drop-update:dispatch:hooked:dispatch_submit:3": ("serializer-mirrors-refcount",
        "the serializer entry is created without its state; " + UNSEEN),
    "drop-update:tool:spm_disable:spm_disable:0": ("refcount-balanced",
        "disable_serialization forgets `all`; no event reports a refcount; " + UNSEEN),
    "drop-update:dispatch:hooked:dispatch_submit:4": ("map-empty-after-drain",
        "async_started() is lost: the drain sees no kernel in flight and stop proceeds while the "
        "dispatch's packet is still mapped; no event reports _active_kernels; " + UNSEEN),
    "drop-update:tool:spm_enable:spm_enable:2": ("refcount-balanced",
        "enable_serialization forgets the per-agent counts of a restricted context; no event reports "
        "a refcount (spm_enable observes only its agent set), so the unmutated model accepts every "
        "event of the counterexample and the checker reports it inconclusive"),
}

NEUTRAL: dict[str, str] = {}

# mutants outside the any-size reading, with the reason: they break the premise of a finite-only
# conjunct (`Action.any_size`), here the cursor `dn` ("dispatch k is the next one", read any size
# as "k is not yet written"). `prove --parametric` proves the property on such a mutant (it reads
# the relaxed guard, which the mutant does not change); what catches it besides the fixed-size
# search is the agreement test: the mutant's finite model enables a step its any-size reading
# does not (the superset the proofs rely on is broken), on a reached state.
OUTSIDE_ANY_SIZE: dict[str, tuple[str, str]] = {
    "drop-update:dispatch:hooked:dispatch_submit:1": ("in-flight-completion-delivered",
        "the writer never advances `dn`, so it rewrites an in-flight dispatch (its packets re-inserted "
        "after its exit hooks erased them); any size reads the cursor as 'not yet written'"),
}


@contextmanager
def mutant(name: str) -> Iterator[LVariant]:
    v = dataclasses.replace(LVARIANTS["final"], name=f"final~{name}", mutation=name, known_bad=True)
    LVARIANTS[v.name] = v
    try:
        yield v
    finally:
        del LVARIANTS[v.name]


def test_every_listed_mutation_is_a_candidate_and_changes_one_action() -> None:
    base = definition(LVARIANTS["final"], CFG)
    assert set(BREAKING) | set(PARTIAL) | set(NEUTRAL) | set(OUTSIDE_ANY_SIZE) <= {m.name for m in candidates(base)}
    for name in [*BREAKING, *PARTIAL, *NEUTRAL, *OUTSIDE_ANY_SIZE]:
        mutated = apply(base, Mutation.parse(name))
        assert sum(a is not b for a, b in zip(base.actions, mutated.actions)) == 1, name


_fired = fired


def _counterexample(v: LVariant, prop: str) -> tuple[LifecycleModel, list[Action], str]:
    """The violation half of spec.lifecycle.prove.prove_variant alone (BFS, then BMC): a mutant
    has no stored invariant to re-check."""
    p = LPROPERTIES[prop]
    m = LifecycleModel(scenario(CFG, prop), v)
    got = find_path(m, lambda mm: violation_target(mm, p), lambda st, acts: _violates(m, p, st, acts), 60,
                    bfs_violation(p))
    assert isinstance(got, tuple), f"{v.mutation}: no counterexample for {prop} ({got})"
    return m, got[0], got[1]


@pytest.mark.parametrize("name,why", sorted(PARTIAL.items()))
def test_partial_lifecycle_mutants_are_caught_by_the_fixed_size_search(name: str, why: tuple[str, str]) -> None:
    with mutant(name) as v:
        _counterexample(v, why[0])


@pytest.mark.parametrize("name,prop", sorted(BREAKING.items()))
def test_lifecycle_mutant_is_caught_by_the_prover_and_the_checker(name: str, prop: str, tmp_path: Path) -> None:
    with mutant(name) as v:
        m, path, note = _counterexample(v, prop)
        r = ProofResult("final", prop, "violated", "violated", "search", f"{len(path)} steps", "-", 0.0,
                        render(m, [], path), (), note, "mutation")
        text = cex_trace(r, CFG)
        fired = _fired(m, text)
    # the counterexample, as a trace of the unmutated final design, is rejected where it changed
    trace = tmp_path / "cex.log"
    trace.write_text(text)
    res = check_path(str(trace))
    assert res.verdict == Verdict.DIVERGED, (name, res.verdict, res.message)
    events = [ln for ln in text.splitlines() if ln and ln[0].isdigit()]
    k = events.index(text.splitlines()[res.line - 1])
    steps = changed(definition(LVARIANTS["final"], CFG), Mutation.parse(name))
    first = next(i for i, a in enumerate(fired) if (a.step.role, a.label, a.kind) in steps)
    assert k >= first, (name, events[k], events[first])


@pytest.mark.parametrize("name,prop", sorted({**BREAKING, **{k: v[0] for k, v in PARTIAL.items()}}.items()))
def test_lifecycle_mutant_is_not_proved_at_any_size(name: str, prop: str) -> None:
    """The any-size line: the same mutation, read by the parametric prover, leaves a check of
    the property failing (the unmutated final is proved: test_parametric_lifecycle). A check
    that fails is refuted by a model (a CTI, or the abstraction check's step), not merely
    undecided: an `unknown` would also mean "not proved" and pass on a budget too small for
    any answer. Three of these mutants came back `unknown` after their whole budget until a
    query's first share is followed by the bounded CTI search (queries.PROBE_SHARE)."""
    with mutant(name) as v:
        r = prove_pair(v.name, prop, timeout=10.0)
    assert r.verdict != "proved", (name, prop)
    assert any(c.status == "fails" for c in r.checks), (name, r.reason)


@pytest.mark.parametrize("name,why", sorted(OUTSIDE_ANY_SIZE.items()))
def test_mutant_outside_the_any_size_reading_is_caught_by_search_and_agreement(name: str, why: tuple[str, str]) -> None:
    from .test_parametric_lifecycle import disagreements, walk_states
    from spmcheck.spec.parametric.lifecycle_transitions import build_lifecycle_actions

    with mutant(name) as v:
        _counterexample(v, why[0])
        cfg = LConfig(1, 1, 1, 2)
        states = walk_states(LifecycleModel(cfg, v), 3, 200, 30)
        bad = list(disagreements(v.name, cfg, states, build_lifecycle_actions(v)))
    assert any("dispatch_write" in d and "enabled True vs parametric False" in d for d in bad), bad[:3]
