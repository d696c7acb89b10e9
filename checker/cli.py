"""`spmcheck`: prove the protocol, export counterexamples, check and record traces, report.

Exit codes (one table for every command: checker/exitcodes.py). `spmcheck prove`: 0 every verdict
matches its expectation; 1 a mismatch (the final design violated, or a known-bad variant not
caught, or a witness unreachable); 2 usage error; 3 some verdict unknown (timeout, solver unknown);
4 an output (--json, --junit, --sarif) cannot be written; 5 internal error; 130 interrupted
(SIGINT or SIGTERM; every worker process is ended). Options are validated before any work; no
traceback reaches the user (SPMCHECK_DEBUG=1 shows it).

Every command ends its text output with one summary line `spmcheck: ...`; text is brief by
default (-v for details) and carries no timings unless --timings, so two runs on the same inputs
print the same bytes. `--json PATH` writes the versioned envelope (checker/render/envelope.py).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Sequence

from spmcheck.spec.names import closest as _closest
from spmcheck.spec.names import resolve as _resolve

from . import exitcodes
from .options import first_output_problem, output_problem, positive_seconds, write_text

if TYPE_CHECKING:
    from spmcheck.spec.results import ProofResult

EPILOG = """\
commands:
  prove    proved/violated/unknown per (variant, property), with counterexamples and witnesses
  cex      write the counterexample of one (variant, property) as a format-v1 trace
  check    replay trace files through the same protocol definition
  record   run the protocol on real threads and record a trace
  report   write a self-contained HTML design-review report and a Markdown summary
  list     variants and properties with one-line descriptions

examples:
  spmcheck prove
  spmcheck prove --variant final --json -
  spmcheck prove --model core --variant stale-lookup --property P2 -v
  spmcheck cex --variant stale-lookup --property creation-consistent -o stale.log
  spmcheck check stale.log traces/final-a2-u2-l2.log
  spmcheck prove --json prove.json; spmcheck report --from-json prove.json -o review/
"""


def _size_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--agents", type=int, default=2, metavar="N", help="GPU agents (default 2)")
    p.add_argument("--updaters", type=int, default=2, metavar="N", help="update_serialization() callers (default 2)")
    p.add_argument("--lookups", type=int, default=2, metavar="N", help="serializer() callers (default 2)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="shorthand: N updaters and N lookups")
    p.add_argument("--timeout", type=positive_seconds, default=60.0, metavar="SECONDS",
                   help="solver budget per (variant, property) (default 60)")


def _config(args: argparse.Namespace):  # -> Config
    from spmcheck.spec.vocabulary import Config

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


def cmd_list(args: argparse.Namespace) -> int:
    from spmcheck.spec.lifecycle.properties import LPROPERTIES, meta
    from spmcheck.spec.lifecycle.variants import LVARIANTS
    from spmcheck.spec.properties import CORE_FINDINGS, PROPERTIES
    from spmcheck.spec.variants import VARIANTS

    from spmcheck.spec.names import label

    lines: list[str] = []
    models = []
    for key, title, variants, props in (
            ("core", "core model (update_serialization / serializer)", VARIANTS, {**PROPERTIES, **CORE_FINDINGS}),
            ("lifecycle", "SPM context lifecycle model", LVARIANTS, LPROPERTIES)):
        lines.append(f"{title}\nvariants:")
        for v in variants.values():
            lines.append(f"  {v.name:26} {v.summary}")
            lines.append(f"  {'':26} source: {v.source}")
        lines.append("properties:")
        for p in props.values():
            finding = meta(p.name).finding if props is LPROPERTIES else p.name in CORE_FINDINGS
            tag = " [finding]" if finding else ""
            lines.append(f"  {p.name:38} {p.summary}{tag}")
            lines.append(f"  {'':38} source: {p.source}")
        lines.append("")
        models.append({"model": key,
                       "variants": [{"name": v.name, "summary": v.summary, "source": v.source} for v in variants.values()],
                       "properties": [{"name": p.name, "label": label(p.name), "summary": p.summary, "source": p.source,
                                       "finding": bool(meta(p.name).finding if props is LPROPERTIES
                                                       else p.name in CORE_FINDINGS)}
                                      for p in props.values()]})
    from .datapath_cli import list_block

    dlines, dmodel = list_block()
    lines += dlines + [""]
    models.append(dmodel)
    nv = sum(len(m["variants"]) for m in models)
    npr = sum(len(m["properties"]) for m in models)
    summary = f"spmcheck: {nv} variants and {npr} properties in {len(models)} models"
    lines.append(summary)
    from .render.envelope import envelope

    return _emit(args, lines, envelope("list", 0, summary, models, {}, {"variants": nv, "properties": npr}))


def _lconfig(args: argparse.Namespace):  # -> LConfig
    from spmcheck.spec.lifecycle.vocabulary import LConfig

    for n, v, lo, hi in (("--contexts", args.contexts, 1, 3), ("--tools", args.tools, 1, 3),
                         ("--dispatches", args.dispatches, 1, 4), ("--agents", args.agents, 1, 3)):
        if v < lo or v > hi:
            raise SystemExit(_usage(f"{n} must be between {lo} and {hi} for the lifecycle model"))
    return LConfig(agents=args.agents, contexts=args.contexts, tools=args.tools, dispatches=args.dispatches)


def _progress(args: argparse.Namespace | None = None, total: int = 0) -> tuple[bool, Callable[[str], None]]:
    """Progress on stderr, on a terminal only (never with --no-progress): elapsed time, n/N pairs
    started (a message naming a pair, 'x / y', counts as one), the current step. Elsewhere it is
    silent, so redirected output stays deterministic."""
    tty = sys.stderr.isatty() and not getattr(args, "no_progress", False)
    t0 = time.monotonic()
    n = [0]

    def progress(msg: str) -> None:
        if " / " in msg:
            n[0] += 1
        if tty:
            count = f" {min(n[0], total)}/{total}" if total else ""
            sys.stderr.write(f"\r\033[K[{time.monotonic() - t0:5.1f}s{count}] {msg}"[:200])
            sys.stderr.flush()

    return tty, progress


def _split_names(args: argparse.Namespace) -> tuple[list[str], list[str], list[str], list[str]] | int:
    """--variant/--property names sorted into the core and lifecycle models (a name may be both);
    the data path's own names (`args.datapath`: its variants and rows) are sorted out first, from
    the names as given (its row P3 is not the lifecycle's alias P3)."""
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.lifecycle.variants import LVARIANTS
    from spmcheck.spec.properties import CORE_FINDINGS, PROPERTIES
    from spmcheck.spec.variants import VARIANTS

    from .datapath_cli import known_names, selection

    dvariants, drows = known_names() if args.model in ("all", "datapath") else ([], [])
    args.datapath = selection(args.variant, args.property) if args.model in ("all", "datapath") else ([], [])
    if args.variant and not any(n in dvariants for n in args.variant):
        args.datapath = ([], [])
    if args.property and not any(n in drows for n in args.property):
        args.datapath = ([], [])
    for n in args.variant or []:
        if n not in VARIANTS and n not in LVARIANTS and n not in dvariants:
            return _usage(_closest(n, list(VARIANTS) + list(LVARIANTS) + dvariants, "variant"))
    given = list(args.property or [])
    args.property = [_resolve(n) for n in args.property] if args.property else args.property
    for n, raw in zip(args.property or [], given):
        if n not in PROPERTIES and n not in CORE_FINDINGS and n not in LPROPERTIES and raw not in drows:
            return _usage(_closest(raw, list(PROPERTIES) + list(CORE_FINDINGS) + list(LPROPERTIES) + drows,
                                   "property"))
    cv = [n for n in VARIANTS if not args.variant or n in args.variant]
    # the core's findings are run against FINDING_VARIANTS only (spec.prove.prove_all)
    cp = [n for n in [*PROPERTIES, *CORE_FINDINGS] if not args.property or n in args.property]
    lv = [n for n in LVARIANTS if not args.variant or n in args.variant]
    lp = [n for n in LPROPERTIES if not args.property or n in args.property]
    return cv, cp, lv, lp


def _lifecycle_pairs(lv: list[str], lp: list[str], explicit: bool) -> list[tuple[str, str]]:
    from spmcheck.spec.lifecycle.expected import default_pairs

    pairs = [(v, p) for v, p in default_pairs() if v in lv and p in lp]
    if explicit and not pairs:
        pairs = [(v, p) for v in lv for p in lp]
    return pairs


def cmd_prove(args: argparse.Namespace) -> int:
    if args.list:
        return cmd_list(args)
    if args.infer or args.parametric:
        got = run_prove(args)
        assert isinstance(got, int)
        return got
    run = run_prove(args)
    return run if isinstance(run, int) else _emit_prove(args, run)


def run_prove(args: argparse.Namespace) -> Any:
    """The prove run of `args` as a ProveRun record (or an exit code: usage error, --infer,
    --parametric, which print their own output)."""
    from spmcheck.spec.properties import CORE_FINDINGS, FINDING_VARIANTS
    split = _split_names(args)
    if isinstance(split, int):
        return split
    variants, props, lvariants, lprops = split
    bad = first_output_problem(args)
    if bad:
        return _io_error(bad)
    if args.parametric and args.model == "datapath":
        from .datapath_cli import any_size_lines

        print("\n".join(any_size_lines()))
        return exitcodes.OK
    if getattr(args, "refinement", False):
        return _prove_refinement(args, variants)
    if args.parametric:
        return _prove_parametric(args, variants if args.model != "lifecycle" else [],
                                 [p for p in props if p not in CORE_FINDINGS],
                                 lvariants if args.model != "core" else [], lprops)
    cfg = _config(args)
    lcfg = _lconfig(args)
    certs = _cert_mode(args)
    if isinstance(certs, int):
        return certs
    run_core = args.model in ("core", "all") and variants and props
    lpairs = _lifecycle_pairs(lvariants, lprops, bool(args.variant or args.property)) \
        if args.model in ("lifecycle", "all") else []
    dvariants, drows = getattr(args, "datapath", ([], []))
    run_dp = bool(dvariants and drows)
    from spmcheck.spec.prove import prove_all

    from .datapath_cli import job as datapath_job

    t0 = time.monotonic()
    total = (sum(1 for v in variants for p in props if p not in CORE_FINDINGS or v in FINDING_VARIANTS)
             if run_core else 0) + len(lpairs)
    tty, progress = _progress(args, total)
    if args.infer:
        return _infer(args, variants if run_core else [], lvariants, cfg, lcfg, progress, tty)
    lresults: list = []
    results: list = []
    dresults: list = []
    jobs = [j for j, on in (("core", run_core), ("datapath", run_dp), ("lifecycle", bool(lpairs))) if on]
    # the models share nothing: all but the last selected run in forked workers while the last
    # runs here (2 cores: wall time ~ the longest of them, or their CPU time over 2, not their sum)
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    def start(pool: ProcessPoolExecutor | None, name: str) -> Future | list:
        fn: Any
        if name == "core":
            fn, a, kw = prove_all, (variants, props, cfg, args.timeout), {"certs": certs}
        elif name == "datapath":
            fn, a, kw = datapath_job, (dvariants, drows, certs), {}
        else:
            from spmcheck.spec.lifecycle.prove import prove_pairs

            fn, a, kw = prove_pairs, (lpairs, lcfg, args.timeout, progress), {"certs": certs}
        if pool is None:
            return fn(*a, **kw)
        return pool.submit(fn, *a, **kw)

    got: dict[str, list] = {}
    if len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=len(jobs) - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            futs = {name: start(pool, name) for name in jobs[:-1]}
            got[jobs[-1]] = start(None, jobs[-1])  # type: ignore[assignment]
            for name, fut in futs.items():
                progress(f"waiting for the {name} table")
                got[name] = fut.result()  # type: ignore[union-attr]
    elif jobs:
        got[jobs[0]] = start(None, jobs[0])  # type: ignore[assignment]
    results, dresults, lresults = got.get("core", []), got.get("datapath", []), got.get("lifecycle", [])
    if tty:
        sys.stderr.write("\r\033[K")
    from .render.records import make_run

    config = {"core": {"agents": cfg.agents, "updaters": cfg.updaters, "lookups": cfg.lookups},
              "lifecycle": {"agents": lcfg.agents, "contexts": lcfg.contexts, "tools": lcfg.tools,
                            "dispatches": lcfg.dispatches},
              "timeout": args.timeout}
    if dresults:
        from spmcheck.spec.datapath.verdicts import SCOPES

        config["datapath"] = {"scopes": {s: SCOPES[s].describe() for s in dict.fromkeys(d.scope for d in dresults)}}
    return make_run(results, lresults, cfg.describe(), lcfg.describe(), config, time.monotonic() - t0,
                    "spmcheck " + " ".join(getattr(args, "argv", []) or ["prove"]), dresults)


def _emit_prove(args: argparse.Namespace, run: Any) -> int:
    from .render import envelope as env
    from .render import prove_text
    from .render.summary import prove_counts, prove_summary

    timings = bool(getattr(args, "timings", False))
    if args.model == "datapath":
        from .datapath_cli import text

        lines = text(run, bool(args.verbose), timings)
    else:
        lines = (prove_text.verbose if args.verbose else prove_text.brief)(run, timings)
    summary = lines[-1] if args.model == "datapath" else prove_summary(run, timings)
    doc = env.envelope("prove", run.exit_code, summary, env.prove_results(run), run.config,
                       prove_counts(run).to_json(), run.seconds, timings)
    return _emit(args, lines, doc, ci=lambda: _ci_prove(args, run))


def _ci_prove(args: argparse.Namespace, run: Any) -> int:
    code = exitcodes.OK
    if getattr(args, "junit", None):
        from .render.junit import prove_junit

        code = max(code, _write(args.junit, prove_junit(run)))
    if getattr(args, "sarif", None):
        from .render.sarif import prove_sarif

        code = max(code, _write(args.sarif, env_dumps(prove_sarif(run))))
    if getattr(args, "format", "text") == "github":
        from .render.github import prove_annotations

        for line in prove_annotations(run):
            print(line)
    return code


def env_dumps(doc: dict[str, Any]) -> str:
    from .render.envelope import dumps

    return dumps(doc)


def _emit(args: argparse.Namespace, lines: list[str], doc: dict[str, Any], ci: Callable[[], int] | None = None) -> int:
    """Text on stdout (or on stderr when the JSON goes to stdout), the JSON envelope, CI files.
    An output that cannot be written (e.g. a full disk) is IO_ERROR after the text is printed;
    a verdict's own failure code still outranks it (checker.results.PRECEDENCE)."""
    from .render.envelope import dumps
    from .results import combined_exit

    json_to_stdout = getattr(args, "json", None) == "-"
    out = sys.stderr if json_to_stdout else sys.stdout
    for line in lines:
        print(line, file=out)
    codes = [int(doc["exit_code"])]
    if getattr(args, "json", None):
        if json_to_stdout:
            sys.stdout.write(dumps(doc))
        else:
            codes.append(_write(args.json, dumps(doc)))
    if ci is not None:
        codes.append(ci())
    return combined_exit(codes)


def _write(path: str, text: str) -> int:
    """OK, or IO_ERROR with a message naming the path (never a traceback)."""
    bad = write_text(path, text)
    return _io_error(bad) if bad else exitcodes.OK


def _cert_mode(args: argparse.Namespace) -> str | int:
    """--fresh: search everything; --update: search and rewrite spec/certs/ in the checkout."""
    if getattr(args, "update", False):
        from spmcheck.spec.certs import CertError, checkout_certs_dir

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
    from .render.envelope import dumps

    if path == "-":
        sys.stdout.write(dumps(doc))
        return exitcodes.OK
    return _write(path, dumps(doc))


def _infer(args: argparse.Namespace, variants: list[str], lvariants: list[str], cfg: Any, lcfg: Any,
           progress: Callable[[str], None], tty: bool) -> int:
    """Regenerate the stored invariants, into the checkout's spec/proofs/ — never into an
    installed package (site-packages), where they would be lost on the next install."""
    import spmcheck.spec.lifecycle.prove as lprove
    import spmcheck.spec.prove as cprove
    from spmcheck.spec.lifecycle.prove import write_invariants as write_lc
    from spmcheck.spec.prove import write_invariants

    target = infer_target(cprove.PROOFS_DIR, Path.cwd())
    if isinstance(target, str):
        return _usage(target)
    cprove.PROOFS_DIR = lprove.PROOFS_DIR = target  # both modules read it when they write
    paths = write_invariants(variants, cfg, args.timeout) if variants else []
    if args.model in ("lifecycle", "all"):
        paths += write_lc(lvariants, lcfg, args.timeout, progress)
    if tty:
        sys.stderr.write("\r\033[K")
    for p in paths:
        print(f"wrote {p}")
    print(f"spmcheck: {len(paths)} invariant file{'s' if len(paths) != 1 else ''} written to {target}")
    return 0


def infer_target(package_dir: Path, cwd: Path) -> Path | str:
    """Where `prove --infer` writes: the package's spec/proofs/ when that is a checkout (an
    editable install), else ./spec/proofs/ when the current directory is an spmcheck checkout,
    else an error message saying what to do."""
    installed = any(part in ("site-packages", "dist-packages") for part in package_dir.resolve().parts)
    if not installed:
        return package_dir
    local = cwd / "spec" / "proofs"
    if local.is_dir() and (cwd / "pyproject.toml").is_file():
        return local
    return ("prove --infer regenerates the stored invariants of a checkout; run it inside the spmcheck "
            "checkout (the directory with spec/proofs/), ideally with `pip install -e .`")


def _is_finding(prop: str) -> bool:
    from spmcheck.spec.lifecycle.properties import meta

    return meta(prop).finding


def _any_size(variant: str, prop: str) -> str:
    """Any-size status of a lifecycle proof, from spec.parametric's recorded verdicts."""
    from spmcheck.spec.parametric.prove import any_size_status

    return any_size_status(variant, prop, model="lifecycle")


def _prove_parametric(args: argparse.Namespace, variants: list[str], props: list[str],
                      lvariants: list[str], lprops: list[str]) -> int:
    from spmcheck.spec.parametric.prove import lifecycle_pairs, render_text, run

    t0 = time.monotonic()
    lpairs = lifecycle_pairs(lvariants or None, lprops or None) if lvariants else []
    run_core = bool(variants and props)
    tty, progress = _progress(args, (len(variants) * len(props) if run_core else 0) + len(lpairs))
    results = run(variants or None, props or None, args.timeout, progress, lifecycle=lpairs, core=run_core) \
        if run_core or lpairs else []
    if tty:
        sys.stderr.write("\r\033[K")
    from spmcheck.spec.report import exit_code

    from .render import envelope as env
    from .render.summary import parametric_summary

    timings = bool(getattr(args, "timings", False))
    secs = time.monotonic() - t0
    code = exit_code(results)  # type: ignore[arg-type]  # same rule: mismatch or unreachable witness -> 1
    text = render_text(results)
    if not timings:
        text = _drop_seconds_column(text)
    if not args.verbose:
        # brief: what is not as expected (the any-size verdicts also show in `spmcheck prove`'s matrix)
        text = "".join(f"  {r.model} {r.variant} / {r.property}: {r.verdict}, expected {r.expected}"
                       + (f": {r.reason}" if r.reason else "") + "\n" for r in results if not r.matches)
    summary = parametric_summary(results, secs, timings)
    counts = {"total": len(results), "as_expected": sum(r.matches for r in results),
              "proved_any_size": sum(r.verdict == "proved" for r in results),
              "violated": sum(r.verdict == "violated" for r in results),
              "unknown": sum(r.verdict == "unknown" for r in results)}
    doc = env.envelope("prove-parametric", code, summary, env.parametric_results(results),
                       {"timeout": args.timeout}, counts, secs, timings)
    return _emit(args, [ln for ln in text.rstrip("\n").splitlines() if ln] + [summary], doc)


def _prove_refinement(args: argparse.Namespace, variants: list[str]) -> int:
    """`prove --refinement`: the lifecycle's atomic update_serialization()/serializer() against the
    core's lock-step calls (spec/refinement.py) for each core variant at 1..--agents agents; text
    only (no envelope yet), exit 0 when every variant refines or not as expected, 1 otherwise, 3
    when a verdict is unknown."""
    from spmcheck.spec import refinement
    from spmcheck.spec.variants import VARIANTS

    if any(getattr(args, k, None) for k in ("json", "junit", "sarif")) or getattr(args, "format", "text") != "text":
        return _usage("--refinement writes text only (no --json, --junit, --sarif or --format github)")
    if args.agents < 1 or args.agents > 3:
        return _usage("--refinement: --agents must be between 1 and 3")
    t0 = time.monotonic()
    sizes = tuple(range(1, args.agents + 1))
    lines = [f"refinement: the lifecycle's atomic update_serialization()/serializer() by the core's lock-step "
             f"calls ({sizes[0]}..{sizes[-1]} agents)" if len(sizes) > 1 else
             "refinement: the lifecycle's atomic update_serialization()/serializer() by the core's lock-step "
             "calls (1 agent)"]
    got = {v: refinement.run(v, sizes, args.timeout * 10) for v in variants}
    for v, records in got.items():
        lines += refinement.render(records, args.verbose)
    verdicts = {v: refinement.verdict_of(r) for v, r in got.items()}
    unknown = sum(x == "unknown" for x in verdicts.values())
    off = sum(x != refinement.expected(VARIANTS[v]) for v, x in verdicts.items() if x != "unknown")
    secs = time.monotonic() - t0
    timing = f" in {secs:.1f}s" if getattr(args, "timings", False) else ""
    lines.append(f"spmcheck: {len(verdicts)} refinement verdict(s), {len(verdicts) - off - unknown} as expected, "
                 f"{off} not, {unknown} unknown{timing}")
    print("\n".join(lines))
    return exitcodes.VIOLATED if off else exitcodes.UNKNOWN if unknown else exitcodes.OK


def _drop_seconds_column(text: str) -> str:
    """render_text's last column is seconds; without --timings it is cut so runs diff cleanly."""
    out = []
    for ln in text.splitlines():
        if ln.startswith("  "):
            out.append(ln)
        elif ln.startswith("-"):
            out.append(ln[:-9])
        else:
            out.append(ln[:-9].rstrip() if len(ln) > 9 else ln)
    return "\n".join(out) + "\n"


def cmd_cex(args: argparse.Namespace) -> int:
    if args.model == "datapath":
        from .datapath_cli import cex

        return cex(args)
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.lifecycle.variants import LVARIANTS
    from spmcheck.spec.properties import CORE_FINDINGS, PROPERTIES
    from spmcheck.spec.variants import VARIANTS

    args.property = _resolve(args.property)
    core_props = {**PROPERTIES, **CORE_FINDINGS}
    lifecycle = args.variant in LVARIANTS and args.property in LPROPERTIES and not (
        args.variant in VARIANTS and args.property in core_props and args.model != "lifecycle")
    if not lifecycle:
        if args.variant not in VARIANTS:
            return _usage(_closest(args.variant, list(VARIANTS) + list(LVARIANTS), "variant"))
        if args.property not in core_props:
            return _usage(_closest(args.property, list(core_props) + list(LPROPERTIES), "property"))
    for opt, path in (("-o", args.output), ("--json", getattr(args, "json", None))):
        bad = output_problem(path) if path else None
        if bad:
            return _io_error(f"{opt}: {bad}")
    if lifecycle:
        from spmcheck.spec.lifecycle.prove import prove_variant as prove_lc
        from spmcheck.spec.lifecycle.trace import cex_trace as lc_trace

        lcfg = _lconfig(args)
        (r,) = prove_lc(args.variant, [args.property], lcfg, args.timeout, certs=_cex_certs(args))
        return _write_cex(args, r, lambda: lc_trace(r, lcfg), "lifecycle")
    cfg = _config(args)
    from spmcheck.spec.prove import prove_variant
    from spmcheck.spec.report import cex_trace

    (r,) = prove_variant(args.variant, [args.property], cfg, args.timeout, certs=_cex_certs(args))
    return _write_cex(args, r, lambda: cex_trace(r, cfg), "core")


def _cex_certs(args: argparse.Namespace) -> str:
    return "fresh" if args.fresh else "use"


def _write_cex(args: argparse.Namespace, r: "ProofResult", render: Callable[[], str], model: str) -> int:
    from .render import envelope as env

    if r.counterexample is None:
        code = 1 if r.verdict == "proved" else 3
        summary = (f"spmcheck: no counterexample: {args.variant} / {args.property} is {r.verdict}"
                   + (f" ({r.reason})" if r.reason else ""))
        doc = env.envelope("cex", code, summary, [dict(r.to_json(), model=model, output=None)], {}, {"events": 0})
        if getattr(args, "json", None):
            _emit_json(args.json, doc)
        print(summary, file=sys.stderr)
        return code
    text = render()
    nline = len(text.splitlines())
    summary = (f"spmcheck: wrote {args.output}: {len(r.counterexample)} events, violates {r.property} at event "
               f"{r.counterexample[-1].index} (file line {nline})")
    doc = env.envelope("cex", 0, summary, [dict(r.to_json(), model=model, output=args.output)], {},
                       {"events": len(r.counterexample)})
    code = exitcodes.OK
    if args.output == "-":
        sys.stdout.write(text)
    else:
        code = _write(args.output, text)
        if code == exitcodes.OK:
            print(summary)
    if getattr(args, "json", None):
        code = max(code, _emit_json(args.json, doc))
    return code


def _lifecycle_args(p: argparse.ArgumentParser, with_model: bool = True) -> None:
    if with_model:
        p.add_argument("--model", choices=("core", "lifecycle", "datapath"), default=None,
                       help="which model a name shared by both refers to (default: core); datapath: "
                            "--property is a row of `prove --model datapath` (H1, H2b, ...), the trace is v2")
    p.add_argument("--contexts", type=int, default=2, metavar="N", help="lifecycle: SPM contexts (default 2)")
    p.add_argument("--tools", type=int, default=2, metavar="N", help="lifecycle: tool threads (default 2)")
    p.add_argument("--dispatches", type=int, default=3, metavar="N", help="lifecycle: dispatches (default 3)")


class Parser(argparse.ArgumentParser):
    """argparse with one error prefix (`spmcheck: error:`, also for subcommands) and a
    suggestion for a mistyped command."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        import re

        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2)) or [c.strip() for c in m.group(2).split(",")]
            message = _closest(m.group(1), choices, "command" if "COMMAND" in message else "choice")
        self.print_usage(sys.stderr)
        print(f"spmcheck: error: {message}", file=sys.stderr)
        raise SystemExit(2)


class _Version(argparse.Action):
    """`--version`, looked up only when asked: importlib.metadata costs every other command about
    0.1 s of start-up (measured on `spmcheck check`, 2026-12-02)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from .render.envelope import version

        print(f"spmcheck {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="spmcheck",
        description="Formal evidence for rocprofiler-sdk's SPM queue-serialization protocol "
                    "(QueueController per-agent refcount, PR #11965/#11968): Z3 proofs, "
                    "counterexamples as traces, and a trace checker on the same definition.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, nargs=0, help="show program's version number and exit")
    p.add_argument("--include-dir", action="store_true",
                   help="print the directory to pass as -I for #include \"spmcheck/trace.hpp\" and exit")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND", parser_class=Parser)

    pr = sub.add_parser("prove", help="prove every (variant, property) pair",
                        description="Run the core table (every variant x property), the lifecycle table (final's "
                                    "properties, each known-bad variant against the property its bug breaks, the "
                                    "reviewers' questions for pr-758072b and final, the findings of the final "
                                    "design), or with --parametric the any-size proofs. Prints verdict matrices, "
                                    "the reviewers' questions, the findings and one summary line (-v: details). "
                                    "Exit 0 when every verdict matches its expectation, 1 on a mismatch or an "
                                    "unreachable non-vacuity witness, 2 on usage errors, 3 when some verdict is "
                                    "unknown, 4 when an output cannot be written, 5 on an internal error, 130 "
                                    "when interrupted.")
    pr.add_argument("--variant", action="append", metavar="NAME", help="repeatable (default: all)")
    pr.add_argument("--property", action="append", metavar="NAME",
                    help="repeatable; a name or its P-number (P1..P9, P4m, gate) (default: all)")
    _size_args(pr)
    from .options import output_args

    output_args(pr)
    pr.add_argument("--list", action="store_true", help="list variants and properties and exit")
    pr.add_argument("--brief", action="store_true", help="the default (kept for old scripts); see -v")
    pr.add_argument("--infer", action="store_true",
                    help="re-run Houdini and store the inductive invariants under spec/proofs/ of the checkout")
    pr.add_argument("--model", choices=("core", "lifecycle", "all", "datapath"), default="all",
                    help="core: update_serialization()/serializer(); lifecycle: SPM contexts, hooks, "
                         "drain, tags, gate; datapath: the hazard x revision table of the data path "
                         "(spec/datapath); all (default): the three")
    pr.add_argument("--fresh", action="store_true",
                    help="ignore the stored counterexamples and witness paths (spec/certs/) and search for every "
                         "answer; the stored invariants are re-checked by Z3 either way")
    pr.add_argument("--update", action="store_true",
                    help="search like --fresh and rewrite spec/certs/ in the source checkout with what was found")
    pr.add_argument("--parametric", action="store_true",
                    help="run the inductive proofs over unbounded sorts (any number of agents/threads)")
    pr.add_argument("--refinement", action="store_true",
                    help="check in Z3 that each core variant's lock-step update_serialization()/serializer() "
                         "refines the lifecycle's atomic steps (spec/refinement.py) at 1..--agents agents "
                         "(at most 3), solver budget 10 x --timeout per variant; text only")
    _lifecycle_args(pr, with_model=False)
    pr.set_defaults(func=cmd_prove)

    cx = sub.add_parser("cex", help="write a counterexample as a format-v1 trace")
    cx.add_argument("--variant", required=True, metavar="NAME")
    cx.add_argument("--property", required=True, metavar="NAME", help="a name or its P-number")
    cx.add_argument("-o", "--output", required=True, metavar="FILE", help="'-' for stdout")
    cx.add_argument("--fresh", action="store_true", help="search instead of replaying a stored counterexample")
    cx.add_argument("--json", metavar="PATH", help="write the JSON envelope")
    _size_args(cx)
    _lifecycle_args(cx)
    cx.set_defaults(func=cmd_cex)

    from . import check_cli, record_cli

    ck = sub.add_parser("check", help="check trace files",
                        description="Replay format-v1 traces through the protocol definition. Exit codes, by "
                                    "precedence across files (the first that applies wins, so a violation is "
                                    "never hidden): 1 any violated/diverged; 5 internal error; 4 a file cannot be "
                                    "read or an output cannot be written; 2 any malformed; 3 any inconclusive "
                                    "(also a trace without events); 0 all accepted.")
    check_cli.add_arguments(ck)
    ck.set_defaults(func=check_cli.run)

    rc = sub.add_parser("record", help="record a trace from a real threaded run")
    record_cli.add_arguments(rc)
    rc.set_defaults(func=record_cli.run)

    from . import report_cli

    rp = sub.add_parser("report", help="write report.html + summary.md (verdict matrix, swim lanes, lock graph)",
                        description=report_cli.DESCRIPTION)
    report_cli.add_arguments(rp)
    rp.set_defaults(func=report_cli.run)

    ls = sub.add_parser("list", help="list variants and properties")
    ls.add_argument("--json", metavar="PATH", help="write the JSON envelope")
    ls.set_defaults(func=cmd_list)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """In-process entry (tests call this); `console_main` adds signal supervision."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "include_dir", False):
        from .cpp_build import BuildError, include_dir

        try:
            print(include_dir())
        except BuildError as e:
            print(f"spmcheck: error: {e}", file=sys.stderr)
            return 2
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    args.argv = list(argv) if argv is not None else sys.argv[1:]
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("spmcheck: error: interrupted", file=sys.stderr)
        return exitcodes.INTERRUPTED
    except BrokenPipeError:
        import os

        # the reader left (`spmcheck prove | head`): not an error; keep the interpreter from
        # complaining while it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exitcodes.OK
    except OSError as e:
        if e.filename is None:
            return exitcodes.internal_error("spmcheck", e)
        # a file the run had to read or write (e.g. `prove --infer` into a read-only checkout)
        print(f"spmcheck: error: cannot access {e.filename}: {e.strerror or e}", file=sys.stderr)
        return exitcodes.IO_ERROR
    except Exception as e:  # noqa: BLE001 - a bug in spmcheck: one line and its own exit code
        return exitcodes.internal_error("spmcheck", e)


def console_main() -> int:
    """The `spmcheck` script and `python -m spmcheck`: see checker/supervise.py."""
    from .supervise import supervised

    return supervised(main)


if __name__ == "__main__":
    sys.exit(console_main())
