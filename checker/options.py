"""Option values checked before any work starts: numbers that must be finite, output paths that
must be writable. argparse `type=` callables raise ArgumentTypeError (exit 2, message names the
option); `output_problem` returns why a path cannot be written (the caller exits IO_ERROR)."""
from __future__ import annotations

import argparse
import math
import os


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return v


def positive_seconds(text: str) -> float:
    """A finite number > 0 (nan, inf and 1e309 are refused)."""
    v = _number(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text!r}")
    return v


def nonnegative(text: str) -> float:
    """A finite number >= 0."""
    v = _number(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text!r}")
    return v


def probability(text: str) -> float:
    """A finite number in [0, 1]."""
    v = _number(text)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text!r}")
    return v


def output_problem(path: str) -> str | None:
    """Why `path` cannot be written, or None. '-' (stdout) is always fine. Only what can be known
    without writing is checked here (a full device such as /dev/full fails at the write, which
    the callers report with the same exit code)."""
    if path == "-":
        return None
    if os.path.isdir(path):
        return f"cannot write {path}: is a directory"
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        return f"cannot write {path}: directory {parent} does not exist"
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            return f"cannot write {path}: permission denied"
    elif not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write {path}: permission denied in {parent}"
    return None


def write_text(path: str, text: str) -> str | None:
    """Write a whole file; the error message (naming the path) instead of an exception."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None


def output_args(p: argparse.ArgumentParser, ci: bool = True) -> None:
    """Output options shared by the reporting commands (prove, check)."""
    g = p.add_argument_group("output")
    g.add_argument("-v", "--verbose", action="store_true",
                   help="details: every pair's method and depth, witnesses, counterexamples (prove); "
                        "every finding line (check)")
    g.add_argument("--json", metavar="PATH",
                   help="write the JSON envelope ('-' for stdout; the text then goes to stderr)")
    g.add_argument("--timings", action="store_true",
                   help="include seconds in the text and a `timings` object in the JSON (off by default, so "
                        "two runs on the same inputs give identical output)")
    g.add_argument("--no-progress", action="store_true", help="no progress line, even on a terminal")
    if ci:
        g.add_argument("--format", choices=("text", "github"), default="text",
                       help="github: also print GitHub Actions workflow annotations (::error file=...::)")
        g.add_argument("--junit", metavar="PATH", help="write JUnit XML (a test case per pair / per trace file)")
        g.add_argument("--sarif", metavar="PATH", help="write SARIF 2.1.0 (violations with their locations)")


OUTPUT_OPTIONS = ("json", "junit", "sarif")


def first_output_problem(args: argparse.Namespace) -> str | None:
    """The first of --json/--junit/--sarif (and --lock-graph) that cannot be written, as a message."""
    for opt in OUTPUT_OPTIONS + ("lock_graph",):
        path = getattr(args, opt, None)
        bad = output_problem(path) if path else None
        if bad:
            return f"--{opt.replace('_', '-')}: {bad}"
    return None
