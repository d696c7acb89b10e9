"""Benchmark of `spmcheck check` on one large generated trace (random walk of the final model).

Prints: events/s of the full checker (parse + replay + properties + lock graph) next to two floors
measured on the same file (reading lines; plain str.split parse), peak RSS, and the --jobs 2
speedup over several files. Usage: python bench/bench_check.py [EVENTS] [DIR]
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from floors import read_lines, split_to_tuples  # noqa: E402  # the floors of every checker bench


def generate(path: Path, events: int, seed: int = 1) -> None:
    """Random walk of the final model (2 agents, 2 updaters, 2 lookups), memoised per state."""
    from spmcheck.checker.simulate import walk
    from spmcheck.spec.events import Header, render_event, render_header
    from spmcheck.spec.model import Model
    from spmcheck.spec.vocabulary import Config

    cfg = Config(2, 2, 2)
    m = Model(cfg, "final")
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_header(Header(1, "final", 2, 2, 2, (("seed", str(seed)), ("source", "bench")))) + "\n")
        f.writelines(render_event(e) + "\n" for e in walk(m, events, seed))


def floor_read(path: Path) -> float:
    t = time.perf_counter()
    read_lines(path)
    return time.perf_counter() - t


def floor_split(path: Path) -> float:
    t = time.perf_counter()
    split_to_tuples(path)
    return time.perf_counter() - t


def run_checker(paths: list[Path], jobs: int) -> tuple[float, str]:
    """Wall time of a fresh `check` process (includes imports), and its first output line."""
    cmd = [sys.executable, "-m", "spmcheck.checker.check_cli", "--jobs", str(jobs), *map(str, paths)]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True)
    return time.perf_counter() - t, out.stdout.splitlines()[0] if out.stdout else out.stderr[-300:]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    d = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="spmbench"))
    d.mkdir(parents=True, exist_ok=True)
    big = d / "big.log"
    if not big.exists():
        t = time.perf_counter()
        generate(big, n)
        print(f"generated {big} ({big.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t:.1f} s")
    events = sum(1 for _ in open(big, "rb")) - 1
    from spmcheck.checker.replay import check_path

    check_path(str(ROOT / "traces" / "final-walk-ok.log"))  # build grammar + model outside timing
    t = time.perf_counter()
    r = check_path(str(big))
    dt = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    fr, fs = floor_read(big), floor_split(big)
    print(f"verdict: {r.verdict.value} ({r.events} events)")
    print(f"checker (in-process, after warm-up): {events / dt / 1e3:.0f} k events/s ({dt:.2f} s)")
    print(f"floor read lines:  {events / fr / 1e3:.0f} k lines/s   ratio checker/floor {fr / dt:.3f}")
    print(f"floor str.split:   {events / fs / 1e3:.0f} k lines/s   ratio checker/floor {fs / dt:.2f}")
    print(f"peak RSS (this process): {rss:.0f} MB")
    # --jobs: several files, fresh processes (imports included)
    k, per = 4, max(n // 8, 1000)
    parts = []
    for i in range(k):  # distinct walks (different seeds), so no process profits from another's memo
        p = d / f"part{i}-{per}.log"
        if not p.exists():
            generate(p, per, seed=10 + i)
        parts.append(p)
    t1, o1 = run_checker(parts, 1)
    t2, o2 = run_checker(parts, 2)
    print(f"{k} files x {per} events: --jobs 1 {t1:.2f} s, --jobs 2 {t2:.2f} s, speedup {t1 / t2:.2f}x ({o1[:60]})")


if __name__ == "__main__":
    main()
