"""Parametric lifecycle proofs: one definition (agreement with LifecycleModel through stated
abstractions), honest verdicts, CTIs in the lifecycle trace format, cross-checks at small sizes."""
from __future__ import annotations

import dataclasses
from typing import Iterator

import pytest
import z3

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.lifecycle.expected import expected
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.definition import DISPATCH_LABELS, TOOL_LABELS, definition
from spmcheck.spec.lifecycle.properties import CORE_LPROPS, LPROPERTIES
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Action, apply
from spmcheck.spec.parametric.encoding import forall
from spmcheck.spec.parametric.lifecycle_transitions import (
    LAction, LFired, LParams, Scenario, build_lifecycle_actions, fresh_state, init,
)
from spmcheck.spec.parametric.lifecycle_encoding import Ctx
from spmcheck.spec.parametric.lifecycle_finite import PROTO as PROTO_FINAL, LStructure, abstraction_holds, universe
from spmcheck.spec.parametric.lifecycle_invariants import LAYERS, LConjunct, conjuncts
from spmcheck.spec.parametric.lifecycle_prove import (
    BAD_PAIRS, LPROPS, STATE_PROPS, balanced, default_pairs, prove_pair, witness_refuted,
)
from spmcheck.spec.lifecycle.invariants import sample_states
from spmcheck.spec.parametric.prove import any_size_status, lifecycle_pairs, run
from spmcheck.spec.parametric.results import any_size_text, render_text
from spmcheck.spec.parametric.status import LSTATUS

CFG = LConfig(2, 2, 2, 3)


def walk_states(m: LifecycleModel, seed: int, steps: int, depth: int) -> list[dict]:
    """Reached states: the thread-, then kind-uniform random walks Houdini samples from."""
    return sample_states(m, steps, depth, seed)


def _counterpart(st: LStructure, idx: dict, act: Action) -> tuple[LAction, LParams]:
    role = {"t": "tool", "d": "dispatch", "h": "complete"}[act.thread[0]]
    vo = ""
    if act.kind == "queue_sync":
        vo = "ok" if act.observed(CONCRETE, {})["drained"] else "timeout"
    pas = idx[(role, act.label, act.kind, vo)]
    assert len(pas) == 1, act.describe()
    p = act.params
    members: tuple[int, ...] = tuple(p.get("scope", ()))  # type: ignore[arg-type]  (spec.model.legacy_params)
    setp = (lambda x: z3.Or(*[x == st.agents[i] for i in members])) if members else (lambda x: z3.BoolVal(False))
    t = st.tools[int(act.thread[1:])] if role == "tool" else st.tools[0]
    return pas[0], LParams(t, st.ctxs[int(p.get("ctx", 0))], st.agents[int(p.get("agent", 0))],  # type: ignore[arg-type]
                           st.disps[int(p.get("id", 0))], setp, f"x{act.index}",  # type: ignore[arg-type]
                           z3.BoolVal(p.get("scope_name") == "all"))


def _obs_value(mod: z3.ModelRef, term: z3.ExprRef) -> int | bool:
    v = mod.eval(term, model_completion=True)
    if z3.is_int_value(v):
        return v.as_long()  # type: ignore[attr-defined]
    return z3.is_true(v)


def _abstracted_vars(cfg: LConfig) -> set[str]:
    u = universe(cfg)
    return {u.key(PROTO_FINAL.func(n), args) for n in PROTO_FINAL.abstractions
            for args in u.applications(PROTO_FINAL.func(n))}


def disagreements(variant: str, cfg: LConfig, states: list[dict], acts: list[LAction]) -> Iterator[str]:
    """Every LifecycleModel action instance on every state against the definition's any-size
    reading over the finite structure: enabledness (a step with finite-only conjuncts,
    `Action.any_size`, may be enabled in more states, never in fewer: the superset the proofs
    rely on), the post-state of every mapped variable, the abstracted counters' equations in
    the pre- and the post-state, and every observed value that has an any-size reading."""
    m = LifecycleModel(cfg, variant)
    idx: dict = {}
    for pa in acts:
        idx.setdefault((pa.role, pa.at, pa.kind, pa.variant_of), []).append(pa)
    st = LStructure(cfg)
    S = fresh_state("agree")
    abstracted = _abstracted_vars(cfg)
    with st.universe():
        fired: list[tuple[Action, LAction, LFired]] = []
        for act in m.actions:
            pa, p = _counterpart(st, idx, act)
            fired.append((act, pa, pa.fire(S, p)))
        for cs in states:
            broken = abstraction_holds(cfg, cs)
            if broken:
                yield f"{variant}: a reached state where {broken}"
                continue
            sol = z3.Solver()
            sol.add(*st.distinct(), *st.pin(S, cs))
            for _, _, f in fired:
                sol.add(*f.side)
            assert sol.check() == z3.sat
            mod = sol.model()
            for act, pa, f in fired:
                ce = bool(act.enabled(CONCRETE, cs))
                pe = z3.is_true(mod.eval(f.enabled(), model_completion=True))
                if ce != pe and not (pa.defn.any_size and pe):
                    yield f"{variant}: {act.describe()} enabled {ce} vs parametric {pe}"
                    continue
                if not ce:
                    continue
                post = apply(m, CONCRETE, cs, act)
                got = st.read(mod, f.post)
                for name, val in got.items():
                    if post[name] != val:
                        yield f"{variant}: {act.describe()}: {name} = {post[name]} vs parametric {val}"
                for name in set(post) - st.mapped_vars() - abstracted:
                    if post[name] != cs[name]:
                        yield f"{variant}: {act.describe()} writes {name}, which has no parametric symbol"
                bad = abstraction_holds(cfg, post)
                if bad:
                    yield f"{variant}: {act.describe()}: abstraction does not commute: {bad}"
                cobs = act.observed(CONCRETE, cs)
                for k in cobs:
                    try:
                        term = f.obs(k)
                    except TypeError:  # a Mask / Count observation: finite readings only
                        continue
                    if cobs[k] != _obs_value(mod, term):
                        yield f"{variant}: {act.describe()}: observed {k} = {cobs[k]} vs parametric {_obs_value(mod, term)}"


# variants covering every knob of LVariant (and the drain timeout scenario)
KNOB_VARIANTS = ["exit-over-active", "conflict-scan-unlocked", "unscoped-hooks", "pr-758072b",
                 "unconditional-stop-disable", "set-agents-race"]


def test_final_transitions_agree_with_the_fixed_size_model() -> None:
    m = LifecycleModel(CFG, "final")
    acts = build_lifecycle_actions(m.variant, Scenario(CFG.timeouts, CFG.deactivate, CFG.destroy))
    states = walk_states(m, 3, 240, 60)[::6]
    bad = list(disagreements("final", CFG, states, acts))
    assert not bad, bad[:5]


@pytest.mark.parametrize("variant", KNOB_VARIANTS)
def test_knob_transitions_agree_with_the_fixed_size_model(variant: str) -> None:
    m = LifecycleModel(CFG, variant)
    acts = build_lifecycle_actions(m.variant, Scenario())
    states = walk_states(m, 5, 120, 40)[::15]
    bad = list(disagreements(variant, CFG, states, acts))
    assert not bad, bad[:5]


def test_scenario_switches_agree() -> None:
    """deactivate / profile destroy / no drain timeout (the findings' scenarios)."""
    cfg = LConfig(2, 2, 1, 2, timeouts=False, deactivate=True, destroy=True)
    m = LifecycleModel(cfg, "final")
    acts = build_lifecycle_actions(m.variant, Scenario(False, True, True))
    bad = list(disagreements("final", cfg, walk_states(m, 8, 120, 40)[::12], acts))
    assert not bad, bad[:5]


def test_agreement_check_detects_a_wrong_transition() -> None:
    """Negative control: the definition with its exit hook no longer erasing the packet (a
    mutation of the definition, read by the any-size reading) disagrees with the final model."""
    from spmcheck.spec.lang.mutate import Mutation, changed

    name = "drop-update:complete:idle:completion_exit:3"
    final = LVARIANTS["final"]
    assert changed(definition(final, CFG), Mutation.parse(name)) == {("complete", "idle", "completion_exit")}
    acts = build_lifecycle_actions(dataclasses.replace(final, name="final~erase", mutation=name))
    cfg = LConfig(1, 1, 1, 2)
    m = LifecycleModel(cfg, "final")
    # register and start context 0, then write and submit a dispatch: it is in flight with its
    # SPM packet mapped, the state where the exit hook must erase it
    s = m.init_state()
    for thread, kind in (("t0", "context_register"), ("t0", "start_begin"), ("t0", "slot_publish"),
                         ("t0", "spm_enable"), ("t0", "spm_set_enabled"), ("t0", "marker_release"),
                         ("d0", "dispatch_gate"), ("d0", "dispatch_write"), ("d0", "dispatch_submit")):
        act = next(a for a in m.actions if a.thread == thread and a.kind == kind and a.enabled(CONCRETE, s))
        s = apply(m, CONCRETE, s, act)
    assert s["mp.0.0"] and s["st.0"] == 2
    assert not list(disagreements("final", cfg, [s], build_lifecycle_actions(final)))
    assert any("mp.0.0" in d for d in disagreements("final", cfg, [s], acts))


def test_initial_state_agrees() -> None:
    """The any-size Init (the definition's initial values) holds of the fixed-size initial state,
    and pins every mapped variable there but the element-valued locals (left free: a superset)."""
    st = LStructure(CFG, "i")
    S = fresh_state("init")
    m = LifecycleModel(CFG, "final")
    with st.universe():
        sol = z3.Solver()
        sol.add(*st.distinct(), *st.pin(S, m.init_state()), z3.Not(init(S)))
        assert sol.check() == z3.unsat


# ---- cross-checks: invariants and properties on reached states of small sizes ---------------------
SIZES = [LConfig(1, 1, 1, 1), LConfig(2, 2, 2, 2), LConfig(3, 2, 2, 2), LConfig(2, 3, 2, 3)]


def _evaluate(cfg: LConfig, states: list[dict], fns: list[tuple[str, object]]) -> Iterator[tuple[int, str, bool]]:
    st = LStructure(cfg, "x")
    S = fresh_state("x")
    with st.universe():
        terms = [(n, fn(S)) for n, fn in fns]  # type: ignore[operator]
        for i, cs in enumerate(states):
            sol = z3.Solver()
            sol.add(*st.distinct(), *st.pin(S, cs))
            assert sol.check() == z3.sat
            mod = sol.model()
            for n, t in terms:
                yield i, n, z3.is_true(mod.eval(t, model_completion=True))


def _final_invariant() -> list[LConjunct]:
    layers = {x for p in CORE_LPROPS for x in LAYERS[p]}
    return [c for c in conjuncts(LVARIANTS["final"]) if c.layer in layers or c.name == "mirror (P1)"]


@pytest.mark.parametrize("cfg", SIZES, ids=lambda c: f"a{c.agents}c{c.contexts}t{c.tools}k{c.dispatches}")
def test_invariants_and_abstractions_hold_on_reached_states(cfg: LConfig) -> None:
    m = LifecycleModel(cfg, "final")
    states = walk_states(m, 20 + cfg.agents, 400, 80)[::10]
    for s in states:
        assert not abstraction_holds(cfg, s), abstraction_holds(cfg, s)
    fns = [(c.name, c.fn) for c in _final_invariant()]
    bad = [f"{cfg.describe()}: {n}" for _, n, ok in _evaluate(cfg, states, fns) if not ok]
    assert not bad, bad[:3]


def test_cross_check_can_refute_a_false_conjunct() -> None:
    """Negative control: 'no context is ever published' is refuted by reached states."""
    cfg = LConfig(1, 1, 1, 1)
    states = walk_states(LifecycleModel(cfg, "final"), 2, 300, 60)
    from spmcheck.spec.parametric.lifecycle_encoding import PUBLISHED

    fn = lambda s: forall(Ctx, lambda c: s.slot(c) != PUBLISHED)  # noqa: E731
    assert any(not ok for _, _, ok in _evaluate(cfg, states, [("never published", fn)]))


@pytest.mark.parametrize("variant", ["final", "positive-tags", "conflict-scan-unlocked", "exit-over-active"])
def test_state_properties_agree_with_the_fixed_size_ones(variant: str) -> None:
    """The parametric form of each state property, on the finite structure, against the
    fixed-size property (P9: the first-order form implies the sum form)."""
    cfg = LConfig(2, 2, 2, 2)
    m = LifecycleModel(cfg, variant)
    states = walk_states(m, 4, 300, 60)[::5]
    v = LVARIANTS[variant]
    fns = [(p, (lambda s, p=p: STATE_PROPS[p](v, s))) for p in STATE_PROPS]
    for i, p, ok in _evaluate(cfg, states, fns):
        conc = bool(LPROPERTIES[p].state(CONCRETE, states[i], m))  # type: ignore[misc]
        if p == "refcount-balanced":
            assert not ok or conc, (variant, p, i)
        else:
            assert ok == conc, (variant, p, i)


@pytest.mark.parametrize("sizes", [(2, 3), (3, 2), (1, 4)])
def test_first_order_p9_implies_the_sum_form(sizes: tuple[int, int]) -> None:
    """For EVERY state of a finite structure (symbolically, not only reached ones): the proved
    first-order P9 implies rc = Σ_c hd(c, .) for `all` and for each agent."""
    a, c = sizes
    st = LStructure(LConfig(a, c, 1, 1), "s")
    S = fresh_state("sum")
    with st.universe():
        p9 = balanced(S)
    sums = [S.rc_all() == z3.Sum([S.hd_all(x) for x in st.ctxs])]
    sums += [S.rc(ag) == z3.Sum([S.hd(x, ag) for x in st.ctxs]) for ag in st.agents]
    sol = z3.Solver()
    sol.add(*st.distinct(), p9, z3.Not(z3.And(*sums)))
    assert sol.check() == z3.unsat


# ---- verdicts -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def results():  # type: ignore[no-untyped-def]
    return [prove_pair(v, p) for v, p in default_pairs()]


def test_final_core_properties_are_proved_at_any_size(results) -> None:  # type: ignore[no-untyped-def]
    got = {(r.variant, r.property): r for r in results}
    # map-empty-after-drain is violated by final since the drain is judged queue by queue
    # (spec/lifecycle/expected.py, digest §2.9): its implication fails at the successful drain and
    # a stored concrete trace confirms it
    r = got[("final", "map-empty-after-drain")]
    assert r.verdict == "violated" and r.failed[0].name == "implies-property:t.drain.queue_sync[ok]", r.reason
    for p in LPROPS:
        if expected("final", p)[0] != "proved":
            continue
        r = got[("final", p)]
        assert r.verdict == "proved", (p, r.reason)
        names = [c.name for c in r.checks]
        assert names[0] == "initiation"
        assert {f"consecution:{a.name}" for a in build_lifecycle_actions(LVARIANTS["final"])} <= set(names)
        assert any(n.startswith(("implies-property", "deadlock")) for n in names)
        assert all(c.status == "valid" for c in r.checks) and all(c.fragment for c in r.checks)
        assert r.witnesses and all(w.verdict == "reachable" for w in r.witnesses)
        assert any_size_status("final", p, model="lifecycle") == "any size"


def test_known_bad_variants_fail_a_check_with_a_cti_and_a_confirmed_trace(results) -> None:  # type: ignore[no-untyped-def]
    bad_pairs = {(r.variant, r.property): r for r in results if (r.variant, r.property) in BAD_PAIRS}
    assert set(bad_pairs) == set(BAD_PAIRS)
    for (v, p), r in bad_pairs.items():
        assert expected(v, p)[0] == "violated"
        assert r.verdict == "violated", (v, p, r.reason)
        first = r.failed[0]
        assert first.status == "fails" and first.name.split(":")[0] in ("initiation", "consecution", "implies-property")
        assert first.cti is not None
        lines = first.cti.lines()
        assert lines[1].startswith(f"spmcheck-trace v1 model=lifecycle variant={v} ")
        assert r.counterexample and r.counterexample[0].startswith("spmcheck-trace v1 model=lifecycle")


def test_step_ctis_are_real_steps_of_the_fixed_size_model(results) -> None:  # type: ignore[no-untyped-def]
    """A consecution/step-property CTI's event, from its pre-state as a LifecycleModel state
    (abstracted counters rebuilt by the abstraction functions), is enabled there and makes the
    recorded changes."""
    seen = 0
    for r in results:
        for c in r.checks:
            if c.cti is None or not c.cti.event:
                continue
            pre = dict(c.cti.pre)
            sizes = [int(x.split()[0]) for x in c.cti.size_text.split(", ")]
            cfg = LConfig(*sizes)
            m = LifecycleModel(cfg, r.variant)
            _, thread, kind, *kvs = c.cti.event.split()
            cs = _concrete(m, pre, dict(kv.split("=", 1) for kv in kvs))
            static = tuple(tuple(kv.split("=", 1)) for kv in kvs)
            cands = [a for a in m.actions_by_key.get((thread, kind, static), []) if a.enabled(CONCRETE, cs)]  # type: ignore[arg-type]
            if len(cands) > 1:
                # actions sharing thread, kind and static keys (queue_sync drained=1/0, both
                # enabled when a queue was busy and idle during the drain): the check names the
                # parametric action, whose observation tells them apart
                ok = "[timeout]" not in c.name
                cands = [a for a in cands if bool(a.observed(CONCRETE, cs).get("drained")) == ok]
            assert len(cands) == 1, (r.variant, c.name, c.cti.event)
            post = apply(m, CONCRETE, cs, cands[0])
            changed = {n for n in post if post[n] != cs[n] and n in pre}
            assert changed == {n for n, _, _ in c.cti.changes}, (r.variant, c.name)
            seen += 1
    assert seen >= 3


def _concrete(m: LifecycleModel, pre: dict[str, str], event: dict[str, str]) -> dict:
    """The CTI's pre-state as a LifecycleModel state: the abstracted counters rebuilt by their
    equations, and the cursor `dn` (which any size does not read: `Action.any_size`) at the
    dispatch the event names."""
    cfg: LConfig = m.cfg  # type: ignore[assignment]
    out = m.init_state()
    for name in out:
        if name not in pre:
            continue
        v = pre[name]
        if name.startswith("pc.t"):
            out[name] = TOOL_LABELS.index(v)
        elif name in ("pc.d0", "pc.h0"):
            out[name] = (DISPATCH_LABELS if name == "pc.d0" else ["idle", "exited"]).index(v)
        elif isinstance(out[name], bool):
            out[name] = v == "1"
        else:
            out[name] = int(v)
    K = range(cfg.dispatches)
    if "id" in event:
        out["dn"] = int(event["id"])
    for a in range(cfg.agents):
        out[f"inf.{a}"] = sum(1 for k in K if out[f"da.{k}"] == a and 2 <= int(out[f"st.{k}"]) <= 3)
    for k in K:
        out[f"ks.{k}"] = min(3, sum(1 for c in range(cfg.contexts) if out[f"pk.{k}.{c}"] == 2 and not out[f"mp.{k}.{c}"]))
    return out


def test_p5_witness_refuted_only_where_the_invariant_excludes_it() -> None:
    assert witness_refuted("final", "thread-waits-for-mutex")
    # set_dispatch_agents that does not wait for markers can hold the mutex during a start
    assert not witness_refuted("set-agents-race", "thread-waits-for-mutex")
    assert not witness_refuted("final", "no-such-witness")


def test_unknown_is_never_reported_as_proved() -> None:
    r = prove_pair("final", "refcount-balanced", timeout=0.0001)
    assert r.verdict == "unknown" and any(c.status == "unknown" for c in r.checks)
    assert any_size_text(r).startswith("bounded only: ")


def test_status_table_matches_a_fresh_run(results) -> None:  # type: ignore[no-untyped-def]
    assert LSTATUS == {(r.variant, r.property): any_size_text(r) for r in results}
    assert any_size_status("final", "spm-contexts-disjoint") == "any size"  # lifecycle-only name
    assert any_size_status("final", "lock-order-acyclic") == "any size"  # the core's P5
    assert any_size_status("pr-758072b", "tags-disjoint").startswith("bounded only: ")
    with pytest.raises(ValueError):
        any_size_status("final", "no-such-property", model="lifecycle")


def test_run_integrates_lifecycle_rows() -> None:
    rs = run(["final"], ["creation-consistent"], lifecycle=[("final", "tags-disjoint")], jobs=1)
    assert [(r.model, r.variant, r.property, r.verdict) for r in rs] == [
        ("core", "final", "creation-consistent", "proved"), ("lifecycle", "final", "tags-disjoint", "proved")]
    assert "lifecycle" in render_text(rs)
    assert run(["final"], ["creation-consistent"], jobs=1)[0].model == "core"  # default: core only
    assert lifecycle_pairs(["final"], ["agent-scoping"]) == [("final", "agent-scoping")]
    assert len(lifecycle_pairs()) == len(LPROPS) + len(BAD_PAIRS)
    with pytest.raises(ValueError):
        lifecycle_pairs(["no-such-variant"])
