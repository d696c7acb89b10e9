"""Verdicts of the checker on runs of the C++ data path (cpp/datapath.cpp), tallied.

    python bench/datapath_cpp.py --seeds 10                 # every revision x every scope
    python bench/datapath_cpp.py --variant ee045e38 --scope single --seeds 40

Prints one JSON line: runs, events, verdicts, violated claims, stalled runs, logs with a CHK104
(verdict or note), wall seconds of the whole loop (runs and checks). A rate script, not a test:
real threads interleave differently on every machine.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from spmcheck.checker.datapath_cli import _datapath_binary, record_command
    from spmcheck.checker.replay import check_stream
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import SCOPES

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--variant", action="append", choices=list(DVARIANTS))
    p.add_argument("--scope", action="append", choices=list(SCOPES))
    p.add_argument("--seeds", type=int, default=10)
    a = p.parse_args(argv)
    exe = str(_datapath_binary(False))
    tot: Counter[str] = Counter()
    claims: Counter[str] = Counter()
    events = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "run.log")
        for v in a.variant or list(DVARIANTS):
            for s in a.scope or list(SCOPES):
                for seed in range(1, a.seeds + 1):
                    r = subprocess.run(record_command(exe, v, s, seed, path), capture_output=True, text=True,
                                       timeout=120)
                    if r.returncode != 0:
                        print(r.stderr, file=sys.stderr)
                        return 1
                    events += int(r.stdout.split()[0])
                    with open(path, "rb") as f:
                        res = check_stream(f, path)
                    tot["runs"] += 1
                    tot[res.verdict.value] += 1
                    tot["stalled"] += "stalled" in r.stdout
                    tot["chk104"] += res.code == "CHK104" or "(CHK104)" in res.note
                    if res.verdict.value == "violated":
                        claims[res.prop] += 1
    print(json.dumps({**tot, "events": events, "violated_by_claim": dict(claims),
                      "seconds": round(time.perf_counter() - t0, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
