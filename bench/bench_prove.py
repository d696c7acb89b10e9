"""Benchmark of `spmcheck prove` against issue 14's and issue 10's budgets, in one run.

Prints, each as the median of --runs fresh processes with wall and CPU seconds (CPU: the process
and every worker it forked):

* per model: `prove --model core`, `--model lifecycle`, `--model datapath`;
* the default `spmcheck prove` (certificates current; budget 20 s wall on 2 cores);
* the same while a CPU-bound process (`python -c 'while True: pass'`) runs beside it: every run's
  output must be byte-identical to the quiet run's (the output carries no timings);
* `prove --fresh` (every answer searched; budget 120 s) and `prove --parametric` (budget 10 s).

    python bench/bench_prove.py [--runs 3] [--fresh-runs 1] [--skip-fresh] [--skip-models] [--skip-parametric]
                                [--bmc] [--houdini]

--bmc adds the BMC time per known-bad lifecycle pair; --houdini the lifecycle invariant from
scratch against re-checking the stored one (~5 min). Never run it beside the test suite.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# bytecode on: an installed spmcheck reads .pyc files (pip compiles them at install); a shell with
# PYTHONDONTWRITEBYTECODE=1 (this workplace's default) would make every `prove` recompile the
# package from source, a start-up no user pays (as in bench_jobs.py)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(argv: list[str]) -> tuple[float, float, int, bytes]:
    """(wall, CPU, exit code, stdout) of one `spmcheck` process (CPU includes its workers)."""
    c0, t0 = children_cpu(), time.monotonic()
    p = subprocess.run([sys.executable, "-m", "spmcheck", *argv, "--no-progress"], cwd=ROOT, capture_output=True,
                       env=ENV)
    return time.monotonic() - t0, children_cpu() - c0, p.returncode, p.stdout


def series(argv: list[str], runs: int) -> tuple[list[tuple[float, float, int, bytes]], str]:
    got = [run(argv) for _ in range(runs)]
    walls = [g[0] for g in got]
    cpus = [g[1] for g in got]
    codes = ",".join(str(g[2]) for g in got)
    text = (f"{statistics.median(walls):6.1f} s wall ({', '.join(f'{w:.1f}' for w in walls)}), "
            f"{statistics.median(cpus):5.1f} s CPU, exit {codes}")
    return got, text


def machine() -> str:
    model = ""
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                model = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import z3

    return (f"{datetime.date.today()}  {os.cpu_count()} cores {model}  Python {platform.python_version()}  "
            f"z3 {z3.get_version_string()}  load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fresh-runs", type=int, default=1)
    ap.add_argument("--skip-fresh", action="store_true")
    ap.add_argument("--skip-models", action="store_true", help="no per-model runs")
    ap.add_argument("--skip-parametric", action="store_true")
    ap.add_argument("--bmc", action="store_true", help="BMC time per known-bad lifecycle pair")
    ap.add_argument("--houdini", action="store_true", help="lifecycle invariant from scratch (~5 min)")
    args = ap.parse_args()
    ok = True
    print(machine())
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(ROOT / p) for p in ("spmcheck", "spec", "checker"))],
                   env=ENV, check=False, capture_output=True)
    for m in () if args.skip_models else ("core", "lifecycle", "datapath"):
        _, text = series(["prove", "--model", m], args.runs)
        print(f"prove --model {m:<10} {text}")
    quiet, text = series(["prove"], args.runs)
    print(f"prove (default)          {text}  budget 20 s wall")
    same = len({g[3] for g in quiet}) == 1 and all(g[2] == 0 for g in quiet)
    ok &= same
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    load0 = os.getloadavg()[0]
    try:
        busy, text = series(["prove"], args.runs)
        load1 = os.getloadavg()[0]
    finally:
        burner.kill()  # this process's own child, by its PID
        burner.wait()
    text += f"; load {load0:.1f} -> {load1:.1f} (1-min average, the burner and the runs included)"
    ident = all(g[3] == quiet[0][3] for g in busy) and all(g[2] == 0 for g in busy)
    ok &= ident
    print(f"prove beside a burner    {text}  budget 20 s wall; output identical in every run "
          f"and to the quiet runs: {ident}")
    if not args.skip_fresh:
        fresh, text = series(["prove", "--fresh"], args.fresh_runs)
        agree = all(g[3] == quiet[0][3] for g in fresh)
        ok &= agree
        print(f"prove --fresh            {text}  budget 120 s; output identical to the default: {agree}")
    if not args.skip_parametric:
        par, text = series(["prove", "--parametric"], args.runs)
        ok &= all(g[2] == 0 for g in par) and len({g[3] for g in par}) == 1
        print(f"prove --parametric       {text}  budget 10 s")

    if args.bmc:
        from spmcheck.spec.lifecycle.expected import VIOLATED
        from spmcheck.spec.lifecycle.prove import prove_pairs
        from spmcheck.spec.lifecycle.vocabulary import LConfig

        t0 = time.monotonic()
        rs = prove_pairs(list(VIOLATED), LConfig(), 60, certs="fresh")
        bmc = time.monotonic() - t0
        steps = sum(len(r.counterexample or ()) for r in rs)
        print(f"lifecycle counterexamples searched: {len(rs)} pairs in {bmc:.1f} s ({bmc / len(rs):.2f} s/pair, "
              f"{steps / len(rs):.1f} steps on average, all violated: {all(r.verdict == 'violated' for r in rs)})")
    if args.houdini:
        from spmcheck.spec.lifecycle.model import LifecycleModel
        from spmcheck.spec.lifecycle.prove import infer, prove_pairs
        from spmcheck.spec.lifecycle.vocabulary import LConfig

        m = LifecycleModel(LConfig(), "final")
        t0 = time.monotonic()
        inv = infer(m, 1800)
        h = time.monotonic() - t0
        t0 = time.monotonic()
        (r,) = prove_pairs([("final", "spm-contexts-disjoint")], LConfig(), 60)
        v = time.monotonic() - t0
        print(f"lifecycle final invariant: Houdini from scratch {h:.0f} s ({inv.status}, {len(inv.kept)} conjuncts) "
              f"vs stored-invariant check + one property {v:.1f} s  ratio {h / v:.0f}x")
    print(f"all checks held: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
