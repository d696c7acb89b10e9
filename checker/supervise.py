"""Run a command in a child process group so that Ctrl-C and SIGTERM end it at once.

Z3 installs its own SIGINT handler while a query runs (a Ctrl-C becomes a solver `unknown` and
the run carries on), and a Python handler for SIGTERM only runs once a query returns — minutes,
with a forked core-table worker still running. So the work runs in a forked child that leads
its own process group; this parent only waits. On SIGINT or SIGTERM it passes SIGINT to the
child (so a command in Python code can finish cleanly: `record` keeps the events so far and says
so), waits GRACE seconds, then kills the whole group (the child and every worker it forked) and
exits 130 — within a second either way.
"""
from __future__ import annotations

import os
import signal
import sys
from typing import Callable

INTERRUPTED = 130
GRACE = 0.5  # seconds the child gets to exit by itself after the SIGINT passed on to it


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reads_terminal() -> bool:
    # a background process group may not read the terminal (SIGTTIN): `check -` typed by hand
    # runs unsupervised
    try:
        return "-" in sys.argv[1:] and sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def supervised(main: Callable[[], int]) -> int:
    if not hasattr(os, "fork") or os.environ.get("SPMCHECK_NO_SUPERVISE") == "1" or _reads_terminal():
        return main()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: do the work, never return into the caller's stack
        code = 70
        try:
            os.setpgid(0, 0)
            code = main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            if not isinstance(e.code, (int, type(None))):
                print(e.code, file=sys.stderr)
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except (BrokenPipeError, ValueError):
                pass
            os._exit(code)
    try:
        os.setpgid(pid, pid)  # also here: a signal may arrive before the child ran setpgid
    except (PermissionError, ProcessLookupError):
        pass
    got: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        first = not got
        got.append(signum)
        if first:
            try:
                os.kill(pid, signal.SIGINT)  # the child only, not its workers (they would print tracebacks)
            except ProcessLookupError:
                pass
            raise _Interrupted  # out of the blocking waitpid (PEP 475 would resume it otherwise)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    status: int | None = 0
    try:
        try:
            status = os.waitpid(pid, 0)[1]
        except _Interrupted:
            status = _wait_or_kill(pid)
        except ChildProcessError:
            status = 0
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        _kill_group(pid)  # workers the child left behind, if any
    code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
    if got:
        if code != INTERRUPTED:  # killed, or it exited otherwise: the child said nothing
            name = signal.Signals(got[0]).name
            print(f"spmcheck: error: interrupted ({name}); every worker process was ended", file=sys.stderr)
        return INTERRUPTED
    return code if code >= 0 else 128 - code


class _Interrupted(Exception):
    pass


def _wait_or_kill(pid: int) -> int | None:
    """The child's wait status if it exits within GRACE seconds, else None after killing its group."""
    import time

    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done == pid:
            return status
        time.sleep(0.02)
    _kill_group(pid)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return None
