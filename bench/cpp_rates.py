"""Verdicts of the checker on runs of the C++ implementation (cpp/), tallied per configuration.

    python bench/cpp_rates.py core stale-lookup --agents 2 --threads 2 --ops 200 --seeds 20
    python bench/cpp_rates.py core final --matrix     # 2/4/8 agents x 4..64 threads
    python bench/cpp_rates.py --table --seeds 20      # README's table: historical variant x format x size
    python bench/cpp_rates.py --acceptance --seeds 20 # issue 11: final at 2/4/8 agents x 4/64 threads, >= 100 k events
    python bench/cpp_rates.py --acceptance --seeds 20 --knobs='--queue-ramp-us 5000'   # the same with a driver knob

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


# The README's rate table. Each historical variant's bug: the properties a run of it may fail
# (a stale lookup inserts a disabled entry, P2, or enables an existing one from its stale read, P1).
BUG_PROPS = {"stale-lookup": ("creation-consistent", "serializer-mirrors-refcount"),
             "apply-after-unlock": ("serializer-mirrors-refcount",),
             "global-flag": ("serializer-mirrors-refcount", "creation-consistent"),
             "pre-fix": ("serializer-mirrors-refcount", "creation-consistent")}
# (format, agents, updaters, lookups, ops, jitter, extra knobs); the other knobs are spmcheck-impl's
# defaults (--hold-us 20, --gap-us 50, --idle-us 0). v1 declares sizes (at most 6 per role); v2 has none.
# The last two rows are 64 threads two ways: half tool threads, and the shape of a real process
# (a few tool threads, many queue threads). With 32 tool threads an agent's count seldom returns
# to 0, so that row has its tool threads wait up to 2 ms between contexts (--idle-us): counts
# cross 0 throughout the run, where the count-crossing races live (apply-after-unlock was 15/20
# without, 19/20 with). It only sleeps: `final` stays accepted with it. The real-process shape
# (8 tool threads, 56 queue threads) creates its queues over 5 ms (--queue-ramp-us): each queue
# thread serves one agent's queue from a random time of the ramp on, so agents' first lookups (the
# only inserts) meet contexts starting and stopping, not only the tools' first start
# (global-flag was 15/20 without, 20/20 with).
TABLE = ((1, 1, 3, 3, 150, 0.5, ()), (1, 2, 2, 2, 200, 0.2, ()), (1, 4, 4, 4, 100, 0.2, ()),
         (2, 2, 2, 2, 200, 0.2, ()), (2, 4, 8, 8, 100, 0.2, ()), (2, 8, 32, 32, 40, 0.2, ("--idle-us", "2000")),
         (2, 8, 8, 56, 100, 0.2, ("--queue-ramp-us", "5000")))


def table(seeds: int, variants: list[str], only: list[int] | None = None) -> list[str]:
    """Markdown rows: variant, format, size, rejected by the bug's property (of `seeds` runs),
    with every other outcome named."""
    rows = ["| variant | format | agents | threads (updaters+lookups) | rejected by the bug | other outcomes |",
            "|---|---|---|---|---|---|"]
    for v in variants:
        for fmt, agents, upd, look, ops, jit, knobs in (TABLE[i] for i in only or range(len(TABLE))):
            extra = ["--format", str(fmt), "--agents", str(agents), "--updaters", str(upd), "--lookups", str(look),
                     "--ops", str(ops), "--jitter", str(jit), *knobs]
            t = tally("core", v, seeds, extra)
            causes: dict[str, int] = dict(t["causes"])  # type: ignore[arg-type]
            bug = sum(n for c, n in causes.items() if any(c == f"violated {p} [CHK101]" for p in BUG_PROPS[v]))
            by = ", ".join(f"{c.split()[1]} {n}" for c, n in causes.items()
                           if any(c == f"violated {p} [CHK101]" for p in BUG_PROPS[v]))
            other = [f"accepted {t['accepted']}"] if t["accepted"] else []
            other += [f"{c} {n}" for c, n in causes.items() if not any(c == f"violated {p} [CHK101]"
                                                                       for p in BUG_PROPS[v])]
            more = "".join(f", {k.lstrip('-')} {val}" for k, val in zip(knobs[::2], knobs[1::2]))
            rows.append(f"| {v} | v{fmt} | {agents} | {upd + look} ({upd}+{look}), ops {ops}, jitter {jit}{more} | "
                        f"{bug}/{seeds} ({by}) | {', '.join(other) or '—'} |")
            print(rows[-1], flush=True)
    return rows


def acceptance(seeds: int, extra: list[str]) -> list[str]:
    """Issue 11's acceptance as tests/test_cpp_acceptance.py runs it (its agent counts and thread
    shapes, its pipelined recorders, `seeds` runs of `final` per agent count and shape of >= EVENTS
    events each, every one accepted), with `extra` driver knobs, and where the CPU goes: recording
    (the recorders' rusage) and checking (this process). Markdown rows: configuration, accepted,
    events per run, CPU per run recording / checking."""
    import resource
    import time

    from tests.test_cpp_acceptance import AGENTS, EVENTS, SHAPES, recorded  # the suite's, not a copy

    exe = binary()
    rows = ["| agents | threads (updaters+lookups) | accepted | events per run (min-max) | CPU s per run: record / check |",
            "|---|---|---|---|---|"]
    tot_rec = tot_chk = 0.0
    for agents, (upd, look) in ((a, sh) for a in AGENTS for sh in SHAPES):
        with tempfile.TemporaryDirectory() as d:
            res, rec, chk = [], 0.0, 0.0
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            for _, out, _ in recorded(exe, Path(d), [(100_000 + s, upd, look) for s in range(seeds)], agents,
                                      tuple(extra)):
                t0 = time.process_time()
                res.append(check_path(str(out)))
                chk += time.process_time() - t0
                out.unlink()
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            rec = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        tot_rec, tot_chk = tot_rec + rec, tot_chk + chk
        ok = sum(r.verdict.value == "accepted" and r.events >= EVENTS for r in res)
        bad = [cause(r) for r in res if r.verdict.value != "accepted"]
        rows.append(f"| {agents} | {upd + look} ({upd}+{look}) | {ok}/{seeds}{' ' + str(bad) if bad else ''} | "
                    f"{min(r.events for r in res)}-{max(r.events for r in res)} | "
                    f"{rec / seeds:.2f} / {chk / seeds:.2f} |")
        print(rows[-1], flush=True)
    print(f"total CPU s: record {tot_rec:.1f}, check {tot_chk:.1f} ({len(AGENTS) * len(SHAPES) * seeds} runs)", flush=True)
    return rows


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=("core", "lifecycle"), nargs="?", default="core")
    p.add_argument("variant", nargs="?", default="final")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--matrix", action="store_true", help="core: agents 2/4/8 x threads 4/8/16/32/64 (total)")
    p.add_argument("--table", nargs="*", metavar="VARIANT", default=None,
                   help="the README's table for these historical variants (default: all four)")
    p.add_argument("--acceptance", action="store_true",
                   help="issue 11: final at the acceptance test's configurations, --seeds runs each")
    p.add_argument("--knobs", default="", metavar="'--opt N ...'",
                   help="--acceptance: driver knobs for every run, e.g. --knobs='--queue-ramp-us 5000'")
    p.add_argument("--rows", default="", help="--table: only these rows of TABLE (comma-separated indices)")
    a, rest = p.parse_known_args()
    if a.acceptance:
        acceptance(a.seeds, a.knobs.split())
        return 0
    if a.table is not None:
        table(a.seeds, a.table or list(BUG_PROPS), [int(x) for x in a.rows.split(",") if x])
        return 0
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
