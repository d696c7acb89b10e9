"""Drive a recorded lifecycle run: tool threads t*, the dispatch thread d0, the completion thread h0."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from spmcheck.spec.events import LifecycleHeader
from spmcheck.spec.lifecycle.trace import MODEL
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig

from . import lc_runtime as rt
from .record import RunResult, stamp, supervise
from .recorder import Recorder


@dataclass(frozen=True)
class LRunConfig:
    variant: str
    agents: int = 2
    contexts: int = 2
    tools: int = 2
    dispatches: int = 40  # exactly this many dispatches are written (the header's `dispatches`)
    max_ids: int = 4  # add_callback hands out at most this many ids
    ops: int = 30  # operations per tool thread
    timeouts: bool = True
    deactivate: bool = False
    destroy: bool = False
    jitter: float = 0.2
    seed: int = 0
    sync_timeout: float = 0.002  # Queue::sync's bounded wait (the SDK's 5 s, scaled to the run)
    gap: float = 0.0005  # the dispatch thread sleeps up to this long between dispatches
    stall: float = 2.0  # no event for this long while threads still run = stuck


def header_for(cfg: LRunConfig) -> LifecycleHeader:
    meta = (("seed", str(cfg.seed)), ("jitter", str(cfg.jitter)), ("ops", str(cfg.ops)),
            ("sync_timeout", str(cfg.sync_timeout)), ("source", "spmcheck-record"), ("date", stamp()))
    return LifecycleHeader(1, cfg.variant, cfg.agents, cfg.contexts, cfg.tools, cfg.dispatches, cfg.max_ids,
                           int(cfg.timeouts), int(cfg.deactivate), int(cfg.destroy), meta, model_name=MODEL)


def _tool(w: rt.LWorker, cfg: LRunConfig, go: threading.Barrier) -> None:
    lc = w.lc
    sets = LConfig(agents=cfg.agents).agent_sets()
    go.wait()
    done = 0
    while done < cfg.ops:
        c = w.rng.randrange(cfg.contexts)
        ops: list[tuple[str, int]] = [("start", 6), ("stop", 6), ("set_agents", 3)]
        if not lc.registered[c]:
            ops.append(("register", 6))
        if lc.ids < cfg.max_ids:
            ops.append(("add_callback", 1))
        if cfg.deactivate:
            ops.append(("deactivate", 1))
        if cfg.destroy:
            ops.append(("destroy", 1))
        op = w.rng.choices([o for o, _ in ops], [n for _, n in ops])[0]
        if op == "register":
            with lc.starting_lock:  # claim the registration (another tool may pick c too)
                fresh = not lc.registered[c]
                if fresh:
                    rt.register(w, c)
        elif op == "add_callback":
            with lc.starting_lock:  # the id budget is the model's size: claim one atomically
                if lc.ids < cfg.max_ids:
                    rt.add_callback(w)
        elif op == "start":
            rt.try_start(w, c)
        elif op == "stop":
            rt.stop(w, c)
        elif op == "set_agents":
            rt.set_agents(w, c, w.rng.choice(sets))
        elif op == "deactivate":
            rt.deactivate(w, c)
        else:
            rt.destroy(w, c)
        done += 1
        w.pause()


def _dispatcher(w: rt.LWorker, cfg: LRunConfig, go: threading.Barrier) -> None:
    go.wait()
    for k in range(cfg.dispatches):
        rt.dispatch(w, k, w.rng.randrange(cfg.agents))
        if cfg.gap:
            time.sleep(w.rng.uniform(0, cfg.gap))


def _completer(w: rt.LWorker, cfg: LRunConfig, go: threading.Barrier) -> None:
    lc = w.lc
    go.wait()
    done: set[int] = set()
    while len(done) < cfg.dispatches:
        ready = [k for k in range(len(lc.dispatches)) if k not in done and lc.dispatches[k].submitted]
        if not ready:
            time.sleep(0.0001)
            continue
        k = w.rng.choice(ready)  # completion signals of different queues arrive in any order
        rt.complete(w, k)
        done.add(k)


def run(cfg: LRunConfig, out: TextIO, progress: Callable[[int, float], None] | None = None) -> RunResult:
    v = LVARIANTS[cfg.variant]
    rec = Recorder(out, header_for(cfg))  # type: ignore[arg-type]
    lc = rt.Lifecycle(v, cfg.agents, cfg.contexts, rec, cfg.sync_timeout, cfg.timeouts)
    names = [f"t{i}" for i in range(cfg.tools)] + ["d0", "h0"]
    go = threading.Barrier(len(names))
    threads = []
    for n in names:
        w = rt.LWorker(n, lc, cfg.seed, cfg.jitter)
        target = _tool if n[0] == "t" else _dispatcher if n == "d0" else _completer
        # daemon: a stuck variant must not keep the process alive
        threads.append(threading.Thread(target=target, args=(w, cfg, go), name=n, daemon=True))
    return supervise(threads, rec, cfg.stall, progress, 0.02)
