"""Text output for people: summary line, brief default (one screen), questions worded as
questions, findings aggregated, counterexamples with start state / failing step / legend,
and byte-stable output across runs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spmcheck.checker.render import cex as cexr
from spmcheck.checker.render.legend import meaning
from spmcheck.checker.render.prove_text import brief, verbose
from spmcheck.checker.render.records import make_run
from spmcheck.checker.render.summary import check_summary, prove_summary
from spmcheck.checker.results import FileResult, Finding, Verdict
from spmcheck.spec.results import CexStep, ProofResult, WitnessResult

ROOT = Path(__file__).resolve().parent.parent
CORE_SIZE, LC_SIZE = "2 agents, 2 updaters, 2 lookups", "2 agents, 2 contexts, 2 tool threads, 3 dispatches"


def _result(variant: str, prop: str, verdict: str, expected: str, cex: tuple[CexStep, ...] | None = None,
            reason: str = "") -> ProofResult:
    return ProofResult(variant, prop, verdict, expected, "method", "any depth" if verdict == "proved" else "3 steps",
                       "any size" if verdict == "proved" else "-", 1.25, cex,
                       (WitnessResult("w", "a witness", "reachable", 4, 0.5),) if verdict == "proved" else (),
                       reason, "src")


_CEX = (CexStep(1, "u0", "update_begin", (("agents", "0"), ("enable", "1")), (("held.c0", "0", "1"),), setup=True),
        CexStep(2, "l0", "lock_acquire", (("lock", "refcount"), ("mode", "shared")), (("lk.refcount.r.l0", "0", "1"),)),
        CexStep(3, "u0", "update_begin", (("agents", "0"), ("enable", "0")), (("held.c0", "1", "0"),)),
        CexStep(4, "l0", "refcount_read", (("agent", "0"), ("count", "0")), ()),
        CexStep(5, "l0", "lock_release", (("lock", "refcount"), ("mode", "shared")), (("lk.refcount.r.l0", "1", "0"),)),
        CexStep(6, "l0", "serializer_insert", (("agent", "0"), ("created", "0")), (("ser.ex.0", "0", "1"),)))


def default_records(flip: tuple[str, str] | None = None) -> tuple[list[ProofResult], list[ProofResult]]:
    """A result for every pair the default `spmcheck prove` runs, each with its expected verdict
    (or, for `flip`, the other one), built from spec's own tables — no solver involved."""
    from spmcheck.spec.expected import expected as core_expected
    from spmcheck.spec.lifecycle.expected import default_pairs, expected as lc_expected
    from spmcheck.spec.properties import PROPERTIES
    from spmcheck.spec.variants import VARIANTS

    core = []
    for v in VARIANTS:
        for p in PROPERTIES:
            e = core_expected(v, p)[0]
            got = e if (v, p) != flip else ("violated" if e == "proved" else "proved")
            core.append(_result(v, p, got, e, _CEX if got == "violated" else None))
    lc = []
    for v, p in default_pairs():
        e = lc_expected(v, p)[0]
        lc.append(_result(v, p, e, e, _CEX if e == "violated" else None))
    return core, lc


def datapath_records(flip: tuple[str, str] | None = None) -> list[object]:
    """A data-path verdict for every (row, revision), each its expectation (or, for `flip` =
    (row, revision), the other one), with a small made-up counterexample — no search involved."""
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS, SCOPES, DVerdict, Event

    ev = (Event(1, "q0", "queue_create", (("agent", 0),), (("alive.q0", "0", "1"), ("pc.q0", "0", "1"))),
          Event(2, "c0", "context_start", (("agent", 0),), (("slot.c0", "0", "1"),)),
          Event(3, "q0", "write_begin", (("agent", 0), ("batched", True)), (("bat.q0", "0", "1"),)))
    out = []
    for row in ROWS:
        for v in DVARIANTS.values():
            e = row.expect(v)
            got = e if (row.id, v.name) != flip else ("violated" if e == "proved" else "proved")
            out.append(DVerdict(row.id, row.prop, row.kind, v.name, row.scope, SCOPES[row.scope].describe(), got, e,
                                row.why, 3 if got == "violated" else None, 100, 0.5, row.witness, True, row.finding,
                                "it fails" if got == "violated" else "", ev if got == "violated" else (),
                                ("c0 interposition_sync: waits",) if row.kind == "progress" and got == "violated"
                                else (), True, 2))
    return out


def test_the_data_path_adds_two_lines_to_the_brief_output() -> None:
    core, lc = default_records()
    dp = datapath_records()
    without = brief(make_run(core, lc, CORE_SIZE, LC_SIZE, {}))
    run = make_run(core, lc, CORE_SIZE, LC_SIZE, {}, datapath=dp)
    lines = brief(run)
    assert len(lines) == len(without) + 2  # the main job stays about one screen
    assert lines[:len(without) - 1] == without[:-1]  # core and lifecycle text unchanged
    assert lines[-1] == prove_summary(run)
    assert lines[-1].startswith(f"spmcheck: {len(core) + len(lc) + len(dp)} verdicts as expected (")
    assert f"data path: {len(dp)}, bounded" in lines[-1]
    latest = [d for d in dp if d.variant == "2a7bb457"]
    assert lines[-2].split("; proved ")[1].split() == [d.row for d in latest if d.verdict == "proved"]
    assert max(len(ln) for ln in lines) <= 130
    v = verbose(run)
    assert any(ln.strip().startswith("2a7bb457+gate-fix ") for ln in v)  # the matrix with -v


def test_default_brief_output_fits_one_screen_and_ends_with_the_summary() -> None:
    core, lc = default_records()
    run = make_run(core, lc, CORE_SIZE, LC_SIZE, {})
    lines = brief(run)
    assert len(lines) <= 44, len(lines)  # + the parametric and check summaries: the main job stays <= 60
    assert lines[-1] == prove_summary(run)
    assert lines[-1].startswith(f"spmcheck: {len(core) + len(lc)} verdicts as expected (final proved for any size: ")
    assert " in " not in lines[-1]  # no timing without --timings
    assert max(len(ln) for ln in lines) <= 130


def test_summary_names_the_first_mismatch_and_never_says_as_expected() -> None:
    core, lc = default_records(flip=("final", "creation-consistent"))
    run = make_run(core, lc, CORE_SIZE, LC_SIZE, {})
    s = prove_summary(run)
    assert s.startswith("spmcheck: FAILED: 1 NOT as expected") and "final/P2 violated, expected proved" in s
    assert run.exit_code == 1
    assert any("core final / creation-consistent: violated, expected proved" in ln for ln in brief(run))
    unknown = make_run([_result("final", "creation-consistent", "unknown", "proved", reason="timeout")], [],
                       CORE_SIZE, LC_SIZE, {})
    assert prove_summary(unknown).startswith("spmcheck: INCONCLUSIVE: 1 unknown") and unknown.exit_code == 3
    assert "in 2.5 s" in prove_summary(make_run([], [], "", "", {}, seconds=2.5), timings=True)


def test_questions_are_questions_with_plain_answers() -> None:
    from spmcheck.spec.lifecycle.expected import QUESTIONS
    from spmcheck.spec.lifecycle.report import answer, questions

    qs = questions()
    assert [q.props for q in qs] == [p for _, p in QUESTIONS]
    assert all(q.text.endswith("?") for q in qs)
    rs = [_result("final", "spm-contexts-disjoint", "proved", "proved"),
          _result("pr-758072b", "spm-contexts-disjoint", "violated", "violated"),
          _result("pr-758072b", "agent-scoping", "proved", "proved"),
          _result("pr-758072b", "unrelated-queues-batched", "violated", "violated")]
    anys = lambda v, p: "any size" if v == "final" else "bounded only: x"  # noqa: E731
    assert answer(rs, "final", ("spm-contexts-disjoint",), anys) == "yes, proved for any number of agents"
    assert answer(rs, "pr-758072b", ("spm-contexts-disjoint",), anys) == "no: counterexample (P8)"
    assert answer(rs, "pr-758072b", ("agent-scoping", "unrelated-queues-batched"), anys) == \
        "partly: P7 proved, gate has a counterexample"
    assert answer(rs, "pr-758072b", ("agent-scoping",), anys) == "yes, proved at the fixed size only"
    assert answer(rs, "final", ("agent-scoping",), anys).startswith("not answered: P7 not run")


def test_every_state_variable_of_both_models_has_a_legend_entry() -> None:
    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.vocabulary import LConfig
    from spmcheck.spec.model import Model
    from spmcheck.spec.vocabulary import Config

    for model, m in (("core", Model(Config(2, 2, 2), "final")), ("lifecycle", LifecycleModel(LConfig(), "final"))):
        missing = [n for n in m.var_names if meaning(n, model) is None]
        assert not missing, (model, missing)
    assert meaning("sh.l0") == "lookup l0's snapshot of 'should be enabled' (may go stale)"
    assert meaning("mk.1", "lifecycle") == "start marker of context 1 (start in progress)"


def test_counterexample_text_has_start_state_failing_step_and_legend() -> None:
    r = _result("stale-lookup", "creation-consistent", "violated", "violated", _CEX)
    v = cexr.view(r, "core")
    assert v.setup == 1 and v.start == (("held.c0", "1"),) and v.threads == ("u0", "l0")
    assert [(h.thread, h.lock, h.first, h.last) for h in v.holdings] == [("l0", "refcount", 2, 5)]
    lines = cexr.text(v, "creation-consistent (P2)")
    assert "reached by 1 setup steps" in lines[0] and "held.c0=1" in lines[1]
    marked = [ln for ln in lines if ln.startswith(">>")]
    assert len(marked) == 1 and "serializer_insert" in marked[0] and marked[0].split()[1] == "6"
    assert any("violates creation-consistent (P2): ser.ex.0 0 -> 1" in ln for ln in lines)
    legend = lines[lines.index("  legend:") + 1:]
    assert [ln.split()[0] for ln in legend] == ["held.c0", "ser.ex.0"]
    # a thread that only ran setup calls gets no column
    only_setup = _result("x", "creation-consistent", "violated", "violated", (_CEX[0],) + tuple(
        s for s in _CEX[1:] if s.thread == "l0"))
    assert cexr.view(only_setup, "core").threads == ("l0",)
    # the l0 column starts to the right of u0's: one column per thread
    head = next(ln for ln in lines if ln.startswith("  step"))
    assert head.index("l0") > head.index("u0")


def test_check_findings_are_aggregated_per_property() -> None:
    from spmcheck.checker.report import text_lines

    fs = tuple(Finding("drain-covers-hooked-dispatches", 10 + i, "fails at this step: x") for i in range(7)) + \
        (Finding("stop-returns-after-delivery", 40, "fails: y"),)
    r = FileResult("lc.log", Verdict.ACCEPTED, events=99, findings=fs, more_findings=3)
    brief_lines = text_lines(r, verbose=False)
    assert brief_lines[0] == "lc.log: accepted (99 events), 11 findings"
    assert brief_lines[1] == "lc.log:10: finding drain-covers-hooked-dispatches (7 times, first here): fails at this step: x"
    assert brief_lines[2] == "lc.log:40: finding stop-returns-after-delivery: fails: y"
    assert len(brief_lines) == 3 and len(text_lines(r, verbose=True)) == 10  # the 3 beyond the cap: counted above
    bad = FileResult("bad.log", Verdict.VIOLATED, 5, 7, 1, "creation-consistent", "CHK101", "m")
    assert check_summary([r, bad]) == ("spmcheck: 2 files: 1 violated, 1 accepted (first: bad.log: violated "
                                       "creation-consistent at line 7); 11 findings noted")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spmcheck", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def test_two_runs_give_identical_text_and_json(tmp_path: Path) -> None:
    args = ("prove", "--model", "core", "--variant", "stale-lookup", "--property", "P2", "-v")
    a, b = _run(*args, "--json", str(tmp_path / "a.json")), _run(*args, "--json", str(tmp_path / "b.json"))
    assert a.returncode == b.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert a.stdout.rstrip("\n").splitlines()[-1] == "spmcheck: 1 verdict as expected (1 known bug caught)"
    assert ">>" in a.stdout and "legend:" in a.stdout
    doc = json.loads((tmp_path / "a.json").read_text())
    assert "timings" not in doc and "seconds" not in json.dumps(doc["results"])
    t = _run(*args, "--timings", "--json", "-")
    assert "seconds" in json.dumps(json.loads(t.stdout)["timings"])
    assert " in " in t.stderr.rstrip("\n").splitlines()[-1]


def test_main_job_check_output_is_brief(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's main-job `check` prints one line per file plus one per finding property and
    the summary; notes and findings beyond the first of each kind are counted, not listed."""
    import glob

    from spmcheck.checker.cli import main as cli_main

    files = sorted(glob.glob(str(ROOT / "traces" / "final-*.log")) + glob.glob(str(ROOT / "traces" / "caller-flag-*.log"))
                   + glob.glob(str(ROOT / "traces" / "lc-final-*.log")))
    assert cli_main(["check", *files]) == 0
    lines = capsys.readouterr().out.rstrip("\n").splitlines()
    findings = [ln for ln in lines if ": finding " in ln]
    assert len(lines) == len(files) + len(findings) + 1
    assert lines[-1].startswith(f"spmcheck: {len(files)} files: {len(files)} accepted")
    assert not any("note:" in ln for ln in lines)
    assert cli_main(["check", "-v", *files]) == 0
    assert len(capsys.readouterr().out.splitlines()) > len(lines)
