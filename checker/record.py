"""Drive a recorded run: holder (tool) threads and dispatch threads over one Controller."""
from __future__ import annotations

import datetime as _dt
import threading
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from spmcheck.spec.events import Header
from spmcheck.spec.variants import VARIANTS

from .recorder import Recorder
from .runtime import Controller, Worker, update_scopes


@dataclass(frozen=True)
class RunConfig:
    variant: str
    agents: int = 2
    updaters: int = 2
    lookups: int = 2
    ops: int | None = 200  # calls per thread; None = run for `seconds`
    seconds: float | None = None
    jitter: float = 0.0
    seed: int = 0
    hold: float = 0.001  # a holder keeps its reference for up to this many seconds
    stall: float = 2.0  # no event for this long while threads are inside calls = deadlock


@dataclass(frozen=True)
class RunResult:
    events: int
    seconds: float
    deadlocked: bool
    write_error: str = ""  # why the trace could not be written (the run itself went on)


def stamp() -> str:
    # UTC with a 'Z' suffix: header values may not contain '+' (checker/trace.lark META)
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def header_for(cfg: RunConfig) -> Header:
    meta = (("seed", str(cfg.seed)), ("jitter", str(cfg.jitter)), ("hold", str(cfg.hold)),
            ("source", "spmcheck-record"), ("date", stamp()))
    return Header(1, cfg.variant, cfg.agents, cfg.updaters, cfg.lookups, meta)


def _updater(w: Worker, ctl: Controller, cfg: RunConfig, start: threading.Barrier,
             stop: threading.Event) -> None:
    scopes = update_scopes(cfg.agents, ctl.v.global_flag)
    start.wait()
    done = 0
    while not stop.is_set() and (cfg.ops is None or done < cfg.ops):
        # a holder: context start enables a scope, its stop disables the same scope
        scope = w.rng.choice(scopes)
        ctl.update_serialization(w, scope, True)
        if cfg.hold:
            # a context runs for a while between start and stop; without this, holders of
            # different threads would almost never overlap under the GIL
            time.sleep(w.rng.uniform(0, cfg.hold))
        ctl.update_serialization(w, scope, False)
        done += 2


def _lookup(w: Worker, ctl: Controller, cfg: RunConfig, start: threading.Barrier,
            stop: threading.Event) -> None:
    start.wait()
    done = 0
    while not stop.is_set() and (cfg.ops is None or done < cfg.ops):
        ctl.serializer(w, w.rng.randrange(cfg.agents))
        done += 1


def run(cfg: RunConfig, out: TextIO,
        progress: Callable[[int, float], None] | None = None) -> RunResult:
    v = VARIANTS[cfg.variant]
    rec = Recorder(out, header_for(cfg))
    ctl = Controller(v, cfg.agents, rec)
    stop = threading.Event()
    names = [f"u{i}" for i in range(cfg.updaters)] + [f"l{i}" for i in range(cfg.lookups)]
    start = threading.Barrier(len(names))  # release every thread at once: creations race updates
    threads = []
    for n in names:
        w = Worker(n, ctl, cfg.seed, cfg.jitter)
        target = _updater if n.startswith("u") else _lookup
        # daemon: a deadlocked variant must not keep the process alive
        threads.append(threading.Thread(target=target, args=(w, ctl, cfg, start, stop), name=n,
                                        daemon=True))
    return supervise(threads, rec, cfg.stall, progress, 0.05, cfg.seconds, stop)


def supervise(threads: list[threading.Thread], rec: Recorder, stall: float,
              progress: Callable[[int, float], None] | None, poll: float,
              seconds: float | None = None, stop: threading.Event | None = None) -> RunResult:
    """Start the threads and wait for them; no event for `stall` seconds while some still run is
    a deadlock (the trace then ends where the threads got stuck). Shared by both recorders."""
    t0 = time.monotonic()
    deadlocked = False
    # a protocol thread that dies of an exception is a bug in the runtime: collect it (instead of
    # threading's traceback on stderr) and fail the run, without the run_end marker
    crashed: list[threading.ExceptHookArgs] = []
    hook, threading.excepthook = threading.excepthook, crashed.append
    try:
        for t in threads:
            t.start()
        last_events, last_change = -1, t0
        while any(t.is_alive() for t in threads):
            time.sleep(poll)
            now = time.monotonic()
            if seconds is not None and stop is not None and now - t0 >= seconds:
                stop.set()
            if rec.events != last_events:
                last_events, last_change = rec.events, now
            elif now - last_change > stall:
                deadlocked = True
                break
            if progress:
                progress(rec.events, now - t0)
            if crashed:
                break
        if crashed:
            c = crashed[0]
            raise RuntimeError(f"recording thread {c.thread.name if c.thread else '?'} failed: "
                               f"{c.exc_type.__name__}: {c.exc_value}")
    except BaseException:
        # interrupted (SIGINT) or failed: keep what was recorded, but no run_end marker, so the
        # log reads as a run that did not finish
        if stop is not None:
            stop.set()
        rec.close(end=False)
        raise
    finally:
        threading.excepthook = hook
    # a stall ends the run too: the threads are stuck, so the log is complete up to where they
    # stopped and the checker judges that end state (a deadlock is a finding, not a lost tail)
    rec.close(end=True)
    err = rec.error
    return RunResult(rec.events, time.monotonic() - t0, deadlocked,
                     f"{err.strerror or err}" if err is not None else "")
