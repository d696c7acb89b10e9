"""Hand-written fixture pairs: each outcome and each error code has a *-bad.log; *-ok.log accept."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spmcheck.checker.replay import check_path
from spmcheck.checker.results import Verdict

FIX = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parent.parent

EXPECT = {
    "observed-bad.log": (Verdict.DIVERGED, "CHK202", 5),
    "pc-bad.log": (Verdict.DIVERGED, "CHK203", 9),
    "noaction-bad.log": (Verdict.DIVERGED, "CHK204", 9),
    "guard-bad.log": (Verdict.DIVERGED, "CHK203", 3),
    "guard2-bad.log": (Verdict.DIVERGED, "CHK201", 6),
    "violated-bad.log": (Verdict.VIOLATED, "CHK101", 25),
    "inconclusive-bad.log": (Verdict.INCONCLUSIVE, "CHK301", None),
    "gap-bad.log": (Verdict.INCONCLUSIVE, "TRC013", 7),
    "repeated-seq-bad.log": (Verdict.MALFORMED, "TRC011", 8),
    "decreasing-seq-bad.log": (Verdict.MALFORMED, "TRC012", 8),
    "unknown-kind-bad.log": (Verdict.MALFORMED, "TRC009", 7),
    "unknown-thread-bad.log": (Verdict.MALFORMED, "TRC010", 7),
    "version-bad.log": (Verdict.MALFORMED, "TRC004", 1),
    "no-header-bad.log": (Verdict.MALFORMED, "TRC003", 2),
    "syntax-bad.log": (Verdict.MALFORMED, "TRC005", 7),
    "empty-bad.log": (Verdict.MALFORMED, "TRC002", 1),
    "truncated-bad.log": (Verdict.MALFORMED, "TRC008", 13),
    "utf8-bad.log": (Verdict.MALFORMED, "TRC006", 14),
    "binary-bad.log": (Verdict.MALFORMED, "TRC016", 14),
    "long-bad.log": (Verdict.MALFORMED, "TRC007", 14),
    "header-value-bad.log": (Verdict.MALFORMED, "TRC015", 1),
    "repeated-header-bad.log": (Verdict.MALFORMED, "TRC014", 14),
}


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_bad_fixture(name: str) -> None:
    verdict, code, line = EXPECT[name]
    r = check_path(str(FIX / name))
    assert (r.verdict, r.code) == (verdict, code), r
    if line is not None:
        assert r.line == line


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("*-ok.log")))
def test_ok_fixture(name: str) -> None:
    r = check_path(str(FIX / name))
    assert r.verdict is Verdict.ACCEPTED, r


def test_violation_evidence_names_read_update_insert() -> None:
    r = check_path(str(FIX / "violated-bad.log"))
    kinds = [e.text.split()[2] for e in r.evidence]
    assert r.prop == "creation-consistent"
    assert "refcount_read" in kinds and "refcount_change" in kinds and kinds[-1] == "serializer_insert"


def test_directory_and_missing_path() -> None:
    for p in (FIX, FIX / "nope.log"):
        r = check_path(str(p))
        assert (r.verdict, r.code, r.line) == (Verdict.UNREADABLE, "TRC001", 0)


def test_every_bad_line_reported_with_cap(tmp_path: Path) -> None:
    p = tmp_path / "many.log"
    p.write_text((FIX / "lookup-ok.log").read_text() + "".join(f"junk {i}\n" for i in range(50)))
    r = check_path(str(p))
    assert r.verdict is Verdict.MALFORMED and len(r.problems) == 20 and r.more_problems == 30
    assert "11 events replayed" in r.partial


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "spmcheck.checker.check_cli", *args], cwd=ROOT, input=stdin,
                          capture_output=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_cli_exit_codes_and_json(tmp_path: Path) -> None:
    ok, bad = str(FIX / "lookup-ok.log"), str(FIX / "violated-bad.log")
    assert _cli(ok).returncode == 0
    assert _cli(ok, bad).returncode == 1
    # precedence (violated first): a violation is never hidden by another file's outcome
    assert _cli(ok, bad, str(FIX / "utf8-bad.log")).returncode == 1
    assert _cli(ok, bad, str(FIX / "utf8-bad.log"), str(FIX / "gap-bad.log")).returncode == 1
    assert _cli(ok, str(FIX / "utf8-bad.log"), str(FIX / "gap-bad.log")).returncode == 2
    assert _cli(ok, str(FIX / "gap-bad.log")).returncode == 3
    r = _cli(bad, "-", "--json", "-", "--jobs", "2", stdin=(FIX / "lookup-ok.log").read_bytes())
    data = json.loads(r.stdout)
    assert data["command"] == "check" and data["exit_code"] == 1
    assert [f["verdict"] for f in data["results"]] == ["violated", "accepted"]
    assert set(data["results"][0]) >= {"file", "verdict", "line", "property", "code", "message", "evidence"}
    dot = tmp_path / "g.dot"
    assert _cli(ok, "--lock-graph", str(dot)).returncode == 0
    assert '"refcount" -> "serializer_map"' in dot.read_text()
    r = _cli(str(FIX / "binary-bad.log"))
    assert r.returncode == 2 and b"Traceback" not in r.stderr


def test_bundled_traces_default() -> None:
    r = _cli()
    assert b"final-walk-ok.log: accepted" in r.stdout
