"""Checker throughput: the compiled engine, the interpreter and v1, next to the floors, same files.

    python bench/openworld.py [--runs 3] [--events 100000,1000000] [--huge [--huge-systems small]]
                              [--recorded-ops 40000] [--interp-max 100000]
                              [--small 2,2,2] [--large 8,16,48] [--lifecycle 1000000] [--only-lifecycle]

For each system size (agents, updaters, lookups: 2 agents / 4 threads and 8 agents / 64 threads)
and each length, a run of the final design is simulated once (checker/simulate_v2.py, cached
under bench/.cache/; --huge adds 10 M events, which takes long to simulate) and then, each in a
fresh process so that peak memory (VmHWM) belongs to that reader alone, read by: the two floors
(`for line in f`, and `str.split` of every line to a tuple: bench/floors.py, the same in every
checker bench), the compiled engine (`check`, the
default), the interpreter (`check --engine interp`, up to --interp-max events: it is ~20x slower)
and, at the small size, v1 on the same run written as v1; then two runs recorded from the C++
implementation of `final` at 2 agents / 4 threads (`record --impl cpp`, --recorded-ops calls per
thread), one in format v2 (the compiled engine) and one in v1 (v1's reader). Each figure is the median of --runs
runs, interleaved so that a change of load hits every reader alike; CPU seconds (process time).
Printed: events/s, the ratio to the `str.split` floor of the same file in the same round, peak MiB;
then cost per event of the large size over the small one (issue 10: <= 1.5) and peak memory of
the longest run over the shortest (issue 14: within 10 %).

The lifecycle (issue 10: "8 agents, 64 threads, 16 contexts and 1 M dispatches"): a run of
`final` with --lifecycle dispatches (default 1 M, about 4 M events: write, submit, exit and
signal per dispatch, plus the tool threads' calls) by 16 tool, 40 dispatch and 8 completion
threads over 8 agents and 16 contexts, and one by 2 tool, 1 dispatch and 1 completion thread over
2 agents and 2 contexts (`generate_lifecycle`, cached), read by the floors and the compiled engine
(and the interpreter up to --interp-max events) the same way; then the cost per event of the
large system over the small one.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"


def trace(a: int, u: int, l: int, events: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    p = CACHE / f"final-v2-a{a}-u{u}-l{l}-{events}.log"
    if not p.exists():
        sys.path.insert(0, str(ROOT))
        from spmcheck.checker.simulate_v2 import generate

        t0 = time.perf_counter()
        with open(p.with_suffix(".tmp"), "w") as f:
            for ln in generate("final", a, u, l, events, seed=7):
                f.write(ln + "\n")
        p.with_suffix(".tmp").rename(p)
        print(f"  (simulated {p.name} in {time.perf_counter() - t0:.0f} s)", flush=True)
    return p


LC_SIZES = {"large": dict(agents=8, contexts=16, tools=16, dispatchers=40, completers=8),
            "small": dict(agents=2, contexts=2, tools=2, dispatchers=1, completers=1)}


def _lc_tag() -> str:
    """What a cached lifecycle run was simulated from: a change of the definition (a new
    observation) or of the simulator makes a new file instead of reading a stale one."""
    h = hashlib.sha1()
    for rel in ("spec/lifecycle/definition.py", "checker/simulate_v2.py", "spec/lang/owcompile.py"):
        h.update((ROOT / rel).read_bytes())
    return h.hexdigest()[:8]


def lc_trace(dispatches: int, size: str = "large") -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    z = LC_SIZES[size]
    n = z["tools"] + z["dispatchers"] + z["completers"]
    p = CACHE / f"final-lc-v2-a{z['agents']}-c{z['contexts']}-t{n}-{dispatches}-{_lc_tag()}.log"
    if not p.exists():
        sys.path.insert(0, str(ROOT))
        from spmcheck.checker.simulate_v2 import generate_lifecycle

        t0 = time.perf_counter()
        with open(p.with_suffix(".tmp"), "w") as f:
            for ln in generate_lifecycle("final", dispatches=dispatches, seed=7, tool_share=0.01, **z):
                f.write(ln + "\n")
        p.with_suffix(".tmp").rename(p)
        print(f"  (simulated {p.name} in {time.perf_counter() - t0:.0f} s)", flush=True)
    return p


def bench_lifecycle(runs: int, dispatches: int, interp_max: int) -> None:
    per_event = {}
    for size in ("small", "large"):
        z = LC_SIZES[size]
        p = lc_trace(dispatches, size)
        with open(p) as f:
            events = sum(1 for _ in f) - 2
        readers = ["read", "split", "compiled"] + (["interp"] if events <= interp_max else [])
        got: dict[str, list[dict[str, float]]] = {r: [] for r in readers}
        for _ in range(runs):
            for r in readers:
                got[r].append(measure(p, r))
        split = statistics.median(m["n"] / m["cpu"] for m in got["split"])
        label = f"lc {z['agents']}a/{z['contexts']}c/{z['tools'] + z['dispatchers'] + z['completers']}t"
        for r in readers:
            rate = statistics.median(m["n"] / m["cpu"] for m in got[r])
            rss = statistics.median(m["rss"] for m in got[r])
            name = {"read": "floor: for line in f", "split": "floor: str.split", "compiled": "compiled (default)",
                    "interp": "interpreter"}[r]
            print(f"{label:<20} {events:>9} {name:<22} {rate / 1e3:>8.0f} {rate / split:>8.2f} {rss:>9.0f}  "
                  f"{got[r][0]['verdict']}", flush=True)
            if r == "compiled":
                per_event[size] = 1 / rate
        print(f"   ({dispatches} dispatches, {events} events)")
    print(f"lifecycle cost per event, large / small: {per_event['large'] / per_event['small']:.2f} (issue 10: <= 1.5)")


def as_v1(p: Path, a: int, u: int, l: int) -> Path:
    """The same run in v1: threads renamed by role in order of appearance, agents to numbers."""
    out = p.with_name(p.name.replace("-v2-", "-v1-"))
    if out.exists():
        return out
    names: dict[str, str] = {}
    counts = {"update_begin": 0, "lookup_begin": 0}
    with open(p) as f, open(out, "w") as g:
        for ln in f:
            w = ln.split()
            if w[0] == "spmcheck-trace":
                g.write(f"spmcheck-trace v1 variant=final agents={a} updaters={u} lookups={l} end_marker=1\n")
                continue
            if len(w) == 2:
                g.write(ln)
                continue
            seq, t, kind, *kv = w
            if t not in names:
                prefix = "u" if kind == "update_begin" else "l"
                key = "update_begin" if prefix == "u" else "lookup_begin"
                names[t] = f"{prefix}{counts[key]}"
                counts[key] += 1
            kv = [x.replace("gpu", "") for x in kv]
            kv = [",".join(sorted(x.split("=")[1].split(","), key=int)).join(["agents=", ""])
                  if x.startswith("agents=") and x != "agents=all" else x for x in kv]
            g.write(" ".join([seq, names[t], kind, *kv]) + "\n")
    return out


def recorded(fmt: int, ops: int) -> Path:
    """A run of the C++ implementation of `final` (cpp/, `spmcheck record --impl cpp`) at 2 agents
    / 4 threads, format `fmt`: a recorded log, not a simulated one (cached under bench/.cache/)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    p = CACHE / f"rec-cpp-final-v{fmt}-a2-t4-ops{ops}.log"
    if not p.exists():
        subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", "record", "--impl", "cpp", "--variant", "final",
                        "--format", str(fmt), "--agents", "2", "--threads", "4", "--ops", str(ops), "--seed", "7",
                        "-o", str(p.with_suffix(".tmp"))], check=True, capture_output=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        p.with_suffix(".tmp").rename(p)
    return p


CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {bench!r})
from floors import read_lines, split_to_tuples  # bench/floors.py: the floors of every checker bench
path, what = sys.argv[1], sys.argv[2]
if what in ("compiled", "interp", "v1"):
    from spmcheck.checker import openworld_check
    from spmcheck.checker.replay import check_path
    openworld_check.ENGINE = "interp" if what == "interp" else "compiled"
    check_path({warm!r})  # grammar, definition and compiled reading built outside the timing
    check_path({warm1!r})
c0 = time.process_time()
if what == "read":
    n, verdict = read_lines(path), "-"
elif what == "split":
    n, verdict = split_to_tuples(path), "-"
else:
    r = check_path(path)
    n, verdict = r.events, r.verdict.value
cpu = time.process_time() - c0
# VmHWM (this process image's peak resident set): ru_maxrss would carry the parent's over exec
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print(json.dumps({{"n": n, "cpu": cpu, "rss": hwm, "verdict": verdict}}))
"""


def measure(path: Path, what: str) -> dict[str, float]:
    src = CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"), warm=str(ROOT / "traces" / "final-v2-cpp-a8-t64.log"),
                       warm1=str(ROOT / "traces" / "final-walk-ok.log"))
    out = subprocess.run([sys.executable, "-c", src, str(path), what], check=True, capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def machine() -> str:
    cpu = ""
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{datetime.datetime.now().isoformat(timespec='minutes')}  {cpu}  {os.cpu_count()} cores  "
            f"Python {platform.python_version()}  load {os.getloadavg()[0]:.1f}")


def bench(runs: int, sizes: list[int], interp_max: int, systems: list[tuple[str, tuple[int, int, int]]],
          huge: tuple[str, ...] = (), rec_ops: int = 0) -> None:
    print(f"== checker: events/s vs the floors on the same file (median of {runs}; CPU time) ==")
    print(f"   {machine()}")
    print(f"{'system':<20} {'events':>9} {'reader':<22} {'k ev/s':>8} {'x split':>8} {'peak MiB':>9}  verdict")
    per_event: dict[tuple[str, int], float] = {}
    peak: dict[tuple[str, int], float] = {}
    rows: list[tuple[str, tuple[int, int, int], int, Path | None]] = [
        (label, size, n, None) for label, size in systems for n in sizes + ([10_000_000] if label in huge else [])]
    if rec_ops:  # recorded by the C++ implementation: format v2 (compiled engine) and v1 (v1 reader)
        rows += [("recorded", (2, 2, 2), 0, recorded(2, rec_ops)), ("recorded", (2, 2, 2), 0, recorded(1, rec_ops))]
    for label, (a, u, l), n, given in rows:
        p = given if given is not None else trace(a, u, l, n)
        n = n or sum(1 for ln in open(p, "rb") if ln[:1].isdigit())
        v1only = given is not None and open(p).readline().split()[1] == "v1"
        readers = ["read", "split"] + (["v1"] if v1only else ["compiled"]) + (
            ["interp"] if n <= interp_max and not v1only else [])
        v1 = p if v1only else as_v1(p, a, u, l) if label == "small" and u <= 6 and l <= 6 and a <= 6 else None
        if v1 is not None and not v1only:
            readers.append("v1")
        got: dict[str, list[dict[str, float]]] = {r: [] for r in readers}
        for _ in range(runs):
            for r in readers:
                got[r].append(measure(v1 if r == "v1" else p, r))
        split = statistics.median(m["n"] / m["cpu"] for m in got["split"])
        for r in readers:
            rate = statistics.median(m["n"] / m["cpu"] for m in got[r])
            rss = statistics.median(m["rss"] for m in got[r])
            name = {"read": "floor: for line in f", "split": "floor: str.split", "compiled": "compiled (default)",
                    "interp": "interpreter", "v1": "v1 (fixed size)"}[r]
            where = f"{a} agents/{u + l} thr" + (" rec" if given is not None else "")
            print(f"{where:<20} {n:>9} {name:<22} {rate / 1e3:>8.0f} {rate / split:>8.2f} "
                  f"{rss:>9.0f}  {got[r][0]['verdict']}", flush=True)
            if r == "compiled" and given is None:
                per_event[(label, n)] = 1 / rate
                peak[(label, n)] = rss
            if r == "v1" and given is None:
                peak[(f"{label} v1", n)] = rss
    for n in sizes:
        if ("large", n) in per_event and ("small", n) in per_event:
            print(f"cost per event at {n} events, large / small: {per_event[('large', n)] / per_event[('small', n)]:.2f} "
                  f"(issue 10: <= 1.5)")
    for label in [x for name, _ in systems for x in (name, f"{name} v1")]:
        lo, hi = min(sizes), max(sizes + ([10_000_000] if label.split()[0] in huge else []))
        if (label, lo) in peak and (label, hi) in peak and lo != hi:
            print(f"peak memory {label}, {hi} vs {lo} events: {peak[(label, hi)]:.0f} / {peak[(label, lo)]:.0f} MiB "
                  f"= {peak[(label, hi)] / peak[(label, lo)]:.2f} (issue 14: within 10 %)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--events", default="100000,1000000", help="comma-separated lengths")
    ap.add_argument("--huge", action="store_true", help="also 10 M events (long to simulate the first time)")
    ap.add_argument("--huge-systems", default="small,large",
                    help="which systems --huge reads at 10 M events (simulating 10 M at 8 agents / 64 threads "
                         "takes about an hour here)")
    ap.add_argument("--recorded-ops", type=int, default=40000,
                    help="calls per thread of the recorded C++ runs at 2 agents / 4 threads (0: none)")
    ap.add_argument("--interp-max", type=int, default=100_000, help="longest run the interpreter reads")
    ap.add_argument("--small", default="2,2,2", help="agents,updaters,lookups (default 2,2,2: 4 threads)")
    ap.add_argument("--large", default="8,16,48", help="agents,updaters,lookups (default 8,16,48: 64 threads)")
    ap.add_argument("--lifecycle", type=int, default=1_000_000, help="lifecycle dispatches (0: no lifecycle run)")
    ap.add_argument("--only-lifecycle", action="store_true", help="just the lifecycle run")
    args = ap.parse_args()
    sizes = [int(x) for x in args.events.split(",")]
    huge = tuple(args.huge_systems.split(",")) if args.huge else ()
    systems = [("small", tuple(int(x) for x in args.small.split(","))),
               ("large", tuple(int(x) for x in args.large.split(",")))]
    if not args.only_lifecycle:
        bench(args.runs, sizes, args.interp_max, systems, huge, args.recorded_ops)  # type: ignore[arg-type]
    elif args.lifecycle:
        print(f"== checker: events/s vs the floors on the same file (median of {args.runs}; CPU time) ==")
        print(f"   {machine()}")
    if args.lifecycle:
        bench_lifecycle(args.runs, args.lifecycle, args.interp_max)


if __name__ == "__main__":
    main()
