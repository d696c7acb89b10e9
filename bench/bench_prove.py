"""Benchmark of `spmcheck prove` (issue 5: default run under 120 s on 2 cores).

Prints, in one run: wall time of the core table, the lifecycle table and the whole default
command, each against its budget; the lifecycle proof from the stored invariant against
re-deriving it (Houdini from scratch, only with --houdini: ~5 min); and BMC counterexample time
per known-bad lifecycle pair against the depth of the counterexample.

    python bench/bench_prove.py [--houdini]
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def wall(argv: list[str]) -> tuple[float, int]:
    t0 = time.monotonic()
    rc = subprocess.run([sys.executable, "-m", "spmcheck.checker.cli", *argv], cwd=ROOT, capture_output=True).returncode
    return time.monotonic() - t0, rc


def main() -> int:
    core, rc1 = wall(["prove", "--model", "core", "--brief"])
    life, rc2 = wall(["prove", "--model", "lifecycle", "--brief"])
    both, rc3 = wall(["prove", "--brief"])
    par, rc4 = wall(["prove", "--parametric", "--brief"])
    print(f"spmcheck prove --model core       {core:6.1f} s  exit {rc1}")
    print(f"spmcheck prove --model lifecycle  {life:6.1f} s  exit {rc2}")
    print(f"spmcheck prove (default, both)    {both:6.1f} s  exit {rc3}  budget 120 s  ratio {both / 120:.2f}")
    print(f"spmcheck prove --parametric       {par:6.1f} s  exit {rc4}  budget 10 s   ratio {par / 10:.2f}")

    from spmcheck.spec.lifecycle.expected import VIOLATED
    from spmcheck.spec.lifecycle.prove import infer, prove_pairs
    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.vocabulary import LConfig

    t0 = time.monotonic()
    rs = prove_pairs(list(VIOLATED), LConfig(), 60)
    bmc = time.monotonic() - t0
    steps = sum(len(r.counterexample or ()) for r in rs)
    print(f"lifecycle counterexamples: {len(rs)} pairs in {bmc:.1f} s ({bmc / len(rs):.2f} s/pair, "
          f"{steps / len(rs):.1f} steps on average, all violated: {all(r.verdict == 'violated' for r in rs)})")
    if "--houdini" in sys.argv:
        m = LifecycleModel(LConfig(), "final")
        t0 = time.monotonic()
        inv = infer(m, 1800)
        h = time.monotonic() - t0
        t0 = time.monotonic()
        (r,) = prove_pairs([("final", "spm-contexts-disjoint")], LConfig(), 60)
        v = time.monotonic() - t0
        print(f"lifecycle final invariant: Houdini from scratch {h:.0f} s ({inv.status}, {len(inv.kept)} conjuncts) "
              f"vs stored-invariant check + one property {v:.1f} s  ratio {h / v:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
