"""Parametric proofs: one protocol definition (agreement), honest verdicts, real CTIs, cross-checks."""
from __future__ import annotations

import random
from typing import Iterator

import pytest
import z3

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.expected import EXPECTED
from spmcheck.spec.model import Action, Model, apply
from spmcheck.spec.programs import role_of
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config
from spmcheck.spec.parametric.transitions import PAction, Params, build_actions
from spmcheck.spec.parametric.encoding import fresh_state
from spmcheck.spec.parametric.finite import Structure
from spmcheck.spec.parametric.invariants import LAYERS, conjuncts
from spmcheck.spec.parametric.prove import any_size_status, run
from spmcheck.spec.parametric.queries import conj
from spmcheck.spec.parametric.results import any_size_text, render_text
from spmcheck.spec.parametric.status import STATUS


def walk_states(m: Model, seed: int, walks: int, depth: int) -> list[dict]:
    """Reached states: random walks that run one thread for a random burst before switching."""
    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        s = m.init_state()
        out.append(s)
        cur, left = rng.choice(m.cfg.threads()), rng.randint(1, 12)
        for _ in range(depth):
            en = [a for a in m.actions if a.enabled(CONCRETE, s)]
            if not en:
                break
            mine = [a for a in en if a.thread == cur] if left > 0 else []
            if not mine:
                cur, left = rng.choice(sorted({a.thread for a in en})), rng.randint(1, 12)
                mine = [a for a in en if a.thread == cur]
            s = apply(m, CONCRETE, s, rng.choice(mine))
            left -= 1
            out.append(s)
    return out


def _counterpart(st: Structure, idx: dict, act: Action) -> tuple[PAction, Params]:
    role = role_of(act.thread)
    en = act.params.get("enable") if act.step.per == "scope" else None
    pas = idx[(role, act.label, act.kind, act.step.per, en)]
    assert len(pas) == 1, act.describe()
    threads = st.updaters if role == "updater" else st.lookups
    ids = st.cfg.updater_ids() if role == "updater" else st.cfg.lookup_ids()
    t = threads[ids.index(act.thread)]
    a = st.agents[int(act.params.get("agent", 0))]  # type: ignore[arg-type]
    if act.step.per == "scope":
        members: tuple[int, ...] = act.params["scope"]  # type: ignore[assignment]
        h = st.holders[st.cfg.holder_ids().index(act.params["holder"])] if "holder" in act.params else None
        return pas[0], Params(t, a, z3.BoolVal(act.params["scope_name"] == "all"),
                              lambda x: z3.Or(*[x == st.agents[i] for i in members]) if members else z3.BoolVal(False),
                              tag=f"x{act.index}", h=h)
    return pas[0], Params(t, a, tag=f"x{act.index}")


def disagreements(variant: str, cfg: Config, states: list[dict], acts: list[PAction]) -> Iterator[str]:
    """Every action instance of spec.model on every state, against its parametric transition
    interpreted over the finite structure of that size."""
    m = Model(cfg, variant)
    idx: dict = {}
    for pa in acts:
        idx.setdefault((pa.role, pa.at, pa.kind, pa.per, pa.enable), []).append(pa)
    st = Structure(cfg)
    S = fresh_state("agree")
    with st.universe():
        fired = [(act, *_counterpart(st, idx, act)) for act in m.actions]
        fired = [(act, pa, pa.fire(S, p)) for act, pa, p in fired]
        for cs in states:
            sol = z3.Solver()
            sol.add(*st.distinct(), *st.pin(S, cs))
            for _, _, f in fired:
                sol.add(*f.side)
            assert sol.check() == z3.sat
            mod = sol.model()
            for act, pa, f in fired:
                ce = bool(act.enabled(CONCRETE, cs))
                pe = z3.is_true(mod.eval(f.enabled(), model_completion=True))
                if ce != pe:
                    yield f"{variant} {cfg.describe()}: {act.describe()} enabled {ce} vs parametric {pe}"
                    continue
                if not ce:
                    continue
                post = apply(m, CONCRETE, cs, act)
                got = st.read(mod, f.post)
                for name, val in got.items():
                    if post[name] != val:
                        yield f"{variant}: {act.describe()}: {name} = {post[name]} vs parametric {val}"
                for name in set(post) - st.mapped_vars():
                    if post[name] != cs[name]:
                        yield f"{variant}: {act.describe()} writes {name}, which has no parametric symbol"


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_parametric_transitions_agree_with_the_fixed_size_model(variant: str) -> None:
    acts = build_actions(VARIANTS[variant])
    for cfg, seed in ((Config(2, 2, 2), 3), (Config(1, 2, 1), 4)):
        m = Model(cfg, variant)
        states = walk_states(m, seed, 3, 40)[::8]
        bad = list(disagreements(variant, cfg, states, acts))
        assert not bad, bad[:5]


def test_agreement_check_detects_a_wrong_transition() -> None:
    """Negative control: an insert that forgets to mark the entry as existing must be caught."""
    import dataclasses

    class Forgets(PAction):
        def fire(self, s, p):  # type: ignore[no-untyped-def]
            f = PAction.fire(self, s, p)
            return type(f)(f.guards, f.side, f.post.with_({"ex": s.fns["ex"]}))

    acts = build_actions(VARIANTS["final"])
    broken = [Forgets(**{f.name: getattr(pa, f.name) for f in dataclasses.fields(pa)})
              if pa.kind == "serializer_insert" else pa for pa in acts]
    m = Model(Config(1, 1, 1), "final")
    states = walk_states(m, 1, 6, 40)
    assert any("ser.ex" in d for d in disagreements("final", Config(1, 1, 1), states, broken))


def test_domain_closure_reading_agrees_with_the_expanded_one() -> None:
    """The agreement test expands quantifiers over the elements; here the quantified guards are
    checked against the concrete ones under distinctness + domain-closure axioms instead."""
    cfg = Config(1, 2, 1)
    m = Model(cfg, "final")
    st = Structure(cfg, "dc")
    S = fresh_state("dc")
    idx: dict = {}
    for pa in build_actions(m.variant):
        idx.setdefault((pa.role, pa.at, pa.kind, pa.per, pa.enable), []).append(pa)
    for cs in walk_states(m, 9, 2, 30)[5::20]:
        base = st.axioms() + st.pin(S, cs)
        for act in m.actions:
            pa, p = _counterpart(st, idx, act)
            f = pa.fire(S, p)
            sol = z3.Solver()
            sol.set("timeout", 5000)
            sol.add(*base, *f.side, f.enabled() != z3.BoolVal(bool(act.enabled(CONCRETE, cs))))
            assert sol.check() == z3.unsat, act.describe()


@pytest.fixture(scope="module")
def results():  # type: ignore[no-untyped-def]
    return run()


def test_verdicts_match_expectations(results) -> None:  # type: ignore[no-untyped-def]
    from spmcheck.spec.properties import CORE_FINDINGS

    got = {(r.variant, r.property): r.verdict for r in results}
    # a finding (a counterexample the fixed-size prover shows against final) has no any-size proof
    assert got == {k: v[0] for k, v in EXPECTED.items() if k[1] not in CORE_FINDINGS}
    for r in results:
        assert r.expected == EXPECTED[(r.variant, r.property)][0]


def test_proved_means_every_query_valid_and_witnesses_reachable(results) -> None:  # type: ignore[no-untyped-def]
    for r in results:
        if r.verdict != "proved":
            continue
        names = [c.name for c in r.checks]
        assert names[0] == "initiation" and "implies-property" in names or "lock-graph" in names
        acts = build_actions(VARIANTS[r.variant])
        assert {f"consecution:{a.name}" for a in acts} <= set(names), r
        assert all(c.status == "valid" for c in r.checks)
        assert r.witnesses and all(w.verdict == "reachable" for w in r.witnesses)
        assert any_size_status(r.variant, r.property) == "any size"


def test_known_bad_pairs_carry_a_cti_and_a_confirmed_trace(results) -> None:  # type: ignore[no-untyped-def]
    for r in results:
        if r.verdict != "violated":
            continue
        bad = r.failed
        assert bad and bad[0].status == "fails"
        assert bad[0].name.split(":")[0] in ("initiation", "consecution", "implies-property", "lock-graph")
        assert any(c.cti is not None for c in bad), r.variant
        assert r.counterexample and r.counterexample[0].startswith("spmcheck-trace v1")
        assert r.to_json()["checks"]


def test_step_ctis_replay_on_the_fixed_size_model(results) -> None:  # type: ignore[no-untyped-def]
    """A consecution CTI is a real step of the protocol: from its pre-state (as a fixed-size
    state) the fixed-size action it names is enabled and makes exactly the recorded changes."""
    seen = 0
    for r in results:
        for c in r.checks:
            if c.cti is None or not c.cti.event:
                continue
            cfg = Config(*c.cti.sizes)
            m = Model(cfg, r.variant)
            pre = _concrete(m, dict(c.cti.pre))
            _, thread, kind, *kvs = c.cti.event.split()
            static = tuple(kv.split("=", 1) for kv in kvs)
            cands = [a for a in m.actions_by_key.get((thread, kind, tuple(map(tuple, static))), [])  # type: ignore[arg-type]
                     if a.enabled(CONCRETE, pre)]
            assert len(cands) == 1, (r.variant, c.name, c.cti.event)
            post = apply(m, CONCRETE, pre, cands[0])
            changed = {n for n in post if post[n] != pre[n]}
            assert changed == {n for n, _, _ in c.cti.changes}, (r.variant, c.name)
            seen += 1
    assert seen >= 3


def _concrete(m: Model, pre: dict[str, str]) -> dict:
    from spmcheck.spec.programs import LABELS

    out = m.init_state()
    for name in out:
        if name not in pre:
            continue
        v = pre[name]
        if name.startswith("pc."):
            out[name] = LABELS[role_of(name[3:])].index(v)
        elif isinstance(out[name], bool):
            out[name] = v == "1"
        else:
            out[name] = int(v)
    return out


def test_unknown_is_never_reported_as_proved() -> None:
    (r,) = run(["final"], ["creation-consistent"], timeout=0.001, jobs=1)
    assert any(c.status == "unknown" for c in r.checks)
    assert r.verdict == "unknown" and "solver unknown" in r.reason


def test_status_table_matches_run(results) -> None:  # type: ignore[no-untyped-def]
    assert STATUS == {(r.variant, r.property): any_size_text(r) for r in results}
    with pytest.raises(ValueError):
        any_size_status("final", "no-such-property")
    assert any_size_status("stale-lookup", "creation-consistent").startswith("bounded only: ")
    text = render_text(results)
    assert text.count("\n") >= len(results) + 2 and "any size" in text


# ---- cross-checks: invariants hold on reached states of small sizes ------------------------
SIZES = [Config(1, 1, 1), Config(2, 1, 1), Config(1, 2, 1), Config(1, 1, 2), Config(2, 2, 1),
         Config(3, 1, 1), Config(2, 2, 2), Config(4, 1, 1), Config(1, 3, 1), Config(1, 1, 3)]


def _proved_layers(variant: str) -> set[str]:
    layers: set[str] = set()
    for (v, p), (exp, _) in EXPECTED.items():
        if v == variant and exp == "proved":
            layers |= set(LAYERS[p])
    return layers


def _refuted(cfg: Config, variant: str, inv: list, states: list[dict]) -> list[str]:
    st = Structure(cfg, "x")
    S = fresh_state("x")
    out = []
    with st.universe():
        terms = [(c.name, c.fn(S)) for c in inv]
        for cs in states:
            sol = z3.Solver()
            sol.add(*st.distinct(), *st.pin(S, cs))
            assert sol.check() == z3.sat
            mod = sol.model()
            out += [f"{cfg.describe()}: {n}" for n, t in terms if not z3.is_true(mod.eval(t, model_completion=True))]
    return out


@pytest.mark.parametrize("variant", ["final", "caller-flag", "apply-after-unlock", "reversed-lookup-order"])
def test_invariants_hold_on_states_reached_at_small_sizes(variant: str) -> None:
    layers = _proved_layers(variant)
    inv = [c for c in conjuncts(VARIANTS[variant]) if c.layer in layers]
    for i, cfg in enumerate(SIZES):
        states = walk_states(Model(cfg, variant), 20 + i, 2, 60)[::8]
        bad = _refuted(cfg, variant, inv, states)
        assert not bad, bad[:3]


def test_cross_check_can_refute_a_false_conjunct() -> None:
    """Negative control: 'no serializer entry ever exists' is refuted by reached states."""
    from spmcheck.spec.parametric.encoding import Agent, forall
    from spmcheck.spec.parametric.invariants import Conjunct

    false = Conjunct("no entries", "test", lambda s: forall(Agent, lambda x: z3.Not(s.ex(x))), "test")
    cfg = Config(1, 1, 1)
    states = walk_states(Model(cfg, "final"), 2, 4, 60)
    assert _refuted(cfg, "final", [false], states)


def test_invariant_of_a_proved_pair_holds_in_init() -> None:
    inv = [c for c in conjuncts(VARIANTS["final"])]
    cfg = Config(2, 2, 2)
    assert not _refuted(cfg, "final", inv, [Model(cfg, "final").init_state()])
    S = fresh_state("i")
    assert z3.is_expr(conj(S, inv))


def test_cti_search_is_not_cut_by_a_slow_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failing query keeps its CTI when the machine is slow: the CTI search is bounded by Z3
    resource units, the wall clock only by a safety net of WALL_FACTOR x the budget. Here the
    clock jumps by the whole budget while the main query runs (a loaded machine); a search cut at
    the query's own wall-clock deadline returned `fails` with no CTI (a flake seen side by side
    with another suite)."""
    from spmcheck.spec.parametric import queries
    from spmcheck.spec.parametric.results import Cti

    timeout, clock = 2.0, [100.0]
    monkeypatch.setattr(queries.time, "monotonic", lambda: clock[0])
    x = z3.Int("x")

    def build(b):  # type: ignore[no-untyped-def]
        clock[0] += timeout * 1.01 if b is None else 0.0  # the main query "took" the whole budget
        return [x > 3], lambda m: Cti((1, 1, 1), (("x", str(m.eval(x))),), "", ())

    c = queries.run_check("probe", build, "EPR", timeout, sizes=[(1, 1, 1)])
    assert c.status == "fails" and c.cti is not None
    assert c.cti.pre[0][0] == "x" and int(c.cti.pre[0][1]) > 3
    # past the safety net, the search stops (and says so) instead of running on
    clock[0] = 100.0

    def late(b):  # type: ignore[no-untyped-def]
        clock[0] += queries.WALL_FACTOR * timeout * 1.01 if b is None else 0.0
        return [x > 3], lambda m: Cti((1, 1, 1), (), "", ())

    c2 = queries.run_check("probe", late, "EPR", timeout, sizes=[(1, 1, 1)])
    assert c2.status == "fails" and c2.cti is None and "no CTI" in c2.reason


def test_parametric_checks_are_bounded_by_resource_units() -> None:
    """`limit` bounds a check by Z3's rlimit (T * RLIMIT_PER_SECOND units, counted from the start
    of the check): with the wall-clock net a minute away, a hard query stops on its units."""
    import time

    from spmcheck.spec.budget import RLIMIT_PER_SECOND
    from spmcheck.spec.parametric import queries

    # 13 pigeons in 12 holes as plain clauses: unsatisfiable, and resolution (CDCL) needs
    # exponentially many steps for it whatever the seed or the Z3 version, so 10 000 units never
    # suffice (a nonlinear integer query was used before: nlsat refuted it at once on CI's run)
    n = 12
    p = [[z3.Bool(f"p{i}_{j}") for j in range(n)] for i in range(n + 1)]
    s = z3.Solver()
    for i in range(n + 1):
        s.add(z3.Or(p[i]))
    for j in range(n):
        for i in range(n + 1):
            for k in range(i + 1, n + 1):
                s.add(z3.Or(z3.Not(p[i][j]), z3.Not(p[k][j])))
    before = s.statistics().get_key_value("rlimit count") if "rlimit count" in s.statistics().keys() else 0
    queries.limit(s, 1e-3, time.monotonic() + 60)  # 10 000 units
    t0 = time.monotonic()
    assert s.check() == z3.unknown
    assert s.reason_unknown() == "canceled", s.reason_unknown()  # Z3's word for rlimit, not "timeout"
    assert time.monotonic() - t0 < 30
    used = s.statistics().get_key_value("rlimit count") - before
    assert int(1e-3 * RLIMIT_PER_SECOND) <= used <= 2 * int(1e-3 * RLIMIT_PER_SECOND) + 1000, used
