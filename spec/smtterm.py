"""A reading of the protocol as SMT-LIB text, parsed by Z3 in one call.

Building a stored invariant's thousands of conjuncts through z3py costs ~60 µs per operator
(each call re-checks sorts in Python): more CPU than the solver spends proving the invariant.
The same conjunct functions evaluated on `T` terms give SMT-LIB text instead (a few µs per
operator), and `parse` turns the text of all of them into Z3 terms over the caller's constants
in one C call. Nothing here is trusted: spec.induction checks the parsed terms themselves (Init,
each action, the implications), so a term that read differently would fail a check, never pass one.
Mixed sorts the text cannot express (an Int compared with a Bool) raise `Unsupported`; the caller
then builds those conjuncts through z3py.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import z3


class Unsupported(TypeError):
    """A term this reading cannot write as SMT-LIB (the caller falls back to z3py)."""


def _int(n: int) -> str:
    return str(n) if n >= 0 else f"(- {-n})"


def lit(x: object, want: str | None = None) -> tuple[str, str]:
    """(text, sort) of a term or Python constant; sort 'B' or 'I'."""
    if isinstance(x, T):
        return x.text, x.sort
    if isinstance(x, bool):
        if want == "I":
            raise Unsupported("a Python bool where an Int is expected")
        return ("true" if x else "false"), "B"
    if isinstance(x, int):
        if want == "B":
            raise Unsupported("a Python int where a Bool is expected")
        return _int(x), "I"
    raise Unsupported(f"cannot write {x!r} as SMT-LIB")


def _same(a: object, b: object) -> tuple[str, str, str]:
    sa = a.sort if isinstance(a, T) else None
    sb = b.sort if isinstance(b, T) else None
    want = sa or sb
    ta, ka = lit(a, want)
    tb, kb = lit(b, want)
    if ka != kb:
        raise Unsupported("operands of different sorts")
    return ta, tb, ka


class T:
    """An SMT-LIB expression with its sort; Python operators build bigger ones (as in z3py)."""

    __slots__ = ("text", "sort")

    def __init__(self, text: str, sort: str) -> None:
        self.text = text
        self.sort = sort

    def _cmp(self, op: str, o: object, rev: bool = False) -> "T":
        a, b, k = _same(o, self) if rev else _same(self, o)
        if k != "I":
            raise Unsupported(f"{op} on Bool")
        return T(f"({op} {a} {b})", "B")

    def _arith(self, op: str, o: object, rev: bool = False) -> "T":
        a, b, k = _same(o, self) if rev else _same(self, o)
        if k != "I":
            raise Unsupported(f"{op} on Bool")
        return T(f"({op} {a} {b})", "I")

    def __eq__(self, o: object) -> "T":  # type: ignore[override]
        a, b, _ = _same(self, o)
        return T(f"(= {a} {b})", "B")

    def __ne__(self, o: object) -> "T":  # type: ignore[override]
        a, b, _ = _same(self, o)
        return T(f"(not (= {a} {b}))", "B")

    def __lt__(self, o: object) -> "T":
        return self._cmp("<", o)

    def __le__(self, o: object) -> "T":
        return self._cmp("<=", o)

    def __gt__(self, o: object) -> "T":
        return self._cmp(">", o)

    def __ge__(self, o: object) -> "T":
        return self._cmp(">=", o)

    def __add__(self, o: object) -> "T":
        return self._arith("+", o)

    def __radd__(self, o: object) -> "T":
        return self._arith("+", o, rev=True)

    def __sub__(self, o: object) -> "T":
        return self._arith("-", o)

    def __rsub__(self, o: object) -> "T":
        return self._arith("-", o, rev=True)

    def __mul__(self, o: object) -> "T":
        return self._arith("*", o)

    def __rmul__(self, o: object) -> "T":
        return self._arith("*", o, rev=True)

    def __neg__(self) -> "T":
        if self.sort != "I":
            raise Unsupported("- on Bool")
        return T(f"(- {self.text})", "I")

    def __hash__(self) -> int:
        return hash(self.text)

    def __bool__(self) -> bool:
        raise Unsupported("a text term has no Python truth value (the definition branched on state)")


def _bool(x: object) -> str:
    return lit(x, "B")[0]


class SmtBackend:
    """spec.backend.Backend over SMT-LIB text, folding Python constants as the Z3 backend does."""

    def And(self, *xs: object) -> object:
        xs2 = [x for x in xs if x is not True]
        if any(x is False for x in xs2):
            return False
        if not xs2:
            return True
        return T("(and " + " ".join(_bool(x) for x in xs2) + ")", "B") if len(xs2) > 1 else T(_bool(xs2[0]), "B")

    def Or(self, *xs: object) -> object:
        xs2 = [x for x in xs if x is not False]
        if any(x is True for x in xs2):
            return True
        if not xs2:
            return False
        return T("(or " + " ".join(_bool(x) for x in xs2) + ")", "B") if len(xs2) > 1 else T(_bool(xs2[0]), "B")

    def Not(self, x: object) -> object:
        return (not x) if isinstance(x, bool) else T(f"(not {_bool(x)})", "B")

    def If(self, c: object, a: object, b: object) -> object:
        if isinstance(c, bool):
            return a if c else b
        ta, tb, k = _same(a, b)
        return T(f"(ite {_bool(c)} {ta} {tb})", k)

    def Implies(self, a: object, b: object) -> object:
        return T(f"(=> {_bool(a)} {_bool(b)})", "B")

    def Sum(self, xs: Iterable[object]) -> object:
        parts = []
        for x in xs:
            if isinstance(x, bool) or (isinstance(x, T) and x.sort == "B"):
                parts.append(f"(ite {_bool(x)} 1 0)")
            else:
                parts.append(lit(x, "I")[0])
        if not parts:
            return 0
        return T("(+ " + " ".join(parts) + ")", "I") if len(parts) > 1 else T(parts[0], "I")

    def true(self) -> object:
        return True

    def false(self) -> object:
        return False


SMT = SmtBackend()


def state(consts: Mapping[str, z3.ExprRef]) -> tuple[dict[str, T], dict[str, z3.ExprRef]]:
    """Text variables for a map of Z3 constants (Bool or Int), and the symbol table `parse`
    needs; symbols are short generated names, so no state name has to be quoted."""
    out: dict[str, T] = {}
    decls: dict[str, z3.ExprRef] = {}
    for i, (n, c) in enumerate(consts.items()):
        sym = f"v!{i}"
        if z3.is_bool(c):
            out[n] = T(sym, "B")
        elif z3.is_int(c):
            out[n] = T(sym, "I")
        else:
            raise Unsupported(f"{n}: only Bool and Int constants have a text reading")
        decls[sym] = c
    return out, decls


def parse_vector(texts: Sequence[str], decls: Mapping[str, z3.ExprRef]) -> "z3.AstVector | None":
    """Bool texts parsed in one call, as Z3's vector of them in order (None for no texts)."""
    if not texts:
        return None
    got = z3.parse_smt2_string("".join(f"(assert {t})\n" for t in texts), decls=dict(decls))
    if len(got) != len(texts):
        raise Unsupported(f"parsed {len(got)} assertions from {len(texts)} texts")
    return got


def parse(texts: Sequence[str], decls: Mapping[str, z3.ExprRef]) -> list[z3.BoolRef]:
    """The Z3 terms of Bool texts, in order (one parse for all of them)."""
    got = parse_vector(texts, decls)
    return [] if got is None else [got[i] for i in range(len(got))]
