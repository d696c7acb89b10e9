"""Evaluate Z3 terms at one concrete state, for the agreement tests (concrete vs symbolic reading).

`z3.substitute(t, *pairs)` re-validates every pair (is it an expression, do the sorts match) on
every call: with a state of ~200 variables that validation was ~90 % of the agreement tests' time.
A `State` validates its pairs once and then substitutes through the same C call
(`Z3_substitute`) z3.substitute makes, followed by the same `z3.simplify`.
"""
from __future__ import annotations

from typing import Sequence

import z3


class State:
    """A substitution of concrete values for state symbols, checked once, applied many times."""

    def __init__(self, pairs: Sequence[tuple[z3.ExprRef, z3.ExprRef]]) -> None:
        for a, b in pairs:  # the checks z3.substitute makes, once
            assert z3.is_expr(a) and z3.is_expr(b), (a, b)
            assert a.sort().eq(b.sort()), (a, a.sort(), b.sort())
        self._keep = list(pairs)  # the arrays hold raw pointers: keep the expressions alive
        n = len(pairs)
        self._n = n
        self._from = (z3.Ast * n)()
        self._to = (z3.Ast * n)()
        for i, (a, b) in enumerate(pairs):
            self._from[i] = a.as_ast()
            self._to[i] = b.as_ast()

    def simplified(self, t: z3.ExprRef) -> z3.ExprRef:
        """simplify(substitute(t, *pairs))."""
        assert z3.is_expr(t), t
        sub = z3.Z3_substitute(t.ctx.ref(), t.as_ast(), self._n, self._from, self._to)
        return z3.simplify(z3.z3._to_expr_ref(sub, t.ctx))

    def value(self, term: object) -> object:
        """The term's value at this state: a Python bool or int (plain values pass through)."""
        if isinstance(term, (bool, int)):
            return term
        v = self.simplified(term)  # type: ignore[arg-type]
        return z3.is_true(v) if z3.is_bool(v) else v.as_long()
