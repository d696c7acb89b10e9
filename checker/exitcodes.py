"""The one table of spmcheck's exit codes (README and traces/FORMAT.md document the same table).

Every command returns one of these. Each failure that is not about the protocol has its own code,
so a crash or a full disk can never read as "violated" (1) or "accepted" (0).
"""
from __future__ import annotations

import sys

OK = 0  # prove: every verdict as expected; check: every file accepted; record: recorded
VIOLATED = 1  # prove: a verdict differs from spec/expected.py or a witness is unreachable; check: violated/diverged
USAGE = 2  # bad arguments (checked before any work) or a malformed trace (check)
UNKNOWN = 3  # prove: some verdict unknown; check: inconclusive; record: the run deadlocked
IO_ERROR = 4  # an input file cannot be read (check: unreadable) or an output cannot be written
INTERNAL = 5  # a bug in spmcheck: an unexpected exception, reported in one line without a traceback
INTERRUPTED = 130  # SIGINT (Ctrl-C)

TABLE: tuple[tuple[int, str], ...] = (
    (OK, "success: every verdict as expected / every trace accepted / trace recorded"),
    (VIOLATED, "a property is violated, a trace diverged from the model, or a verdict differs from its expectation"),
    (USAGE, "usage error (an option value refused before any work) or a malformed trace"),
    (UNKNOWN, "unknown verdict, inconclusive trace, or a recorded run that deadlocked"),
    (IO_ERROR, "an input cannot be read or an output cannot be written (message names the path)"),
    (INTERNAL, "internal error in spmcheck (message names the exception; please report it)"),
    (INTERRUPTED, "interrupted by SIGINT"),
)


def internal_error(prog: str, exc: BaseException) -> int:
    """Report an unexpected exception in one line and return INTERNAL (SPMCHECK_DEBUG=1 re-raises)."""
    import os

    if os.environ.get("SPMCHECK_DEBUG"):
        raise exc
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" at {os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno}"
    msg = str(exc).splitlines()[0] if str(exc) else ""
    print(f"{prog}: internal error: {type(exc).__name__}{': ' + msg if msg else ''}{where} "
          f"(exit {INTERNAL}; SPMCHECK_DEBUG=1 shows the traceback)", file=sys.stderr)
    return INTERNAL
