"""The data path (spec/datapath): verdicts per hazard x revision, knobs, witnesses, mutants, the
explorer's compilation against spec.lang.finite, and the counterexamples as v2 traces."""
from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from spmcheck.checker.cli import main
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.datapath.explore import Explorer
from spmcheck.spec.datapath.protocol import definition
from spmcheck.spec.datapath.variants import DVARIANTS, LATEST
from spmcheck.spec.certs import CERTS_DIR
from spmcheck.spec.datapath.certs import DatapathCerts, cert_name
from spmcheck.spec.datapath.verdicts import CERT_METHOD, ROWS, SCOPES, DVerdict, Runner, run
from spmcheck.spec.lang.mutate import Mutation, candidates

KNOBS = ("early_async", "completion_two_arg", "gate_per_agent", "hook_reads_gate")


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, str], DVerdict]:
    r = Runner()
    return {(row.id, v): r.verdict(row, DVARIANTS[v], clean=False) for row in ROWS for v in DVARIANTS}


def test_every_verdict_is_the_audits(table: dict[tuple[str, str], DVerdict]) -> None:
    """Each hazard's counterexample is found for the revision family the audit names, and the
    others are proved at the row's scope."""
    wrong = [f"{v}/{row}: {d.verdict}, expected {d.expected} ({d.why})" for (row, v), d in table.items()
             if not d.matches]
    assert not wrong, wrong
    assert not [d for d in table.values() if d.verdict == "unknown"]


def test_every_witness_is_reached(table: dict[tuple[str, str], DVerdict]) -> None:
    assert [f"{v}/{row}: {d.witness}" for (row, v), d in table.items() if not d.witness_reached] == []


def test_every_knob_changes_some_verdict(table: dict[tuple[str, str], DVerdict]) -> None:
    names = list(DVARIANTS)
    for knob in KNOBS:
        pairs = [(a, b) for a in names for b in names if a < b and _only(knob, DVARIANTS[a], DVARIANTS[b])]
        assert pairs, f"no two variants differ in {knob} alone"
        changed = [(a, b, row.id) for a, b in pairs for row in ROWS
                   if table[(row.id, a)].verdict != table[(row.id, b)].verdict]
        assert changed, f"{knob} changes no verdict"


def _only(knob: str, a: object, b: object) -> bool:
    return all((getattr(a, k) == getattr(b, k)) == (k != knob) for k in KNOBS)


def test_latest_revision(table: dict[tuple[str, str], DVerdict]) -> None:
    """2a7bb457 (later ordering, 2-argument completion, per-agent gate): the audit's hazards that
    remain and the two the later ordering trades in (stolen grant, drain coverage)."""
    got = {row.id: table[(row.id, LATEST)].verdict for row in ROWS}
    violated = {r for r, v in got.items() if v == "violated"}
    assert {"H1", "H2b-grant", "H4", "H5", "H6", "P3", "drain-covers", "late-delivery"} <= violated
    assert {"H2", "H2b", "H3", "gate"}.isdisjoint(violated)
    h1 = table[("H1", LATEST)]
    kinds = [e.kind for e in Runner().verdict(ROWS[0], DVARIANTS[LATEST]).events]
    assert h1.length == len(kinds) and kinds[-1] == "enter_hook" and "write_begin" in kinds


def test_drain_stuck_names_the_waiting_calls() -> None:
    d = Runner().verdict(next(r for r in ROWS if r.id == "H4"), DVARIANTS[LATEST], clean=False)
    assert d.verdict == "violated"
    assert any("interposition_sync" in w for w in d.waits)
    assert any("context_start" in w and "wait_for_stopping_contexts" in w for w in d.waits)


@pytest.mark.parametrize("variant,row,mutation", [
    # the drain's Queue::sync no longer waits for _active_kernels: the early ordering's coverage goes
    ("ee045e38", "drain-covers", "drop-guard:ctx:qsync:queue_sync:1"),
    # the later ordering's submit no longer counts the batch's session in _active_kernels
    ("2a7bb457", "H2", "drop-update:queue:b_submit:submit:0"),
    # a write no longer waits for the queue's previous packets: a barrier counts a session twice
    ("2a7bb457", "H2-fence", "drop-guard:queue:open:write_begin:2"),
])
def test_a_mutant_is_caught(variant: str, row: str, mutation: str) -> None:
    r = next(x for x in ROWS if x.id == row)
    assert Runner().verdict(r, DVARIANTS[variant], clean=False).verdict == "proved"
    m = Mutation.parse(mutation)
    assert m in candidates(definition(DVARIANTS[variant], SCOPES[r.scope]))
    assert Runner(mutation=mutation).verdict(r, DVARIANTS[variant], clean=False).verdict == "violated"


def test_explorer_agrees_with_the_finite_reading() -> None:
    """The explorer's plain-Python compilation (spec/datapath/fast.py) against spec.lang.finite's
    compile_instance on every state of one scope: the same enabled set, the same successors, the
    same observed values (what the exported traces report)."""
    v, sc = DVARIANTS["ee045e38"], SCOPES["barrier"]
    ex = Explorer(definition(v, sc), sc.sizes())
    g = ex.explore()
    pcs = {role: pc for role, pc in ex.proto.pc.items()}
    for tup in g.states[::3]:
        s = dict(zip(ex.names, tup))
        for inst in ex.instances:
            pc = pcs[inst.act.role.name]
            at = s[ex.u.key(pc, [inst.thread])] == pc.dom.index(inst.act.at)
            ref = at and all(x for _, x in inst.comp.selectors(CONCRETE, s)) and \
                all(x for _, x in inst.comp.guards(CONCRETE, s))
            assert bool(ref) == bool(at and inst.enabled(tup)), inst.describe()
            if ref:
                want = dict(s)
                want.update(inst.comp.effect(CONCRETE, s))
                assert inst.succ(tup) == tuple(want[n] for n in ex.names), inst.describe()
                as_int = lambda d: {k: int(x) if isinstance(x, bool) else x for k, x in d.items()}  # noqa: E731
                assert as_int(inst.observed(tup)) == as_int(inst.comp.observed(CONCRETE, s)), inst.describe()


def test_prove_cli_table_and_summary(capsys: pytest.CaptureFixture[str],
                                     table: dict[tuple[str, str], DVerdict]) -> None:
    assert main(["prove", "--model", "datapath", "--variant", LATEST, "--variant", "ee045e38",
                 "--property", "H2b", "--property", "H3"]) == 0
    out = capsys.readouterr().out.splitlines()
    nv = sum(table[(r, v)].verdict == "violated" for r in ("H2b", "H3") for v in (LATEST, "ee045e38"))
    assert out[-1] == (f"spmcheck: 4 datapath verdicts as expected ({nv} violated with a counterexample, "
                       f"{4 - nv} proved at a fixed scope; 0 findings)")
    h2b = next(x for x in out if x.startswith("H2b "))
    assert "violated (" in h2b and "proved [" in h2b
    assert main(["prove", "--model", "datapath", "--property", "H9"]) == 2


def test_definition_is_read_at_fixed_sizes_only() -> None:
    with pytest.raises(ValueError):
        definition(DVARIANTS[LATEST], dataclasses.replace(SCOPES["single"], queues=3))


def test_stored_certificates_are_current_and_give_the_searched_verdicts(
        table: dict[tuple[str, str], DVerdict]) -> None:
    """Every violated row's stored counterexample (spec/certs/datapath/) replays on today's
    definition and shows the violation; the verdicts equal the search's. A failure here means the
    certificates are stale: regenerate them with `spmcheck prove --model datapath --update`."""
    store = DatapathCerts("use")
    r = Runner(certs=store)
    got = {(row.id, v): r.verdict(row, DVARIANTS[v], clean=False) for row in ROWS for v in DVARIANTS}
    key = lambda d: (d.verdict, d.length, d.failing, d.waits, d.events, d.witness_reached)  # noqa: E731
    assert [k for k, d in got.items() if key(d) != key(table[k])] == []
    violated = {k for k, d in table.items() if d.verdict == "violated"}
    assert {k for k, d in got.items() if d.method == CERT_METHOD} == violated
    assert len(store.used) == len(violated)


def _stored(v: str, scope: str) -> dict:
    return json.loads((CERTS_DIR / "datapath" / cert_name(v, scope)).read_text())


def _verdict_with(tmp_path: Path, doc: dict, row_id: str, v: str) -> tuple[DVerdict, DatapathCerts]:
    row = next(r for r in ROWS if r.id == row_id)
    d = tmp_path / f"c{len(list(tmp_path.iterdir()))}"
    d.mkdir()
    (d / cert_name(v, row.scope)).write_text(json.dumps(doc))
    store = DatapathCerts("use", d)
    return Runner(certs=store).verdict(row, DVARIANTS[v], clean=False), store


def test_a_stale_or_wrong_certificate_falls_back_to_search(tmp_path: Path) -> None:
    doc = _stored(LATEST, "multi")
    d, store = _verdict_with(tmp_path, doc, "H1", LATEST)
    assert d.method == CERT_METHOD and store.used and d.verdict == "violated"
    stale = dict(doc, definition="0" * 64)  # made from another definition
    d, store = _verdict_with(tmp_path, stale, "H1", LATEST)
    assert (d.verdict, d.method, store.used) == ("violated", "breadth-first search", [])
    cut = copy.deepcopy(doc)  # a path that no longer reaches the violation
    cut["violations"]["H1"]["path"] = cut["violations"]["H1"]["path"][:-1]
    d, store = _verdict_with(tmp_path, cut, "H1", LATEST)
    assert (d.verdict, d.method, store.used) == ("violated", "breadth-first search", [])
    # a certificate never decides a verdict: a violation claimed for a row that is proved
    fix = _stored("2a7bb457+gate-fix", "multi")
    fix["violations"]["H1"] = doc["violations"]["H1"]
    d, store = _verdict_with(tmp_path, fix, "H1", "2a7bb457+gate-fix")
    assert (d.verdict, store.used) == ("proved", [])


def test_update_rewrites_the_same_certificate(tmp_path: Path) -> None:
    run([LATEST], ["H1", "H4"], certs=DatapathCerts("update", tmp_path), clean=False)
    (f,) = tmp_path.iterdir()
    assert json.loads(f.read_text()) == _stored(LATEST, "multi") | {
        "violations": {k: v for k, v in _stored(LATEST, "multi")["violations"].items() if k in ("H1", "H4")},
        "witnesses": {k: v for k, v in _stored(LATEST, "multi")["witnesses"].items() if k in ("H1", "H4")}}


def test_progress_certificate_is_checked_from_its_last_state(tmp_path: Path) -> None:
    """A stored progress counterexample is accepted only if no continuation of its last state
    reaches the goal: cut to a state from which the drain can still end, it is searched again."""
    doc = _stored(LATEST, "multi")
    d, store = _verdict_with(tmp_path, doc, "H4", LATEST)
    assert d.method == CERT_METHOD and d.waits
    cut = copy.deepcopy(doc)
    cut["violations"]["H4"]["path"] = cut["violations"]["H4"]["path"][:-1]  # before the stop began
    d, store = _verdict_with(tmp_path, cut, "H4", LATEST)
    assert (d.verdict, d.method, store.used) == ("violated", "breadth-first search", [])


def test_default_prove_includes_the_data_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--variant", LATEST, "--property", "H1", "--property", "H2", "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(r["model"], r["property"], r["verdict"]) for r in doc["results"]] == \
        [("datapath", "H1", "violated"), ("datapath", "H2", "proved")]
    assert doc["counts"]["datapath"] == 2 and "data path: 2" in doc["summary"]
    assert main(["prove", "--model", "core", "--variant", LATEST]) == 2  # not a core variant


def test_any_size_table_names_every_claim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--parametric", "--model", "datapath"]) == 0
    out = capsys.readouterr().out.splitlines()
    claims = list(dict.fromkeys(r.prop for r in ROWS))
    for c in claims:
        (ln,) = [x for x in out if x.strip().startswith(c + " ")]
        assert "bounded only: " in ln
    assert out[-1] == f"spmcheck: {len(claims)} data-path claims: 0 proved for any size, {len(claims)} bounded only"


def test_definition_hash_ignores_fields_left_at_their_default() -> None:
    """A field the language gains later, with a default, leaves the hash of a definition that
    does not use it unchanged (the certificates stay current); a changed value changes it."""
    from spmcheck.spec.datapath.certs import _canon, definition_hash

    @dataclasses.dataclass(frozen=True)
    class Old:
        a: int

    @dataclasses.dataclass(frozen=True)
    class New:
        a: int
        extra: tuple = ()

    assert _canon(Old(1)).replace("Old", "") == _canon(New(1)).replace("New", "")
    assert _canon(New(1)) != _canon(New(1, (2,)))
    sc = SCOPES["multi"]
    base = definition_hash(definition(DVARIANTS[LATEST], sc), sc.sizes())
    assert base == definition_hash(definition(DVARIANTS[LATEST], sc), sc.sizes())
    assert base != definition_hash(definition(DVARIANTS["ee045e38"], sc), sc.sizes())
    mutant = definition(DVARIANTS[LATEST], sc, "drop-guard:queue:open:write_begin:2")
    assert base != definition_hash(mutant, sc.sizes())
