"""`spmcheck report -o DIR`: report.html (self-contained) + summary.md (for a PR comment) +
prove.json (the prove envelope the report was drawn from).

The verdicts come from a prove run done here (the same selection options as `spmcheck prove`)
or from `--from-json` (a `spmcheck prove --json` file, so CI proves once and reports from it);
`--check FILE...` adds checked traces (rejected ones drawn as swim lanes, their lock edges in the
dynamic lock graph). Exit code: the prove run's (0 all as expected, 1 mismatch, 3 unknown),
raised to 1 when a checked trace is violated; 2 on usage errors.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DESCRIPTION = ("Write DIR/report.html (one self-contained file: verdict matrix, reviewers' questions and findings "
               "as cards, every counterexample and rejected trace as a swim-lane SVG, lock-order graphs with cycles "
               "highlighted, provenance), DIR/summary.md (the same for a PR comment) and DIR/prove.json. "
               "Exit code: the prove run's (0/1/3), 1 if a checked trace is violated, 2 on usage errors.")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .cli import _lifecycle_args, _size_args

    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write (created if missing)")
    p.add_argument("--from-json", metavar="PATH", help="render a `spmcheck prove --json` file instead of proving")
    p.add_argument("--check", nargs="+", metavar="FILE", default=[], help="trace files to check and include")
    p.add_argument("--variant", action="append", metavar="NAME", help="as for prove (default: all)")
    p.add_argument("--property", action="append", metavar="NAME", help="as for prove (default: all)")
    p.add_argument("--model", choices=("core", "lifecycle", "all", "datapath"), default="all",
                   help="as for prove (datapath: the hazard x revision table alone)")
    p.add_argument("--json", metavar="PATH", help="write the JSON envelope of this command")
    p.add_argument("--no-progress", action="store_true", help="no progress line on a terminal")
    _size_args(p)
    _lifecycle_args(p, with_model=False)


def run(args: argparse.Namespace) -> int:
    from .render import envelope as env
    from .render import html_report, lockgraph_svg, markdown
    from .render.reportdata import ReportData, graphs_for, provenance, run_from_envelope, trace_view
    from .render.summary import prove_counts, prove_summary
    from .results import combined_exit

    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"spmcheck: error: cannot create {out}: {e.strerror or e}", file=sys.stderr)
        return 2
    if args.from_json:
        try:
            prove = run_from_envelope(json.loads(Path(args.from_json).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"spmcheck: error: cannot read {args.from_json} as `spmcheck prove --json` output: {e}",
                  file=sys.stderr)
            return 2
    else:
        from .cli import run_prove

        args.list = args.infer = args.parametric = False
        prove = run_prove(args)
        if isinstance(prove, int):
            return prove
    traces = []
    if args.check:
        from .check_cli import _check

        traces = [trace_view(_check(f)) for f in args.check]
    data = ReportData(prove, tuple(traces), graphs_for(prove, traces),
                      provenance(prove, "spmcheck " + " ".join(getattr(args, "argv", []) or ["report"]),
                                 lockgraph_svg.layout_engine()))
    html, md, pj = out / "report.html", out / "summary.md", out / "prove.json"
    html.write_text(html_report.render(data), encoding="utf-8")
    md.write_text(markdown.render(data), encoding="utf-8")
    pj.write_text(env.dumps(env.envelope("prove", prove.exit_code, prove_summary(prove), env.prove_results(prove),
                                         prove.config, prove_counts(prove).to_json())), encoding="utf-8")
    code = combined_exit([prove.exit_code] + [1 for t in traces if t.result.verdict.value in ("violated", "diverged")])
    ncex = sum(1 for p in prove.pairs if p.result.counterexample) + sum(1 for t in traces if t.events)
    summary = (f"spmcheck: wrote {html} and {md} ({ncex} swim lane{'s' if ncex != 1 else ''}); "
               + prove_summary(prove).removeprefix("spmcheck: "))
    print(summary)
    if getattr(args, "json", None):
        files = [{"kind": "html", "path": str(html)}, {"kind": "markdown", "path": str(md)},
                 {"kind": "json", "path": str(pj)}]
        doc = env.envelope("report", code, summary, files, {"output": str(out), "from_json": args.from_json},
                           {"swim_lanes": ncex, "pairs": len(prove.pairs), "traces": len(traces)})
        if args.json == "-":
            sys.stdout.write(env.dumps(doc))
        else:
            Path(args.json).write_text(env.dumps(doc), encoding="utf-8")
    return code
