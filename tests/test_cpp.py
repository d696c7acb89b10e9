"""The C++ side: include/spmcheck/trace.hpp and the protocol implementation in cpp/.

Builds once per session into the cache dir of checker/cpp_build.py (skipped with a reason when
g++/make are missing; .ci/run installs them). Real threads interleave differently on every run,
so the rejection tests count over seeds and allow a bounded miss rate; bench/cpp_rates.py
measures the rates the README gives.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from spmcheck.checker import cpp_build, record_cli
from spmcheck.checker.replay import check_path
from spmcheck.spec.lifecycle.variants import LVARIANTS

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("make") is None,
                                reason="g++/make not installed (.ci/run installs them)")
# the one suppression: audit A2, a real race of the SDK's shape (cpp/tsan.supp says why)
TSAN_ENV = {**os.environ, "TSAN_OPTIONS": f"halt_on_error=1 exitcode=66 suppressions={ROOT / 'cpp' / 'tsan.supp'}"}


@pytest.fixture(scope="session")  # cached build: shared, groups no tests (conftest.py)
def build() -> Path:
    os.environ.setdefault("SPMCHECK_CPP_SRC", str(ROOT / "cpp"))
    return cpp_build.build_all()  # both binaries, in parallel


@pytest.fixture(scope="session")  # cached build: shared, groups no tests (conftest.py)
def exe(build: Path) -> Path:
    return build / "spmcheck-impl"


@pytest.fixture(scope="session")  # cached build: shared, groups no tests (conftest.py)
def tsan(build: Path) -> Path:
    return build / "spmcheck-impl-tsan"


def run(exe: Path, tmp: Path, model: str, variant: str, seed: int, *extra: str, env: dict | None = None) -> Path:
    out = tmp / f"{model}-{variant}-{seed}.log"
    r = subprocess.run([str(exe), "--model", model, "--variant", variant, "--seed", str(seed), "-o", str(out),
                        *extra], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def test_disabled_build_has_no_reference_to_the_sink(tmp_path: Path) -> None:
    src = tmp_path / "user.cpp"
    src.write_text('#include "spmcheck/trace.hpp"\n#include <mutex>\nstd::mutex m;\n'
                   'int f(int a) { spmcheck::trace::refcount_read(a, 1);\n'
                   '  spmcheck::trace::exclusive_lock<std::mutex> g(m, 0); spmcheck::trace::flag_store(true);\n'
                   '  return a + 1; }\n')
    syms = {}
    for on in (1, 0):
        obj = tmp_path / f"user{on}.o"
        subprocess.run(["g++", "-O2", "-std=c++17", f"-DSPMCHECK_TRACE={on}", f"-I{ROOT / 'include'}", "-c",
                        str(src), "-o", str(obj)], check=True)
        syms[on] = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    assert "spmcheck::trace::sink" in syms[1]  # the enabled build does reference it
    assert "spmcheck" not in syms[0], syms[0]


def test_core_traces_are_well_formed_for_every_variant(exe: Path, tmp_path: Path) -> None:
    for variant in ("final", "caller-flag", "stale-lookup", "apply-after-unlock", "pre-fix", "global-flag"):
        for seed in range(2):
            out = run(exe, tmp_path, "core", variant, seed, "--agents", "3", "--threads", "3", "--ops", "60")
            lines = out.read_text().splitlines()
            assert lines[0].startswith(f"spmcheck-trace v1 variant={variant} agents=3 updaters=3 lookups=3")
            assert lines[0].endswith(" end_marker=1") and lines[-1] == f"{len(lines) - 1} run_end"
            seqs = [int(ln.split()[0]) for ln in lines[1:]]
            assert seqs == list(range(1, len(seqs) + 1))  # merged by seq, no gap
            assert {ln.split()[1] for ln in lines[1:-1]} <= {"u0", "u1", "u2", "l0", "l1", "l2"}
            r = check_path(str(out))
            assert r.verdict.value != "malformed", (variant, seed, r.code, r.message)


# Historical variants: the bug's property must be the verdict (not a divergence) in most runs.
BUGS = {
    # one agent: no unordered-iteration divergence (CHK201) can come before the bug
    "stale-lookup": (("--agents", "1", "--threads", "3", "--ops", "150", "--jitter", "0.5"), "creation-consistent"),
    "global-flag": (("--agents", "1", "--threads", "2", "--ops", "150"), "serializer-mirrors-refcount"),
    # both pre-fix races: measured 20/20 rejected (P2 16, P1 4) at 2 agents / 2+2 threads; either
    # race is this variant's bug (requiring P1 alone failed about one run in four)
    "pre-fix": (("--agents", "2", "--threads", "2", "--ops", "200"), ("serializer-mirrors-refcount", "creation-consistent")),
}


@pytest.mark.parametrize("variant", sorted(BUGS))
def test_historical_variant_is_rejected_for_its_bug(exe: Path, tmp_path: Path, variant: str) -> None:
    args, want = BUGS[variant]
    props = (want,) if isinstance(want, str) else want
    verdicts: list[tuple[str, str | None]] = []
    # bounded attempts until the bug's property has been the verdict twice (measured 19/20 to
    # 20/20 runs per configuration, README "C++" / bench/cpp_rates.py --table)
    for seed in range(12):
        r = check_path(str(run(exe, tmp_path, "core", variant, seed, *args)))
        verdicts.append((r.verdict.value, r.prop or r.code))
        if sum(v == "violated" and p in props for v, p in verdicts) >= 2:
            break
    # the model follows the code now (cpp/DIVERGENCES.md D1-D5 fixed): no run diverges; a run
    # whose schedule missed the race window is accepted, as it should be
    assert all(v != "diverged" for v, _ in verdicts), verdicts
    assert sum(v == "violated" and p in props for v, p in verdicts) >= 2, verdicts


def test_apply_after_unlock_is_rejected(exe: Path, tmp_path: Path) -> None:
    verdicts = [check_path(str(run(exe, tmp_path, "core", "apply-after-unlock", seed, "--agents", "1",
                                   "--threads", "3", "--ops", "150"))).verdict.value for seed in range(6)]
    assert verdicts.count("accepted") <= 1, verdicts


# the model gap a correct lifecycle run can still hit (cpp/DIVERGENCES.md L2): (code, message part)
LC_GAPS = (("CHK202", "serialized="),)


def test_lifecycle_final_is_accepted(exe: Path, tmp_path: Path) -> None:
    # The model gap a correct run can hit, documented in cpp/DIVERGENCES.md: L2 (spm_enable/
    # spm_disable's serializer transitions applied after the count change the event marks: a
    # submit between them, seen under load). L1 is closed: the gate at WriteInterceptor's entry is
    # its own step (`dispatch_gate`), so a start/stop between it and the enter hook's snapshot is a
    # path of the model. L3 (the queues drained one after another) is closed: the model judges
    # the drain over its span. What it brought out is a
    # property of the code, not a gap: map-empty-after-drain is violated by `final`
    # (spec/lifecycle/expected.py; a dispatch submitted on a queue already synced holds the
    # context's fallback packet when the drain returns true; 3 of 100 runs, DIVERGENCES.md L3),
    # reported as a finding of the code (a note), as the other findings of final are.
    # Any other outcome of a final run -- a violation, another divergence -- fails the test.
    documented = LC_GAPS
    outcomes = []
    for seed in range(8):  # bounded attempts until 2 runs are accepted (measured ~3 in 4 are)
        r = check_path(str(run(exe, tmp_path, "lifecycle", "final", seed)))
        outcomes.append((r.verdict.value, r.code, r.message))
        assert r.verdict.value == "accepted" or any(
            r.code == c and m in (r.message or "") for c, m in documented), (seed, r.code, r.message)
        if sum(v == "accepted" for v, _, _ in outcomes) >= 2:
            break
    assert sum(v == "accepted" for v, _, _ in outcomes) >= 2, outcomes


# The lifecycle's race windows open at tool steps (start/stop/set_agents), a few per run at the
# defaults; the stress shape (4 tool threads x 400 calls over 3 contexts, jitter 0.5, the
# --gap-us pauses at the code's gaps between two lock scopes) opens them in nearly every run.
# bench/cpp_rates.py at 20 seeds (README "C++"): final 20/20 accepted; every known-bad variant
# 20/20 rejected, 14-20 of them by a property.
LC_STRESS = ("--ops", "400", "--tools", "4", "--contexts", "3", "--jitter", "0.5", "--dispatches", "40", "--gap-us", "200")


def test_lifecycle_final_is_accepted_under_stress(exe: Path, tmp_path: Path) -> None:
    for seed in range(2):
        r = check_path(str(run(exe, tmp_path, "lifecycle", "final", seed, *LC_STRESS)))
        # the documented gap L2 of test_lifecycle_final_is_accepted; nothing else
        assert r.verdict.value == "accepted" or any(r.code == c and m in (r.message or "") for c, m in LC_GAPS), r


@pytest.mark.parametrize("variant", [v for v in LVARIANTS if v != "final"])
def test_lifecycle_known_bad_is_rejected(exe: Path, tmp_path: Path, variant: str) -> None:
    verdicts = []
    # bounded attempts until a property has rejected two runs. Measured over 20 seeds: 14-20
    # rejected by a property per variant, the rest diverged at a documented gap (L4) or, for
    # set-agents-race, 1 accepted (its window missed). So at most two accepted runs are allowed
    # before the second rejection (set-agents-race: 3 misses first with probability 0.04 %;
    # conflict-scan-unlocked, 14/20: fewer than 2 of 8 with probability 0.13 %)
    for seed in range(8):
        r = check_path(str(run(exe, tmp_path, "lifecycle", variant, seed, *LC_STRESS)))
        verdicts.append((r.verdict.value, r.prop or r.code))
        if sum(v == "violated" for v, _ in verdicts) >= 2:
            break
    assert sum(v == "accepted" for v, _ in verdicts) <= 2, verdicts
    assert sum(v == "violated" for v, _ in verdicts) >= 2, verdicts


def test_tsan_build_reports_no_race(tsan: Path, tmp_path: Path) -> None:
    for model, variant, extra in (("core", "final", ("--agents", "3", "--threads", "4", "--ops", "40")),
                                  ("core", "final", ("--agents", "3", "--threads", "4", "--ops", "40",
                                                     "--queue-ramp-us", "2000")),
                                  ("core", "pre-fix", ("--agents", "3", "--threads", "4", "--ops", "40")),
                                  ("lifecycle", "final", ("--dispatches", "30")),
                                  ("lifecycle", "slot-cleared-first", ("--dispatches", "30"))):
        run(tsan, tmp_path, model, variant, 1, *extra, env=TSAN_ENV)  # exit 66 on a report


def test_record_impl_cpp(exe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.log"
    rc = record_cli.main(["--impl", "cpp", "--variant", "final", "--agents", "2", "--threads", "2",
                          "--ops", "20", "-o", str(out)])
    assert rc == 0
    assert out.read_text().startswith("spmcheck-trace v1 variant=final agents=2 updaters=2 lookups=2")
    assert record_cli.main(["--impl", "cpp", "--variant", "reversed-lookup-order", "-o", str(out)]) == 2
    assert "no core variant 'reversed-lookup-order'" in capsys.readouterr().err
    # the C++ driver's schedule knobs pass through (the ramp: one agent's queue per lookup thread)
    v2 = tmp_path / "ramp.log"
    assert record_cli.main(["--impl", "cpp", "--variant", "final", "--format", "2", "--agents", "4",
                            "--threads", "4", "--ops", "30", "--queue-ramp-us", "2000", "--idle-us", "20",
                            "--gap-us", "5", "-o", str(v2)]) == 0
    assert check_path(str(v2)).verdict.value == "accepted"
    capsys.readouterr()
    assert record_cli.main(["--variant", "final", "--queue-ramp-us", "10", "-o", str(out)]) == 2
    assert "--queue-ramp-us is a knob of the C++ driver only" in capsys.readouterr().err
    assert record_cli.main(["--impl", "cpp", "--variant", "final", "--idle-us", "-1", "-o", str(out)]) == 2
    assert "--idle-us must be in 0..1000000" in capsys.readouterr().err
    assert record_cli.main(["--impl", "cpp", "--model", "lifecycle", "--variant", "final", "--holders", "2",
                            "-o", str(out)]) == 2
    assert "knob of the core driver" in capsys.readouterr().err


def test_cpp_knobs_reach_the_driver_argv() -> None:
    import argparse

    from spmcheck.checker.record_cpp import command

    parser = argparse.ArgumentParser()
    record_cli.add_arguments(parser)
    args = parser.parse_args(["--impl", "cpp", "--variant", "final", "--queue-ramp-us", "5000", "--holders", "3",
                              "-o", "x.log"])
    argv = command(args, "impl")
    assert argv[argv.index("--queue-ramp-us") + 1] == "5000" and argv[argv.index("--holders") + 1] == "3"
    assert "--idle-us" not in argv  # not given: the driver keeps its own default


def test_record_impl_cpp_without_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(cpp_build.shutil, "which", lambda name: None)
    rc = record_cli.main(["--impl", "cpp", "--variant", "final", "-o", str(tmp_path / "x.log")])
    assert rc == 2
    assert "needs g++ on PATH" in capsys.readouterr().err


EVERY_KIND = r'''
#include "spmcheck/trace.hpp"
#include <mutex>
#include <shared_mutex>
#include <thread>
namespace tr = spmcheck::trace;
int main(int argc, char** argv) {
    std::mutex m; std::shared_mutex s;
    auto q = tr::register_lock("queues"), sa = tr::register_lock("serializer.1");
    std::thread a([&] {
        tr::set_thread_name(argv[2][0] == 'c' ? "u0" : "t0");
        if (argv[2][0] == 'c') {
            tr::update_begin(0b101, true); tr::update_end(); tr::update_begin(tr::all_agents, false);
            { tr::shared_lock<std::shared_mutex> g(s, q); }
            { tr::exclusive_lock<std::mutex> g(m, sa); g.unlock(); }
            tr::refcount_change(tr::all_counter, 0, 1); tr::refcount_change(2, 1, 0);
            { tr::atomic_section x; tr::flag_store(true); }
            tr::serializer_enable(1); tr::serializer_disable(1);
        } else {
            tr::context_register(0); tr::add_callback(1); tr::start_scan(0, 2); tr::start_begin(0, 0);
            tr::slot_publish(0); tr::spm_enable(0, 3); tr::spm_set_enabled(0); tr::marker_release(0);
            tr::stop_begin(0, 1); tr::spm_clear_enabled(0, true); tr::queue_sync(0, false);
            tr::spm_disable(0, 0); tr::slot_clear(0); tr::set_agents_check(0, tr::all_agents, 1);
            tr::set_agents_check(1, 0b10, 0); tr::set_agents_write(1); tr::deactivate(0, 0);
            tr::profile_destroy(1);
        }
    });
    a.join();
    std::thread b([&] {
        tr::set_thread_name(argv[2][0] == 'c' ? "l0" : "d0");
        if (argv[2][0] == 'c') {
            tr::lookup_begin(0); tr::refcount_read(0, 3); tr::serializer_lookup(0, false);
            tr::serializer_insert(0, true); tr::lookup_end(0);
        } else {
            tr::deferred d; tr::dispatch_write(d, 1, 0, true, 0b11, true, 0b01); tr::dispatch_submit(0, false);
            tr::set_thread_name("h0"); tr::completion_exit(0, true, 2); tr::completion_signal(0);
        }
    });
    b.join();
    if (argv[2][0] == 'c') tr::core_header("final", 3, 1, 1, " source=test");
    else tr::lifecycle_header("final", 2, 2, 1, 1, 4, true, true, true, " source=test");
    std::FILE* f = std::fopen(argv[1], "w");
    return tr::write(f) && std::fclose(f) == 0 ? 0 : 1;
}
'''


def test_every_event_kind_is_written_in_the_grammar(tmp_path: Path) -> None:
    import io

    from spmcheck.checker.parse import LineError, iter_records
    from spmcheck.spec.events import Event

    src = tmp_path / "every.cpp"
    src.write_text(EVERY_KIND)
    prog = tmp_path / "every"
    subprocess.run(["g++", "-O1", "-std=c++17", "-pthread", f"-I{ROOT / 'include'}", str(src), "-o", str(prog)],
                   check=True)
    kinds: set[str] = set()
    for model in ("core", "lifecycle"):
        out = tmp_path / f"{model}.log"
        subprocess.run([str(prog), str(out), model], check=True)
        recs = list(iter_records(io.BytesIO(out.read_bytes()), str(out)))
        errors = [r for r in recs if isinstance(r, LineError)]
        assert not errors, (out.read_text(), errors)
        events = [r for r in recs if isinstance(r, Event)]
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        kinds |= {e.kind for e in events}
    assert len(kinds) == 13 + 21, sorted(kinds)  # every kind of both FORMAT.md tables
    text = (tmp_path / "core.log").read_text()
    assert "update_begin agents=0,2 enable=1" in text and "refcount_change agent=all old=0 new=1" in text


def test_include_dir_holds_the_header(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from spmcheck.checker import cli

    monkeypatch.chdir(ROOT)  # a non-editable install finds the checkout from its cwd

    assert cli.main(["--include-dir"]) == 0
    assert (Path(capsys.readouterr().out.strip()) / "spmcheck" / "trace.hpp").is_file()


@pytest.mark.parametrize("agents,updaters,lookups", [(2, 2, 2), (8, 16, 48)])
def test_v2_final_runs_at_scale_are_accepted(exe: Path, tmp_path: Path, agents: int, updaters: int,
                                             lookups: int) -> None:
    """Format v2 from the C++ implementation: opaque thread ids, no sizes; 8 agents and 64
    threads (beyond anything v1 can declare), >= 100 k events, accepted (one seed here; the rates
    over 20 seeds are bench/cpp_rates.py's)."""
    for seed in range(1):
        out = run(exe, tmp_path, "core", "final", seed, "--format", "2", "--agents", str(agents),
                  "--updaters", str(updaters), "--lookups", str(lookups), "--ops", "2000" if agents == 2 else "150",
                  "--hold-us", "5")
        head = out.open().readline()
        assert head.startswith("spmcheck-trace v2") and "agents=" not in head
        r = check_path(str(out))
        assert r.verdict.value == "accepted", (r.code, r.message)
        assert r.events >= 100_000, r.events


def test_v2_historical_variant_is_rejected_at_eight_agents(exe: Path, tmp_path: Path) -> None:
    verdicts = []
    for seed in range(6):
        r = check_path(str(run(exe, tmp_path, "core", "stale-lookup", seed, "--format", "2", "--agents", "8",
                               "--updaters", "8", "--lookups", "24", "--ops", "100")))
        verdicts.append((r.verdict.value, r.prop))
        # the stale entry can break P1 (serializer-mirrors-refcount) before P2 shows: also the
        # bug, but the test waits for two runs caught by the stale lookup's own property
        if sum(v == "violated" and p == "creation-consistent" for v, p in verdicts) >= 2:
            break
    assert all(v != "diverged" for v, _ in verdicts), verdicts
    assert sum(v == "violated" and p == "creation-consistent" for v, p in verdicts) >= 2, verdicts


@pytest.mark.parametrize("fmt", ["1", "2"])
def test_unmerged_per_thread_chunks_need_the_reorder_window(exe: Path, tmp_path: Path, fmt: str) -> None:
    """A sink that writes each thread's buffer in runs of 64 as it fills (--chunk 64, no merge):
    rejected as out of order without a window, accepted with a window of the displacement the
    file shows (measured here from the file itself, not from the checker)."""
    from spmcheck.checker.replay import check_path as check

    out = run(exe, tmp_path, "core", "final", 5, "--format", fmt, "--agents", "2", "--threads", "2", "--ops", "80",
              "--chunk", "64")
    seqs = [int(ln.split()[0]) for ln in out.read_text().splitlines()[1:]]
    order = sorted(range(len(seqs)), key=lambda i: seqs[i])
    d = max(abs(pos - i) for pos, i in enumerate(order))
    assert d >= 64  # the chunks really are interleaved out of order
    plain = check(str(out))
    assert plain.verdict.value == "malformed" and plain.code in ("TRC011", "TRC012"), (plain.code, plain.message)
    ok = check(str(out), reorder_window=d)
    assert ok.verdict.value == "accepted", (ok.code, ok.message)
    assert ok.events == len(seqs) - 1  # every event (the run_end line is not one)


@pytest.mark.parametrize("fmt", ["1", "2"])
@pytest.mark.parametrize("variant", ["stale-lookup", "apply-after-unlock", "pre-fix"])
def test_rejected_cpp_runs_cite_the_race(exe: Path, tmp_path: Path, variant: str, fmt: str) -> None:
    """Every rejection of a historical variant's C++ run names its race by line: the read, the
    update and the insert (stale lookup), or the crossed count changes and the late apply (the
    checks of tests/test_race_lines.py, against the cited lines' own events and counts)."""
    from .test_race_lines import assert_late_apply, assert_stale_read

    seen = 0
    for seed in range(4):
        out = run(exe, tmp_path, "core", variant, seed, "--format", fmt, "--agents", "2", "--threads", "2",
                  "--ops", "200")
        r = check_path(str(out))
        if r.verdict.value != "violated":
            continue
        seen += 1
        text = out.read_text()
        assert r.race is not None, (seed, r.prop, r.message)
        last = text.splitlines()[r.race.lines[-1].line - 1].split()[2]
        if r.race.kind == "late-apply":
            assert_late_apply(r, text)
        elif last == "serializer_insert":
            assert_stale_read(r, text)
        else:  # a lookup's enable({}) on an existing entry, from its stale read
            assert last == "serializer_enable" and "stale lookup" in r.race.summary, r.race
        if seen == 2:
            break
    assert seen >= 1


def test_record_impl_cpp_lifecycle_knobs(exe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lc.log"
    # --gap-us widens the lifecycle driver's gaps too; the core's thread-shape knobs are refused
    assert record_cli.main(["--impl", "cpp", "--model", "lifecycle", "--variant", "final", "--ops", "20",
                            "--gap-us", "100", "-o", str(out)]) == 0
    assert check_path(str(out)).verdict.value == "accepted"
    capsys.readouterr()
    assert record_cli.main(["--impl", "cpp", "--model", "lifecycle", "--variant", "final", "--idle-us", "5",
                            "-o", str(out)]) == 2
    assert "--idle-us is a knob of the core driver" in capsys.readouterr().err
