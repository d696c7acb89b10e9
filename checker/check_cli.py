"""`spmcheck check FILE... [-]`: the checker's part of the CLI (checker/cli.py wires it in).

Exit codes (checker/exitcodes.py): 0 all accepted; 1 any violated/diverged; 2 any malformed (or a
usage error); 3 any inconclusive (also a trace without events); 4 a file cannot be read (verdict
`unreadable`) or an output (--json, --junit, --sarif, --lock-graph) cannot be written; 5 an
internal error (verdict `error`). Across files the first of 1, 5, 4, 2, 3, 0 that applies wins
(checker.results.PRECEDENCE): a violation is never hidden by another file's outcome. Output
paths are checked before any file is read.
Text is one verdict line per file (findings aggregated per property; -v for every line) and a
summary line `spmcheck: N files: ...`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Iterator, Sequence

from . import exitcodes
from .options import first_output_problem, write_text
from .results import FileResult

TRACES_DIR = Path(__file__).resolve().parent.parent / "traces"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="trace files ('-' = stdin); default: every *.log under the bundled traces/")
    parser.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                        help="check files in N warm worker processes, sharded by file (default 1; output identical)")
    parser.add_argument("--engine", choices=("auto", "compiled", "interp"), default="auto",
                        help="'compiled' (the definition compiled to Python, spec/lang/owcompile.py; "
                             "a core v1 file goes through it too, checker/v1fast.py), 'interp' (the "
                             "reference readings alone: spec/lang/openworld.py for v2, the v1 replay for v1), "
                             "or 'auto' (default): compiled, except a v2 file of under 16 KiB whose reading "
                             "is not compiled yet, which is read sooner than it compiles; "
                             "verdicts and messages are the same")
    parser.add_argument("--lock-graph", metavar="PATH", default=None,
                        help="write the merged lock-order graph of all files as DOT")
    parser.add_argument("--findings-fail", action="store_true",
                        help="lifecycle traces: a finding (residual risk of the final design) is a "
                             "violation instead of a note")
    parser.add_argument("--property", metavar="NAME", default=None,
                        help="check only this property, by name or P-number (guards and observed values are "
                             "always checked); "
                             "confirms that a counterexample from `spmcheck cex` fails the property it was "
                             "exported for, at its last step")
    parser.add_argument("--reorder-window", type=int, default=0, metavar="N",
                        help="events may appear up to N lines out of sequence order (per-thread buffers "
                             "flushed unmerged); they are checked in sequence order, and an event more than "
                             "N lines late is TRC021 (default 0: the file must be in order)")
    from .options import output_args

    output_args(parser)


def _check(path: str, findings_fail: bool = False, only: str | None = None, window: int = 0) -> FileResult:
    from .replay import check_path

    try:
        return check_path(path, findings_fail=findings_fail, only=only, reorder_window=window)
    except Exception as e:  # a checker bug must not hide the other files' results, nor read as a verdict
        from .results import Verdict

        first = str(e).splitlines()[0] if str(e) else ""
        msg = f"internal error while checking: {type(e).__name__}{': ' + first[:200] if first else ''}"
        return FileResult(path, Verdict.ERROR, code="TRC000", message=msg)


_OPTS: tuple[bool, str | None, int] = (False, None, 0)  # a worker's (findings_fail, only, window), set by _warm


def _warm(findings_fail: bool, only: str | None, window: int = 0) -> None:
    """Worker initializer: the checker (grammar, protocol definition, model compiler) is imported
    once per worker, not once per file; each worker keeps its compiled engines (replay._ENGINES)
    for every later file of the same configuration."""
    global _OPTS
    from . import replay  # noqa: F401 - the import is the warm-up

    _OPTS = (findings_fail, only, window)


def _check_in_worker(path: str) -> FileResult:
    return _check(path, *_OPTS)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # unreadable: checked (and reported) at once, whatever its place


def _header(path: str) -> object | None:
    """The header record of a regular file, or None (unreadable, not a header, not regular: a
    FIFO or device might never deliver one). Only for the warm-up: the worker reports problems."""
    import stat

    from .parse import iter_records

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return next(iter(iter_records(f, path)), None)
    except Exception:  # noqa: BLE001 - the worker checks this file and reports what is wrong
        return None
    finally:
        os.close(fd)


def _prebuild(files: Sequence[str], only: str | None) -> None:
    """Compile, in this process and once, the engine of every configuration that two or more of
    `files` declare, so that forked workers share it instead of each compiling its own; an engine
    only one file needs is left to that file's worker (compiled there, in parallel)."""
    from .replay import _header_problem, config_of, engine_for
    from spmcheck.spec.events import Header, LifecycleHeader

    by_key: dict[tuple[object, ...], list[object]] = {}
    for path in dict.fromkeys(files):
        if _prebuild_v2(path):
            continue
        h = _header(path)
        if not isinstance(h, (Header, LifecycleHeader)) or _header_problem(h) is not None:
            continue
        try:
            key = (("lifecycle", h.variant, config_of(h)) if isinstance(h, LifecycleHeader)
                   else ("core", h.variant, h.agents, h.updaters, h.lookups))
        except Exception:  # noqa: BLE001 - as above: left to the worker
            continue
        by_key.setdefault(key, []).append(h)
    for hs in by_key.values():
        if len(hs) > 1:
            try:
                engine_for(hs[0], only)  # type: ignore[arg-type]
            except Exception:  # noqa: BLE001 - the workers compile it and report what fails
                pass


def _prebuild_v2(path: str) -> bool:
    """A v2 file: compile its definition's reading here, once, before the fork (every worker
    inherits it: compiling after the fork would cost each worker the same time again)."""
    from . import openworld_check

    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO might never deliver a line
            return False
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    for raw in head.split(b"\n"):
        text = raw.decode("utf-8", "replace").strip()
        if text and not text.startswith("#"):
            break
    else:
        return False
    if text.split()[:2] != ["spmcheck-trace", "v2"]:
        return False
    h, bad = openworld_check.parse_header(text, 1)
    if h is not None:
        try:
            openworld_check.reading(h.model, h.variant, h.scope)
            if openworld_check.ENGINE != "interp":  # shared by two or more files: worth compiling
                from .owfast import program

                program(h.model, h.variant, h.scope)
        except Exception:  # noqa: BLE001 - the worker compiles it and reports what fails
            pass
    return True


def checked(files: Sequence[str], jobs: int, findings_fail: bool = False,
            only: str | None = None, window: int = 0) -> Iterator[FileResult]:
    """The result of every file, in input order. With jobs > 1 the files are sharded across
    that many warm worker processes (largest file submitted first, so one big file does not
    end up last on a busy worker) and each result is yielded once it and all before it are in."""
    if jobs <= 1 or len(files) <= 1 or "-" in files:
        for f in files:
            yield _check(f, findings_fail, only, window)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    # fork: a worker starts with the parent's imports; the initializer imports the rest once
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else None)
    _prebuild(files, only)  # before the fork: every worker inherits the compiled engines

    with ProcessPoolExecutor(max_workers=min(jobs, len(files)), mp_context=ctx, initializer=_warm,
                             initargs=(findings_fail, only, window)) as pool:
        order = sorted(range(len(files)), key=lambda i: -_size(files[i]))
        futures = {i: pool.submit(_check_in_worker, files[i]) for i in order}
        for i in range(len(files)):
            yield futures[i].result()


def default_files(cwd: Path | None = None) -> list[str] | str:
    """Trace files `spmcheck check` with no FILE checks: the checkout's traces/ (editable install
    or a run inside the checkout), else a message saying exactly what to pass."""
    for d in (TRACES_DIR, (cwd or Path.cwd()) / "traces"):
        if d.is_dir():
            found = sorted(str(p) for p in d.rglob("*.log"))
            if found:
                return found
    return ("no trace files given, and no traces/ directory here or next to the package; pass the files "
            "to check, e.g. `spmcheck check run.log traces/*.log` (record one with `spmcheck record "
            "--variant final -o run.log`), or '-' to read a trace from stdin")


def run(args: argparse.Namespace) -> int:
    from . import report
    from .render import envelope as env
    from .render.summary import check_summary
    from .results import combined_exit

    t0 = time.monotonic()
    if args.files:
        files: list[str] = list(args.files)
    else:
        got = default_files()
        if isinstance(got, str):
            print(f"spmcheck: error: {got}", file=sys.stderr)
            return 2
        files = got
    jobs = max(1, int(args.jobs or 1))
    from . import openworld_check

    openworld_check.ENGINE = getattr(args, "engine", None) or "auto"  # before any fork
    # getattr: callers that build their own Namespace (checker/cli.py) may predate the flag
    only = getattr(args, "property", None)
    if only is not None:
        from spmcheck.spec.lifecycle.properties import LPROPERTIES
        from spmcheck.spec.names import closest, resolve
        from spmcheck.spec.properties import PROPERTIES

        only = resolve(only)
        if only not in PROPERTIES and only not in LPROPERTIES:
            print(f"spmcheck: error: {closest(only, list(PROPERTIES) + list(LPROPERTIES), 'property')}",
                  file=sys.stderr)
            return 2
    bad = first_output_problem(args)
    if bad:
        print(f"spmcheck: error: {bad}", file=sys.stderr)
        return exitcodes.IO_ERROR
    findings_fail = bool(getattr(args, "findings_fail", False))
    window = int(getattr(args, "reorder_window", 0) or 0)
    if window < 0:
        print("spmcheck: error: --reorder-window must be >= 0", file=sys.stderr)
        return 2
    verbose = bool(getattr(args, "verbose", False))
    timings = bool(getattr(args, "timings", False))
    json_to_stdout = getattr(args, "json", None) == "-"
    out = sys.stderr if json_to_stdout else sys.stdout
    results: list[FileResult] = []
    # each file's lines are printed as soon as it and every file before it are done: the text is
    # the same, byte for byte, whatever --jobs is
    shown: set[str] = set()  # findings already shown for an earlier file (brief output)
    for r in checked(files, jobs, findings_fail, only, window):
        results.append(r)
        for line in report.text_lines(r, verbose, shown):
            print(line, file=out)
    code = combined_exit([r.exit_code for r in results])
    secs = time.monotonic() - t0
    summary = check_summary(results, secs, timings)
    print(summary, file=out)
    if getattr(args, "json", None):
        doc = env.envelope("check", code, summary, [report.to_dict(r) for r in results], _config(args, only),
                           report.check_counts(results), secs, timings)
        text = env.dumps(doc)
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
    return _ci(args, results, code)


def _written(problem: str | None, code: int) -> int:
    """An output that could not be written is IO_ERROR (a violation still outranks it)."""
    from .results import combined_exit

    if problem is None:
        return code
    print(f"spmcheck: error: {problem}", file=sys.stderr)
    return combined_exit([code, exitcodes.IO_ERROR])


def _config(args: argparse.Namespace, only: str | None) -> dict[str, object]:
    return {"property": only, "findings_fail": bool(getattr(args, "findings_fail", False)),
            "reorder_window": int(getattr(args, "reorder_window", 0) or 0)}


def _ci(args: argparse.Namespace, results: list[FileResult], code: int) -> int:
    if getattr(args, "junit", None):
        from .render.junit import check_junit

        code = _written(write_text(args.junit, check_junit(results)), code)
    if getattr(args, "sarif", None):
        from .render.envelope import dumps
        from .render.sarif import check_sarif

        code = _written(write_text(args.sarif, dumps(check_sarif(results))), code)
    if getattr(args, "format", "text") == "github":
        from .render.github import check_annotations

        for line in check_annotations(results):
            print(line)
    return code


def main(argv: list[str] | None = None) -> int:
    """Standalone entry (`python -m spmcheck.checker.check_cli`), for use before the top-level CLI exists."""
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
        return exitcodes.internal_error("spmcheck", e)


if __name__ == "__main__":
    sys.exit(main())
