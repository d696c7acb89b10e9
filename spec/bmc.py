"""Bounded model checking with iterative deepening: the shortest path from Init to a target.

Used for counterexamples (target = a property violation) and for non-vacuity witnesses (target =
a scenario). One incremental solver per query gives the shortest path; `unsat` at depth k only
says "not within k steps" — never reported as a proof.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import z3

from .budget import Budget, as_budget
from .model import Model
from .properties import Property, StateFn
from .z3_encoding import Z3, Transition, _b, init_constraint, make_state


@dataclass(frozen=True)
class BmcOutcome:
    status: str  # "found" | "none" | "unknown"
    depth: int  # steps in the path found, or the bound explored
    actions: tuple[int, ...] = ()
    reason: str = ""
    init: dict | None = None  # z3 values of the start state when it is not Init


class Unroller:
    def __init__(self, model: Model, trans: Transition | None = None) -> None:
        self.model = model
        self.trans = trans or Transition(model)
        self.states = [make_state(model, "0")]
        self.choices: list[z3.ExprRef] = []
        self.allowed: list[int] | None = None

    def state(self, k: int) -> dict[str, z3.ExprRef]:
        while len(self.states) <= k:
            self.states.append(make_state(self.model, str(len(self.states))))
        return self.states[k]

    def step(self, k: int) -> z3.BoolRef:
        while len(self.choices) <= k:
            self.choices.append(z3.BitVec(f"choice@{len(self.choices)}", self.trans.width))
        t = self.trans.instantiate(self.state(k), self.state(k + 1), self.choices[k])
        if self.allowed is not None:
            c = self.choices[k]
            ok = [c == i for i in self.allowed]
            if self.trans.stutter:
                ok.append(c == len(self.model.actions))
            t = z3.And(t, z3.Or(*ok))
        return t


def search(
    model: Model,
    bad_at: Callable[[Unroller, int], z3.BoolRef],
    needs_step: bool,
    max_depth: int,
    timeout: float | Budget,
    trans: Transition | None = None,
    settled_init: bool = False,
    schedule: Sequence[int] | None = None,
    threads: Sequence[str] | None = None,
) -> BmcOutcome:
    """Find the least k such that Init ∧ T^k ∧ bad_at(k) is satisfiable.

    `needs_step`: the target refers to the choice at step k (a step property), so T_k is asserted
    before checking and the path found has k+1 actions.
    """
    budget = as_budget(timeout)
    u = Unroller(model, trans)
    u.trans.activate()
    solver = z3.SolverFor("QF_FD")
    if settled_init:
        from .properties import settled

        start = _b(settled(Z3, u.state(0), model))
    else:
        start = init_constraint(model, u.state(0))
    solver.add(start)
    if threads is not None:
        # only these threads are scheduled; the others stay idle, which is a legal behaviour, so
        # any path found is a path of the full model
        u.allowed = [a.index for a in model.actions if a.thread in threads]
    if schedule is not None:
        return _scheduled(model, u, [start], bad_at, needs_step, schedule, budget)
    for k in range(max_depth + 1):
        if needs_step:
            solver.add(u.step(k))
        solver.push()
        solver.add(bad_at(u, k))
        r, why = budget.check(solver)
        if r == z3.sat:
            m = solver.model()
            n = k + 1 if needs_step else k
            acts = tuple(m.eval(u.choices[i], model_completion=True).as_long() for i in range(n))
            return BmcOutcome("found", n, acts)
        solver.pop()
        if r == z3.unknown:
            return BmcOutcome("unknown", k, reason=why or "unknown")
        if not needs_step and k < max_depth:
            solver.add(u.step(k))
    return BmcOutcome("none", max_depth)


def violation_target(model: Model, prop: Property) -> tuple[Callable[[Unroller, int], z3.BoolRef], bool]:
    if prop.state is not None:
        fn = prop.state
        return (lambda u, k: z3.Not(_b(fn(Z3, u.state(k), model)))), False
    assert prop.watches is not None and prop.step is not None
    watched = [a for a in model.actions if prop.watches(a)]
    step_fn = prop.step

    def bad(u: Unroller, k: int) -> z3.BoolRef:
        s = u.state(k)
        c = u.choices[k]
        return z3.Or(*[z3.And(c == a.index, z3.Not(_b(step_fn(Z3, s, model, a)))) for a in watched]) \
            if watched else z3.BoolVal(False)

    return bad, True


def stages_target(model: Model, stages: Sequence[StateFn]) -> Callable[[Unroller, int], z3.BoolRef]:
    """Stage j holds at some step i_j with i_1 <= i_2 <= ... <= i_m = k (monotone 'reached' chain)."""
    memo: dict[tuple[int, int], z3.BoolRef] = {}

    def reached(u: Unroller, j: int, i: int) -> z3.BoolRef:
        if j == 0:
            return z3.BoolVal(True)
        if i < 0:
            return z3.BoolVal(False)
        key = (j, i)
        if key not in memo:
            here = z3.And(reached(u, j - 1, i), _b(stages[j - 1](Z3, u.state(i), model)))
            memo[key] = z3.Or(reached(u, j, i - 1), here)
        return memo[key]

    def at(u: Unroller, k: int) -> z3.BoolRef:
        m = len(stages)
        return z3.And(reached(u, m - 1, k), _b(stages[m - 1](Z3, u.state(k), model)))

    return at



def _scheduled(model: Model, u: Unroller, base: list[z3.BoolRef], bad_at: Callable[[Unroller, int], z3.BoolRef],
               needs_step: bool, schedule: Sequence[int], budget: Budget) -> BmcOutcome:
    """Deepening in strides over a stuttering transition relation: depth k covers all paths <= k.

    Unsat queries grow steeply with depth on this model while sat ones stay cheap, so strides
    reach deep counterexamples within budget; the result is then minimised on the concrete
    reading. Requires `u.trans.stutter`.
    """
    assert u.trans.stutter, "strided deepening needs a stuttering transition relation"
    n_act = len(model.actions)
    last_unsat = -1
    for k in schedule:
        # a fresh bit-blasting solver per depth: non-incremental SAT is several times faster here
        # than one incremental solver (perf-notes §6: incremental mode is slower for unsat)
        solver = z3.Then("simplify", "bit-blast", "sat").solver()
        solver.add(*base)
        for i in range(k + (1 if needs_step else 0)):
            solver.add(u.step(i))
        solver.add(bad_at(u, k))
        r, why = budget.check(solver)
        if r == z3.sat:
            m = solver.model()
            n = k + 1 if needs_step else k
            raw = [m.eval(u.choices[i], model_completion=True).as_long() for i in range(n)]
            init = {name: m.eval(var, model_completion=True) for name, var in u.state(0).items()}
            acts = tuple(i for i in raw if i < n_act)
            return BmcOutcome("found", len(acts), acts, reason=f"no counterexample within {last_unsat} steps"
                              if last_unsat >= 0 else "", init=init)
        if r == z3.unknown:
            return BmcOutcome("unknown", last_unsat, reason=why or "unknown")
        last_unsat = k
    return BmcOutcome("none", last_unsat)
