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
import weakref
from dataclasses import dataclass, field

import z3

from .backend import CONCRETE
from .budget import Budget, as_budget
from .invariants import Candidate, candidates
from .model import Model, ReadRecorder, apply
from . import smtterm
from .properties import Property
from .z3_encoding import Z3, Transition, _b, as_term


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
    # the solver that confirmed it, holding the kept conjuncts (implication queries push/pop on it)
    solver: object = field(default=None, compare=False, repr=False)


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
    """Inv ⊨ P (state property), or Inv ∧ guard(a) ⊨ step(a) for every watched action a (step
    property: the condition reads the pre-state only, so the transition relation's post-state
    adds nothing). An invariant verify_stored confirmed brings its solver, which already holds
    the invariant: each query is a push/pop on it instead of re-asserting thousands of terms."""
    if inv.status != "inductive":
        return ImplResult("unknown", inv.reason)
    trans.activate()
    S = trans.S
    budget = as_budget(timeout)
    s = inv.solver if inv.trans is trans and inv.solver is not None else None
    if s is None:
        s = _solver()
        s.add(*(inv.terms if inv.trans is trans and inv.terms else [_b(c.fn(Z3, S)) for c in inv.kept]))
    rd = reader(trans)
    if prop.state is not None:
        st = prop.state
        (h,) = rd.build([lambda b, s_: b.Not(st(b, s_, model))])
        queries = [[rd.expr(h)]]
    else:
        assert prop.watches is not None and prop.step is not None
        step = prop.step
        watched = [a for a in model.actions if prop.watches(a)]
        guards = rd.guards(model)
        conds = rd.build([lambda b, s_, a=a: b.Not(step(b, s_, model, a)) for a in watched])
        queries = [[rd.expr(guards[a.index]), rd.expr(h)] for a, h in zip(watched, conds)]
    for q in queries:
        s.push()
        s.add(*q)
        r, why = budget.check(s)
        s.pop()
        if r == z3.unknown:
            return ImplResult("unknown", why)
        if r == z3.sat:
            return ImplResult("not-implied", "the inductive invariant found does not imply the property")
    return ImplResult("proved")


def conj(handles: list, ctx: z3.Context | None = None) -> z3.BoolRef:
    """And of many terms (given as C handles, `Reader.build`) in one C call: z3.And re-checks
    the sort of every argument in Python, which for thousands of conjuncts costs more than the
    solver does."""
    ctx = ctx or z3.main_ctx()
    if not handles:
        return z3.BoolVal(True, ctx)
    arr = (z3.Ast * len(handles))(*handles)
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(handles), arr), ctx)


ALL = "*"  # in a conjunct's reads: every variable (built without the record)
TEXT_TERMS = True  # False: build every term through z3py (the reference; bench/tests compare)


class Reader:
    """Z3 terms over one relation's pre-state `trans.S`, built from backend functions `(b, s)`.

    With Int state (the induction queries) a batch of functions is read as SMT-LIB text
    (spec.smtterm) and parsed in one call, ~10x cheaper than z3py for thousands of conjuncts;
    a function the text reading cannot write is built through z3py. Terms are returned as C
    handles kept alive by this reader (wrapping each in a z3py object costs as much again)."""

    def __init__(self, trans: Transition) -> None:
        self.trans = trans
        self.S = trans.S
        self.ctx = z3.main_ctx()
        self._keep: list = []
        self._guards: list | None = None
        self.tstate: dict | None = None
        self.decls: dict = {}
        if trans.width is None and TEXT_TERMS:
            try:
                self.tstate, self.decls = smtterm.state(trans.S)
            except smtterm.Unsupported:
                self.tstate = None

    def build(self, fns: list, reads: list | None = None) -> list:
        """Handles of fn(b, state) for each fn; `reads`: a list to extend with the state
        variables each one read."""
        text: list[str | None] = []
        seen: list[set[str]] = []
        for fn in fns:
            got: str | None = None
            rec = ReadRecorder(self.tstate) if self.tstate is not None else None
            if rec is not None:
                try:
                    got = smtterm.lit(fn(smtterm.SMT, rec), "B")[0]
                except (smtterm.Unsupported, AttributeError, TypeError):
                    got = None  # not writable as text, or wanted more than look-ups
            text.append(got)
            seen.append(set(rec.seen) if rec is not None and got is not None else set())
        out: list = []
        vec = smtterm.parse_vector([t for t in text if t is not None], self.decls)
        if vec is not None:
            self._keep.append(vec)
        j = 0
        ref = self.ctx.ref()
        for fn, t, sn in zip(fns, text, seen):
            if t is not None:
                out.append(z3.Z3_ast_vector_get(ref, vec.vector, j))  # type: ignore[union-attr]
                j += 1
                continue
            self.trans.activate()
            term = _b(fn(Z3, self.S))
            sn.clear()
            sn.add(ALL)  # built on the plain map: what it read is not known
            self._keep.append(term)
            out.append(term.as_ast())
        if reads is not None:
            reads.extend(frozenset(sn) for sn in seen)
        return out

    def expr(self, h: object) -> z3.BoolRef:
        return z3.BoolRef(h, self.ctx)

    def guards(self, model: Model) -> list:
        """Each action's guard (by action index), built once per relation."""
        if self._guards is None:
            self._guards = self.build([lambda b, s, a=a: a.enabled(b, s) for a in model.actions])
        return self._guards


_READERS: "weakref.WeakKeyDictionary[Transition, Reader]" = weakref.WeakKeyDictionary()


def reader(trans: Transition) -> Reader:
    got = _READERS.get(trans)
    if got is None:
        got = _READERS[trans] = Reader(trans)
    return got


def verify_stored(model: Model, trans: Transition, names: list[str], timeout: float | Budget,
                  pool: list[Candidate] | None = None) -> Inductive:
    """Check a stored invariant (candidate names): holds in Init and is inductive.

    Inductive is checked one action at a time: Inv ∧ guard(a) ⊨ Inv[effect(a)], where only the
    conjuncts that read a variable `a` writes are re-checked (the others are the same term after
    the substitution, which is confirmed, not assumed). One solver holds Inv; each action is a
    push/pop on it; the solver is kept for the implication queries (implies_property). The
    relation T is the disjunction of exactly these steps, so this is the query Inv ∧ T ⊨ Inv'
    split by its choice variable: each part is small and most of Inv drops out of it.
    If the file is not inductive (the model changed), the caller searches again.
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
    S = trans.S
    rd = reader(trans)
    reads: list[frozenset[str]] = []
    pre = rd.build([c.fn for c in chosen], reads)
    kinds = {d.name: d.kind for d in model.vars}
    whole = conj(pre)
    # Init ⊨ Inv once more on the terms themselves (they may come from the text reading)
    at_init = z3.substitute(whole, *[(S[n], as_term(v, kinds[n], trans.width)) for n, v in init.items()])
    if not z3.is_true(z3.simplify(at_init)):
        return Inductive("unknown", tuple(chosen), "stored invariant fails in Init (symbolic reading)")
    budget = as_budget(timeout)
    guards = rd.guards(model)
    s = _solver()
    s.add(whole)
    readers: dict[str, list[int]] = {}  # variable -> the conjuncts that read it
    always = []  # conjuncts whose reads are unknown: re-checked after every action
    for i, r in enumerate(reads):
        if ALL in r:
            always.append(i)
        for n in r:
            readers.setdefault(n, []).append(i)
    for a in model.actions:
        trans.activate()
        eff = a.effect(Z3, S)
        touched = [n for n, v in eff.items() if not (isinstance(v, z3.ExprRef) and v.eq(S[n]))]
        hit = sorted(set(always).union(*[readers.get(n, ()) for n in touched]))
        if not hit:
            continue
        sub = [(S[n], as_term(eff[n], kinds[n], trans.width)) for n in touched]
        post = z3.substitute(conj([pre[i] for i in hit]), *sub)
        s.push()
        s.add(rd.expr(guards[a.index]), z3.Not(post))
        r, why = budget.check(s)
        s.pop()
        if r == z3.sat:
            return Inductive("unknown", tuple(chosen), f"stored invariant is not inductive ({a.describe()})",
                             time.monotonic() - t0, 1)
        if r == z3.unknown:
            return Inductive("unknown", tuple(chosen), why, time.monotonic() - t0, 1)
    return Inductive("inductive", tuple(chosen), "", time.monotonic() - t0, 1, (), trans, s)
