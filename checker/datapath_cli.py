"""`spmcheck prove --model datapath` and `spmcheck cex --model datapath`: the hazard x revision
table of the data path (spec/datapath) and its counterexamples as v2 traces."""
from __future__ import annotations

import argparse
import sys
import time

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


def cell(v: object) -> str:
    """`violated (5)` = counterexample steps, `proved [8429]` = states explored, `unknown`."""
    d = v  # DVerdict
    if d.verdict == "violated":  # type: ignore[attr-defined]
        return f"violated ({d.length})"  # type: ignore[attr-defined]
    if d.verdict == "proved":  # type: ignore[attr-defined]
        return f"proved [{d.states}]"  # type: ignore[attr-defined]
    return "unknown"


def table(results: list, variants: list[str], rows: list[str]) -> list[str]:
    """The hazard x revision matrix, a mark after each cell that is not as expected."""
    from spmcheck.spec.datapath.verdicts import ROWS

    by = {(r.row, r.variant): r for r in results}
    w0 = max(len(r) for r in rows + ["row"]) + 2
    widths = [max(len(v), 15) + 2 for v in variants]
    out = [("row".ljust(w0) + "scope".ljust(13) + "".join(v.ljust(w) for v, w in zip(variants, widths))).rstrip()]
    for row in [r for r in ROWS if r.id in rows]:
        cells = []
        for v, w in zip(variants, widths):
            d = by[(row.id, v)]
            mark = "" if d.matches else "!"
            mark += "" if d.witness_reached else "?"
            cells.append((cell(d) + mark).ljust(w))
        out.append(row.id.ljust(w0) + row.scope.ljust(13) + "".join(cells).rstrip())
    return out


def summary(results: list, seconds: float, timings: bool) -> tuple[str, int]:
    n = len(results)
    bad = [r for r in results if not r.matches and r.verdict != "unknown"]
    unknown = [r for r in results if r.verdict == "unknown"]
    vacuous = [r for r in results if not r.witness_reached]
    took = f" in {seconds:.1f} s" if timings else ""
    if not bad and not unknown and not vacuous:
        nv = sum(r.verdict == "violated" for r in results)
        nf = sum(r.finding and r.verdict == "violated" for r in results)
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
    first = (bad or unknown or vacuous)[0]
    head = "FAILED" if bad or vacuous else "INCONCLUSIVE"
    code = exitcodes.VIOLATED if bad or vacuous else exitcodes.UNKNOWN
    return (f"spmcheck: {head}: {', '.join(parts)}, {n - len(bad) - len(unknown)} of {n} as expected; first: "
            f"{first.variant}/{first.row} {first.verdict}, expected {first.expected}" + took, code)


def prove(args: argparse.Namespace) -> int:
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS, SCOPES, Runner

    if getattr(args, "json", None) or getattr(args, "junit", None) or getattr(args, "sarif", None):
        return _usage("--json/--junit/--sarif are not available for --model datapath yet")
    rows = _rows(args.property)
    if isinstance(rows, str):
        return _usage(rows)
    variants = _variants(args.variant)
    if isinstance(variants, str):
        return _usage(variants)
    t0 = time.monotonic()
    r = Runner()
    results = [r.verdict(row, DVARIANTS[v], clean=bool(args.verbose))
               for row in ROWS if row.id in rows for v in variants]
    seconds = time.monotonic() - t0
    timings = bool(getattr(args, "timings", False))
    lines = ["data path: hazard x revision (exhaustive breadth-first search of spec/datapath at each row's scope)"]
    lines += table(results, variants, rows)
    lines.append("(n) counterexample steps (shortest); [n] states explored, all of them (a proof at that scope "
                 "only); ! not as expected; ? non-vacuity witness unreachable")
    lines.append("scopes:")
    used = [s for s in SCOPES if any(row.scope == s for row in ROWS if row.id in rows)]
    lines += [f"  {s}: {SCOPES[s].describe()}" for s in used]
    if args.verbose:
        for d in results:
            lines.append(f"{d.row} / {d.variant}: {d.verdict} (expected {d.expected}: {d.why})")
            lines.append(f"  witness: {d.witness}: {'reached' if d.witness_reached else 'UNREACHED'}")
            if d.verdict == "violated":
                lines.append(f"  fails: {d.failing}")
                if len(d.events) != d.length:
                    lines.append(f"  (shortest: {d.length} steps; shown: {len(d.events)} steps that break no other "
                                 "claim before the last, as `spmcheck cex` writes it)")
                lines += [f"    {e.line()}" for e in d.events]
                lines += [f"  waits: {w}" for w in d.waits]
            if timings:
                lines.append(f"  {d.states} states in {d.seconds:.2f} s")
    text, code = summary(results, seconds, timings)
    print("\n".join(lines + [text]))
    return code


def cex(args: argparse.Namespace) -> int:
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
    if args.output != "-":
        bad = output_problem(args.output)
        if bad:
            print(f"spmcheck: -o: {bad}", file=sys.stderr)
            return exitcodes.IO_ERROR
    row = next(r for r in ROWS if r.id == rows[0])
    d = Runner().verdict(row, DVARIANTS[args.variant])
    if d.verdict != "violated":
        print(f"spmcheck: no counterexample: {args.variant} / {row.id} is {d.verdict}", file=sys.stderr)
        return exitcodes.VIOLATED if d.verdict == "proved" else exitcodes.UNKNOWN
    text = d.trace()
    if args.output == "-":
        sys.stdout.write(text)
        return exitcodes.OK
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print(f"spmcheck: cannot write {args.output}: {e.strerror}", file=sys.stderr)
        return exitcodes.IO_ERROR
    where = ("a state from which it never happens" if d.kind == "progress"
             else f"event {len(d.events)}" if d.clean else "an earlier event (another claim breaks on the way)")
    print(f"spmcheck: wrote {args.output}: {len(d.events)} events, violates {d.prop} at {where}")
    return exitcodes.OK
