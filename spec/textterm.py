"""A third reading of the protocol: terms as expression text (Promela syntax).

The same guards, updates and properties evaluated on `P` terms give their text: Python's
comparison and arithmetic operators build `(a == b)`, `(a + b)`; the backend's connectives build
`(a && b)`, `(!a)`, `(c -> a : b)` (Promela's conditional expression). Used for the definition
hash of certificates (spec.certs: ~50x cheaper than building Z3 terms, and as canonical) and by
the Spin peer model generator (bench/peers/gen_promela.py). Constants fold exactly as in the Z3
backend, and a term refuses `bool()`, so a definition that branched on state in Python fails here
as it would with Z3.
"""
from __future__ import annotations

from typing import Iterable


def lit(x: object) -> str:
    if isinstance(x, P):
        return x.text
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    raise TypeError(f"cannot print {x!r} as an expression")


class P:
    """An expression as text; Python operators build bigger ones."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _lit(self, x: object) -> str:
        """How an operand prints (a subclass for another syntax overrides it)."""
        return lit(x)

    def _bin(self, op: str, other: object, rev: bool = False) -> "P":
        a, b = (self._lit(other), self.text) if rev else (self.text, self._lit(other))
        return type(self)(f"({a} {op} {b})")

    def __eq__(self, o: object) -> "P":  # type: ignore[override]
        return self._bin("==", o)

    def __ne__(self, o: object) -> "P":  # type: ignore[override]
        return self._bin("!=", o)

    def __lt__(self, o: object) -> "P":
        return self._bin("<", o)

    def __le__(self, o: object) -> "P":
        return self._bin("<=", o)

    def __gt__(self, o: object) -> "P":
        return self._bin(">", o)

    def __ge__(self, o: object) -> "P":
        return self._bin(">=", o)

    def __add__(self, o: object) -> "P":
        return self._bin("+", o)

    def __radd__(self, o: object) -> "P":
        return self._bin("+", o, rev=True)

    def __sub__(self, o: object) -> "P":
        return self._bin("-", o)

    def __rsub__(self, o: object) -> "P":
        return self._bin("-", o, rev=True)

    def __mul__(self, o: object) -> "P":
        return self._bin("*", o)

    def __rmul__(self, o: object) -> "P":
        return self._bin("*", o, rev=True)

    def __neg__(self) -> "P":
        return type(self)(f"(-{self.text})")

    def __hash__(self) -> int:
        return hash(self.text)

    def __bool__(self) -> bool:
        raise TypeError("a text term has no Python truth value (the definition branched on state)")


class TextBackend:
    """spec.backend.Backend over expression text (constants folded like the Z3 backend)."""

    def And(self, *xs: object) -> object:
        xs2 = [x for x in xs if x is not True]
        if any(x is False for x in xs2):
            return False
        return P("(" + " && ".join(lit(x) for x in xs2) + ")") if xs2 else True

    def Or(self, *xs: object) -> object:
        xs2 = [x for x in xs if x is not False]
        if any(x is True for x in xs2):
            return True
        return P("(" + " || ".join(lit(x) for x in xs2) + ")") if xs2 else False

    def Not(self, x: object) -> object:
        return (not x) if isinstance(x, bool) else P(f"(!{lit(x)})")

    def If(self, c: object, a: object, b: object) -> object:
        if isinstance(c, bool):
            return a if c else b
        return P(f"({lit(c)} -> {lit(a)} : {lit(b)})")

    def Implies(self, a: object, b: object) -> object:
        return self.Or(self.Not(a), b)

    def Sum(self, xs: Iterable[object]) -> object:
        parts = [lit(self.If(x, 1, 0)) if isinstance(x, bool) else lit(x) for x in xs]
        return P("(" + " + ".join(parts) + ")") if parts else 0

    def true(self) -> object:
        return True

    def false(self) -> object:
        return False


TEXT = TextBackend()
