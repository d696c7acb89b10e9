"""Parametric vocabulary of the core protocol (digest §1.2, §1.3) over uninterpreted sorts.

Agents, updater threads (callers of update_serialization(), digest §2.2), lookup threads
(callers of serializer(), digest §2.1) and holders (the contexts a call acts for) are four
uninterpreted sorts. Two thread sorts rather
than one keep each role's locals total functions of its own sort and never force a role test.

Refcounts are integers: `rc_all` a constant, `rc` a function Agent -> Int, exactly as
`serialization_refcount{all, per_agent}`. A relational encoding (e.g. `positive(a)`) would keep
queries in EPR but could not state `count(a) = all + per_agent[a]` or the clamped decrement
without losing the arithmetic the property is about, so every query that mentions `rc` is in
quantified linear integer arithmetic (undecidable in general; Z3 answers these, and a result
records the fragment and reports `unknown` whenever Z3 does).

Every symbol, its sorts and the transitions come from the one definition (spec/programs.py) through
`spec.lang.symbolic.Reading`; this module only names the sorts and the lock symbols. Locks are one
relation per (role, lock class, mode) some action writes: `uq` queues shared; `uw` refcount exclusive; `usr` /
`usw` serializer map shared / exclusive; `us(u, a)` the per-agent serializer (exclusive); for
lookups `lr` refcount shared, `lsr` / `lsw`, `ls(l, a)`. The fixed-size variables that have no
relation here (`lk.queues.r.l*`, `lk.refcount.w.l*`, `lk.refcount.r.u*`) are never written by any
step; the agreement test checks that.

Quantifiers go through `forall` / `exists`: symbolically they are Z3 quantifiers; inside
`finite_universe(...)` they expand over the given elements, which is how the same definitions are
evaluated on a fixed-size state (agreement test, cross-checks).
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping

import z3

from ..lang.symbolic import Reading
from ..lang.syntax import Func, Sort
from ..programs import LOOKUP_LABELS, UPDATER_LABELS, definition
from ..variants import VARIANTS

Agent = z3.DeclareSort("Agent")
Updater = z3.DeclareSort("Updater")
Lookup = z3.DeclareSort("Lookup")
Holder = z3.DeclareSort("Holder")  # contexts owning a reference (spec.programs Core.holder)
ROLE_SORT = {"updater": Updater, "lookup": Lookup}

Fn = Callable[..., z3.ExprRef]

# Symbol names. A lock relation over `thread` splits into one per role: the role's initial plus
# the lock's short code (`uq` = an updater holds `queues` shared, `ls` = a lookup holds
# `serializer.<a>`); everything else keeps its name in the definition.
_LOCK_CODE = {("queues", "shared"): "q", ("refcount", "exclusive"): "w", ("refcount", "shared"): "r",
              ("serializer_map", "shared"): "sr", ("serializer_map", "exclusive"): "sw",
              ("serializer", "exclusive"): "s"}


def symbol_name(f: Func, leaves: tuple[Sort, ...]) -> str:
    if f.lock is not None:
        return leaves[0].prefix + _LOCK_CODE[f.lock]
    return f.name


def forall(sort: z3.SortRef, body: Callable[[z3.ExprRef], z3.ExprRef]) -> z3.BoolRef:
    if _FINITE:
        return z3.And(*[body(e) for e in _FINITE[-1][sort]])
    x = z3.Const(f"{sort.name()[0].lower()}!{next(_names)}", sort)
    return z3.ForAll([x], body(x))


def exists(sort: z3.SortRef, body: Callable[[z3.ExprRef], z3.ExprRef]) -> z3.BoolRef:
    if _FINITE:
        return z3.Or(*[body(e) for e in _FINITE[-1][sort]])
    x = z3.Const(f"{sort.name()[0].lower()}?{next(_names)}", sort)
    return z3.Exists([x], body(x))


# The any-size reading of spec/programs.py: every variant shares the state, so one reading
# serves them all; a symbol exists when some variant's action writes it.
READING = Reading([definition(v) for v in VARIANTS.values()],
                  {"agent": Agent, "updater": Updater, "lookup": Lookup, "holder": Holder}, symbol_name, forall, exists)
UPc, UPC = READING.enum(READING.proto.pc["updater"].dom)  # type: ignore[arg-type]
LPc, LPC = READING.enum(READING.proto.pc["lookup"].dom)  # type: ignore[arg-type]
PC = {"updater": UPC, "lookup": LPC}
assert list(UPC) == UPDATER_LABELS and list(LPC) == LOOKUP_LABELS

# name -> (domain sorts, range sort); the whole state of the core protocol
SYMBOLS: dict[str, tuple[tuple[z3.SortRef, ...], z3.SortRef]] = READING.signature

# (role, lock class, mode) -> lock relation
LOCK_REL: dict[tuple[str, str, str], str] = {
    (leaves[0], f.lock[0], f.lock[1]): READING.symbols[(f.name, leaves)]
    for f in READING.proto.funcs if f.lock is not None
    for (name, leaves) in READING.symbols if name == f.name
}


class PState:
    """One state: each symbol is a callable building a Z3 term (a declared function for a
    pre-state, an If-term over the pre-state for a post-state, so no frame axioms are needed)."""

    def __init__(self, fns: Mapping[str, Fn]) -> None:
        self.fns = dict(fns)

    def __getattr__(self, name: str) -> Fn:
        try:
            return self.__dict__["fns"][name]
        except KeyError as e:
            raise AttributeError(name) from e

    def with_(self, upd: Mapping[str, Fn]) -> "PState":
        fns = dict(self.fns)
        fns.update(upd)
        return PState(fns)


def fresh_state(tag: str) -> PState:
    fns: dict[str, Fn] = {}
    for name, (dom, rng) in SYMBOLS.items():
        if dom:
            fns[name] = z3.Function(f"{name}@{tag}", *dom, rng)
        else:
            c = z3.Const(f"{name}@{tag}", rng)
            fns[name] = (lambda c=c: c)
    return PState(fns)


# ---- quantifiers: symbolic, or expanded over a finite universe ------------------------------
_FINITE: list[dict[z3.SortRef, list[z3.ExprRef]]] = []
_names = itertools.count()


@contextmanager
def finite_universe(elems: Mapping[z3.SortRef, list[z3.ExprRef]]) -> Iterator[None]:
    _FINITE.append(dict(elems))
    try:
        yield
    finally:
        _FINITE.pop()


# ---- derived notions (digest §1.2) ----------------------------------------------------------
def count(s: PState, a: z3.ExprRef) -> z3.ArithRef:
    """serialization_refcount::count(a) = all + per_agent[a]."""
    return s.rc_all() + s.rc(a)


def enabled(s: PState, a: z3.ExprRef) -> z3.BoolRef:
    """serialization_refcount::enabled(a) = count(a) > 0."""
    return count(s, a) > 0


def at(s: PState, role: str, t: z3.ExprRef, *labels: str) -> z3.BoolRef:
    pc = s.upc(t) if role == "updater" else s.lpc(t)
    return z3.Or(*[pc == PC[role][x] for x in labels]) if labels else z3.BoolVal(False)


def holds(s: PState, role: str, t: z3.ExprRef, cls: str, mode: str, a: z3.ExprRef | None = None) -> z3.BoolRef:
    rel = LOCK_REL.get((role, cls, mode))
    if rel is None:
        return z3.BoolVal(False)
    return s.fns[rel](t, a) if cls == "serializer" else s.fns[rel](t)


def shared_free(s: PState, cls: str, a: z3.ExprRef | None = None) -> z3.BoolRef:
    """No thread of either role holds `cls` exclusively (vocabulary.shared_free)."""
    return z3.And(forall(Updater, lambda u: z3.Not(holds(s, "updater", u, cls, "exclusive", a))),
                  forall(Lookup, lambda l: z3.Not(holds(s, "lookup", l, cls, "exclusive", a))))


def exclusive_free(s: PState, cls: str, a: z3.ExprRef | None = None) -> z3.BoolRef:
    """Nobody holds `cls` in any mode (vocabulary.exclusive_free)."""
    parts = []
    for mode in ("shared", "exclusive"):
        parts.append(forall(Updater, lambda u, m=mode: z3.Not(holds(s, "updater", u, cls, m, a))))
        parts.append(forall(Lookup, lambda l, m=mode: z3.Not(holds(s, "lookup", l, cls, m, a))))
    return z3.And(*parts)


# ---- point updates (post-state symbols as If-terms over the pre-state) -----------------------
def set1(s: PState, name: str, k: z3.ExprRef, val: z3.ExprRef) -> Fn:
    old = s.fns[name]
    return lambda x: z3.If(x == k, val, old(x))


def set2(s: PState, name: str, t: z3.ExprRef, a: z3.ExprRef, val: z3.ExprRef) -> Fn:
    old = s.fns[name]
    return lambda x, y: z3.If(z3.And(x == t, y == a), val, old(x, y))


def row(s: PState, name: str, t: z3.ExprRef, fn: Callable[[z3.ExprRef], z3.ExprRef]) -> Fn:
    old = s.fns[name]
    return lambda x, y: z3.If(x == t, fn(y), old(x, y))


def const(val: z3.ExprRef) -> Fn:
    return lambda: val
