"""`spmcheck prove --model datapath` and `spmcheck cex --model datapath`: the hazard x revision
table of the data path (spec/datapath) and its counterexamples as v2 traces."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from . import exitcodes


def _closest(name: str, known: list[str], what: str) -> str:
    import difflib

    near = difflib.get_close_matches(name, known, n=1)
    return f"unknown {what} {name!r}" + (f"; did you mean {near[0]!r}?" if near else "") + \
        f" (known: {', '.join(known)})"


def _usage(msg: str) -> int:
    print(f"spmcheck: error: {msg}", file=sys.stderr)
    return exitcodes.USAGE


def _rows(names: list[str] | None) -> list[str] | str:
    """Row ids for --property values (a row id such as H2b, or a claim name); a message if unknown."""
    from spmcheck.spec.datapath.verdicts import ROWS

    if not names:
        return [r.id for r in ROWS]
    out: list[str] = []
    for n in names:
        hits = [r.id for r in ROWS if n in (r.id, r.prop)]
        if not hits:
            return _closest(n, [r.id for r in ROWS], "datapath row")
        out += [h for h in hits if h not in out]
    return out


def _variants(names: list[str] | None) -> list[str] | str:
    from spmcheck.spec.datapath.variants import DVARIANTS

    for n in names or []:
        if n not in DVARIANTS:
            return _closest(n, list(DVARIANTS), "datapath variant")
    return list(names) if names else list(DVARIANTS)


def selection(variant_names: list[str] | None, row_names: list[str] | None) -> tuple[list[str], list[str]]:
    """The data path's (variants, rows) among --variant/--property names that may also name core
    or lifecycle ones: no names selects everything; names of other models select nothing here."""
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS

    variants = [v for v in DVARIANTS if not variant_names or v in variant_names]
    rows = [r.id for r in ROWS if not row_names or r.id in row_names or r.prop in row_names]
    return variants, rows


def known_names() -> tuple[list[str], list[str]]:
    """(variant names, row ids and claim names) of the data path, for name validation."""
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS

    return list(DVARIANTS), list(dict.fromkeys([r.id for r in ROWS] + [r.prop for r in ROWS]))


def row_meaning(row_id: str) -> tuple[str, str, str]:
    """(claim, summary, source) of a data-path row: the claim it decides, as the definition (or,
    for a progress claim, spec.datapath.verdicts) writes it."""
    from spmcheck.spec.datapath.protocol import claim_text
    from spmcheck.spec.datapath.verdicts import PROGRESS, ROWS

    row = next((r for r in ROWS if r.id == row_id), None)
    if row is None:
        return row_id, row_id, ""
    if row.prop in PROGRESS:
        return row.prop, PROGRESS[row.prop].summary, PROGRESS[row.prop].source
    summary, source = claim_text(row.prop)
    return row.prop, summary, source


def list_block() -> tuple[list[str], dict[str, Any]]:
    """`spmcheck list`'s data-path block: the revisions (variants) and the rows of
    `spmcheck prove --model datapath` (row id, the claim it decides, its scope), with their
    sources; and the same as the JSON `models` entry."""
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS

    lines = ["data path (WriteInterceptor, sessions, serializer fences; spmcheck prove --model datapath)", "variants:"]
    for v in DVARIANTS.values():
        lines.append(f"  {v.name:26} {v.summary}")
        lines.append(f"  {'':26} source: {v.source}")
    lines.append("properties (rows):")
    props = []
    for r in ROWS:
        claim, summary, source = row_meaning(r.id)
        tag = " [finding]" if r.finding else ""
        lines.append(f"  {r.id:22} {claim} ({r.kind}, scope {r.scope}): {summary}{tag}")
        lines.append(f"  {'':22} source: {source}; expectation: {r.why}")
        # the envelope's listModel keys: the label is the claim the row decides
        props.append({"name": r.id, "label": claim, "summary": f"{summary} ({r.kind}, scope {r.scope})",
                      "source": source, "finding": r.finding})
    model = {"model": "datapath",
             "variants": [{"name": v.name, "summary": v.summary, "source": v.source} for v in DVARIANTS.values()],
             "properties": props}
    return lines, model


def any_size_lines() -> list[str]:
    """`spmcheck prove --parametric --model datapath`: per data-path claim, any size or bounded
    (at which scopes) and why, one line each; nothing is searched."""
    from spmcheck.spec.datapath.verdicts import ANY_SIZE, FIXED, ROWS

    out = ["data path: any size vs bounded, per claim (rows and scopes: spmcheck prove --model datapath)",
           f"  {FIXED}"]
    claims = list(dict.fromkeys(r.prop for r in ROWS))
    w = max(len(c) for c in claims)
    for c in claims:
        rows = [r for r in ROWS if r.prop == c]
        where = ", ".join(r.id for r in rows)
        out.append(f"  {c.ljust(w)}  {where.ljust(26)}  bounded only: {ANY_SIZE[c]}")
    out.append(f"spmcheck: {len(claims)} data-path claims: 0 proved for any size, {len(claims)} bounded only")
    return out


def job(variants: list[str], rows: list[str], certs: str, clean: bool = True) -> list[Any]:
    """The verdicts (spec.datapath.verdicts.DVerdict) of rows x variants; a top-level function so
    a forked worker can run it beside the core and lifecycle tables."""
    from spmcheck.spec.datapath.certs import DatapathCerts
    from spmcheck.spec.datapath.verdicts import run

    return run(variants, rows, certs=DatapathCerts(certs), clean=clean)


def cell(p: Any) -> str:
    """`violated (5)` = counterexample steps, `proved [8429]` = states explored, `unknown`."""
    r, row = p.result, p.row
    if r.verdict == "violated":
        return f"violated ({row.length})"
    if r.verdict == "proved":
        return f"proved [{row.states}]"
    return "unknown"


def _mark(p: Any) -> str:
    return ("" if p.result.matches else "!") + ("" if all(w.verdict == "reachable" for w in p.result.witnesses) else "?")


def table(pairs: list, variants: list[str], rows: list[str]) -> list[str]:
    """The hazard x revision matrix, a mark after each cell that is not as expected."""
    from spmcheck.spec.datapath.verdicts import ROWS

    by = {(p.result.property, p.result.variant): p for p in pairs}
    w0 = max(len(r) for r in rows + ["row"]) + 2
    widths = [max(len(v), 15) + 2 for v in variants]
    out = [("row".ljust(w0) + "scope".ljust(13) + "".join(v.ljust(w) for v, w in zip(variants, widths))).rstrip()]
    for row in [r for r in ROWS if r.id in rows]:
        cells = []
        for v, w in zip(variants, widths):
            p = by.get((row.id, v))
            cells.append(((cell(p) + _mark(p)) if p is not None else ".").ljust(w))
        out.append(row.id.ljust(w0) + row.scope.ljust(13) + "".join(cells).rstrip())
    return out


def compact(pairs: list) -> list[str]:
    """The data path's block of the default `spmcheck prove` text: revisions x rows, short cells
    (`v5` violated with a 5-step counterexample, `p` proved at the row's scope)."""
    from spmcheck.checker.render.records import DATAPATH_LABELS
    from spmcheck.spec.datapath.verdicts import ROWS

    by = {(p.result.property, p.result.variant): p for p in pairs}
    rows = [r.id for r in ROWS if any(p.result.property == r.id for p in pairs)]
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    heads = [DATAPATH_LABELS.get(r, r) for r in rows]
    cw = [max(len(h), 4) for h in heads]
    vw = max(len(v) for v in variants + ["revision"])

    def short(p: Any) -> str:
        if p is None:
            return "."
        r = p.result
        text = f"v{p.row.length}" if r.verdict == "violated" else "p" if r.verdict == "proved" else "?"
        return text + _mark(p)

    out = [("revision".ljust(vw) + "  " + "  ".join(h.ljust(w) for h, w in zip(heads, cw))).rstrip()]
    for v in variants:
        out.append((v.ljust(vw) + "  " + "  ".join(short(by.get((r, v))).ljust(w) for r, w in zip(rows, cw))).rstrip())
    return out


def summary(pairs: list, seconds: float, timings: bool) -> tuple[str, int]:
    n = len(pairs)
    bad = [p for p in pairs if not p.result.matches and p.result.verdict != "unknown"]
    unknown = [p for p in pairs if p.result.verdict == "unknown"]
    vacuous = [p for p in pairs if any(w.verdict != "reachable" for w in p.result.witnesses)]
    took = f" in {seconds:.1f} s" if timings else ""
    if not bad and not unknown and not vacuous:
        nv = sum(p.result.verdict == "violated" for p in pairs)
        nf = sum(p.finding and p.result.verdict == "violated" for p in pairs)
        return (f"spmcheck: {n} datapath verdict{'s' * (n != 1)} as expected ({nv} violated with a "
                f"counterexample, {n - nv} proved at a fixed scope; {nf} finding{'s' * (nf != 1)})" + took,
                exitcodes.OK)
    parts = []
    if bad:
        parts.append(f"{len(bad)} NOT as expected")
    if unknown:
        parts.append(f"{len(unknown)} unknown")
    if vacuous:
        parts.append(f"{len(vacuous)} witness{'es' * (len(vacuous) != 1)} unreachable")
    first = (bad or unknown or vacuous)[0].result
    head = "FAILED" if bad or vacuous else "INCONCLUSIVE"
    code = exitcodes.VIOLATED if bad or vacuous else exitcodes.UNKNOWN
    return (f"spmcheck: {head}: {', '.join(parts)}, {n - len(bad) - len(unknown)} of {n} as expected; first: "
            f"{first.variant}/{first.property} {first.verdict}, expected {first.expected}" + took, code)


def text(run: Any, verbose: bool, timings: bool) -> list[str]:
    """The text of `spmcheck prove --model datapath` (the full table, scopes, -v details)."""
    from spmcheck.spec.datapath.verdicts import ROWS, SCOPES

    pairs = run.model("datapath")
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    rows = [r.id for r in ROWS if any(p.result.property == r.id for p in pairs)]
    lines = ["data path: hazard x revision (exhaustive breadth-first search of spec/datapath at each row's scope)"]
    lines += table(pairs, variants, rows)
    lines.append("(n) counterexample steps (shortest); [n] states explored, all of them (a proof at that scope "
                 "only); ! not as expected; ? non-vacuity witness unreachable")
    lines.append("scopes:")
    used = [s for s in SCOPES if any(row.scope == s for row in ROWS if row.id in rows)]
    lines += [f"  {s}: {SCOPES[s].describe()}" for s in used]
    if verbose:
        for p in pairs:
            r, row = p.result, p.row
            lines.append(f"{r.property} / {r.variant}: {r.verdict} (expected {r.expected}: {r.source})")
            for w in r.witnesses:
                lines.append(f"  witness: {w.summary}: {'reached' if w.verdict == 'reachable' else 'UNREACHED'}")
            if r.verdict == "violated":
                lines.append(f"  fails: {r.reason.split('; waiting: ')[0]}")
                steps = r.counterexample or ()
                if len(steps) != row.length:
                    lines.append(f"  (shortest: {row.length} steps; shown: {len(steps)} steps that break no other "
                                 "claim before the last, as `spmcheck cex` writes it)")
                lines += [(f"    {s.index} {s.thread} {s.action} " + " ".join(f"{k}={v}" for k, v in s.args)).rstrip()
                          for s in steps]
                lines += [f"  waits: {w}" for w in row.waits]
            if timings:
                lines.append(f"  {r.method}" + (f", {row.states} states" if row.states is not None else "")
                             + f" in {r.seconds:.2f} s")
    return lines + [summary(pairs, run.seconds, timings)[0]]


def cex(args: argparse.Namespace) -> int:
    from spmcheck.spec.datapath.certs import DatapathCerts
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS, Runner

    from .options import output_problem

    rows = _rows([args.property])
    if isinstance(rows, str):
        return _usage(rows)
    if len(rows) != 1:
        return _usage(f"property {args.property!r} is decided in several rows ({', '.join(rows)}); name one")
    variants = _variants([args.variant])
    if isinstance(variants, str):
        return _usage(variants)
    for opt, path in (("-o", args.output), ("--json", getattr(args, "json", None))):
        bad = output_problem(path) if path and path != "-" else None
        if bad:
            print(f"spmcheck: error: {opt}: {bad}", file=sys.stderr)
            return exitcodes.IO_ERROR
    row = next(r for r in ROWS if r.id == rows[0])
    d = Runner(certs=DatapathCerts("fresh" if getattr(args, "fresh", False) else "use")).verdict(
        row, DVARIANTS[args.variant])
    if d.verdict != "violated":
        summary = f"spmcheck: no counterexample: {args.variant} / {row.id} is {d.verdict}"
        code = exitcodes.VIOLATED if d.verdict == "proved" else exitcodes.UNKNOWN
        print(summary, file=sys.stderr)
        return max(code, _cex_json(args, d, code, summary, None))
    text = d.trace()
    where = f"event {len(d.events)}, the last" + (" (no continuation from there reaches the goal)"
                                                  if d.kind == "progress" else "")
    if not d.clean:
        where += "; every such run breaks another claim first, which `spmcheck check` names too"
    summary = f"spmcheck: wrote {args.output}: {len(d.events)} events, violates {d.prop} at {where}"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            print(f"spmcheck: cannot write {args.output}: {e.strerror}", file=sys.stderr)
            return exitcodes.IO_ERROR
        print(summary)
    return _cex_json(args, d, exitcodes.OK, summary, args.output)


def _cex_json(args: argparse.Namespace, d: Any, code: int, summary: str, output: str | None) -> int:
    """`cex --model datapath --json PATH`: the cex envelope, the verdict as a prove result."""
    path = getattr(args, "json", None)
    if not path:
        return exitcodes.OK
    from .options import write_text
    from .render import envelope as env
    from .render.records import datapath_pair

    p = datapath_pair(d)
    res = dict(p.result.to_json(), model="datapath", output=output)
    doc = env.envelope("cex", code, summary, [res], {}, {"events": len(d.events) if output else 0})
    if path == "-":
        sys.stdout.write(env.dumps(doc))
        return exitcodes.OK
    bad = write_text(path, env.dumps(doc))
    if bad:
        print(f"spmcheck: error: {bad}", file=sys.stderr)
        return exitcodes.IO_ERROR
    return exitcodes.OK


TSAN_EXIT = 66  # the exit code ThreadSanitizer is told to use (a race fails the run)


def _datapath_binary(tsan: bool) -> Any:
    """cpp/datapath.cpp built on demand into the C++ cache directory (checker/cpp_build.py's,
    keyed by a hash of cpp/ and include/), one builder at a time."""
    import fcntl
    import shutil
    import subprocess

    from .cpp_build import BuildError, build_dir, source_dir

    if shutil.which("g++") is None:
        raise BuildError("--impl cpp needs g++ on PATH (Debian: apt-get install -y g++)")
    src = source_dir()
    out = build_dir(src)
    exe = out / ("spmcheck-datapath-tsan" if tsan else "spmcheck-datapath")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock-datapath", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not exe.is_file():
            flags = ["-O1", "-g", "-fsanitize=thread"] if tsan else ["-O2"]
            r = subprocess.run(["g++", *flags, "-std=c++17", "-pthread", "-Wall", "-Wextra", str(src / "datapath.cpp"),
                                "-o", str(exe)], capture_output=True, text=True)
            if r.returncode != 0:
                raise BuildError(f"building {exe.name} failed:\n{r.stderr.strip()[-4000:]}")
    return exe


def record_command(exe: str, variant: str, scope: str, seed: int, output: str) -> list[str]:
    """The C++ data path's command line: the revision's knobs and the scope's fields as
    spec/datapath writes them (the C++ side keeps no copy of either table)."""
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import SCOPES

    v, sc = DVARIANTS[variant], SCOPES[scope]
    cmd = [exe, "--variant", variant, "--scope", scope, "--seed", str(seed), "-o", output]
    for opt, val in (("--early-async", v.early_async), ("--two-arg", v.completion_two_arg),
                     ("--gate-per-agent", v.gate_per_agent), ("--hook-reads-gate", v.hook_reads_gate),
                     ("--agents", sc.agents), ("--queues", sc.queues), ("--ctxs", sc.ctxs),
                     ("--tracers", sc.tracers), ("--writes", sc.writes), ("--packets", sc.packets),
                     ("--tracing", sc.tracing), ("--mixed", sc.mixed), ("--barrier-second", sc.barrier_second),
                     ("--create", sc.create), ("--destroy", sc.destroy), ("--timeouts", sc.timeouts)):
        cmd += [opt, str(int(val))]
    return cmd


def record(args: argparse.Namespace, timeout: float = 120.0) -> int:
    """`spmcheck record --model datapath --impl cpp --variant REV --scope SCOPE`: one run of the
    C++ data path (cpp/datapath.cpp) written as a v2 log; exit 0 recorded, 3 the run stalled
    (threads waiting on conditions no thread can change: the log ends in that state), 1 a
    ThreadSanitizer report (--tsan), 2 usage or build errors."""
    import os
    import subprocess

    from spmcheck.spec.datapath.verdicts import SCOPES

    from .cpp_build import BuildError

    if getattr(args, "impl", "python") != "cpp":
        return _usage("the data path is recorded from the C++ implementation only (add --impl cpp)")
    variants = _variants([args.variant])
    if isinstance(variants, str):
        return _usage(variants)
    scope = getattr(args, "scope", None) or "multi"
    if scope not in SCOPES:
        return _usage(_closest(scope, list(SCOPES), "datapath scope"))
    try:
        exe = _datapath_binary(bool(getattr(args, "tsan", False)))
    except BuildError as e:
        print(f"spmcheck record: error: {e}", file=sys.stderr)
        return exitcodes.USAGE
    env = dict(os.environ)
    env.setdefault("TSAN_OPTIONS", f"halt_on_error=1 exitcode={TSAN_EXIT}")
    cmd = record_command(str(exe), args.variant, scope, int(args.seed), args.output)
    try:
        r = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)
    except subprocess.TimeoutExpired:
        print(f"spmcheck record: the C++ data-path run did not finish within {timeout:.0f}s", file=sys.stderr)
        return exitcodes.UNKNOWN
    if r.returncode == TSAN_EXIT:
        sys.stderr.write(r.stderr)
        print("spmcheck record: ThreadSanitizer reported a data race (see above)", file=sys.stderr)
        return exitcodes.VIOLATED
    if r.returncode != 0:
        print(f"spmcheck record: error: {r.stderr.strip() or f'the C++ run exited {r.returncode}'}", file=sys.stderr)
        return exitcodes.IO_ERROR if r.returncode == 4 else exitcodes.USAGE
    words = r.stdout.split()
    events = int(words[0]) if words and words[0].isdigit() else 0
    stalled = "stalled" in r.stdout
    code = exitcodes.UNKNOWN if stalled else exitcodes.OK
    summary = (f"spmcheck: wrote {args.output}: {events} events (C++ data path, {args.variant}, scope {scope}, "
               f"seed {args.seed})" + ("; the run stalled: every thread waits on a condition no thread can "
                                       "change (the log ends there)" if stalled else ""))
    print(summary)
    if getattr(args, "json", None):
        from .options import write_text
        from .render import envelope as env_

        doc = env_.envelope("record", code, summary, [{"model": "datapath", "variant": args.variant,
                                                       "output": args.output, "events": events,
                                                       "deadlocked": stalled, "seed": int(args.seed)}],
                            {"scope": scope, "impl": "cpp"}, {"events": events})
        if args.json == "-":
            sys.stdout.write(env_.dumps(doc))
        else:
            bad = write_text(args.json, env_.dumps(doc))
            if bad:
                print(f"spmcheck: error: {bad}", file=sys.stderr)
                return exitcodes.IO_ERROR
    return code
