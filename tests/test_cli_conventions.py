"""Conventions: --version, python -m spmcheck, one error prefix, suggestions naming distinct
candidates, P-number aliases, exit-code precedence across files, unreadable paths, the
empty-trace verdict, `check` without files, `prove --infer` target, SIGINT/SIGTERM."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spmcheck.checker.check_cli import default_files
from spmcheck.checker.cli import infer_target, main as cli_main
from spmcheck.checker.results import combined_exit
from spmcheck.spec.names import closest, resolve

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
HEADER = "spmcheck-trace v1 variant=final agents=2 updaters=2 lookups=2\n"


def _run(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spmcheck", *args], cwd=kw.pop("cwd", ROOT), capture_output=True,
                          text=True, timeout=120, **kw)  # type: ignore[call-overload]


def test_version_and_python_dash_m() -> None:
    from spmcheck.checker.render.envelope import version

    r = _run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"spmcheck {version()}"
    r = _run("list")
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.lifecycle.variants import LVARIANTS
    from spmcheck.spec.variants import VARIANTS

    n = len(VARIANTS) + len(LVARIANTS) + len(DVARIANTS)  # `list` covers the three models' variants
    assert r.returncode == 0 and r.stdout.rstrip().splitlines()[-1].startswith(f"spmcheck: {n} variants")


def test_one_error_prefix_and_distinct_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["prove", "--variant", "finl"]) == 2
    assert capsys.readouterr().err.strip() == "spmcheck: error: unknown variant 'finl'; did you mean 'final'?"
    with pytest.raises(SystemExit) as e:
        cli_main(["prov"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("spmcheck: error: unknown command 'prov'; did you mean 'prove'")
    with pytest.raises(SystemExit):
        cli_main(["prove", "--timeout", "x"])
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("spmcheck: error: argument --timeout")
    msg = closest("finl", ["final", "final", "caller-flag"], "variant")
    assert msg.count("'final'") == 1


def test_p_number_aliases() -> None:
    assert resolve("P2") == "creation-consistent" and resolve("p8") == "spm-contexts-disjoint"
    assert resolve("P4m") == "map-empty-after-drain" and resolve("final") == "final"
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.names import ALIASES
    from spmcheck.spec.properties import PROPERTIES

    for alias, name in ALIASES.items():
        prop = PROPERTIES.get(name) or LPROPERTIES[name]
        assert alias == "gate" or alias[:2] in prop.summary, (alias, name)  # the summary names its P-number


def test_check_property_alias_and_cex_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tags.log"
    assert cli_main(["cex", "--variant", "positive-tags", "--property", "P6", "-o", str(out)]) == 0
    assert cli_main(["check", "--property", "P6", str(out)]) == 1
    assert "CHK101" in capsys.readouterr().out


def test_exit_code_precedence_violated_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok, bad, gap, utf8 = (str(FIX / n) for n in ("lookup-ok.log", "violated-bad.log", "gap-bad.log", "utf8-bad.log"))
    missing = str(tmp_path / "missing.log")
    assert cli_main(["check", gap, bad]) == 1  # an inconclusive file does not hide the violation
    assert cli_main(["check", missing, bad, utf8]) == 1  # nor an unreadable or a malformed one
    assert cli_main(["check", gap, utf8, missing]) == 4
    assert cli_main(["check", gap, utf8]) == 2
    assert cli_main(["check", ok, gap]) == 3
    assert cli_main(["check", ok]) == 0
    assert combined_exit([3, 2, 1, 0]) == 1 and combined_exit([0, 3]) == 3 and combined_exit([]) == 0
    assert combined_exit([5, 1]) == 1 and combined_exit([2, 5, 4]) == 5
    capsys.readouterr()


def test_unreadable_path_is_its_own_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nonexist.log"
    assert cli_main(["check", str(missing)]) == 4  # its own code (IO_ERROR), not malformed (2)
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [f"{missing}: unreadable", f"{missing}: [TRC001] cannot read {missing}: No such file or directory"]
    assert ":0:0" not in "\n".join(out)


def test_empty_trace_is_not_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    only_header = tmp_path / "header.log"
    only_header.write_text(HEADER)
    assert cli_main(["check", str(only_header)]) == 3
    assert "[CHK303]" in capsys.readouterr().out
    cut = tmp_path / "cut.log"
    cut.write_text(HEADER[:30])  # cut inside the header
    assert cli_main(["check", str(cut)]) != 0
    capsys.readouterr()


def test_check_without_files_says_what_to_pass(tmp_path: Path) -> None:
    import spmcheck.checker.check_cli as cc
    old = cc.TRACES_DIR
    try:
        cc.TRACES_DIR = tmp_path / "site-packages" / "traces"  # as after `pip install .`
        msg = default_files(tmp_path)
        assert isinstance(msg, str) and "spmcheck check run.log" in msg and "'-'" in msg
        (tmp_path / "traces").mkdir()
        (tmp_path / "traces" / "a.log").write_text(HEADER)
        assert default_files(tmp_path) == [str(tmp_path / "traces" / "a.log")]
    finally:
        cc.TRACES_DIR = old


def test_infer_writes_into_the_checkout_never_site_packages(tmp_path: Path) -> None:
    installed = tmp_path / "lib" / "site-packages" / "spec" / "proofs"
    got = infer_target(installed, tmp_path)
    assert isinstance(got, str) and "checkout" in got
    (tmp_path / "spec" / "proofs").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("")
    assert infer_target(installed, tmp_path) == tmp_path / "spec" / "proofs"
    checkout = tmp_path / "src" / "spec" / "proofs"
    assert infer_target(checkout, tmp_path) == checkout


def _descendants(pid: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        st = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return st.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_ends_the_run_and_every_worker_within_a_second(sig: signal.Signals) -> None:
    # the default run forks a core-table worker next to the lifecycle: both must go
    p = subprocess.Popen([sys.executable, "-m", "spmcheck", "prove", "--no-progress"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    procs: set[int] = set()
    while time.monotonic() < deadline and len(procs) < 2:  # the supervised child and its worker
        time.sleep(0.2)
        procs = _descendants(p.pid)
    assert len(procs) >= 2, "the run never started its worker"
    t0 = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=10)
    took = time.monotonic() - t0
    assert p.returncode == 130, (p.returncode, err)
    assert took < 1.5, took
    assert "interrupted" in err
    time.sleep(0.2)
    assert not [q for q in procs if _alive(q)]


def test_github_actions_recipe_uses_valid_commands() -> None:
    """Every `spmcheck ...` line of examples/github-actions.yml parses with the real CLI parser."""
    import shlex

    from spmcheck.checker.cli import build_parser

    text = (ROOT / "examples" / "github-actions.yml").read_text()
    joined = text.replace("\\\n", " ")
    cmds = []
    for block in joined.split("run:")[1:]:
        lines = []
        for ln in block.splitlines()[0:]:
            if ln.strip().startswith(("- ", "if:", "uses:", "with:", "name:")):
                break
            lines.append(ln.strip().rstrip(">|").strip())
        for part in " ".join(lines).split("&&"):
            for piece in part.split("||"):
                words = shlex.split(piece.strip())
                if words[:1] == ["spmcheck"]:
                    cmds.append(words[1:])
    assert {c[0] for c in cmds} == {"prove", "check", "report"}
    parser = build_parser()
    for c in cmds:
        parser.parse_args(c)  # SystemExit(2) on a bad option
