"""`spmcheck check FILE... [-]`: the checker's part of the CLI (checker/cli.py wires it in).

Exit codes (checker/exitcodes.py): 0 all accepted; 1 any violated/diverged; 2 any malformed (or a
usage error); 3 any inconclusive; 4 a file cannot be read (verdict `unreadable`) or an output
(--json, --lock-graph) cannot be written; 5 an internal error (verdict `error`). The highest
applicable code wins. Output paths are checked before any file is read.
"""
from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

from . import exitcodes
from .options import output_problem, write_text
from .results import FileResult

TRACES_DIR = Path(__file__).resolve().parent.parent / "traces"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="trace files ('-' = stdin); default: every *.log under the bundled traces/")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="write {'files': [...]} as JSON to PATH ('-' = stdout)")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                        help="check files in N processes (default 1)")
    parser.add_argument("--lock-graph", metavar="PATH", default=None,
                        help="write the merged lock-order graph of all files as DOT")
    parser.add_argument("--findings-fail", action="store_true",
                        help="lifecycle traces: a finding (residual risk of the final design) is a "
                             "violation instead of a note")
    parser.add_argument("--property", metavar="NAME", default=None,
                        help="check only this property (guards and observed values are always checked); "
                             "confirms that a counterexample from `spmcheck cex` fails the property it was "
                             "exported for, at its last step")


def _check(path: str, findings_fail: bool = False, only: str | None = None) -> FileResult:
    from .replay import check_path

    try:
        return check_path(path, findings_fail=findings_fail, only=only)
    except Exception as e:  # a checker bug must not hide the other files' results, nor read as a verdict
        from .results import Verdict

        first = str(e).splitlines()[0] if str(e) else ""
        msg = f"internal error while checking: {type(e).__name__}{': ' + first[:200] if first else ''}"
        return FileResult(path, Verdict.ERROR, code="TRC000", message=msg)


def run(args: argparse.Namespace) -> int:
    from . import report

    files: list[str] = list(args.files) or sorted(str(p) for p in TRACES_DIR.rglob("*.log"))
    if not files:
        print(f"no trace files given and none under {TRACES_DIR}", file=sys.stderr)
        return 2
    jobs = max(1, int(args.jobs or 1))
    # getattr: callers that build their own Namespace (checker/cli.py) may predate the flag
    only = getattr(args, "property", None)
    if only is not None:
        from spec.lifecycle.properties import LPROPERTIES
        from spec.properties import PROPERTIES

        if only not in PROPERTIES and only not in LPROPERTIES:
            print(f"spmcheck: error: unknown property '{only}'; see `spmcheck list`", file=sys.stderr)
            return 2
    for opt, out_path in (("--json", args.json), ("--lock-graph", getattr(args, "lock_graph", None))):
        bad = output_problem(out_path) if out_path else None
        if bad:
            print(f"spmcheck check: error: {opt}: {bad}", file=sys.stderr)
            return exitcodes.IO_ERROR
    check = partial(_check, findings_fail=bool(getattr(args, "findings_fail", False)), only=only)
    if jobs > 1 and len(files) > 1 and "-" not in files:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(min(jobs, len(files))) as pool:
            results = pool.map(check, files, chunksize=1)
    else:
        results = [check(f) for f in files]
    json_to_stdout = args.json == "-"
    out = sys.stderr if json_to_stdout else sys.stdout
    for r in results:
        for line in report.text_lines(r):
            print(line, file=out)
    code = max((r.exit_code for r in results), default=0)
    if args.json:
        text = report.to_json(results)
        if json_to_stdout:
            sys.stdout.write(text)
        else:
            code = _written(write_text(args.json, text), code)
    if args.lock_graph:
        from .lockgraph import LockGraph

        g = LockGraph()
        for r in results:
            g.merge(r.lock_edges, r.file)
        code = _written(write_text(args.lock_graph, g.to_dot()), code)
    return code


def _written(problem: str | None, code: int) -> int:
    """An output that could not be written is IO_ERROR (unless something worse already happened)."""
    if problem is None:
        return code
    print(f"spmcheck check: error: {problem}", file=sys.stderr)
    return max(code, exitcodes.IO_ERROR)


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m checker.check_cli`), for use before the top-level CLI exists."""
    p = argparse.ArgumentParser(prog="spmcheck check", description="check protocol traces (format v1)")
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        return run(args)
    except BrokenPipeError:  # `spmcheck check | head`: the reader left, which is not an error here
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - one line and its own exit code, never a traceback
        return exitcodes.internal_error("spmcheck check", e)


if __name__ == "__main__":
    sys.exit(main())
