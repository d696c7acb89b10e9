"""Checker throughput at two system sizes, v2 (open world) next to v1 and the parse floor.

    python bench/openworld.py [--events 1000000] [--small 2,2,2] [--large 8,16,48]

For each size (agents, updaters, lookups) a run of the final design is simulated once
(checker/simulate_v2.py, cached under bench/.cache/) and checked in a fresh process each time, so
peak memory (ru_maxrss) belongs to that check alone. Printed per size: the floor (`str.split`
of every line to a tuple, same file), the v2 checker, and at the small size the v1 checker on the
same run written as v1 (thread names u0/l0, sizes in the header; v1 cannot write the large size).
The acceptance ratio is v2's cost per event at the large size over the small one.
"""
from __future__ import annotations

import argparse
import json
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


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
path, what = sys.argv[1], sys.argv[2]
t0 = time.perf_counter(); c0 = time.process_time()
if what == "floor":
    n = 0
    with open(path) as f:
        for ln in f:
            tuple(ln.split()); n += 1
    verdict = "-"
else:
    from spmcheck.checker.replay import check_path
    r = check_path(path)
    n, verdict = r.events, r.verdict.value
# VmHWM (this process image's peak resident set): ru_maxrss would carry the parent's over exec
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
print(json.dumps({{"n": n, "cpu": time.process_time() - c0, "wall": time.perf_counter() - t0,
                  "rss": hwm, "verdict": verdict}}))
"""


def measure(path: Path, what: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), str(path), what],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--small", default="2,2,2", help="agents,updaters,lookups (default 2,2,2: 4 threads)")
    ap.add_argument("--large", default="8,16,48", help="agents,updaters,lookups (default 8,16,48: 64 threads)")
    args = ap.parse_args()
    rows = []
    per_event = {}
    for label, spec in (("small", args.small), ("large", args.large)):
        a, u, l = (int(x) for x in spec.split(","))
        p = trace(a, u, l, args.events)
        fl = measure(p, "floor")
        v2 = measure(p, "check")
        rows.append((f"{a} agents / {u + l} threads", "floor (str.split)", fl))
        rows.append((f"{a} agents / {u + l} threads", "v2 open world", v2))
        per_event[label] = v2["cpu"] / max(v2["n"], 1)
        if label == "small":
            rows.append((f"{a} agents / {u + l} threads", "v1 fixed size", measure(as_v1(p, a, u, l), "check")))
    print(f"{'system':<24} {'reader':<18} {'events':>9} {'verdict':>9} {'CPU s':>7} {'k ev/s':>8} {'x floor':>8} {'peak MiB':>9}")
    floor = {}
    for sysname, what, m in rows:
        rate = m["n"] / m["cpu"] / 1000 if m["cpu"] else 0.0
        if what.startswith("floor"):
            floor[sysname] = m["cpu"]
        ratio = m["cpu"] / floor[sysname] if floor.get(sysname) else 0.0
        print(f"{sysname:<24} {what:<18} {m['n']:>9} {m['verdict']:>9} {m['cpu']:>7.1f} {rate:>8.1f} {ratio:>8.1f} {m['rss']:>9.0f}")
    print(f"cost per event, large / small: {per_event['large'] / per_event['small']:.2f} (acceptance: <= 1.5)")


if __name__ == "__main__":
    main()
