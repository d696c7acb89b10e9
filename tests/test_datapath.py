"""The data path (spec/datapath): verdicts per hazard x revision, knobs, witnesses, mutants, the
explorer's compilation against spec.lang.finite, and the counterexamples as v2 traces."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from spmcheck.checker.cli import main
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.datapath.explore import Explorer
from spmcheck.spec.datapath.protocol import definition
from spmcheck.spec.datapath.variants import DVARIANTS, LATEST
from spmcheck.spec.datapath.verdicts import ROWS, SCOPES, DVerdict, Runner
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
    compile_instance on every state of one scope: the same enabled set, the same successors."""
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


def test_counterexamples_are_rejected_by_the_v2_checker(tmp_path: Path) -> None:
    """Every invariant / step counterexample of the latest and the oldest revision, exported with
    `spmcheck cex`, is rejected by `spmcheck check`: at its last line for the property when it
    breaks nothing else first (clean), else at an earlier line for the claim it breaks on the way."""
    import re

    r = Runner()
    for v in ("ee045e38", LATEST):
        for row in ROWS:
            if row.kind == "progress":
                continue
            d = r.verdict(row, DVARIANTS[v])
            if d.verdict != "violated":
                continue
            out = tmp_path / f"{row.id}-{v}.log"
            assert main(["cex", "--model", "datapath", "--variant", v, "--property", row.id, "-o", str(out)]) == 0
            lines = out.read_text().splitlines()
            assert lines[0].startswith(f"spmcheck-trace v2 model=datapath variant={v} source=spmcheck-cex ")
            assert len(lines) == len(d.events) + 1
            res = tmp_path / f"{row.id}-{v}.txt"
            code = _check(out, res)
            assert code == 1, (row.id, v)
            m = re.search(r"violated (\S+) at line (\d+)", res.read_text())
            assert m, res.read_text()
            if d.clean:
                assert (m.group(1), int(m.group(2))) == (row.prop, len(lines)), (row.id, v, m.group(0))
            else:
                assert int(m.group(2)) < len(lines), (row.id, v)


def _check(trace: Path, out: Path) -> int:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["check", str(trace)])
    out.write_text(buf.getvalue())
    return code


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
