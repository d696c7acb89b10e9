"""Verdicts of the checker on runs of the C++ implementation (cpp/), tallied per configuration.

    python bench/cpp_rates.py core stale-lookup --agents 2 --threads 2 --ops 200 --seeds 20
    python bench/cpp_rates.py core final --matrix     # 2/4/8 agents x 4..64 threads

Prints one JSON line per configuration: runs, accepted, violated (by property), diverged (by code
and message), other; the first message of each distinct cause is kept verbatim. A rate script,
not a test: real threads interleave differently on every machine.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spmcheck.checker.cpp_build import binary  # noqa: E402
from spmcheck.checker.replay import check_path  # noqa: E402


def cause(r) -> str:  # type: ignore[no-untyped-def]
    if r.verdict.value == "violated":
        return f"violated {r.prop} [{r.code}]"
    msg = re.sub(r"\b[uldth]\d+\b", "<t>", r.message or "")
    msg = re.sub(r"\d+", "N", msg)
    return f"{r.verdict.value} [{r.code}] {msg}"


def run_one(exe: Path, model: str, variant: str, seed: int, extra: list[str], out: Path) -> str:
    cmd = [str(exe), "--model", model, "--variant", variant, "--seed", str(seed), "-o", str(out), *extra]
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL, timeout=600)
    r = check_path(str(out))
    return "accepted" if r.verdict.value == "accepted" else cause(r)


def tally(model: str, variant: str, seeds: int, extra: list[str]) -> dict[str, object]:
    exe = binary()
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as d:
        for s in range(seeds):
            counts[run_one(exe, model, variant, s, extra, Path(d) / f"{s}.log")] += 1
    return {"model": model, "variant": variant, "args": " ".join(extra), "runs": seeds,
            "accepted": counts.pop("accepted", 0), "causes": dict(counts.most_common())}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=("core", "lifecycle"))
    p.add_argument("variant")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--matrix", action="store_true", help="core: agents 2/4/8 x threads 4/8/16/32/64 (total)")
    a, rest = p.parse_known_args()
    if a.matrix:
        for agents in (2, 4, 8):
            for total in (4, 8, 16, 32, 64):
                half = str(total // 2)
                extra = ["--agents", str(agents), "--updaters", half, "--lookups", half, *rest]
                print(json.dumps(tally(a.model, a.variant, a.seeds, extra)), flush=True)
        return 0
    print(json.dumps(tally(a.model, a.variant, a.seeds, rest)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
