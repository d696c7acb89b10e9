"""Fault injection on the CLI (issue 15): every fault the fuzz found gets a documented exit code,
a one-line message naming the path or value (or file:line:col), and never a traceback. Every
subprocess has a time bound; a prove invocation fails its validation before any solving, except
the one that must write to /dev/full (one parametric pair, about a second)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spmcheck.checker import exitcodes
from spmcheck.checker.results import EXIT_CODE, Verdict

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "fixtures"
OK_TRACE = FIX / "lookup-ok.log"
BOUND = 30  # seconds; a hang is a failure, not a stuck suite


def spm(*args: str, stdin: object = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", *args], cwd=ROOT, stdin=stdin,
                          capture_output=True, text=True, timeout=BOUND)


def _clean(r: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, r.stderr


def test_exit_code_table_is_one_table() -> None:
    codes = [c for c, _ in exitcodes.TABLE]
    assert len(set(codes)) == len(codes)
    # the checker's verdicts map into the table; internal/unreadable are not 1 (a violation)
    assert set(EXIT_CODE.values()) <= set(codes)
    assert EXIT_CODE[Verdict.ERROR] == exitcodes.INTERNAL != exitcodes.VIOLATED
    assert EXIT_CODE[Verdict.UNREADABLE] == exitcodes.IO_ERROR != exitcodes.VIOLATED


@pytest.mark.parametrize("value", ["nan", "inf", "1e309", "-inf", "0", "abc"])
@pytest.mark.parametrize("cmd", [["prove"], ["prove", "--parametric"],
                                 ["cex", "--variant", "stale-lookup", "--property", "creation-consistent",
                                  "-o", "-"]])
def test_timeout_values_refused_up_front(cmd: list[str], value: str) -> None:
    r = spm(*cmd, f"--timeout={value}")
    _clean(r)
    assert r.returncode == exitcodes.USAGE
    assert "--timeout" in r.stderr and repr(value) in r.stderr


@pytest.mark.parametrize("cmd", [["prove"], ["prove", "--parametric"]])
@pytest.mark.parametrize("path", ["/nonexistent-dir/out.json", "/tmp"])
def test_prove_json_unwritable_before_any_work(cmd: list[str], path: str) -> None:
    t0 = time.monotonic()
    r = spm(*cmd, "--json", path)
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR and path in r.stderr
    assert time.monotonic() - t0 < 10  # refused up front, not after a proof run


def test_prove_json_to_full_device_still_prints_the_table() -> None:
    r = spm("prove", "--parametric", "--model", "core", "--variant", "final", "--property",
            "creation-consistent", "--json", "/dev/full")
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR
    assert "/dev/full" in r.stderr and "No space left" in r.stderr
    assert r.stdout.startswith("spmcheck: 1 parametric verdict")  # the text (brief: its summary line) is printed


@pytest.mark.parametrize("path", ["/nonexistent-dir/cex.log", "/tmp"])
def test_cex_output_unwritable(path: str) -> None:
    r = spm("cex", "--variant", "stale-lookup", "--property", "creation-consistent", "-o", path)
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR and path in r.stderr


@pytest.mark.parametrize("path", ["/dev/full", "/nonexistent-dir/run.log", "/tmp"])
def test_record_output_unwritable(path: str) -> None:
    r = spm("record", "--variant", "final", "--ops", "5", "-o", path)
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR and path in r.stderr


def test_check_json_unwritable_checks_nothing() -> None:
    r = spm("check", "--json", "/nonexistent/x.json", str(OK_TRACE))
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR and "/nonexistent/x.json" in r.stderr
    assert "accepted" not in r.stdout


def test_check_lock_graph_to_full_device() -> None:
    r = spm("check", "--lock-graph", "/dev/full", str(OK_TRACE))
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR and "/dev/full" in r.stderr


def _core_header(**over: str) -> str:
    f = {"agents": "2", "updaters": "2", "lookups": "2"} | over
    return f"spmcheck-trace v1 variant=final agents={f['agents']} updaters={f['updaters']} lookups={f['lookups']}"


BIG = "9" * 5000


@pytest.mark.parametrize("name,text,line", [
    ("seq", _core_header() + f"\n{BIG} l0 lookup_begin agent=0\n", 2),
    ("agents", _core_header(agents=BIG) + "\n1 l0 lookup_begin agent=0\n", 1),
    ("lookups", _core_header(lookups=BIG) + "\n", 1),
    ("lc-dispatches", "spmcheck-trace v1 model=lifecycle variant=final agents=2 contexts=2 tools=2 "
     f"dispatches={BIG} max_ids=4 timeouts=1 deactivate=0 destroy=0\n", 1),
    ("event-value", _core_header() + f"\n1 l0 lookup_begin agent=0\n2 l0 refcount_read agent=0 count={BIG}\n", 3),
])
def test_integers_of_5000_digits(tmp_path: Path, name: str, text: str, line: int) -> None:
    p = tmp_path / f"{name}.log"
    p.write_text(text)
    col = text.splitlines()[line - 1].index(BIG) + 1  # the number's first digit
    r = spm("check", str(p))
    _clean(r)
    assert r.returncode == exitcodes.USAGE  # malformed
    assert f"{p}:{line}:{col}: [TRC017]" in r.stdout, r.stdout


def test_fifo_without_writer_is_refused_promptly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    r = spm("check", str(fifo))
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR
    assert f"{fifo}: [TRC018]" in r.stdout and "FIFO" in r.stdout


@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
def test_devices_refused_as_paths_and_bounded_on_stdin(dev: str) -> None:
    r = spm("check", dev)
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR and f"{dev}: [TRC018]" in r.stdout
    with open(dev, "rb") as f:
        r = spm("check", "-", stdin=f)
    _clean(r)
    assert r.returncode == exitcodes.USAGE and "[TRC019] reading stopped" in r.stdout


def test_missing_path_is_unreadable_not_malformed(tmp_path: Path) -> None:
    missing = tmp_path / "nope.log"
    r = spm("check", str(missing))
    _clean(r)
    assert r.returncode == exitcodes.IO_ERROR
    assert f"{missing}: unreadable" in r.stdout and f"{missing}:0:0" not in r.stdout


def test_truncated_token_on_last_line_is_truncation(tmp_path: Path) -> None:
    # `mode=shared` cut to `mode=sha`: a well-formed line the model has no action for
    lines = OK_TRACE.read_text().rstrip("\n").splitlines()
    lines.append(f"{int(lines[-1].split()[0]) + 1} l0 lock_acquire lock=queues mode=sha")
    p = tmp_path / "cut.log"
    p.write_text("\n".join(lines))  # no final newline
    r = spm("check", str(p))
    _clean(r)
    assert r.returncode == exitcodes.USAGE, r.stdout
    assert f"{p}:{len(lines)}:" in r.stdout and "[TRC008]" in r.stdout
    p.write_text("\n".join(lines) + "\n")  # the same line, complete: a divergence, as before
    r = spm("check", str(p))
    assert r.returncode == exitcodes.VIOLATED and "diverged" in r.stdout


def test_header_only_is_not_accepted(tmp_path: Path) -> None:
    p = tmp_path / "h.log"
    p.write_text(_core_header() + "\n")
    r = spm("check", str(p))
    _clean(r)
    assert r.returncode == exitcodes.UNKNOWN and "[CHK303]" in r.stdout and "accepted" not in r.stdout


def test_record_agents_beyond_what_check_accepts_is_refused(tmp_path: Path) -> None:
    r = spm("record", "--variant", "final", "--agents", "7", "-o", str(tmp_path / "x.log"))
    _clean(r)
    assert r.returncode == exitcodes.USAGE and "agents" in r.stderr
    # the largest size record allows is one check accepts
    p = tmp_path / "a6.log"
    r = spm("record", "--variant", "final", "--agents", "6", "--threads", "1", "--ops", "4", "-o", str(p))
    assert r.returncode == exitcodes.OK, r.stderr
    r = spm("check", str(p))
    assert r.returncode == exitcodes.OK, r.stdout


def test_interrupted_record_is_inconclusive(tmp_path: Path) -> None:
    p = tmp_path / "int.log"
    proc = subprocess.Popen([sys.executable, "-m", "spmcheck.checker.cli", "record", "--variant", "final",
                             "--seconds", "20", "-o", str(p)], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + BOUND
        while (not p.exists() or p.stat().st_size < 2000) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == exitcodes.INTERRUPTED and "Traceback" not in err
    r = spm("check", str(p))
    _clean(r)
    assert r.returncode == exitcodes.UNKNOWN and "[CHK302] run did not finish" in r.stdout, r.stdout


def test_internal_error_has_its_own_code(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from spmcheck.checker import check_cli, cli

    def boom(*a: object, **k: object) -> None:
        raise KeyError("simulated checker bug")

    monkeypatch.setattr("spmcheck.checker.replay.check_path", boom)
    assert cli.main(["check", str(OK_TRACE)]) == exitcodes.INTERNAL
    out = capsys.readouterr().out
    assert "error" in out and "KeyError" in out and "accepted" not in out
    monkeypatch.setattr(check_cli, "run", boom)
    assert cli.main(["check", str(OK_TRACE)]) == exitcodes.INTERNAL
    err = capsys.readouterr().err
    assert "internal error: KeyError" in err and "Traceback" not in err


def test_crashing_recording_thread_fails_the_run_without_marker() -> None:
    import io
    import threading

    from spmcheck.checker.record import supervise
    from spmcheck.checker.recorder import Recorder
    from spmcheck.spec.events import Header

    buf = io.StringIO()
    rec = Recorder(buf, Header(1, "final", 1, 1, 0))

    def work() -> None:
        rec.event("u0", "update_end")
        raise ValueError("runtime bug")

    with pytest.raises(RuntimeError, match="u0 failed: ValueError: runtime bug"):
        supervise([threading.Thread(target=work, name="u0", daemon=True)], rec, 2.0, None, 0.01)
    assert threading.excepthook is not None and "run_end" not in buf.getvalue()
    assert buf.getvalue().splitlines()[-1] == "1 u0 update_end"  # what was recorded is kept
