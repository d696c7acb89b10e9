"""The core's findings (spec.programs `findings`, fidelity-audit U2): the stale stored flag is a
residual risk of the final design, proved against `final` with a counterexample that the checker
notes at the same step, and never turns an accepted run into a rejected one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from spmcheck.spec.programs import FLAG, definition
from spmcheck.spec.properties import CORE_FINDINGS, PROPERTIES
from spmcheck.spec.prove import prove_all
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spmcheck", *args], capture_output=True, text=True, cwd=ROOT)


def test_the_finding_is_a_finding_of_the_definition_not_a_claim() -> None:
    p = definition(VARIANTS["final"])
    assert FLAG in p.findings and FLAG not in p.claims  # no reading can take it for a fatal claim
    assert FLAG in CORE_FINDINGS and FLAG not in PROPERTIES
    assert "U2" in p.findings[FLAG].source


def test_final_violates_it_with_two_updaters_storing_in_the_opposite_order() -> None:
    (r,) = prove_all(["final"], [FLAG], Config(), 60.0)  # the stored counterexample, re-executed
    assert r.verdict == "violated" and r.matches, r
    last = r.counterexample[-1]
    assert last.action == "flag_store"
    stores = [s for s in r.counterexample if s.action == "flag_store"]
    assert len({s.thread for s in stores}) == 2, "two updaters store, the later one stale"


def test_findings_run_against_final_only() -> None:
    got = prove_all(["caller-flag"], [FLAG], Config(), 60.0)
    assert got == []


def test_checker_notes_it_at_the_counterexample_step_and_keeps_the_verdict(tmp_path: Path) -> None:
    out = tmp_path / "flag.log"
    r = _cli("cex", "--variant", "final", "--property", FLAG, "-o", str(out))
    assert r.returncode == 0, r.stderr
    n = len(out.read_text().splitlines())
    noted = _cli("check", "-v", str(out))
    assert f"{out}:{n}: finding {FLAG}" in noted.stdout, noted.stdout
    assert "violated" not in noted.stdout.split("\n")[0]  # a finding is a note, not a rejection
    strict = _cli("check", "--findings-fail", str(out))
    assert strict.returncode == 1 and f"violated {FLAG} at line {n}" in strict.stdout, strict.stdout


def test_accepted_final_traces_carry_no_stale_flag() -> None:
    logs = sorted(str(p) for p in (ROOT / "traces").glob("final-a*.log"))
    assert logs
    r = _cli("check", "-v", *logs)
    assert r.returncode == 0, r.stdout
    assert FLAG not in r.stdout
