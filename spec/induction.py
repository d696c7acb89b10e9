"""Fixed-size unbounded proofs: Houdini over candidate invariants, checked by Z3.

1. Candidates false in Init, or in any state of a few random concrete walks, are dropped (cheap).
2. Houdini: while Inv ∧ T ∧ ¬Inv' is satisfiable, drop the candidates false in the model's
   post-state. What remains is inductive (Z3 says unsat) and holds in Init.
3. A property is proved iff Inv ∧ ¬P is unsat (state property) or Inv ∧ fire(watched) ∧ ¬cond is
   unsat (step property). A solver `unknown` is reported as such, never as a proof.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import z3

from .backend import CONCRETE
from .budget import Budget, as_budget
from .invariants import Candidate, candidates
from .model import Model, apply
from .properties import Property
from .z3_encoding import Z3, Transition, _b


@dataclass(frozen=True)
class Inductive:
    status: str  # "inductive" | "unknown"
    kept: tuple[Candidate, ...]
    reason: str = ""
    seconds: float = 0.0
    rounds: int = 0
    # the kept conjuncts as Z3 terms over `trans.S` of the relation they were checked with, so the
    # implication queries that follow do not rebuild thousands of terms per property
    terms: tuple = field(default=(), compare=False, repr=False)
    trans: object = field(default=None, compare=False, repr=False)


def sample_states(model: Model, walks: int = 40, depth: int = 60, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        s = model.init_state()
        out.append(s)
        for _ in range(depth):
            en = [a for a in model.actions if a.enabled(CONCRETE, s)]
            if not en:
                break
            s = apply(model, CONCRETE, s, rng.choice(en))
            out.append(s)
    return out


def _solver() -> z3.Solver:
    return z3.Solver()


def _concrete(model: Model, m: z3.ModelRef, state: dict) -> dict:
    kinds = {d.name: d.kind for d in model.vars}
    out = {}
    for n, v in state.items():
        val = m.eval(v, model_completion=True)
        out[n] = z3.is_true(val) if kinds[n] == "bool" else val.as_long()
    return out


def houdini(model: Model, trans: Transition, timeout: float | Budget, pool: list[Candidate] | None = None,
            samples: list[dict] | None = None) -> Inductive:
    """`pool`: candidate conjuncts (default: the core model's families); `samples`: reachable
    states used to drop candidates cheaply before any solver call."""
    trans.activate()
    t0 = time.monotonic()
    budget = as_budget(timeout)
    why = budget.exhausted()
    if why:  # before the candidate filtering, which costs seconds of Python
        return Inductive("unknown", (), why)
    init = model.init_state()
    cands = [c for c in (pool if pool is not None else candidates(model)) if c.fn(CONCRETE, init)]
    for st in (samples if samples is not None else sample_states(model)):
        cands = [c for c in cands if c.fn(CONCRETE, st)]
    S, S2 = trans.S, trans.S2
    # One incremental solver for all rounds: each candidate's pre-state conjunct is guarded by an
    # assumption literal, so dropping a candidate is just leaving its literal out, and the clauses
    # Z3 learned about the transition relation survive from round to round.
    s = _solver()
    s.add(trans.formula)
    lit = {c.name: z3.Bool(f"houdini!{i}") for i, c in enumerate(cands)}
    for c in cands:
        s.add(z3.Implies(lit[c.name], _b(c.fn(Z3, S))))
    post = {c.name: _b(c.fn(Z3, S2)) for c in cands}
    rounds = 0
    while True:
        rounds += 1
        s.push()
        s.add(z3.Not(z3.And(*[post[c.name] for c in cands])))
        r, why = budget.check(s, *[lit[c.name] for c in cands])
        if r == z3.unsat:
            return Inductive("inductive", tuple(cands), "", time.monotonic() - t0, rounds)
        if r == z3.unknown:
            return Inductive("unknown", tuple(cands), why, time.monotonic() - t0, rounds)
        nxt = _concrete(model, s.model(), S2)
        s.pop()
        before = len(cands)
        cands = [c for c in cands if c.fn(CONCRETE, nxt)]
        if len(cands) == before:  # the model's post-state must falsify something
            return Inductive("unknown", tuple(cands), "internal: Houdini made no progress",
                             time.monotonic() - t0, rounds)


@dataclass(frozen=True)
class ImplResult:
    status: str  # "proved" | "not-implied" | "unknown"
    reason: str = ""


def implies_property(model: Model, trans: Transition, inv: Inductive, prop: Property,
                     timeout: float | Budget) -> ImplResult:
    if inv.status != "inductive":
        return ImplResult("unknown", inv.reason)
    trans.activate()
    S = trans.S
    s = _solver()
    s.add(*(inv.terms if inv.trans is trans and inv.terms else [_b(c.fn(Z3, S)) for c in inv.kept]))
    if prop.state is not None:
        s.add(z3.Not(_b(prop.state(Z3, S, model))))
    else:
        assert prop.watches is not None and prop.step is not None
        watched = [a for a in model.actions if prop.watches(a)]
        s.add(trans.formula)
        s.add(z3.Or(*[z3.And(trans.c == a.index, z3.Not(_b(prop.step(Z3, S, model, a)))) for a in watched]))
    r, why = as_budget(timeout).check(s)
    if r == z3.unsat:
        return ImplResult("proved")
    if r == z3.unknown:
        return ImplResult("unknown", why)
    return ImplResult("not-implied", "the inductive invariant found does not imply the property")


def verify_stored(model: Model, trans: Transition, names: list[str], timeout: float | Budget,
                  pool: list[Candidate] | None = None) -> Inductive:
    """Check a stored invariant (candidate names): holds in Init and is inductive, in one query.

    If it is not (the model changed), Houdini continues from it, so a stale file only costs time.
    """
    trans.activate()
    t0 = time.monotonic()
    by_name = {c.name: c for c in (pool if pool is not None else candidates(model))}
    missing = [n for n in names if n not in by_name]
    chosen = [by_name[n] for n in names if n in by_name]
    if missing:
        return Inductive("unknown", tuple(chosen), f"stored invariant names {len(missing)} unknown conjuncts")
    init = model.init_state()
    if not all(c.fn(CONCRETE, init) for c in chosen):
        return Inductive("unknown", tuple(chosen), "stored invariant fails in Init")
    s = _solver()
    pre = tuple(_b(c.fn(Z3, trans.S)) for c in chosen)
    s.add(trans.formula)
    s.add(*pre)
    # the post-state copy by one substitution (one C call) instead of rebuilding every conjunct
    post = z3.substitute(z3.And(*pre), *[(trans.S[n], trans.S2[n]) for n in model.var_names])
    s.add(z3.Not(post))
    r, why = as_budget(timeout).check(s)
    if r == z3.unsat:
        return Inductive("inductive", tuple(chosen), "", time.monotonic() - t0, 1, pre, trans)
    return Inductive("unknown", tuple(chosen), "stored invariant is not inductive" if r == z3.sat
                     else why, time.monotonic() - t0, 1)
