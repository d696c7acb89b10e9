"""Random runs of a definition in the open world, written as v2 traces (for scale tests and the
benchmark: 8 agents, 64 threads, a million events).

A scheduler picks a thread at random and fires one of its enabled steps; the event is rendered
from the step (its static keys and observed values), so the trace is a run the definition allows.
This checks the checker's *scale* (sizes, ids, cost per event), not its fidelity: the traces of
real runs come from the C++ implementation (`spmcheck record --impl cpp`). `generate_lifecycle`
does the same for the SPM context lifecycle (tool, dispatch and completion threads; 8 agents,
16 contexts, 64 threads and a million dispatches in `bench/openworld.py`).
"""
from __future__ import annotations

import random
from functools import lru_cache
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


# ---- the lifecycle ---------------------------------------------------------------------------


def generate_lifecycle(variant: str = "final", agents: int = 2, contexts: int = 2, tools: int = 2,
                       dispatchers: int = 1, completers: int = 1, dispatches: int = 1000, seed: int = 1,
                       tool_share: float = 0.05, timeouts: bool = True) -> Iterator[str]:
    """Lines of a lifecycle v2 trace (header first, run_end last) with `dispatches` dispatches.

    Tool threads register, start and stop contexts (with the agent lists set_dispatch_agents
    gives them, or all agents), now and then add a registry callback; dispatch threads write
    dispatches for random agents (fresh opaque ids) through the enter hook and submit them;
    completion threads complete submitted ones. Which step a thread tries is chosen here; whether
    it may fire, what it reports and what it changes are the definition's: each step is the
    compiled reading's emitting function (spec.lang.owcompile, `emit=True`: the checker's
    compiled step, returning the observed values instead of comparing them), so every line is a
    step the definition allows, at the compiled engine's speed (a million dispatches in minutes).
    One rule is the scheduler's: the definition keeps a single dispatch between
    `completion_exit` and `completion_signal` (the SDK's one AsyncSignalHandler thread), so no
    completion thread exits a dispatch while another is between the two."""
    from .owfast import _Tables

    rng = random.Random(seed)
    prog = _emitting("lifecycle", variant, f"{int(timeouts)}00")
    role_of: dict[str, str] = {}
    where: dict[str, Any] = {}
    disp = _Tables()
    ns = prog.new_run(role_of, where, set(), [], disp)
    emit, named, export = ns["emitters"], ns["named"], ns["export"]
    ag = [f"gpu{i}" for i in range(agents)]
    cx = [f"ctx{i}" for i in range(contexts)]
    tids = rng.sample(range(100_000, 4_000_000), tools + dispatchers + completers)
    roles = ["tool"] * tools + ["dispatch"] * dispatchers + ["complete"] * completers
    threads = [(str(t), r) for t, r in zip(tids, roles)]
    by_role: dict[str, list[str]] = {}
    for t, r in threads:
        by_role.setdefault(r, []).append(t)
        role_of[t] = r
        where[t] = disp[(r, str(prog.proto.pc[r].init))]
        named[r].add(t)
    acts: dict[tuple[str, str], list[Any]] = {}
    for ca in prog.actions:
        if not ca.defn.shorthand:  # an older log's abbreviation, never generated
            acts.setdefault((ca.defn.role.name, ca.defn.at), []).append(ca)
    sorts = {p.name: p.sort.name for ca in prog.actions for p in ca.defn.params if hasattr(p, "sort")}
    # the simulator's own bookkeeping of dispatch ids (opaque to the definition): written but not
    # submitted, per dispatch thread; submitted and not yet completed; being completed
    mine: dict[str, tuple[str, str]] = {}  # dispatch thread -> (id, agent) gated, not yet submitted
    flight: list[str] = []
    exiting: dict[str, str] = {}
    registered: set[str] = set()
    yield (f"spmcheck-trace v2 model=lifecycle variant={variant} timeouts={int(timeouts)} "
           f"source=spmcheck-simulate seed={seed} end_marker=1")
    seq = 0
    written = 0
    stuck = 0
    salt = rng.randrange(1 << 28, 1 << 32)

    def cur_ctx(t: str) -> Any:
        return export()["cx"][2].get(t)

    while True:
        if written >= dispatches:  # past the budget: only finish the calls in progress
            busy = [(t, r) for t, r in threads if where[t].label != "idle"]
            if not busy:
                break
            t, role = rng.choice(busy)
        else:
            x = rng.random()
            if x < tool_share:
                role = "tool"
            elif (flight or exiting) and x < tool_share + (1 - tool_share) * min(0.75, 0.3 + len(flight) / 64):
                role = "complete"
            else:
                role = "dispatch"
            t = next(iter(exiting)) if exiting and role == "complete" else rng.choice(by_role[role])
        tried = [(ca, env) for ca in acts.get((role, where[t].label), ())
                 for env in _lc_bindings(ca, t, role, where[t].label, cur_ctx, ag, cx, rng, mine, flight, exiting,
                                         registered, written, salt, dispatches)]
        rng.shuffle(tried)
        fired = None
        for ca, env in tried:
            for n, v in env.items():
                srt = sorts.get(n)
                if srt is None or v is None:
                    continue
                if isinstance(v, frozenset):
                    named[srt].update(v)
                else:
                    named[srt].add(v)
            got = emit[ca.index](*[env[n] for n in ca.args], t)
            if got is not None:
                fired = (ca, env, got)
                break
        if fired is None:
            stuck += 1
            if stuck > 10_000:
                break  # every thread blocked: the run ends here (a deadlock is a run too)
            continue
        stuck = 0
        ca, env, got = fired
        obs = [f"{k}={_shuffled(render(v), rng)}" for (k, _), v in zip(ca.obs, got)]
        seq += 1
        yield " ".join([str(seq), t, ca.defn.kind, *_static(ca, env, rng), *obs])
        k = env.get("id")
        kind = ca.defn.kind
        if kind == "dispatch_gate":
            mine[t] = (k, env["agent"])
            written += 1
        elif kind == "dispatch_submit":
            del mine[t]
            flight.append(k)
        elif kind == "completion_exit":
            _drop(flight, k)
            exiting[t] = k
        elif kind == "completion_signal":
            del exiting[t]
        elif kind == "context_register":
            registered.add(env["ctx"])
    yield f"{seq + 1} run_end"


@lru_cache(maxsize=None)
def _emitting(model: str, variant: str, scope: str) -> Any:
    """The compiled reading with emitting steps (once per process; each run makes its own state)."""
    from spmcheck.spec.lang.owcompile import Program

    return Program(reading(model, variant, scope).proto, emit=True)


def _drop(xs: list[str], x: str) -> None:
    i = xs.index(x)
    xs[i] = xs[-1]
    xs.pop()


def _shuffled(text: str, rng: random.Random) -> str:
    """A set's elements in a random order (v2: sets in any order)."""
    if "," not in text:
        return text
    parts = text.split(",")
    rng.shuffle(parts)
    return ",".join(parts)


def _lc_bindings(a: Any, t: str, role: str, pc: str, cur_ctx: Any, agents: list[str], contexts: list[str],
                 rng: random.Random, mine: dict[str, tuple[str, str]], flight: list[str], exiting: dict[str, str],
                 registered: set[str], written: int, salt: int, budget: int) -> list[dict[str, Any]]:
    """Parameter choices for one lifecycle step; the definition's selectors then keep the one the
    thread is working on (a tool's context) and its guards decide whether the step may fire."""
    env: dict[str, Any] = {a.defn.thread.name: t, **dict(a.defn.consts)}
    names = [p.name for p in a.defn.params]
    if role == "dispatch":
        if a.defn.kind == "dispatch_gate":
            if written >= budget:
                return []
            return [{**env, "id": f"{(written * 2654435761 + salt) & 0xffffffffff:x}", "agent": rng.choice(agents)}]
        if t not in mine:
            return []
        k, agent = mine[t]
        return [{**env, "id": k, "agent": agent}] if a.defn.kind == "dispatch_write" else [{**env, "id": k}]
    if role == "complete":
        if a.defn.kind == "completion_exit":
            return [{**env, "id": flight[rng.randrange(len(flight))]}] if flight else []
        return [{**env, "id": exiting[t]}] if t in exiting else []
    if pc != "idle":  # a step inside a call works on the thread's context (the selector checks it)
        cur = cur_ctx(t)
        return [{**env, "ctx": cur}] if cur is not None else []
    kind = a.defn.kind
    if kind == "context_register":
        left = [c for c in contexts if c not in registered]
        return [{**env, "ctx": rng.choice(left)}] if left else []
    if kind == "add_callback":
        return [env] if rng.random() < 0.02 else []
    if kind in ("deactivate", "profile_destroy") and rng.random() < 0.7:
        return []
    out = {**env, "ctx": rng.choice(contexts)}
    if "set" in names:
        k = rng.randint(1, max(1, len(agents) // 2))
        out["set"] = None if rng.random() < 0.2 else frozenset(rng.sample(agents, k))
    return [out]
