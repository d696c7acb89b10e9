"""The v1 replay's claims with their reads recorded inline (Model.claim_recording) against the
plain compiled claim on a recording mapping (`_Reads`): the same value and the same key list (same
keys, order and number) on random reachable states of every variant; and the same check results,
field for field, with the inline reads switched off, on the corpus and a C++ lifecycle run."""
from __future__ import annotations

import os

import pytest

from spmcheck.checker import replay
from spmcheck.checker.replay import _Reads, check_path
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.induction import sample_states
from spmcheck.spec.lang.finite import compile_closed_recording, fixed_reads
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import LPROPERTIES
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Model
from spmcheck.spec.programs import FLAG, P1
from spmcheck.spec.properties import CORE_FINDINGS, PROPERTIES, Property, claim_of
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _invariants(m: Model) -> list[str]:
    """Every invariant claim and finding of the model's definition."""
    p = m.protocol
    return [n for n, c in {**p.claims, **p.findings}.items() if c.kind == "invariant"]


def _same_reads(m: Model, states: list[dict[str, object]], props: list[Property]) -> int:
    names = _invariants(m)
    assert names
    claimed = [p for p in props if claim_of(p.state) is not None]
    # the recording text itself (the variant used where reads could depend on the state)
    index = {n: i for i, n in enumerate(m.var_names)}
    p = m.protocol
    slow = {n: compile_closed_recording(m.universe, {**p.claims, **p.findings}[n].expr, index, n, fixed=False)  # type: ignore[arg-type]
            for n in names}
    longest = 0
    for s in states:
        st = [s[n] for n in m.var_names]
        for name in names:
            rec = _Reads(s)
            want = m.claim(name)(CONCRETE, rec)
            for fn in (m.claim_recording(name), slow[name]):
                read: list[str] = []
                got = fn(CONCRETE, st, read)
                # the replay reads a claim's truth value only (the fixed-reads variant's is plain Python's)
                assert bool(got) == bool(want) and read == rec.read, name
            longest = max(longest, len(read))
        for p in claimed:  # the claim a property names is the one it evaluates
            rec = _Reads(s)
            want = p.state(CONCRETE, rec, m)  # type: ignore[misc]
            read = []
            assert bool(m.claim_recording(claim_of(p.state))(CONCRETE, st, read)) == bool(want)  # type: ignore[arg-type]
            assert read == rec.read, p.name
    assert longest > 10  # claims read state (one may fold to a constant at a size: tags-disjoint)
    return len(states)


@pytest.mark.parametrize("variant", list(LVARIANTS))
def test_lifecycle_claims_record_the_same_reads(variant: str) -> None:
    m = LifecycleModel(LConfig(deactivate=True, destroy=True), variant)
    assert _same_reads(m, sample_states(m, 6, 40, 11), list(LPROPERTIES.values())) > 100


def test_lifecycle_claims_record_the_same_reads_at_more_dispatches() -> None:
    m = LifecycleModel(LConfig(agents=2, contexts=3, tools=3, dispatches=8), "final")
    assert _same_reads(m, sample_states(m, 2, 60, 4), list(LPROPERTIES.values())) > 60


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_core_claims_record_the_same_reads(variant: str) -> None:
    m = Model(Config(2, 2, 2), variant)
    props = list(PROPERTIES.values()) + list(CORE_FINDINGS.values())
    assert {claim_of(p.state) for p in props} >= {P1, FLAG}  # mirrors and stored_flag
    assert _same_reads(m, sample_states(m, 8, 40, 7), props) > 40  # (a known-bad variant may deadlock early)


# corpus files whose replay evaluates the claims on every event: lifecycle runs accepted and
# rejected with evidence, core runs rejected by P1 and P2 (an accepted core v1 file takes the
# compiled engine, checker/v1fast.py). Every variant's claims are compared above on random states;
# the whole corpus costs twice as much here (each lifecycle file builds its own model) for no
# other path.
FILES = ("lc-final-a2-c3-t3.log", "lc-exit-over-active.log", "lc-conflict-scan-unlocked.log",
         "lc-slot-cleared-first.log", "stale-lookup-violated.log", "global-flag-a2-u2-l2.log",
         "apply-after-unlock-a2-u2-l2.log")


def _files() -> list[str]:
    return [os.path.join(ROOT, "traces", n) for n in FILES]


def test_check_results_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every corpus file checks to the same FileResult with the claims' reads recorded inline as
    through `_Reads`. The engines of the first pass are reused with their memos emptied (no memo
    is shared; building the models again would double the test's cost for nothing)."""
    files = _files()
    assert all(os.path.exists(f) for f in files)
    monkeypatch.setattr(replay, "_ENGINES", {})
    monkeypatch.setattr(replay, "INLINE_READS", False)
    before = {f: check_path(f) for f in files}
    assert replay._ENGINES and not any(e._inline for e in replay._ENGINES.values())
    for e in replay._ENGINES.values():
        e._inline = True
        e.reset()
    after = {f: check_path(f) for f in files}
    for f in files:
        assert after[f] == before[f], f
    assert any(r.evidence for r in after.values())  # a violation with evidence is among them


def test_fixed_reads_only_for_eager_text() -> None:
    """Reads are taken as fixed only where every read runs once, in the order of the text."""
    assert fixed_reads("b.And(s[ap('x') or 0], (s[ap('y') or 1] + s[ap('x') or 0]) > 1)") == ("x", "y", "x")
    assert fixed_reads("7") == ()
    assert fixed_reads("(s[ap('x') or 0] and s[ap('y') or 1])") is None  # y only read when x holds
    assert fixed_reads("(s[ap('x') or 0] if s[ap('c') or 2] else 0)") is None
    assert fixed_reads("b.Sum([s[ap(k) or 0] for k in 'ab'])") is None
    assert fixed_reads("(s[ap('x') or 0] < s[ap('y') or 1] < s[ap('z') or 2])") is None  # z read only if x < y
    assert fixed_reads("(lambda: s[ap('x') or 0])()") is None
