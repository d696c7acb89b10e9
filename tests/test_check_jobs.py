"""`spmcheck check --jobs N` shards the files across warm worker processes and gives, byte for
byte, the output of `--jobs 1` (text, JSON envelope, exit code), whatever order the workers finish
in. No timing here: the speedup is measured by bench/bench_jobs.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from spmcheck.checker import check_cli

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
# a violated, a malformed, a diverged, an accepted (core v1 and v2), an accepted lifecycle trace and a path
# that does not exist; the largest file is not first, so the submission order (largest first)
# differs from the input order
FILES = [str(FIX / "lookup-ok.log"), str(FIX / "violated-bad.log"), str(FIX / "syntax-bad.log"),
         str(ROOT / "traces" / "lc-final-a2-c2-t2.log"), str(FIX / "guard-bad.log"),
         str(ROOT / "traces" / "final-a2-u2-l2.log"), str(ROOT / "traces" / "final-v2-cpp-a8-t64.log"),
         str(ROOT / "no-such-trace.log")]


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", "check", *args], cwd=ROOT,
                          capture_output=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[subprocess.CompletedProcess[bytes], bytes]]:
    d = tmp_path_factory.mktemp("jobs")
    out = {}
    for jobs in (1, 2, 3):
        js = d / f"j{jobs}.json"
        out[jobs] = (_cli("--jobs", str(jobs), "--json", str(js), *FILES), js.read_bytes())
    return out


def test_jobs_output_and_exit_code_are_identical(runs: dict) -> None:
    one, js1 = runs[1]
    assert one.returncode == 1  # the violation outranks the malformed and unreadable files
    text = one.stdout.decode()
    assert "violated" in text and "malformed" in text and "unreadable" in text.lower()
    for jobs in (2, 3):
        r, js = runs[jobs]
        assert r.returncode == one.returncode, jobs
        assert r.stdout == one.stdout, jobs
        assert r.stderr == one.stderr, jobs
        assert js == js1, jobs  # no timings in the envelope without --timings, so byte-identical


def test_jobs_results_come_back_in_input_order(runs: dict) -> None:
    doc = json.loads(runs[2][1])
    assert [f["file"] for f in doc["results"]] == FILES


def test_checked_yields_in_input_order_in_process() -> None:
    """The generator itself (what the CLI prints from), against the one-process path."""
    serial = [(r.file, r.verdict, r.line, r.code, r.message) for r in check_cli.checked(FILES, 1)]
    sharded = [(r.file, r.verdict, r.line, r.code, r.message) for r in check_cli.checked(FILES, 2)]
    assert sharded == serial
    assert [f for f, *_ in serial] == FILES


def test_v2_check_imports_no_v1_grammar(tmp_path: Path) -> None:
    """The start-up of a v2 check (the serial part of --jobs): neither Lark nor the v1 grammar
    (checker/parse.py builds it only for a v1 file, Lark is imported only for it or to word a
    syntax error), and race_lines only for a violation."""
    code = ("import sys\n"
            "from spmcheck.checker import check_cli, parse\n"
            f"assert check_cli.main(['--jobs', '1', {str(ROOT / 'traces' / 'final-v2-cpp-a8-t64.log')!r}]) == 0\n"
            "print(sorted(m for m in ('lark', 'spmcheck.checker.race_lines') if m in sys.modules),"
            " parse.grammar.cache_info().currsize)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "[] 0"
