"""`spmcheck record`: run the protocol on real threads and write a format-v1 trace.

Exit codes: 0 recorded, 2 bad arguments, 3 the run deadlocked (the trace is still written and
ends where the threads got stuck — that is a finding, e.g. for reversed-lookup-order).
"""
from __future__ import annotations

import argparse
import difflib
import sys

from spec.variants import VARIANTS

from . import record as _record
from .record import RunConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, help=f"one of: {', '.join(VARIANTS)}")
    parser.add_argument("--agents", type=int, default=2, help="GPU agents (default 2)")
    parser.add_argument("--threads", type=int, default=None,
                        help="shorthand: this many updater and this many lookup threads")
    parser.add_argument("--updaters", type=int, default=None, help="tool (holder) threads (default 2)")
    parser.add_argument("--lookups", type=int, default=None, help="dispatch threads (default 2)")
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--ops", type=int, default=None, help="calls per thread (default 200)")
    stop.add_argument("--seconds", type=float, default=None, help="run for this long instead")
    parser.add_argument("--jitter", type=float, default=0.0,
                        help="probability of a random yield/sleep at each lock boundary (0..1)")
    parser.add_argument("--hold", type=float, default=0.001,
                        help="max seconds a holder keeps a reference between enable and disable")
    parser.add_argument("--seed", type=int, default=0, help="seed of the per-thread RNGs")
    parser.add_argument("-o", "--output", required=True, help="trace file to write")


class UsageError(ValueError):
    pass


def config_from(args: argparse.Namespace) -> RunConfig:
    if args.variant not in VARIANTS:
        close = difflib.get_close_matches(args.variant, list(VARIANTS), n=3, cutoff=0.4)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise UsageError(f"unknown variant {args.variant!r}{hint} (known: {', '.join(VARIANTS)})")
    n = args.threads
    updaters = args.updaters if args.updaters is not None else (n if n is not None else 2)
    lookups = args.lookups if args.lookups is not None else (n if n is not None else 2)
    checks = [(args.agents >= 1, "--agents must be >= 1"),
              (args.agents <= 8, "--agents must be <= 8 (every agent subset is a scope)"),
              (updaters >= 0 and lookups >= 0, "thread counts must be >= 0"),
              (updaters + lookups >= 1, "need at least one thread"),
              (args.ops is None or args.ops >= 1, "--ops must be >= 1"),
              (args.seconds is None or args.seconds > 0, "--seconds must be > 0"),
              (0.0 <= args.jitter <= 1.0, "--jitter must be in [0, 1]"),
              (args.hold >= 0, "--hold must be >= 0")]
    for ok, msg in checks:
        if not ok:
            raise UsageError(msg)
    ops = args.ops if args.ops is not None else (None if args.seconds is not None else 200)
    return RunConfig(args.variant, args.agents, updaters, lookups, ops, args.seconds, args.jitter,
                     args.seed, hold=args.hold)


def run(args: argparse.Namespace) -> int:
    try:
        cfg = config_from(args)
    except UsageError as e:
        print(f"spmcheck record: error: {e}", file=sys.stderr)
        return 2
    tty = sys.stderr.isatty()

    def progress(events: int, secs: float) -> None:
        sys.stderr.write(f"\r  recording {cfg.variant}: {events} events, {secs:5.1f}s")
        sys.stderr.flush()

    try:
        out = open(args.output, "w", encoding="utf-8")
    except OSError as e:
        print(f"spmcheck record: error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
        return 2
    with out:
        res = _record.run(cfg, out, progress if tty else None)
    if tty:
        sys.stderr.write("\n")
    print(f"recorded {res.events} events in {res.seconds:.2f}s -> {args.output} "
          f"(variant={cfg.variant} agents={cfg.agents} updaters={cfg.updaters} "
          f"lookups={cfg.lookups} seed={cfg.seed} jitter={cfg.jitter})", file=sys.stderr)
    if res.deadlocked:
        print("spmcheck record: the run deadlocked (no event for "
              f"{cfg.stall:.0f}s); trace ends where the threads got stuck", file=sys.stderr)
        return 3
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="spmcheck record")
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
