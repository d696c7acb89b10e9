"""`spmcheck prove`: one verdict per (variant, property), with evidence.

proved    — an inductive invariant (checked by Z3: Init ⊨ Inv, Inv ∧ T ⊨ Inv', Inv ⊨ P) at the
            stated size; covers every depth. Witnesses must be reachable too.
violated  — a counterexample found by BMC, re-executed on the concrete reading at the requested
            size, minimised, and rendered as trace steps.
unknown   — anything else (timeout, solver unknown, no invariant and no counterexample).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

import z3

from .backend import CONCRETE
from .bmc import search, stages_target, violation_target
from .budget import Budget, as_budget
from .certs import CertStore, as_store
from .events import value_text
from .expected import expected
from .induction import Inductive, houdini, implies_property, verify_stored
from .model import Action, Model, apply
from .properties import CORE_FINDINGS, FINDING_VARIANTS, PROPERTIES, Property, Witness, core_property
from .results import CexStep, ProofResult, WitnessResult
from .setup import SetupError, prefix_for
from .vocabulary import Config
from .z3_encoding import Transition

PROOFS_DIR = Path(__file__).resolve().parent / "proofs"
SCHEDULE = (6, 12, 20, 28, 36)


class InternalError(RuntimeError):
    """The two readings disagree on a counterexample: a bug in spmcheck, never a verdict."""


class ReplayMismatch(InternalError):
    """A path the search found does not replay on the concrete reading: the solver's reading of the
    definition and the concrete one disagree at `step` (1-based, of `steps`). The verdict is
    `unknown` with that step named (`mismatch_reason`), never a counterexample and never a crash."""

    def __init__(self, step: int, steps: int, what: str, why: str) -> None:
        super().__init__(f"step {step} of {steps} ('{what}'): {why}")
        self.step, self.steps, self.what, self.why = step, steps, what, why


def mismatch_reason(e: InternalError) -> str:
    """The `unknown` verdict's reason for a path that does not replay."""
    if isinstance(e, ReplayMismatch):
        return (f"search and replay disagree at step {e.step} of {e.steps} ('{e.what}'): {e.why}; "
                "the path is not a counterexample (the two readings of the definition differ)")
    return f"search and replay disagree: {e}"


def ladder(cfg: Config) -> list[Config]:
    """Small instances first: a path found there is replayed at the requested size."""
    out: list[Config] = []
    for c in (Config(1, 1, 1), Config(1, min(cfg.updaters, 2), 0), Config(1, min(cfg.updaters, 2), 1),
              Config(min(cfg.agents, 2), min(cfg.updaters, 2), min(cfg.lookups, 2)), cfg):
        if c.agents <= cfg.agents and c.updaters <= cfg.updaters and c.lookups <= cfg.lookups \
                and c.updaters + c.lookups > 0 and c not in out:
            out.append(c)
    return out


def lift(small: Model, big: Model, s0: dict) -> dict:
    """The small instance's settled start state as a settled state of the big instance."""
    out = big.init_state()
    for k, v in s0.items():
        if k in out:
            out[k] = v
    if big.cfg.lookups:
        last = 0
        for a in range(big.cfg.agents):
            if out[f"ser.ex.{a}"]:
                last = a
        out[f"ag.{big.cfg.lookup_ids()[0]}"] = last
    return out


def _z3val(v: z3.ExprRef) -> int | bool:
    if z3.is_bool(v):
        return z3.is_true(v)
    return v.as_long()


def execute(model: Model, start: dict, acts: Sequence[Action]) -> list[dict] | None:
    states = [start]
    for a in acts:
        if not a.enabled(CONCRETE, states[-1]):
            return None
        states.append(apply(model, CONCRETE, states[-1], a))
    return states


def _violates(model: Model, prop: Property, states: list[dict], acts: Sequence[Action]) -> bool:
    if prop.state is not None:
        return not prop.state(CONCRETE, states[-1], model)
    assert prop.watches is not None and prop.step is not None
    return bool(acts) and prop.watches(acts[-1]) and not prop.step(CONCRETE, states[-2], model, acts[-1])


def _reaches(model: Model, w: Witness, states: list[dict]) -> bool:
    j = 0
    for s in states:
        while j < len(w.stages) and w.stages[j](CONCRETE, s, model):
            j += 1
    return j == len(w.stages)


def minimise(model: Model, start: dict, acts: list[Action], ok: Callable[[list[dict], list[Action]], bool]) -> list[Action]:
    """Drop windows of 1..4 consecutive steps while the path stays executable and still shows the
    target (so a whole irrelevant call, e.g. lock-check-write, goes at once)."""
    changed = True
    while changed:
        changed = False
        for width in (1, 2, 3, 4):
            for i in range(len(acts) - width, -1, -1):
                trial = acts[:i] + acts[i + width:]
                st = execute(model, start, trial)
                if st is not None and ok(st, trial):
                    acts = trial
                    changed = True
                    break
            if changed:
                break
    return acts


BFS_STATES = 80_000  # states per ladder rung before breadth-first search hands over to BMC


def bfs_ladder(model: Model, rungs: Sequence, make: Callable[[object], Model], bfs_target: Callable[[Model], dict],
               ok: Callable[[list[dict], list[Action]], bool], max_states: int = BFS_STATES,
               budget: Budget | None = None) -> tuple[list[Action], str] | None:
    """Breadth-first search from Init on each rung (small instances first): the first path found
    is a shortest one at that size; it is replayed at `model`'s size and must show the target
    there. Each state visited is charged to `budget`. A path that does not replay at `model`'s size
    moves on to the next rung. None: no rung gave a replaying path within `max_states` states (then
    BMC searches; a BFS result is never a verdict by itself)."""
    from .explore import bfs
    from .explore_compile import constant_target

    from .budget import UNITS_PER_STATE

    for small_cfg in rungs:
        cap = max_states if budget is None else min(max_states, budget.left() // UNITS_PER_STATE)
        if cap < 1:
            return None
        small = make(small_cfg)
        target = bfs_target(small)
        if constant_target(small, target.get("bad_state"), target.get("bad_step")) is False:
            # the target compiled at this rung's size is the constant False (P8 quantifies over
            # two distinct contexts: with one context it folds away), so no path here shows it:
            # the rung is skipped before its steps are compiled
            continue
        out = bfs(small, **target, max_states=cap)
        if budget is not None:
            budget.charge(out.states * UNITS_PER_STATE)
        if out.status != "found":
            continue
        try:
            path = concretise(model, small, [a.index for a in out.path], [], ok, shrink=False)
        except InternalError:
            continue  # this rung's path does not replay at `model`'s size: a larger rung may still find one
        return path, f"bfs: shortest at {small_cfg.describe()}, {len(out.path)} steps, {out.states} states"
    return None


def bfs_violation(prop: Property) -> Callable[[Model], dict]:
    """BFS target of a property violation (the negation read both ways by spec.explore)."""
    def make(m: Model) -> dict:
        if prop.state is not None:
            fn = prop.state
            return {"bad_state": lambda b, s: b.Not(fn(b, s, m))}
        assert prop.watches is not None and prop.step is not None
        step = prop.step
        return {"bad_step": (prop.watches, lambda b, s, a: b.Not(step(b, s, m, a)))}
    return make


def bfs_stages(w: Witness) -> Callable[[Model], dict]:
    return lambda m: {"stages": [lambda b, s, f=f: f(b, s, m) for f in w.stages]}


def find_path(model: Model, bad_at_for: Callable[[Model], tuple], ok: Callable[[list[dict], list[Action]], bool],
              timeout: float | Budget, bfs_target: Callable[[Model], dict] | None = None
              ) -> tuple[list[Action], list[Action], str] | None | str:
    """Search the ladder of instances; return (setup, race, note) at `model`'s size, None, or 'unknown'.
    With `bfs_target`, breadth-first search from Init runs first (shortest paths, no setup prefix)."""
    budget = as_budget(timeout)
    saw_unknown = ""
    rungs = ladder(model.cfg)
    if bfs_target is not None:
        got = bfs_ladder(model, rungs, lambda c: Model(c, model.variant), bfs_target, ok, budget=budget)
        if got is not None:
            return [], got[0], got[1]
    for n, small_cfg in enumerate(rungs):
        # each rung gets a fair share of what is left, the last one all of it
        why = budget.exhausted()
        if why:
            return saw_unknown or why
        share = budget if n == len(rungs) - 1 else budget.part(2)
        small = Model(small_cfg, model.variant)
        bad_at, needs_step = bad_at_for(small)
        tr = Transition(small, stutter=True)
        out = search(small, bad_at, needs_step, 0, share, tr, settled_init=True, schedule=SCHEDULE)
        if out.status == "unknown":
            saw_unknown = out.reason or "unknown"
            continue
        if out.status != "found":
            continue
        s0 = {k: _z3val(v) for k, v in (out.init or {}).items()}
        target = lift(small, model, s0)
        try:
            setup = prefix_for(model, target)
        except SetupError as e:
            raise ReplayMismatch(0, len(out.actions), "setup", f"settled start state not reproducible: {e}") from e
        race = concretise(model, small, out.actions, setup, ok)
        note = f"found at {small_cfg.describe()}; {out.reason}".rstrip("; ")
        return setup, race, note
    return saw_unknown or None


def concretise(model: Model, small: Model, indices: Sequence[int], setup: list[Action],
               ok: Callable[[list[dict], list[Action]], bool], shrink: bool = True) -> list[Action]:
    """A BMC path of `small` as actions of `model` after `setup` (matched by thread, kind and static
    arguments, each the one enabled on the concrete reading), checked to show the target, then
    minimised. A path that does not replay is an InternalError, never a verdict."""
    race: list[Action] = []
    start_states = execute(model, model.init_state(), setup)
    if start_states is None:
        raise ReplayMismatch(0, len(indices), "setup", "the setup prefix is not executable on the concrete reading")
    state = start_states[-1]
    for n, i in enumerate(indices, 1):
        if not 0 <= i < len(small.actions):
            raise ReplayMismatch(n, len(indices), f"action #{i}", "no such action in the searched instance")
        sa = small.actions[i]
        key = (sa.thread, sa.kind, tuple((k, str(v)) for k, v in sa.static_args().items()))
        cands = model.actions_by_key.get(key, [])
        match = [c for c in cands if c.enabled(CONCRETE, state)]
        if len(match) > 1 and sa.step.defn is not None:
            # several steps share a thread, kind and static arguments and may be enabled at once
            # (lifecycle queue_sync: a queue busy at some instant of the drain and idle at another
            # may have timed out or not, digest §2.9); the search picked one of the definition's
            # actions, and the event tells them apart by what it observes (drained=1/0)
            match = [c for c in match if c.step.defn is sa.step.defn]
        if len(match) != 1:
            why = ("no action with this thread, kind and arguments at the requested size" if not cands else
                   "not enabled on the concrete reading" if not match else
                   f"{len(match)} concrete actions are enabled (ambiguous)")
            raise ReplayMismatch(n, len(indices), sa.describe(), why)
        race.append(match[0])
        state = apply(model, CONCRETE, state, match[0])
    start = start_states[-1]
    st = execute(model, start, race)
    if st is None or not ok(st, race):
        raise ReplayMismatch(len(indices), len(indices), race[-1].describe() if race else "(empty path)",
                             "the path replays but does not show the target on the concrete reading")
    return minimise(model, start, race, ok) if shrink else race


def render(model: Model, setup: list[Action], race: list[Action]) -> tuple[CexStep, ...]:
    steps: list[CexStep] = []
    s = model.init_state()
    for i, a in enumerate(setup + race):
        obs = a.observed(CONCRETE, s)
        nxt = apply(model, CONCRETE, s, a)
        args = tuple((k, value_text(v)) for k, v in a.static_args().items()) + \
            tuple((k, value_text(v)) for k, v in obs.items())
        changes = tuple((n, value_text(s[n]), value_text(nxt[n])) for n in model.var_names if nxt[n] != s[n])
        steps.append(CexStep(i + 1, a.thread, a.kind, args, changes, setup=i < len(setup)))
        s = nxt
    return tuple(steps)


def inv_file(model: Model) -> Path:
    c = model.cfg
    return PROOFS_DIR / f"{model.variant.name}-a{c.agents}-u{c.updaters}-l{c.lookups}.inv"


def stored_names(path: Path) -> list[str]:
    """Conjunct names of a stored invariant file (comments and blank lines skipped)."""
    return [ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]


def invariant_for(model: Model, trans: Transition, timeout: float | Budget) -> Inductive:
    budget = as_budget(timeout)
    path = inv_file(model)
    if path.exists():
        inv = verify_stored(model, trans, stored_names(path), budget)
        if inv.status == "inductive":
            return inv
    return houdini(model, trans, budget)


_CHECKED: dict[tuple[str, str], tuple[Transition, Inductive]] = {}


def checked_invariant(model: Model, timeout: float | Budget) -> tuple[Transition, Inductive]:
    """(Int transition relation, invariant) for `model`. Within one process a stored invariant
    that Z3 confirmed for the same definition (definition_hash) and the same file text is not
    re-checked (a `cex` after a `prove`, the test suite); each new process checks it again."""
    from .certs import definition_hash

    path = inv_file(model)
    key = (definition_hash(model), path.read_text() if path.exists() else "")
    hit = _CHECKED.get(key) if key[1] else None
    if hit is not None:
        return hit
    trans = Transition(model, ints="int")
    inv = invariant_for(model, trans, timeout)
    if inv.status == "inductive" and key[1]:
        _CHECKED[key] = (trans, inv)
    return trans, inv


def any_size(variant: str, prop: str, cfg: Config) -> str:
    """Whether a fixed-size proof also holds for any size (spec.parametric's recorded verdicts)."""
    from .parametric.prove import any_size_status

    got = any_size_status(variant, prop, model="core")
    return got if got == "any size" else f"{got} (proved at {cfg.describe()})"


def witness(model: Model, w: Witness, timeout: float | Budget, find: Callable[..., object] | None = None,
            depth: int = SCHEDULE[-1], certs: CertStore | None = None) -> WitnessResult:
    """Non-vacuity: is the witness's stage sequence reachable? A stored witness path that replays
    answers at once; else `find` (this module's find_path or the lifecycle's) returns
    (*paths, note), None (not within `depth` steps) or a reason."""
    t0 = time.monotonic()
    ok = lambda st, acts: _reaches(model, w, st)  # noqa: E731
    store = certs or CertStore("fresh")
    cert = store.witness(model, w.name, ok)
    if cert is not None:
        path, note = cert
        return WitnessResult(w.name, w.summary, "reachable", len(path), time.monotonic() - t0,
                             "stored witness path replayed (certificate)" + (f"; {note}" if note else ""))
    try:
        got = (find or find_path)(model, lambda m: (stages_target(m, w.stages), False), ok, timeout,
                                  bfs_stages(w))
    except InternalError as e:
        return WitnessResult(w.name, w.summary, "unknown", 0, time.monotonic() - t0, mismatch_reason(e))
    if isinstance(got, tuple):
        paths = [a for part in got[:-1] for a in part]
        store.put_witness(model, w.name, paths, str(got[-1]))
        return WitnessResult(w.name, w.summary, "reachable", len(paths), time.monotonic() - t0, str(got[-1]))
    if got is None:
        return WitnessResult(w.name, w.summary, "unreachable", 0, time.monotonic() - t0,
                             f"not reached within {depth} steps")
    return WitnessResult(w.name, w.summary, "unknown", 0, time.monotonic() - t0, str(got))


CERT_METHOD = "stored counterexample replayed on the concrete reading (certificate)"


def prove_variant(variant: str, props: Sequence[str], cfg: Config, timeout: float,
                  progress: Callable[[str], None] = lambda s: None,
                  certs: CertStore | str | None = None) -> list[ProofResult]:
    """certs: a CertStore, or "use" (default: replay stored certificates), "fresh" (search
    everything), "update" (search and record; the caller flushes a store it passed in)."""
    store = as_store(certs)
    model = Model(cfg, variant)
    t0 = time.monotonic()
    progress(f"{variant}: checking inductive invariant")
    trans, inv = checked_invariant(model, timeout)
    inv_secs = time.monotonic() - t0
    out: list[ProofResult] = []
    witness_cache: dict[str, WitnessResult] = {}
    for pname in props:
        prop = core_property(pname)
        exp, src = expected(variant, pname)
        t1 = time.monotonic()
        budget = Budget.seconds(timeout)
        progress(f"{variant} / {pname}")
        graph_note = ""
        cycle = None
        if prop.static_lock_graph:
            from .lockgraph import explore_edges

            g = explore_edges(variant)
            if g.cycles:
                cycle = g.cycles[0]
                graph_note = "lock-order cycle " + " -> ".join(cycle + (cycle[0],))
        impl = implies_property(model, trans, inv, prop, budget)
        if impl.status == "proved" and cycle is None:
            ws = []
            for w in prop.witnesses:
                if w.name not in witness_cache:
                    progress(f"{variant}: witness {w.name}")
                    witness_cache[w.name] = witness(model, w, timeout, certs=store)
                ws.append(witness_cache[w.name])
            verdict = "proved"
            reason = ""
            if any(w.verdict != "reachable" for w in ws):
                verdict = "unknown"
                reason = "a non-vacuity witness was not reached: " + ", ".join(
                    f"{w.name} ({w.verdict})" for w in ws if w.verdict != "reachable")
            out.append(ProofResult(variant, pname, verdict, exp,
                                   f"inductive invariant ({len(inv.kept)} conjuncts, Houdini-checked)" +
                                   ("; static lock graph acyclic" if prop.static_lock_graph else ""),
                                   "any depth", any_size(variant, pname, cfg),
                                   inv_secs + time.monotonic() - t1, None, tuple(ws), reason, src))
            continue
        ok = lambda st, acts, prop=prop: _violates(model, prop, st, acts)  # noqa: E731
        cert = store.violation(model, pname, ok)
        if cert is not None:
            setup, race, note = cert
            out.append(ProofResult(variant, pname, "violated", exp, CERT_METHOD,
                                   f"{len(race)} steps after {len(setup)} setup steps", "-",
                                   time.monotonic() - t1, render(model, setup, race), (),
                                   "; ".join(x for x in (note, graph_note) if x), src))
            continue
        try:
            got = find_path(model, lambda m, prop=prop: violation_target(m, prop), ok, budget, bfs_violation(prop))
        except InternalError as e:
            out.append(ProofResult(variant, pname, "unknown", exp, "bmc", "-", "-", time.monotonic() - t1,
                                   None, (), mismatch_reason(e), src))
            continue
        if isinstance(got, tuple):
            setup, race, note = got
            store.put_violation(model, pname, setup, race, note)
            out.append(ProofResult(variant, pname, "violated", exp, _search_method(note),
                                   f"{len(race)} steps after {len(setup)} setup steps", "-",
                                   time.monotonic() - t1, render(model, setup, race), (),
                                   "; ".join(x for x in (note, graph_note) if x), src))
            continue
        if cycle is not None:
            out.append(ProofResult(variant, pname, "violated", exp, "static lock graph", "-", "-",
                                   time.monotonic() - t1, None, (), graph_note + "; no deadlocking path found", src))
            continue
        why = impl.reason if impl.status != "proved" else ""
        bound = f"no counterexample within {SCHEDULE[-1]} steps" if got is None else "-"
        out.append(ProofResult(variant, pname, "unknown", exp, "bmc + induction", bound, "-",
                               time.monotonic() - t1, None, (),
                               "; ".join(x for x in (why, got if isinstance(got, str) else "") if x)
                               or "no inductive invariant found and no counterexample", src))
    if not isinstance(certs, CertStore):
        store.flush()
    return out


def _search_method(note: str) -> str:
    return ("breadth-first search" if note.startswith("bfs") else "bmc (strided deepening)") + " + concrete replay"


def prove_all(variants: Sequence[str], props: Sequence[str], cfg: Config, timeout: float,
              progress: Callable[[str], None] = lambda s: None,
              certs: CertStore | str | None = None) -> list[ProofResult]:
    """Every (variant, property) pair of `props` that are properties, and each finding among
    `props` against FINDING_VARIANTS only; in "update" mode the certificates are written at the end."""
    store = as_store(certs)
    out: list[ProofResult] = []
    for v in variants:
        mine = [p for p in props if p not in CORE_FINDINGS or v in FINDING_VARIANTS]
        out += prove_variant(v, mine, cfg, timeout, progress, store)
    if not isinstance(certs, CertStore):
        store.flush()
    return out


def write_invariants(variants: Sequence[str], cfg: Config, timeout: float) -> list[Path]:
    """Regenerate the stored invariants (spmcheck prove --infer)."""
    PROOFS_DIR.mkdir(exist_ok=True)
    paths = []
    for v in variants:
        model = Model(cfg, v)
        inv = houdini(model, Transition(model, ints="int"), timeout)
        if inv.status != "inductive":
            import sys
            sys.stderr.write(f"spmcheck: {v}: no inductive invariant stored ({inv.status}"
                             f"{': ' + inv.reason if inv.reason else ''}; {inv.seconds:.0f} s)\n")
            continue
        p = inv_file(model)
        p.write_text(f"# Houdini-inferred inductive invariant for {v} at {cfg.describe()}; "
                     f"regenerate with `spmcheck prove --infer`\n" + "\n".join(c.name for c in inv.kept) + "\n")
        paths.append(p)
    return paths


__all__ = ["prove_all", "prove_variant", "write_invariants", "counterexample", "InternalError", "ReplayMismatch"]


def counterexample(variant: str, prop: str, cfg: Config, timeout: float) -> ProofResult | None:
    """The violation half of `prove_variant` alone (BFS, then BMC; concrete replay), for
    definitions with no stored invariant to re-check (the mutants of tests/test_mutation.py):
    a counterexample found is a verdict; not finding one proves nothing."""
    model = Model(cfg, variant)
    p = core_property(prop)
    t0 = time.monotonic()
    ok = lambda st, acts: _violates(model, p, st, acts)  # noqa: E731
    got = find_path(model, lambda m: violation_target(m, p), ok, timeout, bfs_violation(p))
    if not isinstance(got, tuple):
        return None
    setup, race, note = got
    return ProofResult(variant, prop, "violated", "violated", _search_method(note),
                       f"{len(race)} steps after {len(setup)} setup steps", "-", time.monotonic() - t0,
                       render(model, setup, race), (), note, "mutation")
