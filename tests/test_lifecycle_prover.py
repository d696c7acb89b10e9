"""The lifecycle model: both readings agree, verdicts match expectations, counterexamples read as
the reviewers described them, witnesses are reachable."""
from __future__ import annotations

import random

import pytest
import z3

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.lifecycle.expected import VIOLATED, default_pairs, expected
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import FINDINGS, LPROPERTIES, scenario
from spmcheck.spec.lifecycle.prove import prove_pairs, prove_variant
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.z3_encoding import Z3, Transition, _b

from ._z3eval import State

CFG = LConfig()


def _random_state(m: LifecycleModel, rng: random.Random) -> dict:
    return {d.name: (rng.random() < 0.5) if d.kind == "bool" else rng.randint(d.lo, d.hi) for d in m.vars}


def _z3_value(term: object, subst: State) -> object:
    return subst.value(term)


@pytest.mark.parametrize("variant", list(LVARIANTS))
def test_concrete_and_symbolic_readings_agree(variant: str) -> None:
    """Guards, effects, observed values and properties agree on random states."""
    m = LifecycleModel(LConfig(deactivate=True, destroy=True), variant)
    tr = Transition(m, ints="int")
    rng = random.Random(5)
    kinds = {d.name: d.kind for d in m.vars}
    for _ in range(12):
        st = _random_state(m, rng)
        subst = State([(tr.S[n], z3.BoolVal(v) if kinds[n] == "bool" else z3.IntVal(v)) for n, v in st.items()])
        for act in rng.sample(m.actions, 25):
            assert _z3_value(_b(act.enabled(Z3, tr.S)), subst) == bool(act.enabled(CONCRETE, st)), act.describe()
            conc = act.effect(CONCRETE, st)
            for name, term in act.effect(Z3, tr.S).items():
                assert _z3_value(term, subst) == conc[name], (act.describe(), name)
            for name, term in act.observed(Z3, tr.S).items():
                assert _z3_value(term, subst) == act.observed(CONCRETE, st)[name], (act.describe(), name)
            for prop in LPROPERTIES.values():
                if prop.watches is not None and prop.step is not None and prop.watches(act):
                    sym = _z3_value(_b(prop.step(Z3, tr.S, m, act)), subst)
                    assert sym == bool(prop.step(CONCRETE, st, m, act)), (prop.name, act.describe())
        for prop in LPROPERTIES.values():
            if prop.state is not None:
                assert _z3_value(_b(prop.state(Z3, tr.S, m)), subst) == bool(prop.state(CONCRETE, st, m)), prop.name


def test_random_walks_stay_in_declared_ranges() -> None:
    m = LifecycleModel(LConfig(deactivate=True, destroy=True), "final")
    rng = random.Random(3)
    for _ in range(30):
        s = m.init_state()
        for _ in range(60):
            en = [a for a in m.actions if a.enabled(CONCRETE, s)]
            if not en:
                break
            s = {**s, **rng.choice(en).effect(CONCRETE, s)}
            for d in m.vars:
                if d.kind == "int":
                    assert d.lo <= s[d.name] <= d.hi, d.name


@pytest.fixture(scope="module")
def default_results():
    return prove_pairs(default_pairs(), CFG, 60)


def test_every_default_lifecycle_verdict_matches(default_results) -> None:
    """What `spmcheck prove` shows: final proved everywhere its expectation says (stored invariant re-checked by Z3,
    witnesses reachable), the reviewers' questions answered, findings reported."""
    for r in default_results:
        assert r.verdict == r.expected, (r.variant, r.property, r.verdict, r.reason)
        if r.verdict == "proved":
            assert r.witnesses and all(w.verdict == "reachable" for w in r.witnesses), (r.variant, r.property)
            assert "inductive invariant" in r.method


def test_each_known_bad_variant_is_caught(default_results) -> None:
    """Every listed variant violates the property its bug breaks, with a replayed counterexample."""
    bad = [r for r in default_results if (r.variant, r.property) in VIOLATED]
    assert len(bad) == len(VIOLATED)
    for r in bad:
        assert r.verdict == "violated", (r.variant, r.property, r.verdict, r.reason)
        assert r.counterexample, (r.variant, r.property)


def test_exit_over_active_counterexample_reads_as_the_review() -> None:
    """Digest §4 P4: stop clears the slot, the in-flight completion finds no active context, so no
    kfd_stop, and the packet stays in the map."""
    (r,) = prove_variant("exit-over-active", ["in-flight-completion-delivered"], CFG, 60)
    steps = r.counterexample
    assert steps is not None
    kinds = [s.action for s in steps]
    assert "stop_begin" in kinds and "dispatch_write" in kinds
    last = steps[-1]
    assert last.action == "completion_exit" and dict(last.args)["delivered"] == "0"
    stop = kinds.index("stop_begin")
    assert any(n.startswith("slot.") and w == "0" for n, _, w in steps[stop].changes)  # slot cleared at stop
    write = max(i for i, k in enumerate(kinds) if k == "dispatch_write")
    assert dict(steps[write].args)["instrumented"] != "0"
    assert kinds.index("spm_set_enabled") < write  # an SPMPacket, not the disabled-path fallback
    assert write < stop < len(steps) - 1


def test_findings_of_the_final_design_are_reported_with_counterexamples(default_results) -> None:
    got = {r.property: r for r in default_results if r.variant == "final"}
    for f in FINDINGS:
        assert (got[f].verdict, got[f].expected) == ("violated", "violated"), (f, got[f].reason)
        assert got[f].counterexample


def test_expectations_cover_the_default_pairs() -> None:
    pairs = default_pairs()
    assert len(set(pairs)) == len(pairs)
    for v, p in pairs:
        assert v in LVARIANTS and p in LPROPERTIES
        assert expected(v, p)[0] in ("proved", "violated")
    assert scenario(CFG, "deactivate-releases-references").deactivate


def test_an_unreachable_witness_fails_the_run() -> None:
    """Non-vacuity as a verdict: a proof whose witness is unreachable makes `prove` exit 1 (the
    parametric tests show such witnesses are refuted at any size: stop-waits-in-drain replaced
    thread-waits for that reason)."""
    from spmcheck.spec.report import exit_code
    from spmcheck.spec.results import ProofResult, WitnessResult

    def result(*ws: WitnessResult) -> ProofResult:
        return ProofResult("final", "p", "proved", "proved", "m", "any depth", "any size", 0.0, witnesses=ws)

    reach = WitnessResult("w", "s", "reachable", 3, 0.1)
    assert exit_code([result(reach)]) == 0
    assert exit_code([result(reach, WitnessResult("v", "s", "unreachable", 0, 0.1))]) == 1
    assert exit_code([result(WitnessResult("u", "s", "unknown", 0, 0.1))]) == 0  # the verdict carries unknown


def test_cli_lifecycle_json_and_cex(tmp_path, capsys) -> None:
    import json

    from spmcheck.checker.cli import main as cli_main

    assert cli_main(["prove", "--model", "lifecycle", "--variant", "positive-tags", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (r,) = doc["results"]
    assert (r["model"], r["variant"], r["property"], r["verdict"], r["finding"]) == \
        ("lifecycle", "positive-tags", "tags-disjoint", "violated", False)
    assert doc["command"] == "prove" and doc["ok"] is True
    out = tmp_path / "tags.log"
    assert cli_main(["cex", "--variant", "positive-tags", "--property", "tags-disjoint", "-o", str(out)]) == 0
    capsys.readouterr()
    assert cli_main(["check", "--property", "tags-disjoint", str(out)]) == 1
    assert "CHK101" in capsys.readouterr().out
    assert cli_main(["prove", "--model", "lifecycle", "--variant", "fnial"]) == 2


def test_every_lifecycle_step_declares_its_lock_nesting() -> None:
    """The static half of P5 reads LOCK_CHAINS per step kind; a new step without an entry must not
    silently count as lock-free."""
    from spmcheck.spec.lifecycle.locks import LOCK_CHAINS

    for v in LVARIANTS:
        m = LifecycleModel(LConfig(deactivate=True, destroy=True), v)
        assert {a.kind for a in m.actions} <= set(LOCK_CHAINS), v
