"""`spmcheck record`: run the protocol on real threads and write a format-v1 trace.

`--model core` (default): the QueueController serialization (checker/runtime.py, threads u*/l*).
`--model lifecycle`: the SPM context lifecycle (checker/lc_runtime.py, threads t*/d0/h0).
`--impl cpp`: the C++ implementation in cpp/ (std::thread, std::shared_mutex, unordered containers,
built on demand by checker/cpp_build.py) instead of the Python runtime, for either model.

Exit codes (checker/exitcodes.py): 0 recorded, 2 bad arguments, 3 the run deadlocked (the trace is
still written and ends where the threads got stuck — that is a finding, e.g. for
reversed-lookup-order), 4 the output cannot be written, 5 internal error, 130 interrupted (the
trace keeps what was recorded, without its run_end marker).
"""
from __future__ import annotations

import argparse
import sys

from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.names import closest
from spmcheck.spec.variants import VARIANTS

from typing import TYPE_CHECKING

from . import exitcodes
from . import limits
from .options import nonnegative, output_problem, positive_seconds, probability, write_text

if TYPE_CHECKING:  # the recorders are imported when a run is recorded: `spmcheck check` builds
    # this command's parser too, and importing them cost it about 0.2 s per process
    from .lc_record import LRunConfig
    from .record import RunConfig


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", choices=("core", "lifecycle", "datapath"), default="core",
                        help="which protocol to run (default core; datapath: --impl cpp, checker/datapath_cli.py)")
    parser.add_argument("--scope", default=None,
                        help="datapath: a scope of `spmcheck prove --model datapath` (default multi)")
    parser.add_argument("--impl", choices=("python", "cpp"), default="python",
                        help="python: checker/runtime.py (default); cpp: the C++ implementation in cpp/")
    parser.add_argument("--tsan", action="store_true",
                        help="--impl cpp: run the ThreadSanitizer build (a race report fails the run)")
    parser.add_argument("--variant", required=True,
                        help=f"core: one of {', '.join(VARIANTS)}; lifecycle: one of {', '.join(LVARIANTS)}")
    parser.add_argument("--agents", type=int, default=2, help="GPU agents (default 2)")
    parser.add_argument("--threads", type=int, default=None,
                        help="shorthand: this many updater and this many lookup threads")
    parser.add_argument("--updaters", type=int, default=None, help="tool (holder) threads (default 2)")
    parser.add_argument("--lookups", type=int, default=None, help="dispatch threads (default 2)")
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--ops", type=int, default=None, help="calls per thread (default 200)")
    stop.add_argument("--seconds", type=positive_seconds, default=None, help="run for this long instead")
    parser.add_argument("--jitter", type=probability, default=0.0,
                        help="probability of a random yield/sleep at each lock boundary (0..1)")
    parser.add_argument("--hold", type=nonnegative, default=0.001,
                        help="max seconds a holder keeps a reference between enable and disable")
    parser.add_argument("--seed", type=int, default=0, help="seed of the per-thread RNGs")
    parser.add_argument("--format", type=int, choices=(1, 2), default=1,
                        help="trace format (--impl cpp, core): 1 names threads u0/l0 and declares sizes "
                        "(at most 6 agents); 2 writes opaque thread ids and no sizes (any number of agents "
                        "and threads, e.g. 8 agents and 64 threads)")
    parser.add_argument("--chunk", type=int, default=0, metavar="K",
                        help="--impl cpp: write each thread's buffer in runs of K records, unmerged, as a sink "
                        "that flushes full buffers would (check it with `spmcheck check --reorder-window N`)")
    parser.add_argument("-o", "--output", required=True, help="trace file to write")
    parser.add_argument("--json", metavar="PATH", help="write the JSON envelope ('-' for stdout)")
    # the C++ core driver's schedule knobs (cpp/src/options.hpp); None keeps spmcheck-impl's default
    cc = parser.add_argument_group("core, --impl cpp only (the C++ driver's schedule; default: its own)")
    for flag, hi, what in CPP_CORE_KNOBS:
        cc.add_argument(flag, type=int, default=None, metavar="N", help=f"{what} (0..{hi})")
    lc = parser.add_argument_group("lifecycle (--model lifecycle)")
    lc.add_argument("--contexts", type=int, default=2, help="SPM contexts (default 2)")
    lc.add_argument("--tools", type=int, default=2, help="tool threads t* (default 2)")
    lc.add_argument("--dispatches", type=int, default=40,
                    help="dispatches written by d0, exactly (default 40)")
    lc.add_argument("--max-ids", type=int, default=4, help="registry ids add_callback may hand out (default 4)")
    lc.add_argument("--timeouts", type=int, choices=(0, 1), default=1,
                    help="Queue::sync may time out (default 1)")
    lc.add_argument("--sync-timeout", type=positive_seconds, default=0.002,
                    help="seconds Queue::sync waits before it times out (default 0.002)")
    lc.add_argument("--deactivate", type=int, choices=(0, 1), default=0,
                    help="tools also call deactivate_client_contexts (default 0)")
    lc.add_argument("--destroy", type=int, choices=(0, 1), default=0,
                    help="tools also destroy SPM profiles of stopped contexts (default 0)")


# (flag, largest value spmcheck-impl accepts, help): passed through to cpp/'s core driver unchanged
CPP_CORE_KNOBS = (
    ("--idle-us", 1_000_000, "max microseconds a tool thread waits between a stop and its next start"),
    ("--gap-us", 1_000_000, "max microseconds of the pause in each gap between two lock scopes of one call "
     "(core and lifecycle)"),
    ("--queue-ramp-us", 10_000_000, "queues created over this many microseconds, each lookup thread one "
     "queue of one agent (as HIP creates a device queue on a stream's first launch)"),
    ("--holders", 64, "contexts a tool thread starts before stopping any (holder= ids)"),
)


def cpp_knobs(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The C++-only core knobs given on the command line, as (flag, value)."""
    return [(flag, v) for flag, _, _ in CPP_CORE_KNOBS
            if (v := getattr(args, flag[2:].replace("-", "_"), None)) is not None]


class UsageError(ValueError):
    pass


def lc_config_from(args: argparse.Namespace) -> LRunConfig:
    from .lc_record import LRunConfig

    if args.variant not in LVARIANTS:
        raise UsageError(closest(args.variant, list(LVARIANTS), "lifecycle variant"))
    if args.seconds is not None:
        raise UsageError("--seconds is not supported with --model lifecycle (the run has a fixed size: use --ops)")
    # the header sizes the model: the same table `spmcheck check` reads (checker/limits.py)
    bad = limits.lifecycle_problem({"agents": args.agents, "contexts": args.contexts, "tools": args.tools,
                                    "dispatches": args.dispatches, "max_ids": args.max_ids})
    if bad:
        raise UsageError(f"--{bad.replace('_', '-')} for the lifecycle (the sizes `spmcheck check` accepts)")
    checks = [(args.ops is None or args.ops >= 1, "--ops must be >= 1"),
              (0.0 <= args.jitter <= 1.0, "--jitter must be in [0, 1]"),
              (args.sync_timeout > 0, "--sync-timeout must be > 0")]
    for ok, msg in checks:
        if not ok:
            raise UsageError(msg)
    return LRunConfig(args.variant, args.agents, args.contexts, args.tools, args.dispatches, args.max_ids,
                      args.ops if args.ops is not None else 30, bool(args.timeouts), bool(args.deactivate),
                      bool(args.destroy), args.jitter, args.seed, args.sync_timeout)


def config_from(args: argparse.Namespace) -> RunConfig:
    from .record import RunConfig

    if args.variant not in VARIANTS:
        raise UsageError(closest(args.variant, list(VARIANTS), "variant"))
    n = args.threads
    updaters = args.updaters if args.updaters is not None else (n if n is not None else 2)
    lookups = args.lookups if args.lookups is not None else (n if n is not None else 2)
    bad = limits.core_problem(args.agents, updaters, lookups)
    if bad:
        raise UsageError(("--" if "=" in bad else "") + bad + " (the sizes `spmcheck check` accepts)")
    checks = [(args.ops is None or args.ops >= 1, "--ops must be >= 1"),
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
    for opt, path in (("-o", args.output), ("--json", getattr(args, "json", None))):
        bad = output_problem(path) if path else None
        if bad:
            print(f"spmcheck: error: {opt}: {bad}", file=sys.stderr)
            return exitcodes.IO_ERROR
    if getattr(args, "model", "core") == "datapath":
        from .datapath_cli import record

        return record(args)
    if getattr(args, "impl", "python") == "cpp":
        from .record_cpp import run_cpp

        return run_cpp(args)
    if getattr(args, "chunk", 0):
        print("spmcheck: error: --chunk is written by the C++ sink only (add --impl cpp)", file=sys.stderr)
        return exitcodes.USAGE
    knobs = cpp_knobs(args)
    if knobs:
        print(f"spmcheck: error: {knobs[0][0]} is a knob of the C++ driver only (add --impl cpp)", file=sys.stderr)
        return exitcodes.USAGE
    lifecycle = getattr(args, "model", "core") == "lifecycle"
    try:
        cfg = lc_config_from(args) if lifecycle else config_from(args)
    except UsageError as e:
        print(f"spmcheck: error: {e}", file=sys.stderr)
        return exitcodes.USAGE
    label = f"lifecycle {cfg.variant}" if lifecycle else cfg.variant
    tty = sys.stderr.isatty()

    def progress(events: int, secs: float) -> None:
        sys.stderr.write(f"\r  recording {label}: {events} events, {secs:5.1f}s")
        sys.stderr.flush()

    try:
        out = open(args.output, "w", encoding="utf-8")
    except OSError as e:
        print(f"spmcheck: error: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
        return exitcodes.IO_ERROR
    try:
        with out:
            from . import lc_record as _lc_record
            from . import record as _record

            res = (_lc_record if lifecycle else _record).run(cfg, out, progress if tty else None)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        print(f"\nspmcheck: interrupted; {args.output} keeps the events recorded so far, without "
              "the run_end marker (`spmcheck check` reports it inconclusive)", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except OSError as e:  # closing the file flushes nothing of ours (events go through write(2)), but be sure
        print(f"spmcheck: error: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
        return exitcodes.IO_ERROR
    if tty:
        sys.stderr.write("\n")
    if res.write_error:
        print(f"spmcheck: error: cannot write {args.output}: {res.write_error} (the trace is "
              "incomplete)", file=sys.stderr)
        return exitcodes.IO_ERROR
    size = (f"model=lifecycle variant={cfg.variant} agents={cfg.agents} contexts={cfg.contexts} "  # type: ignore[union-attr]
            f"tools={cfg.tools} dispatches={cfg.dispatches}" if lifecycle else  # type: ignore[union-attr]
            f"variant={cfg.variant} agents={cfg.agents} updaters={cfg.updaters} lookups={cfg.lookups}")  # type: ignore[union-attr]
    print(f"recorded {res.events} events in {res.seconds:.2f}s -> {args.output} "
          f"({size} seed={cfg.seed} jitter={cfg.jitter})", file=sys.stderr)
    code = 0
    if res.deadlocked:
        print(f"spmcheck: the run got stuck (no event for {cfg.stall:.0f}s); trace ends where "
              "the threads stopped", file=sys.stderr)
        code = exitcodes.UNKNOWN
    summary = (f"spmcheck: recorded {res.events} events of {label} to {args.output}"
               + ("; the run deadlocked" if res.deadlocked else ""))
    print(summary, file=sys.stderr if getattr(args, "json", None) == "-" else sys.stdout)
    if getattr(args, "json", None):
        from .render.envelope import dumps, envelope

        doc = envelope("record", code, summary, [{"model": "lifecycle" if lifecycle else "core", "variant": cfg.variant,
                                                  "output": args.output, "events": res.events,
                                                  "deadlocked": bool(res.deadlocked), "seed": cfg.seed}],
                       {"size": size, "jitter": cfg.jitter}, {"events": res.events}, res.seconds)
        if args.json == "-":
            sys.stdout.write(dumps(doc))
        else:
            bad = write_text(args.json, dumps(doc))
            if bad:
                print(f"spmcheck: error: {bad}", file=sys.stderr)
                return max(code, exitcodes.IO_ERROR)
    return code


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="spmcheck record")
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        return run(args)
    except Exception as e:  # noqa: BLE001 - one line and its own exit code, never a traceback
        return exitcodes.internal_error("spmcheck record", e)


if __name__ == "__main__":
    sys.exit(main())
