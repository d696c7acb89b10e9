"""Verdicts for the lifecycle model: the same pipeline as spec.prove (stored inductive invariant
re-checked by Z3, else BMC counterexample replayed concretely and minimised), at LConfig size."""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from ..bmc import search, violation_target
from ..budget import Budget, as_budget
from ..certs import CertStore, as_store
from ..induction import Inductive, houdini, implies_property, verify_stored
from ..model import Action
from ..prove import (CERT_METHOD, InternalError, _search_method, _violates, bfs_ladder, bfs_violation, concretise,
                     mismatch_reason, render, stored_names)
from ..prove import witness as core_witness
from ..properties import Property, Witness
from ..results import ProofResult, WitnessResult
from ..z3_encoding import Transition
from . import invariants as li
from .expected import expected
from .lockgraph import lock_graph
from .model import LifecycleModel
from .properties import LPROPERTIES, meta, scenario
from .vocabulary import LConfig

PROOFS_DIR = Path(__file__).resolve().parent.parent / "proofs"
SCHEDULE = (8, 14, 20, 26)
# the lifecycle's interleavings grow fast (3 dispatches, 2 tools): BFS hands over to BMC sooner
BFS_STATES = 20_000
# a violation's BFS runs on dead-variable representatives (spec.explore_compile.Liveness): the
# largest known-bad ladder rung needs 58 747 of them (set-agents-race / P8 at 2/2/2/1, 0.4 CPU s);
# witness stage chains search unreduced and keep BFS_STATES and the dispatch ladder
VIOLATION_BFS_STATES = 100_000


def ladder(cfg: LConfig) -> list[LConfig]:
    """Fewer dispatches first: a path found there replays unchanged at the requested size."""
    out = [replace(cfg, dispatches=d) for d in (1, 2) if d < cfg.dispatches]
    return out + [cfg]


def bfs_rungs(cfg: LConfig) -> list[LConfig]:
    """The breadth-first ladder: every smaller scope first (agents x contexts x tool threads at one
    dispatch, the smallest product first), then more dispatches at the requested scope. Many bugs
    show at 1 agent / 1 context / 1 tool; with the dead-variable reduction a small rung that holds
    no counterexample is exhausted in a few hundred states, so trying it first is cheap. The path
    is shortest at the rung's size (the note names it) and is replayed at the requested size."""
    small = sorted({(a, c, t) for a in range(1, cfg.agents + 1) for c in range(1, cfg.contexts + 1)
                    for t in range(1, cfg.tools + 1)}, key=lambda x: (x[0] * x[1] * x[2], x[2], x[1], x[0]))
    out = [replace(cfg, agents=a, contexts=c, tools=t, dispatches=1) for a, c, t in small]
    out += [replace(cfg, dispatches=d) for d in range(2, cfg.dispatches + 1)]
    return [c for n, c in enumerate(out) if c not in out[:n]] or [cfg]


def find_path(model: LifecycleModel, target: Callable[[LifecycleModel], tuple], ok: Callable[[list[dict], list[Action]], bool],
              timeout: float | Budget, bfs_target: Callable[[LifecycleModel], dict] | None = None
              ) -> tuple[list[Action], str] | None | str:
    budget = as_budget(timeout)
    saw = ""
    rungs = ladder(model.cfg)  # type: ignore[arg-type]
    if bfs_target is not None:
        stages = "stages" in bfs_target(model)
        got = bfs_ladder(model, rungs if stages else bfs_rungs(model.cfg),  # type: ignore[arg-type]
                         lambda c: LifecycleModel(c, model.variant), bfs_target, ok,
                         BFS_STATES if stages else VIOLATION_BFS_STATES, budget)
        if got is not None:
            return got
    for n, small_cfg in enumerate(rungs):
        why = budget.exhausted()
        if why:
            return saw or why
        share = budget if n == len(rungs) - 1 else budget.part(2)
        small = LifecycleModel(small_cfg, model.variant)
        bad_at, needs_step = target(small)
        out = search(small, bad_at, needs_step, 0, share, Transition(small, stutter=True), schedule=SCHEDULE)
        if out.status == "unknown":
            saw = out.reason or "unknown"
            continue
        if out.status != "found":
            continue
        path = concretise(model, small, out.actions, [], ok)
        return path, (f"found with {small_cfg.dispatches} dispatches; {out.reason}").rstrip("; ")
    return saw or None


def inv_file(model: LifecycleModel) -> Path:
    c: LConfig = model.cfg  # type: ignore[assignment]
    tag = "".join(x for x, on in (("T", c.timeouts), ("D", c.deactivate), ("P", c.destroy)) if on)
    return PROOFS_DIR / f"lc-{model.variant.name}-a{c.agents}-c{c.contexts}-t{c.tools}-k{c.dispatches}{tag}.inv"


def invariant_for(model: LifecycleModel, timeout: float | Budget, trans: Transition | None = None) -> Inductive:
    path = inv_file(model)
    if path.exists():
        trans = trans or Transition(model, ints="int")
        names = stored_names(path)
        lazy = li.by_name(model)
        try:
            pool = [lazy[n] for n in names]
        except (KeyError, ValueError):
            return Inductive("unknown", (), f"stored invariant {path.name} names unknown conjuncts; "
                             "run `spmcheck prove --infer`")
        return verify_stored(model, trans, names, timeout, pool=pool)
    return Inductive("unknown", (), f"no stored invariant {path.name}; run `spmcheck prove --infer`")


_CHECKED: dict[tuple[str, str], tuple[Transition, Inductive]] = {}


def checked_invariant(model: LifecycleModel, timeout: float | Budget) -> tuple[Transition | None, Inductive]:
    """As spec.prove.checked_invariant: one Z3 check per stored invariant and definition per
    process. No stored invariant (the known-bad variants): no relation is built."""
    from ..certs import definition_hash

    path = inv_file(model)
    if not path.exists():
        return None, invariant_for(model, timeout, None)
    key = (definition_hash(model), path.read_text())
    hit = _CHECKED.get(key)
    if hit is not None:
        return hit
    trans = Transition(model, ints="int")
    inv = invariant_for(model, timeout, trans)
    if inv.status == "inductive":
        _CHECKED[key] = (trans, inv)
    return trans, inv


def infer(model: LifecycleModel, timeout: float, steps: int = 40000) -> Inductive:
    samples = li.sample_states(model, steps)
    pool = li.candidates(model, samples)
    inv = houdini(model, Transition(model, ints="int"), timeout, pool=pool, samples=[])
    if inv.status == "inductive":
        PROOFS_DIR.mkdir(exist_ok=True)
        inv_file(model).write_text(
            f"# Houdini-inferred inductive invariant for lifecycle {model.variant.name} at "
            f"{model.cfg.describe()}; regenerate with `spmcheck prove --infer`\n"
            + "\n".join(c.name for c in inv.kept) + "\n")
    return inv


def witness(model: LifecycleModel, w: Witness, timeout: float, certs: CertStore | None = None) -> WitnessResult:
    return core_witness(model, w, timeout, find_path, SCHEDULE[-1], certs)


def prove_variant(variant: str, props: Sequence[str], cfg: LConfig, timeout: float,
                  progress: Callable[[str], None] = lambda s: None,
                  certs: CertStore | str | None = None) -> list[ProofResult]:
    """certs: as spec.prove.prove_variant (a store passed in is flushed by the caller)."""
    store = as_store(certs)
    out: list[ProofResult] = []
    # one model, Int transition relation and invariant check per scenario, shared by its properties
    per_cfg: dict[LConfig, tuple[LifecycleModel, Transition | None, Inductive, float]] = {}
    wcache: dict[tuple[LConfig, str], WitnessResult] = {}
    for pname in props:
        prop: Property = LPROPERTIES[pname]
        pcfg = scenario(cfg, pname)
        exp, src = expected(variant, pname)
        t1 = time.monotonic()
        budget = Budget.seconds(timeout)
        progress(f"lifecycle {variant} / {pname}")
        first = pcfg not in per_cfg
        if first:
            m = LifecycleModel(pcfg, variant)
            tr, inv0 = checked_invariant(m, timeout)
            per_cfg[pcfg] = (m, tr, inv0, time.monotonic() - t1)
        model, itrans, inv, inv_secs = per_cfg[pcfg]
        inv_secs = inv_secs if first else 0.0
        cycle_note = ""
        if prop.static_lock_graph:
            g = lock_graph(model)
            if g.cycles:
                cycle_note = "lock-order cycle " + " -> ".join(g.cycles[0] + (g.cycles[0][0],))
        impl = implies_property(model, itrans, inv, prop, budget)  # type: ignore[arg-type]  # no relation: unknown
        size = "fixed size " + pcfg.describe()
        if impl.status == "proved" and not cycle_note:
            ws = []
            for w in prop.witnesses:
                key = (pcfg, w.name)
                if key not in wcache:
                    wcache[key] = witness(model, w, timeout, store)
                ws.append(wcache[key])
            verdict, reason = "proved", ""
            if any(w.verdict != "reachable" for w in ws):
                verdict = "unknown"
                reason = "a non-vacuity witness was not reached: " + ", ".join(
                    f"{w.name} ({w.verdict})" for w in ws if w.verdict != "reachable")
            out.append(ProofResult(variant, pname, verdict, exp,
                                   f"inductive invariant ({len(inv.kept)} conjuncts, Houdini-checked)"
                                   + ("; static lock graph acyclic" if prop.static_lock_graph else ""),
                                   "any depth", size, inv_secs + time.monotonic() - t1, None, tuple(ws), reason, src))
            continue
        ok = lambda st, acts, prop=prop, model=model: _violates(model, prop, st, acts)  # noqa: E731
        cert = store.violation(model, pname, ok)
        if cert is not None:
            _, path, note = cert
            out.append(ProofResult(variant, pname, "violated", exp, CERT_METHOD, f"{len(path)} steps", size,
                                   time.monotonic() - t1, render(model, [], path), (),
                                   "; ".join(x for x in (note, cycle_note) if x), src))
            continue
        try:
            got = find_path(model, lambda m, prop=prop: violation_target(m, prop), ok, budget, bfs_violation(prop))
        except InternalError as e:
            out.append(ProofResult(variant, pname, "unknown", exp, "bmc", "-", size, time.monotonic() - t1,
                                   None, (), mismatch_reason(e), src))
            continue
        if isinstance(got, tuple):
            path, note = got
            store.put_violation(model, pname, [], path, note)
            out.append(ProofResult(variant, pname, "violated", exp, _search_method(note),
                                   f"{len(path)} steps", size, time.monotonic() - t1, render(model, [], path), (),
                                   "; ".join(x for x in (note, cycle_note) if x), src))
            continue
        if cycle_note:
            out.append(ProofResult(variant, pname, "violated", exp, "static lock graph", "-", size,
                                   time.monotonic() - t1, None, (), cycle_note, src))
            continue
        why = impl.reason if impl.status != "proved" else ""
        bound = f"no counterexample within {SCHEDULE[-1]} steps" if got is None else "-"
        out.append(ProofResult(variant, pname, "unknown", exp, "bmc + induction", bound, size,
                               time.monotonic() - t1, None, (),
                               "; ".join(x for x in (inv.reason, why, got if isinstance(got, str) else "") if x)
                               or "no inductive invariant found and no counterexample", src))
    if not isinstance(certs, CertStore):
        store.flush()
    return out


def is_finding(pname: str) -> bool:
    return meta(pname).finding


def prove_pairs(pairs: Sequence[tuple[str, str]], cfg: LConfig, timeout: float,
                progress: Callable[[str], None] = lambda s: None,
                certs: CertStore | str | None = None) -> list[ProofResult]:
    """Verdicts for (variant, property) pairs, in the given order (variants grouped for caching);
    in "update" mode the certificates are written at the end."""
    store = as_store(certs)
    by_variant: dict[str, list[str]] = {}
    for v, p in pairs:
        by_variant.setdefault(v, []).append(p)
    got: dict[tuple[str, str], ProofResult] = {}
    for v, props in by_variant.items():
        for r in prove_variant(v, props, cfg, timeout, progress, store):
            got[(v, r.property)] = r
    if not isinstance(certs, CertStore):
        store.flush()
    return [got[k] for k in pairs]


def write_invariants(variants: Sequence[str], cfg: LConfig, timeout: float,
                     progress: Callable[[str], None] = lambda s: None) -> list[Path]:
    """Regenerate stored lifecycle invariants for every scenario the default pairs use."""
    from .expected import default_pairs

    out = []
    seen: set[tuple[str, LConfig]] = set()
    for v, p in default_pairs():
        if v not in variants or expected_verdict(v, p) != "proved":
            continue
        key = (v, scenario(cfg, p))
        if key in seen:
            continue
        seen.add(key)
        model = LifecycleModel(key[1], v)
        progress(f"lifecycle {v}: Houdini at {key[1].describe()}")
        inv = infer(model, timeout)
        if inv.status == "inductive":
            out.append(inv_file(model))
    return out


def expected_verdict(v: str, p: str) -> str:
    return expected(v, p)[0]
