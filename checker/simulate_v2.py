"""Random runs of a definition in the open world, written as v2 traces (for scale tests and the
benchmark: 8 agents, 64 threads, a million events).

A scheduler picks a thread at random and fires one of its enabled steps; the event is rendered
from the step (its static keys and observed values), so the trace is a run the definition allows.
This checks the checker's *scale* (sizes, ids, cost per event), not its fidelity: the traces of
real runs come from the C++ implementation (`spmcheck record --impl cpp`).
"""
from __future__ import annotations

import random
from typing import Any, Iterator

from spmcheck.spec.lang.openworld import OAction, World, render
from spmcheck.spec.lang.syntax import BoolParam, ScopeParam, Var

from .openworld_check import reading


def _static(a: OAction, env: dict[str, Any], rng: random.Random) -> list[str]:
    out = []
    for k, v in a.defn.static:
        if isinstance(v, str):
            out.append(f"{k}={v.format(**{n: render(x) for n, x in env.items()})}")
        elif isinstance(v, ScopeParam):
            s = env[v.name]
            members = sorted(s) if s is not None else []
            rng.shuffle(members)  # v2: sets in any order
            out.append(f"{k}={','.join(members) if s is not None else 'all'}")
        elif isinstance(v, BoolParam):
            out.append(f"{k}={int(bool(env[v.name]))}")
        elif k in a.defn.implied and env[v.name] == env[a.defn.thread.name]:
            continue  # the thread acts for itself: the key may be left out (and is, here)
        else:
            out.append(f"{k}={env[v.name]}")
    return out


def generate(variant: str = "final", agents: int = 2, updaters: int = 2, lookups: int = 2,
             events: int = 1000, seed: int = 1, lookup_share: float = 0.8,
             contexts: int = 1) -> Iterator[str]:
    """Lines of a v2 trace (header first, run_end last). `contexts`: how many holders each tool
    thread acts for (the first is the thread itself, its `holder=` key left out; the others are
    written), so with 2 a thread may start a second context before stopping its first."""
    rng = random.Random(seed)
    ow = reading("core", variant)
    w = World(ow.proto)
    ag = [f"gpu{i}" for i in range(agents)]
    tids = rng.sample(range(100_000, 4_000_000), updaters + lookups)
    threads = [(str(t), "updater") for t in tids[:updaters]] + [(str(t), "lookup") for t in tids[updaters:]]
    for t, r in threads:
        w.role[t] = r
    ups = [t for t, r in threads if r == "updater"]
    lks = [t for t, r in threads if r == "lookup"]
    yield (f"spmcheck-trace v2 model=core variant={variant} source=spmcheck-simulate seed={seed} "
           f"end_marker=1")
    seq = 0
    idle_tries = 0
    while True:
        draining = seq >= events  # past the budget: only finish the calls in progress
        if draining:
            busy = [t for t, r in threads if ow.pc_of(w, r, t) != "idle"]
            if not busy:
                break
            t = rng.choice(busy)
        else:
            pool = lks if (lks and (not ups or rng.random() < lookup_share)) else ups
            t = rng.choice(pool)
        role = w.role[t]
        pc = ow.pc_of(w, role, t)
        opts: list[tuple[OAction, dict[str, Any]]] = []
        for a in ow.actions:
            if a.role != role or a.at != pc:
                continue
            for env in _bindings(a, t, w, ag, rng, contexts):
                if all(f(w, env) for _, f in a.select) and all(g(w, env) for _, g in a.guard):
                    opts.append((a, env))
        if not opts:
            idle_tries += 1
            if idle_tries > 10_000:
                break  # every thread blocked: the run ends here (a deadlock is a run too)
            continue
        idle_tries = 0
        a, env = rng.choice(opts)
        obs = [f"{k}={render(f(w, env))}" for k, f in a.observe]
        seq += 1
        yield " ".join([str(seq), t, a.kind, *_static(a, env, rng), *obs])
        ow.fire(w, a, env, t)
    yield f"{seq + 1} run_end"


def _bindings(a: OAction, t: str, w: World, agents: list[str], rng: random.Random,
              contexts: int = 1) -> list[dict[str, Any]]:
    envs: list[dict[str, Any]] = [{a.defn.thread.name: t, **dict(a.defn.consts)}]
    for p in a.defn.params:
        nxt = []
        for env in envs:
            if isinstance(p, ScopeParam):
                same = _current_scope(w, env.get("holder", t), agents)
                k = rng.randint(1, len(agents))
                scopes: list[frozenset[str] | None] = []
                for s in (None, frozenset(rng.sample(agents, k)), same):  # a list: runs repeat by seed
                    if s not in scopes and (s is None or (p.sets and s)):  # `all` or non-empty
                        scopes.append(s)
                nxt += [{**env, p.name: s} for s in scopes]
            elif isinstance(p, Var) and p.sort.name == "holder":
                # a tool thread acts for itself or for further contexts of its own, so one thread
                # may start two contexts before stopping either (issue 11: holders)
                nxt += [{**env, p.name: h} for h in [t] + [f"ctx{t}.{i}" for i in range(1, contexts)]]
            elif isinstance(p, Var):
                nxt += [{**env, p.name: x} for x in agents]
            else:
                nxt.append(env)
        envs = nxt
    return envs


def _current_scope(w: World, h: str, agents: list[str]) -> frozenset[str] | None:
    """The agent set holder h started with (so a stop can name what its start did)."""
    if w.t["hall"].get((h,)):
        return None
    return frozenset(x for x in agents if w.t["hin"].get((h, x)))
