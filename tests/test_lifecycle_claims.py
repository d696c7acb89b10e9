"""The lifecycle's properties are claims of its definition (spec/lifecycle/definition.py).

* every claim is read by the fixed-size reading: the stored counterexample of the known-bad variant
  (or, for a finding, of final in the finding's scenario) breaks the claim as the definition states
  it, compiled here from the claim itself, not through spec/lifecycle/properties.py;
* `Post` (a step claim reading what the step writes) sees a mutant that lost the update, in the
  fixed-size and in the any-size reading;
* `Reported`: the model's own steps record what they report, and the trace checker lets a run that
  reports a second (or a missing) DISPATCH_END make the step and fail P4 rather than diverge.
"""
from __future__ import annotations

import dataclasses
import io
import random

import pytest
import z3

from spmcheck.checker.replay import check_stream
from spmcheck.checker.results import Verdict
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.certs import CertStore
from spmcheck.spec.lang.finite import compile_closed
from spmcheck.spec.lang.syntax import Exists, Implies, Var
from spmcheck.spec.lifecycle import definition as d
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import LPROPERTIES, scenario
from spmcheck.spec.lifecycle.trace import header_for
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Action, apply

CFG = LConfig()

# claim -> (variant whose stored counterexample breaks it, the property it is stored under)
BROKEN_BY: dict[str, tuple[str, str]] = {
    d.P3: ("slot-cleared-first", d.P3),
    d.P4: ("exit-over-active", d.P4),
    d.P4M: ("exit-over-active", d.P4M),
    d.P6: ("positive-tags", d.P6),
    d.P7: ("unscoped-hooks", d.P7),
    d.P8: ("conflict-scan-unlocked", d.P8),
    d.P9: ("publish-after-unlock", d.P9),
    d.GATE: ("process-wide-batching", d.GATE),
    d.DRAIN_ALL: ("final", d.DRAIN_ALL),
    d.SUBMIT: ("final", d.SUBMIT),
    d.LATE_STOP: ("final", d.LATE_STOP),
    d.DESTROYED: ("final", d.DESTROYED),
    # P9's claim in the deactivate scenario, where the checker names it as the finding
    "deactivate-releases-references": ("final", d.P9),
}


def _breaks(m: LifecycleModel, claim: str, states: list[dict], acts: list[Action]) -> bool:
    """The last step of the path breaks `claim`, read off the definition of m's variant."""
    c = m.protocol.claims.get(claim) or m.protocol.findings[claim]
    if c.kind == "invariant":
        assert c.expr is not None
        return not compile_closed(m.universe, c.expr, claim)(CONCRETE, states[-1])
    last = acts[-1]
    conds = [x for name, _, x in last.step.checks(CONCRETE, states[-2]) if name == claim]
    return bool(conds) and not all(conds)


@pytest.mark.parametrize("prop", sorted(BROKEN_BY))
def test_each_claim_is_read_by_the_fixed_size_reading(prop: str) -> None:
    variant, claim = BROKEN_BY[prop]
    m = LifecycleModel(scenario(CFG, prop), variant)
    got = CertStore("use").violation(m, prop, lambda st, acts: _breaks(m, claim, st, acts))
    assert got is not None, f"{variant}: the stored counterexample of {prop} does not break claim {claim}"
    # and the property the prover and the checker evaluate is that claim
    p = LPROPERTIES[prop]
    if (m.protocol.claims.get(claim) or m.protocol.findings[claim]).kind == "invariant":
        assert p.state is not None and p.watches is None
    else:
        assert p.step is not None and p.watches is not None
        assert {a.kind for a in m.actions if p.watches(a)} == {
            a.kind for a in m.protocol.actions if any(c == claim for c, _, _ in a.checks + a.finding_checks)}
    # a finding is kept apart from the claims (a reading that does not know findings ignores it)
    assert (claim in m.protocol.findings) == (claim in (d.DRAIN_ALL, d.SUBMIT, d.LATE_STOP, d.DESTROYED))
    assert not (claim in m.protocol.findings and claim in m.protocol.claims)


def test_final_keeps_every_proved_claim_on_a_walk() -> None:
    """The same compiled claims hold along random walks of final (no claim is false everywhere)."""
    m = LifecycleModel(CFG, "final")
    invariants = {n: compile_closed(m.universe, c.expr, n) for n, c in m.protocol.claims.items()
                  if c.kind == "invariant" and c.expr is not None}
    steps = {n for n, c in m.protocol.claims.items() if c.kind == "step"} - {
        d.DRAIN_ALL, d.SUBMIT, d.LATE_STOP, d.DESTROYED}
    rng = random.Random(3)
    seen: set[str] = set()
    for _ in range(20):
        s = m.init_state()
        for _ in range(150):
            en = [a for a in m.actions if a.enabled(CONCRETE, s)]
            if not en:
                break
            a = rng.choice(en)
            for name, _, x in a.step.checks(CONCRETE, s):
                if name in steps:
                    assert x, (name, a.describe())
                    seen.add(name)
            s = apply(m, CONCRETE, s, a)
            for name, f in invariants.items():
                assert f(CONCRETE, s), (name, a.describe())
    assert {d.P3, d.P7, d.GATE} <= seen  # the walks reach the watched steps


# ---- Post: what the step writes ------------------------------------------------------------------
DROP_RQ = "drop-update:dispatch:gated:dispatch_write:5"  # the enter hooks' serialize request lost
START0 = ("t0 context_register ctx=0", "t0 start_begin ctx=0 result=0", "t0 slot_publish ctx=0",
          "t0 spm_enable ctx=0 agents_mask=0", "t0 spm_set_enabled ctx=0", "t0 marker_release ctx=0")


def _run(m: LifecycleModel, events: tuple[str, ...]) -> dict:
    s = m.init_state()
    for e in events:
        t, kind, *kv = e.split()
        (a,) = [x for x in m.select(t, kind, dict(p.split("=") for p in kv)) if x.enabled(CONCRETE, s)][:1]
        s = apply(m, CONCRETE, s, a)
    return s


def test_post_sees_a_mutant_that_lost_the_update() -> None:
    """After a start (the serializer enabled for agent 0), the enter hook's P3 condition holds
    in final and fails in the mutant that drops the rq update: Post reads what the step writes."""
    mutant = dataclasses.replace(LVARIANTS["final"], name="final~rq", mutation=DROP_RQ, known_bad=True)
    for v, want in ((LVARIANTS["final"], True), (mutant, False)):
        m = LifecycleModel(CFG, v)
        s = _run(m, START0 + ("d0 dispatch_gate agent=0 id=0",))
        # the model's write (at `gated`); the shorthand of older logs (at `idle`) is not enabled here
        (w,) = [x for x in m.select("d0", "dispatch_write", {"agent": "0", "id": "0"}) if x.enabled(CONCRETE, s)]
        assert w.label == "gated"
        (cond,) = [x for name, _, x in w.step.checks(CONCRETE, s) if name == d.P3]
        assert bool(cond) is want, v.name


def test_post_in_the_any_size_reading() -> None:
    """The symbolic P3 condition of the enter hook is `ser_on(a) -> some context instruments` in
    final (Post reads the update) and `ser_on(a) -> rq(k)` (the pre-state) in the mutant."""
    from spmcheck.spec.parametric import lifecycle_transitions as lt

    mutant = dataclasses.replace(LVARIANTS["final"], name="final~rq-any", mutation=DROP_RQ, known_bad=True)
    lang = lt.LANG
    a, c = Var("a", lang.agent), Var("c", lang.context)
    for v, rq_pre in ((LVARIANTS["final"], False), (mutant, True)):
        (pa,) = [x for x in lt.build_lifecycle_actions(v) if x.kind == "dispatch_write"]
        S = lt.fresh_state("post")
        p = lt.lparams("post")
        f = pa.fire(S, p, claims=True)
        ins = Exists(c, lang.instruments(v, c, a))
        want = lt.open_expr(Implies(lang.ser_on(a), lang.rq(Var("k", lang.kernel)) if rq_pre else ins), S,
                            a=p.a, k=p.k)
        sol = z3.Solver()
        sol.add(f.enabled(), *f.side, f.claim(d.P3) != want)
        assert sol.check() == z3.unsat, v.name


# ---- Reported: a second DISPATCH_END is a P4 violation ---------------------------------------------
HEAD = header_for(CFG, "final", (("source", "test"),))


def _trace(delivered: int, prescan: int = 1, started: bool = True) -> str:
    """A dispatch on agent 0 with context 0 started (instrumented, one SPMPacket) or none."""
    on = int(started)
    events = (START0 if started else ()) + (
        f"d0 dispatch_write agent=0 id=0 batch={1 - on} instrumented={on} serialize={on} spm={on}",
        f"d0 dispatch_submit id=0 serialized={on}",
        f"h0 completion_exit id=0 prescan={prescan} delivered={delivered}",
        "h0 completion_signal id=0")
    return HEAD + "\n" + "".join(f"{i + 1} {e}\n" for i, e in enumerate(events))


def _check(text: str):  # type: ignore[no-untyped-def]
    return check_stream(io.BytesIO(text.encode()), "t.log")


def test_one_delivery_is_accepted() -> None:
    assert _check(_trace(1)).verdict == Verdict.ACCEPTED


@pytest.mark.parametrize("delivered", [2, 3, 0])
def test_a_second_or_missing_dispatch_end_is_a_p4_violation(delivered: int) -> None:
    r = _check(_trace(delivered))
    assert r.verdict == Verdict.VIOLATED and r.code == "CHK101", (r.verdict, r.code, r.message)
    assert r.prop == d.P4 and "P4" in r.message
    assert r.line == 1 + len(START0) + 3  # the completion_exit line


def test_a_delivery_for_a_dispatch_without_an_spm_packet_is_a_p4_violation() -> None:
    assert _check(_trace(0, prescan=0, started=False)).verdict == Verdict.ACCEPTED
    r = _check(_trace(1, prescan=0, started=False))
    assert r.verdict == Verdict.VIOLATED and r.prop == d.P4, (r.verdict, r.message)


def test_another_mismatch_still_diverges() -> None:
    """Only the reported observation is taken from the run: a wrong `prescan` is still CHK202."""
    r = _check(_trace(1, prescan=0))
    assert r.verdict == Verdict.DIVERGED and r.code == "CHK202" and "prescan" in r.message


def test_the_models_own_steps_count_what_they_report() -> None:
    """In the model (prover, recorder) Reported reads the observation: each completion adds to ks
    exactly the delivered count it reports, and no off-model step is among the actions."""
    m = LifecycleModel(CFG, "final")
    rng = random.Random(5)
    n = 0
    for _ in range(30):
        s = m.init_state()
        for _ in range(120):
            en = [a for a in m.actions if a.enabled(CONCRETE, s)]
            if not en:
                break
            a = rng.choice(en)
            nxt = apply(m, CONCRETE, s, a)
            if a.kind == "completion_exit":
                k = a.params["id"]
                got = a.observed(CONCRETE, s)["delivered"]
                assert nxt[f"ks.{k}"] - s[f"ks.{k}"] == got
                # the event as the model writes it names this step alone; another count names
                # only the off-model step, which counts what the event reports
                args = {"id": str(k), "prescan": str(int(a.observed(CONCRETE, s)["prescan"]))}
                assert [x for x in m.select(a.thread, a.kind, {**args, "delivered": str(got)})
                        if x.enabled(CONCRETE, s)] == [a]
                mine, off = [x for x in m.select(a.thread, a.kind, {**args, "delivered": str(got + 1)})
                             if x.enabled(CONCRETE, s)]
                assert mine is a and off not in m.actions and apply(m, CONCRETE, s, off)[f"ks.{k}"] == min(s[f"ks.{k}"] + got + 1, 3)
                n += 1
            s = nxt
    assert n > 0
    assert all(m._made[a.index][0].kind == a.kind for a in m.actions)  # one instance per definition step
