"""`spmcheck record --impl cpp`: map the record options onto cpp/'s spmcheck-impl and run it.

Exit codes as `spmcheck record` (checker/exitcodes.py): 0 recorded, 1 ThreadSanitizer reported a
race (--tsan: the implementation violates race freedom), 2 bad arguments / no compiler / build
failed, 3 the run got stuck (killed after its time limit), 4 the output cannot be written.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from . import exitcodes
from .cpp_build import BuildError, binary, source_dir

CPP_CORE_VARIANTS = ("final", "caller-flag", "stale-lookup", "apply-after-unlock", "pre-fix", "global-flag")
CPP_LC_VARIANTS = ("final", "slot-cleared-first", "exit-over-active", "positive-tags", "unscoped-hooks",
                   "conflict-scan-unlocked", "publish-after-unlock", "unconditional-stop-disable",
                   "set-agents-race", "process-wide-batching", "pr-758072b")
TSAN_EXIT = 66


def command(args: argparse.Namespace, exe: str) -> list[str]:
    """spmcheck-impl argv for these record options (raises ValueError on an unsupported one)."""
    from .record_cli import CPP_CORE_KNOBS, cpp_knobs

    lifecycle = getattr(args, "model", "core") == "lifecycle"
    known = CPP_LC_VARIANTS if lifecycle else CPP_CORE_VARIANTS
    if args.variant not in known:
        raise ValueError(f"--impl cpp has no {'lifecycle' if lifecycle else 'core'} variant {args.variant!r} "
                         f"(known: {', '.join(known)})")
    if args.seconds is not None:
        raise ValueError("--seconds is not supported with --impl cpp (use --ops)")
    if getattr(args, "format", 1) == 2 and lifecycle:
        raise ValueError("--format 2 is written for the core model only (the lifecycle reads v1)")
    chunk = getattr(args, "chunk", 0) or 0
    if chunk < 0:
        raise ValueError("--chunk must be >= 0")
    cmd = [exe, "--model", "lifecycle" if lifecycle else "core", "--variant", args.variant,
           "--agents", str(args.agents), "--seed", str(args.seed), "--jitter", str(args.jitter),
           "-o", args.output] + (["--chunk", str(chunk)] if chunk else [])
    if lifecycle:
        if args.deactivate or args.destroy:
            raise ValueError("--impl cpp does not run the deactivate/destroy scenarios (use --impl python)")
        cmd += ["--contexts", str(args.contexts), "--tools", str(args.tools), "--dispatches", str(args.dispatches),
                "--max-ids", str(args.max_ids), "--timeouts", str(args.timeouts),
                "--sync-timeout-us", str(max(1, round(args.sync_timeout * 1e6)))]
        for flag, v in cpp_knobs(args):
            # the lifecycle driver widens its own gaps between lock scopes (start, stop); the
            # other knobs shape the core's tool/lookup threads
            if flag != "--gap-us":
                raise ValueError(f"{flag} is a knob of the core driver (--model core)")
            hi = next(h for f, h, _ in CPP_CORE_KNOBS if f == flag)
            if not 0 <= v <= hi:
                raise ValueError(f"{flag} must be in 0..{hi} (got {v})")
            cmd += [flag, str(v)]
        if args.ops is not None:
            cmd += ["--ops", str(args.ops)]
        return cmd
    for flag, v in cpp_knobs(args):
        hi = next(h for f, h, _ in CPP_CORE_KNOBS if f == flag)
        if not 0 <= v <= hi or (flag == "--holders" and v < 1):
            raise ValueError(f"{flag} must be in {1 if flag == '--holders' else 0}..{hi} (got {v})")
        cmd += [flag, str(v)]
    n = args.threads
    updaters = args.updaters if args.updaters is not None else (n if n is not None else 2)
    lookups = args.lookups if args.lookups is not None else (n if n is not None else 2)
    if getattr(args, "format", 1) == 1:
        from . import limits

        bad = limits.core_problem(args.agents, updaters, lookups)
        if bad:  # a v1 header declares sizes, and `spmcheck check` reads v1 only up to its limits
            raise ValueError(f"{bad} in format 1 (use --format 2 for larger runs)")
    cmd += ["--updaters", str(updaters), "--lookups", str(lookups), "--hold-us", str(round(args.hold * 1e6))]
    if getattr(args, "format", 1) == 2:
        cmd += ["--format", "2"]  # opaque thread ids, no sizes in the header (traces/FORMAT.md v2)
    if args.ops is not None:
        cmd += ["--ops", str(args.ops)]
    return cmd


def run_cpp(args: argparse.Namespace, timeout: float = 300.0) -> int:
    try:
        exe = binary(tsan=bool(getattr(args, "tsan", False)))
        cmd = command(args, str(exe))
    except (BuildError, ValueError) as e:
        print(f"spmcheck record: error: {e}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    # cpp/tsan.supp: the one suppressed report, a real race of the SDK's shape (audit A2)
    env.setdefault("TSAN_OPTIONS", f"halt_on_error=1 exitcode={TSAN_EXIT} suppressions={source_dir() / 'tsan.supp'}")
    try:
        r = subprocess.run(cmd, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"spmcheck record: the C++ run did not finish within {timeout:.0f}s (stuck?)", file=sys.stderr)
        return 3
    if r.returncode == TSAN_EXIT:
        print("spmcheck record: ThreadSanitizer reported a data race (see above)", file=sys.stderr)
        return exitcodes.VIOLATED
    return 0 if r.returncode == 0 else 2
