"""The lifecycle's atomic update_serialization()/serializer() against the core's lock-step calls
(spec.refinement, issue 10 'What to build' item 3): proved for the final core at 1..3 agents; the
historical variants that break atomicity (apply-after-unlock, stale-lookup) and mutants of final
are not proved, each with the reason the check reports.

Measured once over every single mutation spec.lang.mutate makes of final (114) at 1..2 agents: 64
are not proved; the 50 proved change only the holders' ghost bookkeeping, call-local values
overwritten before they are read, the `_serialized_enabled` store, a lock step's own "holds"
guard, or locks other than the refcount lock (queues, the map, the per-agent serializers): the
reduction does not need those, W(rc) / R(rc) already keep the calls apart, and the lifecycle never
runs two serializer() calls at once (the core model's P1/P2 judge those mutants)."""
from __future__ import annotations

import dataclasses

import pytest

from spmcheck.spec import refinement as R
from spmcheck.spec.lang.mutate import candidates
from spmcheck.spec.programs import definition
from spmcheck.spec.results import RefinementResult
from spmcheck.spec.variants import VARIANTS, Variant
from spmcheck.spec.z3_encoding import Z3


def verdicts(records: list[RefinementResult]) -> dict[str, RefinementResult]:
    assert [r.check for r in records] == ["sequential", "atomicity"]
    return {r.check: r for r in records}


@pytest.fixture(scope="module")
def final() -> dict[str, RefinementResult]:
    return verdicts(R.run("final", (1, 2, 3)))


def test_final_refines_the_atomic_steps(final: dict[str, RefinementResult]) -> None:
    seq, atom = final["sequential"], final["atomicity"]
    assert seq.verdict == "proved", seq.reason
    assert atom.verdict == "proved", atom.reason
    assert seq.sizes == atom.sizes == "1..3 agents"
    # both calls, and the lifecycle steps they map to, are named
    for word in ("update_serialization()", "serializer()", "spm_enable/spm_disable", "dispatch_submit"):
        assert word in seq.reason
    # the region locks read off the definition: W(rc) across update_serialization(), R(rc) across
    # serializer() (digest §2.1 / §2.2 post-fix), the lock mutually exclusive
    assert "update_serialization() holds refcount exclusive" in atom.reason
    assert "serializer() holds refcount shared" in atom.reason
    assert "refcount is mutually exclusive" in atom.reason
    assert RefinementResult(**seq.to_json()) == seq


@pytest.mark.parametrize("name, gap", [
    # transitions applied after U(rc) (digest §2.2 pre-fix): W(rc) let go before the map is read
    ("apply-after-unlock", ("lock_release lock=refcount mode=exclusive", "ser.ex.0")),
    # serializer() reads the refcount, releases R(rc), then looks up / inserts (digest §2.1 pre-fix)
    ("stale-lookup", ("lock_release lock=refcount mode=shared", "serializer_lookup")),
])
def test_known_bad_variants_break_atomicity(name: str, gap: tuple[str, str]) -> None:
    got = verdicts(R.run(name, (1,)))
    atom = got["atomicity"]
    assert atom.verdict == "violated"
    assert "is released by" in atom.reason and all(g in atom.reason for g in gap), atom.reason
    # run alone, the call still ends where the atomic step does: only the interleaving breaks it
    assert got["sequential"].verdict == "proved", got["sequential"].reason


@pytest.mark.parametrize("name, expected", [
    ("caller-flag", "proved"),  # applied inside W(rc): refines (its defect is not atomicity)
    ("reversed-lookup-order", "proved"),  # a lock-order bug (P5), atomic all the same
    ("pre-fix", "violated"),
    ("global-flag", "violated"),
])
def test_other_variants(name: str, expected: str) -> None:
    got = verdicts(R.run(name, (1,)))
    worst = "violated" if "violated" in {r.verdict for r in got.values()} else "proved"
    assert worst == expected, got


def test_global_flag_is_not_the_atomic_update() -> None:
    """G0 sets every existing entry from the caller's flag: the first stop disables an entry the
    refcount still holds (digest §2.2 G0), which the sequential query finds."""
    seq = verdicts(R.run("global-flag", (1,)))["sequential"]
    assert seq.verdict == "violated" and "other than the lifecycle's atomic" in seq.reason, seq.reason


def _mutant(name: str) -> Variant:
    assert name in {m.name for m in candidates(definition(VARIANTS["final"]))}, name
    return dataclasses.replace(VARIANTS["final"], name=f"final~{name}", mutation=name, known_bad=True)


@pytest.mark.parametrize("mutation, check, words", [
    # update_serialization() takes the refcount shared: two updates' regions may overlap
    ("weaken-lock:updater:acq_refcount:lock_acquire:0", "atomicity",
     ("update_serialization() calls can overlap", "refcount shared")),
    # the availability guard of W(rc) dropped: the lock no longer excludes anyone
    ("drop-guard:updater:acq_refcount:lock_acquire:0", "atomicity", ("refcount is not mutually exclusive",)),
    # serializer() without R(rc): its read and its find/insert sit under no one lock
    ("drop-lock:lookup:acq_refcount:lock_acquire:0", "atomicity", ("serializer()", "is not held between")),
    # the `was` snapshot lost: the call run alone no longer ends as the atomic step does
    ("drop-update:updater:snapshot:lock_acquire:1", "sequential", ("other than the lifecycle's atomic",)),
    # serializer() never enables the entry it creates while counted: kernel_dispatch sees it disabled
    ("drop-update:lookup:enable:serializer_enable:0", "sequential", ("serialized (the entry's state at return)",)),
])
def test_mutants_are_not_proved(mutation: str, check: str, words: tuple[str, ...]) -> None:
    got = verdicts(R.run(_mutant(mutation), (1,)))[check]
    assert got.verdict == "violated", got.reason
    assert all(w in got.reason for w in words), got.reason


def test_the_abstraction_is_read_off_the_definitions() -> None:
    """The shared state is the core's lock-protected functions, matched by key to the lifecycle's;
    the stored `_serialized_enabled` flag (an atomic, no `guarded`) is not part of it, and every
    lifecycle step that writes it is one a core call maps to."""
    lc = R._lifecycle(2)
    pairs = R.abstraction(definition(VARIANTS["final"]), lc.protocol)
    assert [(c.key, l.name) for c, l in pairs] == [
        ("rc.all", "rc_all"), ("rc.{0}", "rc"), ("ser.ex.{0}", "ex"), ("ser.en.{0}", "ser_en")]
    assert "flag" not in {c.name for c, _ in pairs}
    keys = [k for _, l in pairs for _, k in R._keys(lc.universe, l)]
    assert R.lifecycle_writers(lc, keys) == set(R.UPDATER_STEPS.values()) | {R.LOOKUP_STEP}


def test_the_flag_store_after_unlock_lies_outside_the_region() -> None:
    """fidelity-audit U2: `_serialized_enabled.store(any_enabled)` runs after U(rc); the store
    touches none of the shared state, so the region ends at the release of W(rc)."""
    model, thread, _ = R._models(VARIANTS["final"], "updater", 2)
    keys = {k for c, _ in R.abstraction(model.protocol, R._lifecycle(2).protocol)
            for _, k in R._keys(model.universe, c)}
    store = [a for a in model.actions if a.thread == thread and a.kind == "flag_store"]
    release = [a for a in model.actions if a.thread == thread and a.label == "release_refcount"]
    assert store and not any(R.accesses(model, a) & keys for a in store)
    assert release and all(R.accesses(model, a) & keys for a in release)  # reads refcount.any()


def test_the_shared_backend_is_left_as_found() -> None:
    before = Z3.width
    R.check_call(VARIANTS["final"], "lookup", 1)
    assert Z3.width == before


def test_an_exhausted_budget_is_unknown_not_a_verdict() -> None:
    from spmcheck.spec.budget import Budget

    got = verdicts(R.run("final", (1,), timeout=Budget(1, float("inf"))))
    assert got["sequential"].verdict == "unknown" and "rlimit" in got["sequential"].reason
    assert got["atomicity"].verdict == "unknown"



def test_prove_refinement_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """`spmcheck prove --refinement`: one line per (variant, check), the reason of what is not
    proved, a summary; exit 0 when each variant refines or not as expected."""
    from spmcheck.checker import exitcodes
    from spmcheck.checker.cli import main

    code = main(["prove", "--refinement", "--variant", "final", "--variant", "apply-after-unlock", "--agents", "1"])
    out = capsys.readouterr().out.splitlines()
    assert code == exitcodes.OK
    assert out[0].startswith("refinement: the lifecycle's atomic update_serialization()/serializer()")
    rows = [ln.split()[:3] for ln in out[1:-1] if not ln.startswith(" " * 10)]
    assert rows == [["final", "sequential", "proved"], ["final", "atomicity", "proved"],
                    ["apply-after-unlock", "sequential", "proved"], ["apply-after-unlock", "atomicity", "violated"]]
    assert any("is released by" in ln for ln in out)
    assert out[-1] == "spmcheck: 2 refinement verdict(s), 2 as expected, 0 not, 0 unknown"
    assert main(["prove", "--refinement", "--json", "-"]) == exitcodes.USAGE
