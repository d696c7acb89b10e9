"""`spmcheck`: prove the protocol, export counterexamples, check and record traces.

Exit codes (one table for every command: checker/exitcodes.py). `spmcheck prove`: 0 every verdict
matches its expectation; 1 a mismatch (the final design violated, or a known-bad variant not
caught, or a witness unreachable); 2 usage error; 3 some verdict unknown (timeout, solver unknown);
4 an output (--json) cannot be written; 5 internal error; 130 interrupted. Options are validated
before any work; no traceback reaches the user (SPMCHECK_DEBUG=1 shows it).
"""
from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from typing import TYPE_CHECKING, Callable, Sequence

from . import exitcodes
from .options import output_problem, positive_seconds, write_text

if TYPE_CHECKING:
    from spec.results import ProofResult

EPILOG = """\
commands:
  prove    proved/violated/unknown per (variant, property), with counterexamples and witnesses
  cex      write the counterexample of one (variant, property) as a format-v1 trace
  check    replay trace files through the same protocol definition
  record   run the protocol on real threads and record a trace
  list     variants and properties with one-line descriptions

examples:
  spmcheck prove
  spmcheck prove --variant final --json -
  spmcheck cex --variant stale-lookup --property creation-consistent -o stale.log
  spmcheck check stale.log traces/final-a2-u2-l2.log
"""


def _closest(name: str, valid: Sequence[str], what: str) -> str:
    near = difflib.get_close_matches(name, list(valid), n=3, cutoff=0.4)
    hint = f"; did you mean {' or '.join(near)}?" if near else f"; valid: {', '.join(valid)}"
    return f"unknown {what} '{name}'{hint}"


def _size_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agents", type=int, default=2, metavar="N", help="GPU agents (default 2)")
    p.add_argument("--updaters", type=int, default=2, metavar="N", help="update_serialization() callers (default 2)")
    p.add_argument("--lookups", type=int, default=2, metavar="N", help="serializer() callers (default 2)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="shorthand: N updaters and N lookups")
    p.add_argument("--timeout", type=positive_seconds, default=60.0, metavar="SECONDS",
                   help="solver budget per (variant, property) (default 60)")


def _config(args: argparse.Namespace):  # -> Config
    from spec.vocabulary import Config

    u = args.threads if args.threads is not None else args.updaters
    l = args.threads if args.threads is not None else args.lookups
    for n, v in (("--agents", args.agents), ("threads", u)):
        if v < 1 or v > 6:
            raise SystemExit(_usage(f"{n} must be between 1 and 6"))
    if l < 1 or l > 6:
        raise SystemExit(_usage("--lookups must be between 1 and 6"))
    return Config(args.agents, u, l)


def _usage(msg: str) -> int:
    print(f"spmcheck: error: {msg}", file=sys.stderr)
    return 2


def _check_names(names: list[str] | None, valid: Sequence[str], what: str) -> list[str] | int:
    if not names:
        return list(valid)
    for n in names:
        if n not in valid:
            return _usage(_closest(n, valid, what))
    return names


def cmd_list(args: argparse.Namespace) -> int:
    from spec.lifecycle.properties import LPROPERTIES, meta
    from spec.lifecycle.variants import LVARIANTS
    from spec.properties import PROPERTIES
    from spec.variants import VARIANTS

    for title, variants, props in (("core model (update_serialization / serializer)", VARIANTS, PROPERTIES),
                                   ("SPM context lifecycle model", LVARIANTS, LPROPERTIES)):
        print(f"{title}\nvariants:")
        for v in variants.values():
            print(f"  {v.name:26} {v.summary}")
            print(f"  {'':26} source: {v.source}")
        print("properties:")
        for p in props.values():
            tag = " [finding]" if props is LPROPERTIES and meta(p.name).finding else ""
            print(f"  {p.name:38} {p.summary}{tag}")
            print(f"  {'':38} source: {p.source}")
        print()
    return 0


def _lconfig(args: argparse.Namespace):  # -> LConfig
    from spec.lifecycle.vocabulary import LConfig

    for n, v, lo, hi in (("--contexts", args.contexts, 1, 3), ("--tools", args.tools, 1, 3),
                         ("--dispatches", args.dispatches, 1, 4), ("--agents", args.agents, 1, 3)):
        if v < lo or v > hi:
            raise SystemExit(_usage(f"{n} must be between {lo} and {hi} for the lifecycle model"))
    return LConfig(agents=args.agents, contexts=args.contexts, tools=args.tools, dispatches=args.dispatches)


def _progress() -> tuple[bool, Callable[[str], None]]:
    tty = sys.stderr.isatty()
    t0 = time.monotonic()

    def progress(msg: str) -> None:
        if tty:
            sys.stderr.write(f"\r\033[K[{time.monotonic() - t0:5.1f}s] {msg}")
            sys.stderr.flush()

    return tty, progress


def _split_names(args: argparse.Namespace) -> tuple[list[str], list[str], list[str], list[str]] | int:
    """--variant/--property names sorted into the core and lifecycle models (a name may be both)."""
    from spec.lifecycle.properties import LPROPERTIES
    from spec.lifecycle.variants import LVARIANTS
    from spec.properties import PROPERTIES
    from spec.variants import VARIANTS

    for n in args.variant or []:
        if n not in VARIANTS and n not in LVARIANTS:
            return _usage(_closest(n, list(VARIANTS) + list(LVARIANTS), "variant"))
    for n in args.property or []:
        if n not in PROPERTIES and n not in LPROPERTIES:
            return _usage(_closest(n, list(PROPERTIES) + list(LPROPERTIES), "property"))
    cv = [n for n in VARIANTS if not args.variant or n in args.variant]
    cp = [n for n in PROPERTIES if not args.property or n in args.property]
    lv = [n for n in LVARIANTS if not args.variant or n in args.variant]
    lp = [n for n in LPROPERTIES if not args.property or n in args.property]
    return cv, cp, lv, lp


def _lifecycle_pairs(lv: list[str], lp: list[str], explicit: bool) -> list[tuple[str, str]]:
    from spec.lifecycle.expected import default_pairs

    pairs = [(v, p) for v, p in default_pairs() if v in lv and p in lp]
    if explicit and not pairs:
        pairs = [(v, p) for v in lv for p in lp]
    return pairs


def cmd_prove(args: argparse.Namespace) -> int:
    if args.list:
        return cmd_list(args)
    split = _split_names(args)
    if isinstance(split, int):
        return split
    variants, props, lvariants, lprops = split
    if args.json:
        bad = output_problem(args.json)
        if bad:
            return _io_error(bad)
    if args.parametric:
        return _prove_parametric(args, variants if args.model != "lifecycle" else [], props,
                                 lvariants if args.model != "core" else [], lprops)
    cfg = _config(args)
    lcfg = _lconfig(args)
    certs = _cert_mode(args)
    if isinstance(certs, int):
        return certs
    run_core = args.model in ("core", "all") and variants and props
    lpairs = _lifecycle_pairs(lvariants, lprops, bool(args.variant or args.property)) \
        if args.model in ("lifecycle", "all") else []
    from spec.prove import prove_all, write_invariants
    from spec.report import exit_code, render_table

    tty, progress = _progress()
    if args.infer:
        from spec.lifecycle.prove import write_invariants as write_lc

        paths = write_invariants(variants, cfg, args.timeout) if run_core else []
        if args.model in ("lifecycle", "all"):
            paths += write_lc(lvariants, lcfg, args.timeout, progress)
        if tty:
            sys.stderr.write("\r\033[K")
        for p in paths:
            print(f"wrote {p}")
        return 0
    lresults = []
    if run_core and lpairs:
        # the two models share nothing: the core table runs in a forked worker while the lifecycle
        # runs here (2 cores: wall time ~ the longer of the two instead of their sum)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from spec.lifecycle.prove import prove_pairs

        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
            fut = pool.submit(prove_all, variants, props, cfg, args.timeout, certs=certs)
            lresults = prove_pairs(lpairs, lcfg, args.timeout, progress, certs=certs)
            progress("waiting for the core table")
            results = fut.result()
    else:
        results = prove_all(variants, props, cfg, args.timeout, progress, certs=certs) if run_core else []
        if lpairs:
            from spec.lifecycle.prove import prove_pairs

            lresults = prove_pairs(lpairs, lcfg, args.timeout, progress, certs=certs)
    if tty:
        sys.stderr.write("\r\033[K")
    code = exit_code(results + lresults)
    json_code = exitcodes.OK
    if args.json:
        doc = {"config": {"agents": cfg.agents, "updaters": cfg.updaters, "lookups": cfg.lookups},
               "lifecycle_config": {"agents": lcfg.agents, "contexts": lcfg.contexts, "tools": lcfg.tools,
                                    "dispatches": lcfg.dispatches},
               "results": [r.to_json() for r in results],
               "lifecycle_results": [dict(r.to_json(), finding=_is_finding(r.property)) for r in lresults],
               "ok": code == 0}
        json_code = _emit_json(args.json, doc)
    if args.json != "-":
        if results:
            print(render_table(results, cfg, verbose=not args.brief))
        if lresults:
            from spec.lifecycle.report import render as render_lc

            print(("\n" if results else "") + render_lc(lresults, lcfg.describe(), _any_size, verbose=not args.brief))
    return json_code or code


def _cert_mode(args: argparse.Namespace) -> str | int:
    """--fresh: search everything; --update: search and rewrite spec/certs/ in the checkout."""
    if getattr(args, "update", False):
        from spec.certs import CertError, checkout_certs_dir

        try:
            checkout_certs_dir()
        except CertError as e:
            return _usage(str(e))
        return "update"
    return "fresh" if getattr(args, "fresh", False) else "use"


def _io_error(msg: str) -> int:
    print(f"spmcheck: error: {msg}", file=sys.stderr)
    return exitcodes.IO_ERROR


def _emit_json(path: str, doc: dict) -> int:
    """Write the JSON document; an unwritable path (e.g. a full disk) is IO_ERROR, reported after
    the table is printed, never a traceback."""
    text = json.dumps(doc, indent=2)
    if path == "-":
        print(text)
        return exitcodes.OK
    bad = write_text(path, text + "\n")
    return _io_error(bad) if bad else exitcodes.OK


def _is_finding(prop: str) -> bool:
    from spec.lifecycle.properties import meta

    return meta(prop).finding


def _any_size(variant: str, prop: str) -> str:
    """Any-size status of a lifecycle proof, from spec.parametric's recorded verdicts."""
    from spec.parametric.prove import any_size_status

    return any_size_status(variant, prop, model="lifecycle")


def _prove_parametric(args: argparse.Namespace, variants: list[str], props: list[str],
                      lvariants: list[str], lprops: list[str]) -> int:
    from spec.parametric.prove import lifecycle_pairs, render_text, run

    tty, progress = _progress()
    lpairs = lifecycle_pairs(lvariants or None, lprops or None) if lvariants else []
    run_core = bool(variants and props)
    results = run(variants or None, props or None, args.timeout, progress, lifecycle=lpairs, core=run_core) \
        if run_core or lpairs else []
    if tty:
        sys.stderr.write("\r\033[K")
    from spec.report import exit_code

    code = exit_code(results)  # type: ignore[arg-type]  # same rule: mismatch or unreachable witness -> 1
    json_code = exitcodes.OK
    if args.json:
        json_code = _emit_json(args.json, {"parametric": [r.to_json() for r in results], "ok": code == 0})
    if args.json != "-":
        print(render_text(results))
    return json_code or code


def cmd_cex(args: argparse.Namespace) -> int:
    from spec.lifecycle.properties import LPROPERTIES
    from spec.lifecycle.variants import LVARIANTS
    from spec.properties import PROPERTIES
    from spec.variants import VARIANTS

    lifecycle = args.variant in LVARIANTS and args.property in LPROPERTIES and not (
        args.variant in VARIANTS and args.property in PROPERTIES and args.model != "lifecycle")
    if not lifecycle:
        if args.variant not in VARIANTS:
            return _usage(_closest(args.variant, list(VARIANTS) + list(LVARIANTS), "variant"))
        if args.property not in PROPERTIES:
            return _usage(_closest(args.property, list(PROPERTIES) + list(LPROPERTIES), "property"))
    bad = output_problem(args.output)
    if bad:
        return _io_error(bad)
    if lifecycle:
        from spec.lifecycle.prove import prove_variant as prove_lc
        from spec.lifecycle.trace import cex_trace as lc_trace

        lcfg = _lconfig(args)
        (r,) = prove_lc(args.variant, [args.property], lcfg, args.timeout, certs=_cex_certs(args))
        return _write_cex(args, r, lambda: lc_trace(r, lcfg))
    cfg = _config(args)
    from spec.prove import prove_variant
    from spec.report import cex_trace

    (r,) = prove_variant(args.variant, [args.property], cfg, args.timeout, certs=_cex_certs(args))
    return _write_cex(args, r, lambda: cex_trace(r, cfg))


def _cex_certs(args: argparse.Namespace) -> str:
    return "fresh" if args.fresh else "use"


def _write_cex(args: argparse.Namespace, r: "ProofResult", render: Callable[[], str]) -> int:
    if r.counterexample is None:
        print(f"spmcheck: no counterexample: {args.variant} / {args.property} is {r.verdict}"
              + (f" ({r.reason})" if r.reason else ""), file=sys.stderr)
        return 1 if r.verdict == "proved" else 3
    text = render()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        bad = write_text(args.output, text)
        if bad:
            return _io_error(bad)
        print(f"wrote {args.output}: {len(r.counterexample)} events, violates {r.property} at event "
              f"{r.counterexample[-1].index} (file line {len(text.splitlines())})")
    return 0


def _lifecycle_args(p: argparse.ArgumentParser, with_model: bool = True) -> None:
    if with_model:
        p.add_argument("--model", choices=("core", "lifecycle"), default=None,
                       help="which model a name shared by both refers to (default: core)")
    p.add_argument("--contexts", type=int, default=2, metavar="N", help="lifecycle: SPM contexts (default 2)")
    p.add_argument("--tools", type=int, default=2, metavar="N", help="lifecycle: tool threads (default 2)")
    p.add_argument("--dispatches", type=int, default=3, metavar="N", help="lifecycle: dispatches (default 3)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="spmcheck",
        description="Formal evidence for rocprofiler-sdk's SPM queue-serialization protocol "
                    "(QueueController per-agent refcount, PR #11965/#11968): Z3 proofs, "
                    "counterexamples as traces, and a trace checker on the same definition.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")

    pr = sub.add_parser("prove", help="prove every (variant, property) pair",
                        description="Run the core table (every variant x property), the lifecycle table (final's "
                                    "properties, each known-bad variant against the property its bug breaks, the "
                                    "reviewers' questions for pr-758072b and final, the findings of the final "
                                    "design), or with --parametric the any-size proofs. Exit 0 when every verdict "
                                    "matches its expectation, 1 on a mismatch or an unreachable non-vacuity "
                                    "witness, 2 on usage errors, 3 when some verdict is unknown, 4 when --json cannot "
                                    "be written, 5 on an internal error.")
    pr.add_argument("--variant", action="append", metavar="NAME", help="repeatable (default: all)")
    pr.add_argument("--property", action="append", metavar="NAME", help="repeatable (default: all)")
    _size_args(pr)
    pr.add_argument("--json", metavar="PATH", help="write results as JSON ('-' for stdout)")
    pr.add_argument("--list", action="store_true", help="list variants and properties and exit")
    pr.add_argument("--brief", action="store_true", help="table only, no counterexamples or witnesses")
    pr.add_argument("--infer", action="store_true",
                    help="re-run Houdini and store the inductive invariants under spec/proofs/")
    pr.add_argument("--model", choices=("core", "lifecycle", "all"), default="all",
                    help="core: update_serialization()/serializer(); lifecycle: SPM contexts, hooks, "
                         "drain, tags, gate (default: all)")
    pr.add_argument("--fresh", action="store_true",
                    help="ignore the stored counterexamples and witness paths (spec/certs/) and search for every "
                         "answer; the stored invariants are re-checked by Z3 either way")
    pr.add_argument("--update", action="store_true",
                    help="search like --fresh and rewrite spec/certs/ in the source checkout with what was found")
    pr.add_argument("--parametric", action="store_true",
                    help="run the inductive proofs over unbounded sorts (any number of agents/threads)")
    _lifecycle_args(pr, with_model=False)
    pr.set_defaults(func=cmd_prove)

    cx = sub.add_parser("cex", help="write a counterexample as a format-v1 trace")
    cx.add_argument("--variant", required=True, metavar="NAME")
    cx.add_argument("--property", required=True, metavar="NAME")
    cx.add_argument("-o", "--output", required=True, metavar="FILE", help="'-' for stdout")
    cx.add_argument("--fresh", action="store_true", help="search instead of replaying a stored counterexample")
    _size_args(cx)
    _lifecycle_args(cx)
    cx.set_defaults(func=cmd_cex)

    from . import check_cli, record_cli

    ck = sub.add_parser("check", help="check trace files",
                        description="Replay format-v1 traces through the protocol definition. Exit codes: 0 all "
                                    "accepted; 1 any violated/diverged; 2 any malformed; 3 any inconclusive; 4 a "
                                    "file cannot be read or an output cannot be written; 5 internal error "
                                    "(highest applicable wins).")
    check_cli.add_arguments(ck)
    ck.set_defaults(func=check_cli.run)

    rc = sub.add_parser("record", help="record a trace from a real threaded run")
    record_cli.add_arguments(rc)
    rc.set_defaults(func=record_cli.run)

    ls = sub.add_parser("list", help="list variants and properties")
    ls.set_defaults(func=cmd_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("spmcheck: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except BrokenPipeError:
        return exitcodes.OK
    except Exception as e:  # noqa: BLE001 - a bug in spmcheck: one line and its own exit code
        return exitcodes.internal_error("spmcheck", e)


if __name__ == "__main__":
    sys.exit(main())
