"""Opens `spmcheck report`'s HTML in headless Chromium (Debian `chromium`): no console errors,
the verdict matrix and one swim-lane SVG per counterexample and rejected trace in the DOM, a
screenshot kept under out/ as a CI artifact. Skips only when chromium is absent and
SPMCHECK_REQUIRE_CHROMIUM is unset (.ci/run installs chromium and sets it, so CI never skips)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("SPMCHECK_REQUIRE_CHROMIUM") == "1":
            pytest.fail("SPMCHECK_REQUIRE_CHROMIUM=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium); .ci/run installs it")
    return CHROMIUM


def _run(chromium: str, url: str, *action: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--window-size=1280,2000",
                               *action, url], capture_output=True, text=True, timeout=120)


def console_errors(stderr: str) -> list[str]:
    """Page console messages at error level, and uncaught exceptions / refused loads, from
    chromium's stderr log (`--enable-logging=stderr`: lines like
    `[..:INFO:CONSOLE(3)] "Uncaught ReferenceError: x", source: file:///r.html (3)`)."""
    out = []
    for ln in stderr.splitlines():
        if "CONSOLE" in ln and ("ERROR:CONSOLE" in ln or re.search(r'"(Uncaught|Refused|Failed to load)', ln)
                                or "console.error" in ln):
            out.append(ln)
    return out


def test_console_error_detection_sees_a_real_error(chromium: str, tmp_path: Path) -> None:
    """Negative control: the detector must see an error on a page that has one."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>undefined_function_xyz();</script></body></html>")
    r = _run(chromium, bad.as_uri(), "--dump-dom")
    assert console_errors(r.stderr), r.stderr[-2000:]


def test_report_opens_without_console_errors(chromium: str, tmp_path: Path) -> None:
    """The report of every default pair (records built from spec's tables, one counterexample
    each where a violation is expected: tests/test_report_text.default_records) plus a rejected
    trace, rendered by `spmcheck report --from-json` as CI would."""
    from spmcheck.checker.cli import main as cli_main
    from spmcheck.checker.render import envelope as env
    from spmcheck.checker.render.records import make_run
    from spmcheck.checker.render.summary import prove_counts, prove_summary
    from tests.test_report_text import default_records

    run = make_run(*default_records(), "", "", {})
    pj = tmp_path / "prove.json"
    pj.write_text(env.dumps(env.envelope("prove", 0, prove_summary(run), env.prove_results(run),
                                         {"core": {"agents": 2, "updaters": 2, "lookups": 2},
                                          "lifecycle": {"agents": 2, "contexts": 2, "tools": 2, "dispatches": 3}},
                                         prove_counts(run).to_json())))
    rep = tmp_path / "report"
    code = cli_main(["report", "--from-json", str(pj), "--check", str(ROOT / "tests" / "fixtures" / "violated-bad.log"),
                     "-o", str(rep)])
    assert code == 1  # the checked trace is violated
    doc = json.loads((rep / "prove.json").read_text())
    ncex = sum(1 for r in doc["results"] if r["counterexample"])
    assert ncex >= 2
    url = (rep / "report.html").as_uri()
    r = _run(chromium, url, "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert not console_errors(r.stderr), console_errors(r.stderr)
    dom = r.stdout
    assert '<table class="matrix" data-model="core">' in dom
    assert len(re.findall(r'<svg[^>]*class="swimlane"', dom)) == ncex + 1  # + the rejected trace
    assert 'class="lockgraph"' in dom
    OUT.mkdir(exist_ok=True)
    shot = OUT / "report-screenshot.png"
    if shot.exists():
        shot.unlink()
    r = _run(chromium, url, f"--screenshot={shot}")
    assert r.returncode == 0 and shot.stat().st_size > 10_000, r.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.copy(rep / "summary.md", OUT / "report-summary.md")
    shutil.copy(rep / "report.html", OUT / "report.html")
