"""`spmcheck check --jobs 2` vs `--jobs 1` over several trace files, next to a floor measured in
the same run: the same files split into tuples (`str.split`, repeated so that one process takes
about as long as `check --jobs 1`) by 1 and by 2 worker processes, sharded the same way. The
floor's speedup is what this machine gives a perfectly parallel job of that shape right now (2
cores shared with other work make it less than 2x); the checker's speedup is read against it.
CPU seconds (user + sys of the child) are printed too: equal CPU at 1 and 2 jobs with no wall
speedup means the cores were busy, not that the work was duplicated.
The "CPU critical path" line is the speedup two idle cores would give, read from CPU seconds alone
(the parent's serial CPU plus the busiest worker's, against `--jobs 1`'s CPU): other sessions'
load moves it far less than the wall-clock speedup (on a shared machine CPU seconds still grow
a little with contention: cache, memory bandwidth), and it says what the serial part costs.

    python bench/bench_jobs.py [--runs 3] [--ops 3000] [--long-ops 12000] [--files 4] [--dir DIR]
                               [--v2-events 200000] [--only corpus,recorded,long,v2]

Four sets of files: the corpus (every traces/*.log), --files traces recorded by `spmcheck
record` (final design, distinct seeds, --ops calls per thread; format v1), as many with
--long-ops calls per thread (a 10 s recording is ~3.6 M events; these are ~0.5 M) and --files v2 runs of
checker/simulate_v2.py (the compiled engine, --v2-events each). Each figure is the median of
--runs fresh processes (imports included), the 1- and 2-process runs interleaved so that a change
in load hits both.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
# bytecode on: `pip install .` compiles every module at install time, so a user's `spmcheck check`
# reads .pyc files; a shell with PYTHONDONTWRITEBYTECODE=1 (this workplace's default) would make
# every process recompile the package from source and charge that serial start-up to --jobs
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV.update({"PYTHONPATH": str(ROOT), "SPMCHECK_NO_SUPERVISE": "1"})

# the floor: str.split to tuples, files sharded over N processes exactly as `check --jobs N` does
FLOOR = """
import sys
from concurrent.futures import ProcessPoolExecutor
sys.path.insert(0, BENCH)
from floors import split_to_tuples  # bench/floors.py: the floor of every checker bench
def split(path):
    return sum(split_to_tuples(path) for _ in range(REPEAT))
REPEAT, jobs, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
if jobs == 1:
    print(sum(map(split, files)))
else:
    with ProcessPoolExecutor(jobs) as ex:
        print(sum(ex.map(split, files)))
""".replace("BENCH", repr(str(Path(__file__).resolve().parent)))


# `check --jobs 2` with the CPU each process spent recorded: the parent's (start-up, compiling
# before the fork, printing) and each forked worker's (CPU clocks restart at 0 in a fork child).
# With the pool's workers forked from a patched module, the patched worker function is the one
# they run (pickled by name from __main__, which the fork child shares).
CRIT = """
import os, sys, time
from spmcheck.checker import check_cli
LOG = sys.argv[1]
_orig = check_cli._check_in_worker
def worker(path):
    r = _orig(path)
    with open(LOG, "a") as f:
        f.write(f"{os.getpid()} {time.process_time()}\\n")
    return r
check_cli._check_in_worker = worker
try:
    check_cli.main(sys.argv[2:])
finally:
    with open(LOG, "a") as f:
        f.write(f"parent {time.process_time()}\\n")
"""


def critical(files: list[str], runs: int) -> tuple[float, float, float, float]:
    """What 2 idle cores would give, from CPU seconds alone (far less load-dependent than wall time): `check
    --jobs 1`'s CPU over the critical path of `--jobs 2`, i.e. the parent's CPU (serial: start-up,
    engines compiled before the fork, printing) plus the busiest worker's. Medians of (jobs-1
    CPU, parent CPU, busiest worker CPU, bound)."""
    one, par, work, bound = [], [], [], []
    for _ in range(runs):
        c1 = timed(check_cmd(files, 1))[1]
        log = Path(tempfile.mkstemp(prefix="spmcrit")[1])
        subprocess.run([sys.executable, "-c", CRIT, str(log), "--jobs", "2", *files], cwd=ROOT, env=ENV,
                       capture_output=True, text=True)
        per: dict[str, float] = {}
        for ln in log.read_text().splitlines():
            who, secs = ln.split()
            per[who] = float(secs)  # a worker's last line: its CPU after its last file
        log.unlink()
        p = per.pop("parent")
        w = max(per.values(), default=0.0)
        one.append(c1)
        par.append(p)
        work.append(w)
        bound.append(c1 / (p + w))
    med = statistics.median
    return med(one), med(par), med(work), med(bound)


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + sys of the child and its workers), stdout."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), out.stdout


def check_cmd(files: list[str], jobs: int) -> list[str]:
    return [sys.executable, "-m", "spmcheck.checker.cli", "check", "--jobs", str(jobs), *files]


def floor_cmd(repeat: int) -> Callable[[list[str], int], list[str]]:
    return lambda files, jobs: [sys.executable, "-c", FLOOR, str(repeat), str(jobs), *files]


@dataclass
class Pair:
    wall1: float
    wall2: float
    cpu1: float
    cpu2: float
    same: bool  # stdout identical at 1 and 2 processes, in every run

    @property
    def speedup(self) -> float:
        return self.wall1 / self.wall2


def paired(make: Callable[[list[str], int], list[str]], files: list[str], runs: int) -> Pair:
    """Medians at 1 and 2 processes, the runs interleaved."""
    w1, w2, c1, c2, same = [], [], [], [], True
    for _ in range(runs):
        a, ca, o1 = timed(make(files, 1))
        b, cb, o2 = timed(make(files, 2))
        w1.append(a)
        w2.append(b)
        c1.append(ca)
        c2.append(cb)
        same = same and o1 == o2
    med = statistics.median
    return Pair(med(w1), med(w2), med(c1), med(c2), same)


def recorded(d: Path, n: int, ops: int) -> list[str]:
    out = []
    for i in range(n):
        p = d / f"rec-final-ops{ops}-seed{i + 1}.log"
        if not p.exists():
            subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", "record", "--variant", "final", "--ops", str(ops),
                            "--seed", str(i + 1), "-o", str(p)], cwd=ROOT, env=ENV, check=True, capture_output=True)
        out.append(str(p))
    return out


def simulated(d: Path, n: int, length: int) -> list[str]:
    """n v2 runs of the final design (checker/simulate_v2.py, distinct seeds): the compiled engine."""
    sys.path.insert(0, str(ROOT))
    from spmcheck.checker.simulate_v2 import generate

    out = []
    for i in range(n):
        p = d / f"sim-v2-final-a2-{length}-seed{i + 1}.log"
        if not p.exists():
            p.write_text("\n".join(generate("final", 2, 2, 2, length, seed=i + 1)) + "\n")
        out.append(str(p))
    return out


def events(files: list[str]) -> int:
    return sum(1 for f in files for ln in open(f, "rb") if ln[:1].isdigit())


def measure(name: str, files: list[str], runs: int) -> float:
    load0 = os.getloadavg()[0]
    c = paired(check_cmd, files, runs)
    # calibrate: a process's start-up plus `per` seconds for each pass over the files
    one, three = timed(floor_cmd(1)(files, 1))[0], timed(floor_cmd(3)(files, 1))[0]
    per = max((three - one) / 2, 1e-3)
    repeat = max(1, round((c.wall1 - (one - per)) / per))
    f = paired(floor_cmd(repeat), files, runs)
    if not timed(floor_cmd(1)(files, 2))[2].strip():
        raise SystemExit("bench_jobs: the floor printed nothing (it failed); run it by hand")
    print(f"{name}: {len(files)} files, {events(files)} events; load {load0:.1f} -> {os.getloadavg()[0]:.1f} "
          f"(1-min average over this set's runs, other sessions included)")
    print(f"  floor (str.split x{repeat}, same sharding): 1 process {f.wall1:.2f} s, 2 processes {f.wall2:.2f} s, "
          f"speedup {f.speedup:.2f}x (CPU {f.cpu1:.2f} / {f.cpu2:.2f} s)")
    print(f"  spmcheck check:  --jobs 1 {c.wall1:.2f} s, --jobs 2 {c.wall2:.2f} s, speedup {c.speedup:.2f}x "
          f"(CPU {c.cpu1:.2f} / {c.cpu2:.2f} s); {c.speedup / f.speedup:.2f} of the floor's speedup; "
          f"output {'identical' if c.same else 'DIFFERENT'}")
    one, par, work, bound = critical(files, runs)
    print(f"  CPU critical path of --jobs 2: parent {par:.2f} s + busiest worker {work:.2f} s, against "
          f"{one:.2f} s at --jobs 1: {bound:.2f}x on 2 idle cores")
    return c.speedup


def startup(files: list[str], runs: int) -> float:
    """Median wall seconds of `spmcheck check` on the first 20 lines of one file: what every run
    pays before its first event (imports, grammar, the compiled engine), the serial part of
    --jobs (Amdahl: with start-up S and work W at one process, two give (S + W) / (S + W / 2))."""
    d = Path(tempfile.mkdtemp(prefix="spmstart"))
    small = d / "head.log"
    with open(files[0], "rb") as f:
        small.write_bytes(b"".join(ln for _, ln in zip(range(20), f)))
    return statistics.median(timed(check_cmd([str(small)], 1))[0] for _ in range(runs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ops", type=int, default=3000, help="calls per thread of each recorded trace")
    ap.add_argument("--long-ops", type=int, default=12000,
                    help="calls per thread of the longer recorded traces (0: skip that set)")
    ap.add_argument("--files", type=int, default=4, help="recorded traces (>= 4)")
    ap.add_argument("--v2-events", type=int, default=200_000, help="events of each simulated v2 trace")
    ap.add_argument("--dir", type=Path, default=None, help="where recorded traces are kept (default: a temp dir)")
    ap.add_argument("--only", default="corpus,recorded,long,v2",
                    help="sets to measure: corpus, recorded (--ops), long (--long-ops), v2 (--v2-events)")
    a = ap.parse_args()
    sets = set(a.only.split(","))
    d = a.dir or Path(tempfile.mkdtemp(prefix="spmjobs"))
    d.mkdir(parents=True, exist_ok=True)
    print(f"== check --jobs 2 vs --jobs 1 (median of {a.runs}; {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}) ==")
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(ROOT / p) for p in ("spmcheck", "spec", "checker"))],
                   env=ENV, check=False, capture_output=True)
    corpus = sorted(str(p) for p in (ROOT / "traces").glob("*.log"))
    print(f"start-up (check of a 20-line file): {startup(corpus, a.runs):.2f} s")
    if "corpus" in sets:
        measure("corpus traces/*.log", corpus, a.runs)
    if "recorded" in sets:
        measure(f"recorded (spmcheck record --variant final --ops {a.ops})", recorded(d, max(a.files, 4), a.ops), a.runs)
    if a.long_ops and "long" in sets:
        measure(f"recorded, longer (--ops {a.long_ops})", recorded(d, max(a.files, 4), a.long_ops), a.runs)
    if "v2" in sets:
        measure(f"format v2, compiled engine (simulated, {a.v2_events} events each)",
                simulated(d, max(a.files, 4), a.v2_events), a.runs)


if __name__ == "__main__":
    main()
