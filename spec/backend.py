"""The two readings of the protocol share this interface.

Actions, guards, properties and invariants are written once against a `Backend`: with `CONCRETE`
they evaluate on Python bools and ints (trace replay, recorder, explicit exploration); with the Z3
backend in `spec.z3_encoding` the very same functions build Z3 terms (the prover). Python's `==`,
`!=`, `+`, `-`, `<`, `>` work for both because z3py overloads them; only the boolean connectives
and `If` differ, so they go through the backend. This module must not import z3.
"""
from __future__ import annotations

from typing import Any, Iterable, Protocol

Term = Any  # a Python bool/int for the concrete reading, a z3.ExprRef for the symbolic one


class Backend(Protocol):
    def And(self, *xs: Term) -> Term: ...
    def Or(self, *xs: Term) -> Term: ...
    def Not(self, x: Term) -> Term: ...
    def If(self, c: Term, a: Term, b: Term) -> Term: ...
    def Implies(self, a: Term, b: Term) -> Term: ...
    def Sum(self, xs: Iterable[Term]) -> Term: ...
    def true(self) -> Term: ...
    def false(self) -> Term: ...


class ConcreteBackend:
    """Plain Python semantics. `If` evaluates both branches, which is fine: terms are pure."""

    def And(self, *xs: Term) -> Term:
        for x in xs:
            if not x:
                return False
        return True

    def Or(self, *xs: Term) -> Term:
        for x in xs:
            if x:
                return True
        return False

    def Not(self, x: Term) -> Term:
        return not x

    def If(self, c: Term, a: Term, b: Term) -> Term:
        return a if c else b

    def Implies(self, a: Term, b: Term) -> Term:
        return (not a) or bool(b)

    def Sum(self, xs: Iterable[Term]) -> Term:
        return sum(int(x) for x in xs)

    def true(self) -> Term:
        return True

    def false(self) -> Term:
        return False


CONCRETE = ConcreteBackend()
