"""The symbolic reading: the same action functions evaluated with a Z3 backend.

The transition relation is built once over template state variables (functional encoding: a
choice variable selects one action instance; each next-state variable is an If-chain over the
actions that write it) and instantiated per BMC step with `z3.substitute`.
"""
from __future__ import annotations

import functools
from typing import Iterable

import z3

from .backend import Term
from .model import Model


class Z3Backend:
    # bit-vector width for Python ints that meet in an If; set by make_state for the model at hand
    # (None: ints are mathematical integers, used by the induction queries)
    width: int | None = 8

    def And(self, *xs: Term) -> Term:
        xs2 = [x for x in xs if not (isinstance(x, bool) and x)]
        if any(isinstance(x, bool) and not x for x in xs2):
            return z3.BoolVal(False)
        return z3.And(*[_b(x) for x in xs2]) if xs2 else z3.BoolVal(True)

    def Or(self, *xs: Term) -> Term:
        xs2 = [x for x in xs if not (isinstance(x, bool) and not x)]
        if any(isinstance(x, bool) and x for x in xs2):
            return z3.BoolVal(True)
        return z3.Or(*[_b(x) for x in xs2]) if xs2 else z3.BoolVal(False)

    def Not(self, x: Term) -> Term:
        return z3.Not(_b(x))

    def If(self, c: Term, a: Term, b: Term) -> Term:
        if isinstance(c, bool):
            return a if c else b
        if self.width is not None:
            if isinstance(a, int) and not isinstance(a, bool):
                a = z3.BitVecVal(a, b.size() if isinstance(b, z3.BitVecRef) else self.width)
            if isinstance(b, int) and not isinstance(b, bool):
                b = z3.BitVecVal(b, a.size() if isinstance(a, z3.BitVecRef) else self.width)
        else:
            if isinstance(a, int) and not isinstance(a, bool):
                a = z3.IntVal(a)
            if isinstance(b, int) and not isinstance(b, bool):
                b = z3.IntVal(b)
        return z3.If(c, _v(a), _v(b))

    def Implies(self, a: Term, b: Term) -> Term:
        return z3.Implies(_b(a), _b(b))

    def Sum(self, xs: Iterable[Term]) -> Term:
        w = self.width
        one, zero = (z3.IntVal(1), z3.IntVal(0)) if w is None else (z3.BitVecVal(1, w), z3.BitVecVal(0, w))
        return z3.Sum([z3.If(_b(x), one, zero) if _is_bool(x) else x for x in xs])

    def true(self) -> Term:
        return z3.BoolVal(True)

    def false(self) -> Term:
        return z3.BoolVal(False)


def _is_bool(x: Term) -> bool:
    return isinstance(x, bool) or (isinstance(x, z3.ExprRef) and z3.is_bool(x))


def _b(x: Term) -> z3.BoolRef:
    return z3.BoolVal(x) if isinstance(x, bool) else x


def _v(x: Term) -> Term:
    if isinstance(x, bool):
        return z3.BoolVal(x)
    return x


Z3 = Z3Backend()


# Every int of the fixed-size model is small (program counters, agent ids, refcounts bounded by
# the number of holders), so ints are encoded as bit-vectors wide enough for the largest value the
# protocol can compute (a count is all + per_agent, at most 2 * updaters) with a sign bit to
# spare. That keeps every query in QF_BV, which Z3 bit-blasts to SAT: an order of magnitude faster
# than linear integer arithmetic for this model. `width_for` is checked against the declared
# ranges in tests.
def width_for(model: Model) -> int:
    hi = max([2 * d.hi + 2 for d in model.vars if d.kind == "int"] + [len(model.actions) + 1])
    return max(4, hi.bit_length() + 1)


def make_state(model: Model, tag: str, ints: str = "bv") -> dict[str, z3.ExprRef]:
    """State constants for one time step. ints="bv" for BMC from reachable states (values stay
    small, so bit-vectors are exact); ints="int" for induction, whose pre-state is arbitrary and
    where a wrapping bit-vector would not mean what the concrete reading means."""
    w = width_for(model) if ints == "bv" else None
    Z3.width = w
    out: dict[str, z3.ExprRef] = {}
    for d in model.vars:
        name = f"{d.name}@{tag}"
        out[d.name] = z3.Bool(name) if d.kind == "bool" else (z3.BitVec(name, w) if w else z3.Int(name))
    return out


def as_term(x: Term, kind: str, width: int | None = 8) -> z3.ExprRef:
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, int):
        if kind != "int":
            return z3.BoolVal(bool(x))
        return z3.BitVecVal(x, width) if width else z3.IntVal(x)
    return x


def init_constraint(model: Model, s: dict[str, z3.ExprRef]) -> z3.BoolRef:
    init = model.init_state()
    kinds = {d.name: d.kind for d in model.vars}
    w = width_for(model)
    return z3.And(*[s[n] == as_term(v, kinds[n], w) for n, v in init.items()])


class Transition:
    """T(S, S', c) built once; `instantiate` substitutes concrete step variables."""

    def __init__(self, model: Model, stutter: bool = False, ints: str = "bv") -> None:
        # stutter: choice == len(actions) is a no-op step, so a depth-k query covers every path
        # of length <= k (used for single-shot deep queries; iterative deepening does not need it)
        self.model = model
        self.stutter = stutter
        self.ints = ints
        self.S = make_state(model, "pre", ints)
        self.S2 = make_state(model, "post", ints)
        self.width = w = width_for(model) if ints == "bv" else None
        self.c = z3.BitVec("choice@pre", width_for(model)) if w else z3.Int("choice@pre")
        self.activate()

    # The guards and the relation are built on first use: a stored invariant is re-checked one
    # action at a time from the guards and effects (spec.induction.verify_stored), and a run that
    # only re-checks certificates never needs the relation's If-chains (~0.2 s per model).
    @functools.cached_property
    def enabled(self) -> list:
        saved = Z3.width
        self.activate()
        out = [a.enabled(Z3, self.S) for a in self.model.actions]
        Z3.width = saved
        return out

    @functools.cached_property
    def formula(self) -> z3.BoolRef:
        saved = Z3.width
        self.activate()
        model, w = self.model, self.width
        kinds = {d.name: d.kind for d in model.vars}
        acts = model.actions
        effects = [a.effect(Z3, self.S) for a in acts]
        n = len(acts) + (1 if self.stutter else 0)
        parts = [z3.ULT(self.c, n)] if w else [self.c >= 0, self.c < n]
        parts += [z3.Implies(self.c == i, _b(g)) for i, g in enumerate(self.enabled)]
        for name in model.var_names:
            expr = self.S[name]
            for i in reversed(range(len(acts))):
                if name in effects[i]:
                    expr = z3.If(self.c == i, as_term(effects[i][name], kinds[name], w), expr)
            parts.append(self.S2[name] == expr)
        out = z3.And(*parts)
        Z3.width = saved  # building it late must not switch the backend under another relation's user
        return out

    def activate(self) -> None:
        """Z3 is one shared backend; point its int sort at this relation's (bit-vector or Int)."""
        Z3.width = self.width

    def instantiate(self, s: dict[str, z3.ExprRef], s2: dict[str, z3.ExprRef], c: z3.ExprRef) -> z3.BoolRef:
        pairs = [(self.S[n], s[n]) for n in self.model.var_names]
        pairs += [(self.S2[n], s2[n]) for n in self.model.var_names]
        pairs.append((self.c, c))
        return z3.substitute(self.formula, *pairs)

    def on(self, formula: z3.ExprRef, s: dict[str, z3.ExprRef]) -> z3.ExprRef:
        """Move a formula over the template pre-state onto `s`."""
        return z3.substitute(formula, *[(self.S[n], s[n]) for n in self.model.var_names])
