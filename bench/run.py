"""One benchmark command: spmcheck against its floors and against Spin, side by side.

    python bench/run.py [--runs 3] [--huge] [--only check,prove,scale,spin] [--dir DIR]

Prints, each as a median of --runs runs (separate processes where the figure is a process's):
  * checker events/s vs the floors on the same file (`for line in f`; `str.split` to tuples) at
    100 k and 1 M events (10 M with --huge), peak RSS per size, and the `--jobs 2` speedup over
    the corpus and 4 recorded traces, each next to a floor sharded the same way (bench_jobs.py);
  * `spmcheck prove` wall seconds with certificates (default) and with `--fresh`, and per pair;
  * fixed-size proofs of the core `final` at 2/2/2, 2/3/2, 3/3/3 vs the any-size proof;
  * spmcheck's BFS on every historical bug (core and lifecycle) vs Spin's BFS on the Promela model
    generated from the same definition (bench/peers/gen_promela.py; core.pml is its core output) at
    the size where spmcheck's path is shortest, with the ratio; for the core also Spin DFS and BFS at
    2/2/2; and Spin's exhaustive verification of `final` at 2/2/2, 2/3/2, 3/3/3;
  * that a Spin random simulation replays step by step in spmcheck's model.
Run it alone (`nice`), never beside the test suite: the figures are ratios measured in one run.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
BUGS = (("stale-lookup", "creation-consistent"), ("apply-after-unlock", "serializer-mirrors-refcount"),
        ("global-flag", "creation-consistent"), ("reversed-lookup-order", "lock-order-acyclic"))
SIZES = ((2, 2, 2), (2, 3, 2), (3, 3, 3))


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def machine() -> str:
    cpu = ""
    try:
        for ln in open("/proc/cpuinfo"):
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import z3

    spin = subprocess.run(["spin", "-V"], capture_output=True, text=True).stdout.strip() if shutil.which("spin") else "absent"
    return (f"{datetime.datetime.now().isoformat(timespec='minutes')}  {platform.node()}  {cpu}  "
            f"{os.cpu_count()} cores  Python {platform.python_version()}  z3 {z3.get_version_string()}  {spin}  "
            f"load {os.getloadavg()[0]:.1f}")


# ---- checker ------------------------------------------------------------------------------------
CHECK_SNIPPET = """
import json, resource, sys, time
from spmcheck.checker.replay import check_path
check_path(sys.argv[2])  # grammar and model built outside the timing
t = time.perf_counter(); r = check_path(sys.argv[1]); dt = time.perf_counter() - t
# VmHWM (this process image's peak): ru_maxrss carries the parent's over exec, and the parent
# here may have just generated the walk in-process (97 / 197 MB printed for a 29 MB reader)
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print(json.dumps({"events": r.events, "seconds": dt, "verdict": r.verdict.value, "rss_mb": hwm}))
"""


def bench_check(d: Path, runs: int, huge: bool) -> None:
    from bench_check import floor_read, floor_split, generate

    print("\n== checker: events/s vs floors on the same file (median of %d) ==" % runs)
    print(f"{'events':>9}  {'checker k/s':>11}  {'read k/s':>9}  {'split k/s':>9}  {'vs split':>8}  {'peak MB':>7}  verdict")
    sizes = [100_000, 1_000_000] + ([10_000_000] if huge else [])
    warm = str(ROOT / "traces" / "final-walk-ok.log")
    for n in sizes:
        p = d / f"walk-{n}.log"
        if not p.exists():
            generate(p, n)
        events = sum(1 for _ in open(p, "rb")) - 1
        rates, rss, verdict = [], [], ""
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", CHECK_SNIPPET, str(p), warm], cwd=ROOT, env=ENV,
                                 capture_output=True, text=True)
            doc = json.loads(out.stdout.strip().splitlines()[-1])
            rates.append(doc["events"] / doc["seconds"])
            rss.append(doc["rss_mb"])
            verdict = doc["verdict"]
        fr = med([events / floor_read(p) for _ in range(runs)])
        fs = med([events / floor_split(p) for _ in range(runs)])
        c = med(rates)
        print(f"{n:>9}  {c / 1e3:>11.0f}  {fr / 1e3:>9.0f}  {fs / 1e3:>9.0f}  {c / fs:>8.2f}  {med(rss):>7.0f}  {verdict}")
    # --jobs 2 vs --jobs 1, each next to a floor sharded the same way (bench/bench_jobs.py)
    from bench_jobs import measure, recorded, simulated

    print(f"\n== check --jobs 2 vs --jobs 1 (median of {runs}) ==")
    measure("corpus traces/*.log", sorted(str(p) for p in (ROOT / "traces").glob("*.log")), runs)
    measure("recorded (spmcheck record --variant final --ops 3000)", recorded(d, 4, 3000), runs)
    measure("format v2, compiled engine (simulated, 200000 events each)", simulated(d, 4, 200_000), runs)
    # format v2: the compiled engine, the interpreter and v1 at 2 and 8 agents (bench/openworld.py)
    from openworld import bench as ow_bench

    ow_bench(runs, [100_000, 1_000_000] + ([10_000_000] if huge else []), 100_000,
             [("small", (2, 2, 2)), ("large", (8, 16, 48))])


# ---- prover -------------------------------------------------------------------------------------
def prove_run(extra: list[str]) -> tuple[float, int, dict]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        js = f.name
    t = time.perf_counter()
    rc = subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", "prove", "--brief", "--json", js, *extra],
                        cwd=ROOT, env=ENV, capture_output=True).returncode
    dt = time.perf_counter() - t
    doc = json.loads(Path(js).read_text())
    os.unlink(js)
    return dt, rc, doc


def bench_prove(runs: int, fresh_runs: int) -> None:
    print("\n== spmcheck prove: with certificates (default; a CPU-bound process running beside it) vs --fresh "
          "(median of %d) ==" % runs)
    per: dict[str, dict[tuple[str, str, str], list[float]]] = {"certs": {}, "fresh": {}}
    verdicts: dict[str, set] = {"certs": set(), "fresh": set()}
    for mode, extra in (("certs", []), ("fresh", ["--fresh"])):
        walls, codes = [], []
        # the acceptance condition: same verdicts and <= 20 s with another CPU-bound process beside it
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if mode == "certs" else None
        try:
            got = [prove_run(extra) for _ in range(runs if mode == "certs" else fresh_runs)]
        finally:
            if burner is not None:
                burner.kill()
                burner.wait()
        for dt, rc, doc in got:
            walls.append(dt)
            codes.append(rc)
            rows = [("core", r) for r in doc["results"]] + [("lifecycle", r) for r in doc["lifecycle_results"]]
            verdicts[mode].add(tuple((m, r["variant"], r["property"], r["verdict"]) for m, r in rows))
            for m, r in rows:
                per[mode].setdefault((m, r["variant"], r["property"]), []).append(r["seconds"])
        print(f"prove {mode:6}: {med(walls):6.1f} s wall (runs {', '.join(f'{w:.1f}' for w in walls)}), "
              f"exit codes {codes}, identical verdicts across runs: {len(verdicts[mode]) == 1}")
    print(f"same verdicts with and without certificates: {verdicts['certs'] == verdicts['fresh']}")
    print(f"{'model':9} {'variant':24} {'property':40} {'certs s':>8} {'fresh s':>8} {'ratio':>6}")
    for k in per["fresh"]:
        c, f = med(per["certs"].get(k, [])), med(per["fresh"][k])
        print(f"{k[0]:9} {k[1]:24} {k[2]:40} {c:>8.2f} {f:>8.2f} {f / c if c else float('nan'):>6.1f}")


def bench_scale(runs: int, sizes: list[tuple[int, int, int]]) -> None:
    print("\n== fixed size vs any size: core final, all properties (median of %d; 3/3/3 once) ==" % runs)
    for a, u, l in sizes:
        n = 1 if (a, u, l) == (3, 3, 3) else runs
        ws = []
        for _ in range(n):
            dt, rc, doc = prove_run(["--model", "core", "--variant", "final", "--fresh", "--timeout", "900",
                                     "--agents", str(a), "--updaters", str(u), "--lookups", str(l)])
            ws.append(dt)
        vs = sorted({r["verdict"] for r in doc["results"]})
        print(f"fixed size {a}/{u}/{l}: {med(ws):7.1f} s  verdicts {vs}  exit {rc}")
    ws = []
    for _ in range(runs):
        t = time.perf_counter()
        rc = subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", "prove", "--parametric", "--model", "core",
                             "--variant", "final", "--brief"], cwd=ROOT, env=ENV, capture_output=True).returncode
        ws.append(time.perf_counter() - t)
    print(f"any size (--parametric): {med(ws):7.1f} s  exit {rc}")


# ---- Spin -----------------------------------------------------------------------------------------
def spin_build(d: Path, variant: str, size: tuple[int, int, int], props: list[str], bfs: bool) -> tuple[Path, float]:
    from spmcheck.spec.model import Model
    from spmcheck.spec.vocabulary import Config

    return spin_build_model(d, f"{variant}-{'-'.join(map(str, size))}", Model(Config(*size), variant), props, None, bfs)


def spin_build_model(d: Path, tag: str, model: object, props: list[str], registry: object, bfs: bool
                     ) -> tuple[Path, float]:
    """Generate (bench/peers/gen_promela.py, from the model) and compile one pan; (dir, seconds)."""
    from peers.gen_promela import generate

    w = d / f"spin-{tag}-{'-'.join(props)[:60]}-{'bfs' if bfs else 'dfs'}"
    w.mkdir(parents=True, exist_ok=True)
    text = generate(model, props, registry)  # type: ignore[arg-type]
    t = time.perf_counter()
    if (w / "pan").exists() and (w / "core.pml").exists() and (w / "core.pml").read_text() == text:
        return w, 0.0  # same generated model as a previous run in this --dir: reuse its pan
    (w / "core.pml").write_text(text)
    subprocess.run(["spin", "-a", "core.pml"], cwd=w, check=True, capture_output=True)
    flags = ["-O2", "-DSAFETY", "-DMEMLIM=12000"] + (["-DBFS"] if bfs else [])
    subprocess.run(["gcc", *flags, "-o", "pan", "pan.c"], cwd=w, check=True, capture_output=True)
    return w, time.perf_counter() - t


def spin_build_cpu(d: Path, tag: str, model: object, props: list[str], registry: object) -> float:
    """CPU seconds (this process generating the Promela text, `spin -a` and gcc as children) of one
    fresh BFS pan build: Spin's side of an end-to-end comparison (spmcheck's time always includes
    building and compiling its model). Run serially, so the children's CPU is this build's."""
    from peers.gen_promela import generate

    w = d / f"e2e-{tag}-{'-'.join(props)[:60]}"
    w.mkdir(parents=True, exist_ok=True)
    c0, k0 = time.process_time(), _child_cpu()
    (w / "core.pml").write_text(generate(model, props, registry))  # type: ignore[arg-type]
    subprocess.run(["spin", "-a", "core.pml"], cwd=w, check=True, capture_output=True)
    subprocess.run(["gcc", "-O2", "-DSAFETY", "-DMEMLIM=12000", "-DBFS", "-o", "pan", "pan.c"], cwd=w, check=True,
                   capture_output=True)
    return (time.process_time() - c0) + (_child_cpu() - k0)


def _child_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def spin_run(w: Path, timeout: float = 600, depth: int = 1_000_000) -> tuple[float, str, str]:
    """One pan run: (seconds, outcome, depth of the error or states stored). `depth` is pan's -m
    (its stack is allocated up front: 10 M costs ~10 s, so bug finding uses 1 M)."""
    dt, _, outcome, detail, _ = spin_run_cpu(w, timeout, depth)
    return dt, outcome, detail


def spin_run_cpu(w: Path, timeout: float = 600, depth: int = 1_000_000) -> tuple[float, float, str, str, str]:
    """As spin_run, also pan's CPU seconds (user + system) and its states stored:
    (wall, cpu, outcome, depth or states, states stored)."""
    t, c = time.perf_counter(), _child_cpu()
    try:
        out = subprocess.run(["./pan", f"-m{depth}"], cwd=w, capture_output=True, text=True, timeout=timeout)
        txt = out.stdout + out.stderr
    except subprocess.TimeoutExpired:
        return timeout, _child_cpu() - c, "timeout", "", ""
    dt, cpu = time.perf_counter() - t, _child_cpu() - c
    st = re.search(r"([0-9.e+]+) states, stored", txt)
    stored = st.group(1) if st else ""
    m = re.search(r"assertion violated.*\(at depth (\d+)\)", txt)
    if m:
        return dt, cpu, "violated", m.group(1), stored
    if "out of memory" in txt or "pan: reached -DMEMLIM" in txt:
        return dt, cpu, "out of memory", "", stored
    if "max search depth too small" in txt:
        return dt, cpu, "depth limit", "", stored
    if "invalid end state" in txt:
        dd = re.search(r"depth (\d+)", txt)
        return dt, cpu, "deadlock", dd.group(1) if dd else "", stored
    return dt, cpu, "no error", (stored + " states") if stored else "", stored


def bench_spin(d: Path, runs: int, parts: set[str], verify_timeout: float,
               sizes: list[tuple[int, int, int]], lc_states: int = 100_000, only: Sequence[str] = (),
               baseline: Path | None = None) -> None:
    if not shutil.which("spin") or not shutil.which("gcc"):
        print("\n== Spin: not installed (apt-get install -y spin gcc); skipped ==")
        if "bugs" in parts:
            _bugs(d, runs, lc_states, False, only, baseline)
        return

    if "bugs" in parts:
        _bugs(d, runs, lc_states, True, only, baseline)
    if "verify" in parts:
        _spin_verify(d, runs, verify_timeout, sizes)


# one fresh process per measurement (imports done before the clock starts; the model, its
# compilation and every ladder rung inside it): what `spmcheck prove --fresh` spends per bug
BFS_SNIPPET = """
import json, sys, time
from spmcheck.spec.prove import _violates, bfs_ladder, bfs_violation
import spmcheck.spec.explore as E, spmcheck.spec.explore_compile  # imported by bfs_ladder on first use
model_kind, v, p, cap = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
only = sys.argv[5] if len(sys.argv) > 5 else ""  # one rung (its describe()): the size Spin is run at
searching = [0.0]  # CPU inside the breadth-first loops alone (pan's footing: no model built or compiled)
def timed(fn):
    def run(*a, **k):
        t = time.process_time()
        try:
            return fn(*a, **k)
        finally:
            searching[0] += time.process_time() - t
    return run
for name in ("_search_levels", "_search"):  # a --baseline checkout may have only the second
    if hasattr(E, name):
        setattr(E, name, timed(getattr(E, name)))
if model_kind == "core":
    from spmcheck.spec.model import Model as M
    from spmcheck.spec.properties import PROPERTIES as R
    from spmcheck.spec.prove import ladder
    from spmcheck.spec.vocabulary import Config
    cfg = Config(2, 2, 2)
else:
    from spmcheck.spec.lifecycle.model import LifecycleModel as M
    from spmcheck.spec.lifecycle.properties import LPROPERTIES as R, scenario
    from spmcheck.spec.lifecycle.prove import bfs_rungs as ladder
    from spmcheck.spec.lifecycle.vocabulary import LConfig
    cfg = scenario(LConfig(), p)
c0, w0 = time.process_time(), time.perf_counter()
model = M(cfg, v)
prop = R[p]
ok = lambda st, acts: _violates(model, prop, st, acts)
rungs = [c for c in ladder(cfg) if not only or c.describe() == only]
got = bfs_ladder(model, rungs, lambda c: M(c, v), bfs_violation(prop), ok, max_states=cap)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
print(json.dumps({"cpu": cpu, "wall": wall, "search": searching[0], "steps": len(got[0]) if got else None,
                  "note": got[1] if got else ""}))
"""


def _bfs_once(kind: str, v: str, p: str, cap: int, root: Path = ROOT, timeout: float = 1800, rung: str = "") -> dict:
    """One fresh process of BFS_SNIPPET on the checkout `root` (another one: --baseline); `rung`:
    only that ladder rung (its describe() text)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    try:
        out = subprocess.run([sys.executable, "-c", BFS_SNIPPET, kind, v, p, str(cap), *([rung] if rung else [])],
                             cwd=root, env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"cpu": float("nan"), "wall": timeout, "steps": None, "note": f"stopped after {timeout:.0f} s wall"}
    if out.returncode:
        return {"cpu": float("nan"), "wall": float("nan"), "steps": None, "note": out.stderr.strip()[-200:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rung_of(kind: str, cfg: object, note: str) -> object:
    """The ladder rung a `bfs: shortest at <describe()>` note names (the size the claim is about)."""
    from dataclasses import replace

    if kind == "core":
        from spmcheck.spec.prove import ladder
    else:
        from spmcheck.spec.lifecycle.prove import bfs_rungs as ladder  # type: ignore[assignment]
    for c in ladder(cfg):  # type: ignore[arg-type]
        if note.startswith(f"bfs: shortest at {c.describe()},"):
            return c
    return replace(cfg)  # type: ignore[type-var]


def _bugs(d: Path, runs: int, lc_states: int, spin: bool, only: Sequence[str] = (),
          baseline: Path | None = None, baseline_timeout: float = 300) -> None:
    """Per historical bug: spmcheck's BFS (the ladder `prove --fresh` runs, small sizes first) next
    to Spin's BFS on the model generated from the same definition at the size where spmcheck's
    path is shortest (the same question), and for the core also Spin at 2/2/2."""
    from spmcheck.spec.lifecycle.expected import default_pairs, expected
    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.properties import LPROPERTIES, scenario
    from spmcheck.spec.lifecycle.vocabulary import LConfig
    from spmcheck.spec.model import Model
    from spmcheck.spec.properties import PROPERTIES
    from spmcheck.spec.lifecycle.prove import VIOLATION_BFS_STATES
    from spmcheck.spec.prove import BFS_STATES
    from spmcheck.spec.vocabulary import Config

    print(f"\n== bug finding: spmcheck BFS vs Spin BFS (-DBFS, same size), median of {runs}; CPU s (wall s) ==")
    print(f"(spmcheck: one fresh process per run, model build + compilation + every ladder rung; BFS budget "
          f"{BFS_STATES} states per core rung as in prove, {lc_states} per lifecycle rung (prove: "
          f"{VIOLATION_BFS_STATES} dead-variable representatives, smallest scope first, then BMC). "
          f"Spin: pan's user+system CPU, excluding generating and compiling pan.c; depth counts the steps before "
          f"the failing one for step properties. ratio = spmcheck CPU / Spin CPU.)")
    print("(search = spmcheck's CPU inside the breadth-first loops only (pan's footing: no model built or "
          "compiled), one rung = spmcheck's whole run at the named size alone (Spin's footing: one size), "
          "spin e2e = Promela generation + spin -a + gcc (1 run) + pan, CPU s.)")
    print(f"{'model':9} {'variant':26} {'property':40} {'size (shortest at)':18} {'steps':>5} {'states':>8} "
          f"{'spmcheck':>15} {'spin bfs':>15} {'spin d':>6} {'ratio':>6} {'search':>6} {'1 rung':>6} "
          f"{'spin e2e':>8}  core: Spin BFS and DFS at 2/2/2")
    rows = [("core", v, p) for v, p in BUGS]
    rows += [("lifecycle", v, p) for v, p in default_pairs() if expected(v, p)[0] == "violated"]
    rows = [r for r in rows if not only or any(o in f"{r[0]}/{r[1]}/{r[2]}" for o in only)]
    # 1: spmcheck's runs, each in a fresh process, one row after the other
    ours: list[dict] = []
    for kind, v, p in rows:
        cap = BFS_STATES if kind == "core" else lc_states
        got = [_bfs_once(kind, v, p, cap) for _ in range(runs)]
        r = {"cpu": med([g["cpu"] for g in got]), "wall": med([g["wall"] for g in got]), "steps": got[-1]["steps"],
             "note": got[-1]["note"], "search": med([g.get("search", float("nan")) for g in got])}
        named = re.match(r"bfs: shortest at (.*?), \d+ steps", r["note"])
        if named:
            # the same search at the named size alone (Spin's footing: one size, no ladder below it)
            one = [_bfs_once(kind, v, p, cap, rung=named.group(1)) for _ in range(runs)]
            r["one"] = med([g["cpu"] for g in one])
            assert one[-1]["steps"] == r["steps"], (kind, v, p, one[-1]["note"], r["note"])
        m = re.search(r"(\d+) states", r["note"])
        r["states"] = int(m.group(1)) if m else None
        if kind == "core":
            rung = _rung_of(kind, Config(2, 2, 2), r["note"])
            r["size"] = f"{rung.agents}/{rung.updaters}/{rung.lookups}"  # type: ignore[attr-defined]
            r["model"], r["registry"] = Model(rung, v), PROPERTIES  # type: ignore[arg-type]
            if baseline is not None:
                # the same search on another checkout (its generic explorer), one run
                r["old"] = _bfs_once(kind, v, p, cap, baseline, baseline_timeout)
        else:
            rung = _rung_of(kind, scenario(LConfig(), p), r["note"])
            r["size"] = "a{}c{}t{}k{}".format(rung.agents, rung.contexts, rung.tools, rung.dispatches)  # type: ignore[attr-defined]
            r["model"], r["registry"] = LifecycleModel(rung, v), LPROPERTIES  # type: ignore[arg-type]
        ours.append(r)
    # 2: every pan generated and compiled before any is timed (three compilers at a time: under
    # load compiling dominates the wall clock; pan's own runs below are timed one at a time)
    builds: dict[tuple, tuple] = {}
    if spin:
        for (kind, v, p), r in zip(rows, ours):
            builds[(kind, v, p, "rung")] = (f"{kind}-{v}-{r['size']}", r["model"], [p], r["registry"], True)
            if kind == "core":
                for bfs in (True, False):
                    builds[(kind, v, p, bfs)] = (f"{kind}-{v}-2-2-2", Model(Config(2, 2, 2), v), [p], PROPERTIES, bfs)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(3) as pool:
            dirs = dict(zip(builds, pool.map(lambda b: spin_build_model(d, *b)[0], builds.values())))
        for (kind, v, p), r in zip(rows, ours):
            if r["steps"] is not None:  # one run: gcc's CPU varies little, and it dominates
                r["spin_build"] = spin_build_cpu(d, f"{kind}-{v}-{r['size']}", r["model"], [p], r["registry"])
    # 3: Spin's runs and the table
    for (kind, v, p), r in zip(rows, ours):
        steps = r["steps"]
        mine = f"{r['cpu']:6.3f} ({r['wall']:5.2f})" if steps is not None else f"not found ({r['note'][:40]})"
        theirs, sd, ratio, extra, e2e = "-", "-", "", "", ""
        if spin:
            sp = [spin_run_cpu(dirs[(kind, v, p, "rung")]) for _ in range(runs)]
            scpu, swall = med([x[1] for x in sp]), med([x[0] for x in sp])
            e2e = f"{r['spin_build'] + scpu:8.2f}" if "spin_build" in r else ""
            theirs, sd = f"{scpu:6.3f} ({swall:5.2f})", sp[-1][3] if sp[-1][2] == "violated" else sp[-1][2]
            ratio = f"{r['cpu'] / scpu:6.2f}" if steps is not None and scpu > 0 else ""
            if kind == "core":
                for bfs in (True, False):
                    sp2 = [spin_run_cpu(dirs[(kind, v, p, bfs)]) for _ in range(runs)]
                    extra += (f"{'BFS' if bfs else '  DFS'} {med([x[1] for x in sp2]):.2f} ({med([x[0] for x in sp2]):.2f})"
                              f" d={sp2[-1][3] if sp2[-1][2] == 'violated' else sp2[-1][2]}")
        old = r.get("old")
        if old is not None:
            extra += (f"  | baseline {old['cpu']:.2f} ({old['wall']:.2f}) {old['steps']} st" if old["steps"] is not None
                      else f"  | baseline: {old['note'][:40]}")
        states = r["states"] if r["states"] is not None else "-"
        search = f"{r['search']:6.3f}" if steps is not None else ""
        one = f"{r['one']:6.3f}" if "one" in r else ""
        print(f"{kind:9} {v:26} {p:40} {r['size']:18} {steps if steps is not None else '-':>5} {states:>8} {mine:>15} "
              f"{theirs:>15} {sd:>6} {ratio:>6} {search:>6} {one:>6} {e2e:>8}  {extra}", flush=True)


def _spin_verify(d: Path, runs: int, timeout: float, sizes: list[tuple[int, int, int]]) -> None:
    from spmcheck.spec.certs import replay
    from spmcheck.spec.model import Model
    from spmcheck.spec.properties import PROPERTIES
    from spmcheck.spec.vocabulary import Config

    print(f"\n== verifying final (P1, P2, P5): Spin exhaustive DFS (median of {runs}; 3/3/3 once; "
          f"stopped after {timeout:.0f} s) ==")
    for size in sizes:
        w, build = spin_build(d, "final", size, list(PROPERTIES), False)
        n = 1 if size == (3, 3, 3) else runs
        got = [spin_run(w, timeout=timeout, depth=10_000_000) for _ in range(n)]
        print(f"spin {'/'.join(map(str, size))}: {med([g[0] for g in got]):7.2f} s  {got[-1][1]} {got[-1][2]}  "
              f"(generate+compile {build:.1f} s)")
    # the generated model is the same transition system: a Spin simulation replays in spmcheck
    w, _ = spin_build(d, "final", (2, 2, 2), list(PROPERTIES), False)
    out = subprocess.run(["spin", "-u2000", "-n7", "core.pml"], cwd=w, capture_output=True, text=True).stdout
    lines = [ln.strip()[4:] for ln in out.splitlines() if ln.strip().startswith("ACT ")]
    ok = replay(Model(Config(2, 2, 2), "final"), lines) is not None
    print(f"Spin simulation (2000 steps, seed 7) replays in spmcheck's model: {ok} ({len(lines)} steps)")


def main() -> int:
    ap = argparse.ArgumentParser(description="spmcheck benchmark (see the module docstring)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--huge", action="store_true", help="also 10 M events")
    ap.add_argument("--only", default="check,prove,scale,spin")
    ap.add_argument("--fresh-runs", type=int, default=3, help="runs of `prove --fresh` (default 3)")
    ap.add_argument("--spin", default="bugs,verify", help="Spin parts: bugs, verify")
    ap.add_argument("--spin-timeout", type=float, default=900, help="seconds per exhaustive Spin run")
    ap.add_argument("--bugs", default="", help="bug-finding rows to run: comma-separated substrings of "
                    "model/variant/property (default: all)")
    ap.add_argument("--baseline", default="", help="another checkout (e.g. /work/main) whose BFS is timed "
                    "beside this one's in the bug-finding table")
    ap.add_argument("--lc-states", type=int, default=100_000,
                    help="BFS states per lifecycle ladder rung in the bug-finding table (prove's "
                    "VIOLATION_BFS_STATES, 100000)")
    ap.add_argument("--sizes", default="2/2/2,2/3/2,3/3/3", help="sizes for the fixed-size and Spin verification rows")
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "spmbench"))
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    print(machine())
    only = set(args.only.split(","))
    sizes = [tuple(int(x) for x in z.split("/")) for z in args.sizes.split(",")]
    if "check" in only:
        bench_check(d, args.runs, args.huge)
    if "prove" in only:
        bench_prove(args.runs, args.fresh_runs)
    if "scale" in only:
        bench_scale(args.runs, sizes)  # type: ignore[arg-type]
    if "spin" in only:
        bench_spin(d, args.runs, set(args.spin.split(",")), args.spin_timeout, sizes,  # type: ignore[arg-type]
                   args.lc_states, [x for x in args.bugs.split(",") if x], Path(args.baseline) if args.baseline else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
