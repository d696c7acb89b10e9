"""Finite structures for the lifecycle: pin a parametric state to a LifecycleModel state and read
one back. Everything is read off the definition: a symbol's cells are its function's finite keys
(`slot.{0}` -> `slot.0`, ...), an `OwnerDom` function (`mtx`) is pinned through its relation
(`mo(t_i)` iff mtx = i+1), and the abstracted counters (`inf`, `ks`) have no cell: their
equations (`Protocol.abstractions`) are evaluated by the finite reading (`abstraction_holds`).
Used by the agreement test, the cross-checks and CTI rendering.
"""
from __future__ import annotations

import itertools
from functools import lru_cache
from typing import Any, Iterator, Mapping

import z3

from ..backend import CONCRETE
from ..lang.finite import Universe, compile_closed
from ..lang.syntax import BoolDom, EnumDom, Forall, IntDom, OwnerDom, SortDom, Var
from ..lifecycle.definition import COMPLETE_LABELS, DISPATCH_LABELS, TOOL_LABELS
from ..lifecycle.vocabulary import LConfig
from .encoding import Agent, PState, finite_universe
from .lifecycle_transitions import D0, H0, LANG, READING, SORTS, SYMBOLS, Ctx, Dispatch, DThread, HThread, Tool

Conc = Mapping[str, Any]
PROTO = LANG.b.p


def universe(cfg: LConfig) -> Universe:
    """The fixed-size elements of every sort (spec.lifecycle.model.LifecycleModel's)."""
    return Universe(PROTO, {"agent": cfg.agents, "context": cfg.contexts, "kernel": cfg.dispatches,
                            "tool": cfg.tools, "dispatch": 1, "complete": 1})


class LStructure:
    def __init__(self, cfg: LConfig, tag: str = "e") -> None:
        self.cfg = cfg
        self.agents = [z3.Const(f"a{i}!{tag}", Agent) for i in range(cfg.agents)]
        self.ctxs = [z3.Const(f"c{i}!{tag}", Ctx) for i in range(cfg.contexts)]
        self.tools = [z3.Const(f"t{i}!{tag}", Tool) for i in range(cfg.tools)]
        self.disps = [z3.Const(f"k{i}!{tag}", Dispatch) for i in range(cfg.dispatches)]
        self.elems = {Agent: self.agents, Ctx: self.ctxs, Tool: self.tools, Dispatch: self.disps,
                      DThread: [D0], HThread: [H0]}

    def universe(self):  # type: ignore[no-untyped-def]
        return finite_universe(self.elems)

    def distinct(self) -> list[z3.BoolRef]:
        return [z3.Distinct(*es) for s, es in self.elems.items() if len(es) > 1 and s not in (DThread, HThread)]

    def by_sort(self, name: str) -> list[tuple[Any, z3.ExprRef]]:
        """(finite element, parametric element) pairs of sort `name`."""
        fin = universe(self.cfg).elems(next(s for s in PROTO.sorts if s.name == name))
        return list(zip(fin, self.elems[SORTS[name]]))

    def cells(self) -> list[tuple[str, str, tuple[z3.ExprRef, ...]]]:
        """(concrete variable, parametric symbol, argument elements) for every variable mapped one
        to one (every symbol but an owner relation); listed once per structure (the agreement
        tests read hundreds of states through one)."""
        got: list[tuple[str, str, tuple[z3.ExprRef, ...]]] | None = self.__dict__.get("_cells")
        if got is None:
            got = self.__dict__["_cells"] = list(self._cells())
        return got

    def _cells(self) -> Iterator[tuple[str, str, tuple[z3.ExprRef, ...]]]:
        for (fname, leaves), sym in READING.symbols.items():
            f = PROTO.func(fname)
            if isinstance(f.dom, OwnerDom):
                continue
            for combo in itertools.product(*[self.by_sort(x) for x in leaves]):
                yield f.key.format(*[fe for fe, _ in combo]), sym, tuple(pe for _, pe in combo)

    def owners(self) -> Iterator[tuple[str, str, list[z3.ExprRef]]]:
        """(concrete variable, relation, holder elements in index order) of each owner function."""
        for (fname, leaves), sym in READING.symbols.items():
            f = PROTO.func(fname)
            if isinstance(f.dom, OwnerDom):
                assert not leaves and f.dom.sort is not None
                yield f.key, sym, [pe for _, pe in self.by_sort(f.dom.sort.name)]

    def _dom(self, sym: str) -> Any:
        return _dom_of(sym)

    def to_term(self, sym: str, val: Any) -> z3.ExprRef:
        d = self._dom(sym)
        if isinstance(d, EnumDom):
            return list(READING.enum(d)[1].values())[int(val)]
        if isinstance(d, SortDom):
            return dict(self.by_sort(d.sort.name))[val]
        if isinstance(d, IntDom):
            return z3.IntVal(int(val))
        assert isinstance(d, BoolDom)
        return z3.BoolVal(bool(val))

    def pin(self, s: PState, conc: Conc) -> list[z3.BoolRef]:
        out = [s.fns[sym](*args) == self.to_term(sym, conc[var]) for var, sym, args in self.cells()]
        for var, sym, holders in self.owners():
            out += [s.fns[sym](t) == (int(conc[var]) == i + 1) for i, t in enumerate(holders)]
        return out

    def from_value(self, sym: str, v: z3.ExprRef, elem_of: Mapping[int, Any]) -> Any:
        """The finite value of `v` (a model's value of symbol `sym`); `elem_of` maps the model's
        elements, by Z3 AST id, to finite elements. Values are matched by AST id, not by their
        printed text: Z3 shares equal terms (one id each), and the pretty-printer cost two
        thirds of the agreement tests' time."""
        d = self._dom(sym)
        if isinstance(d, EnumDom):
            return _enum_index(sym)[v.get_id()]
        if isinstance(d, SortDom):
            return elem_of[v.get_id()]
        if isinstance(d, IntDom):
            return v.as_long()  # type: ignore[attr-defined]
        return z3.is_true(v)

    def read(self, m: z3.ModelRef, s: PState) -> dict[str, Any]:
        """Every mapped variable of `s` in `m`, and each owner function as its finite counter
        (-n if n elements hold it, which no finite state encodes)."""
        elem_of: dict[int, Any] = {}
        keep = []  # the elements' terms stay referenced while their ids are keys (Z3 reuses freed ids)
        for name in SORTS:
            for fe, pe in self.by_sort(name):
                keep.append(m.eval(pe, model_completion=True))
                elem_of[keep[-1].get_id()] = fe
        out: dict[str, Any] = {}
        cells, owners = self._applications(s)
        for (var, sym, _), term in zip(self.cells(), cells):
            out[var] = self.from_value(sym, m.eval(term, model_completion=True), elem_of)
        for var, terms in owners:
            held = [i + 1 for i, t in enumerate(terms) if z3.is_true(m.eval(t, model_completion=True))]
            out[var] = held[0] if len(held) == 1 else (0 if not held else -len(held))
        return out

    def _applications(self, s: PState) -> tuple[list[z3.ExprRef], list[tuple[str, list[z3.ExprRef]]]]:
        """The terms `read` evaluates for state `s` (each cell's application, each owner
        relation's per holder), built once per state: the agreement tests read one post-state
        per action in a model per reached state, and z3py's application building cost more than
        the evaluation. Keyed by the state object, which the cache keeps alive."""
        cache: dict[int, tuple[PState, Any]] = self.__dict__.setdefault("_apps", {})
        got = cache.get(id(s))
        if got is None or got[0] is not s:
            cells = [s.fns[sym](*args) for _, sym, args in self.cells()]
            owners = [(var, [s.fns[sym](t) for t in holders]) for var, sym, holders in self.owners()]
            got = cache[id(s)] = (s, (cells, owners))
        return got[1]  # type: ignore[no-any-return]

    def mapped_vars(self) -> set[str]:
        return {var for var, _, _ in self.cells()} | {var for var, _, _ in self.owners()}


@lru_cache(maxsize=None)
def _dom_of(sym: str) -> Any:
    """The domain of parametric symbol `sym` (its function's, in the definition)."""
    fname = next(f for (f, _), s in READING.symbols.items() if s == sym)
    return PROTO.func(fname).dom


@lru_cache(maxsize=None)
def _enum_index(sym: str) -> dict[int, int]:
    """Z3 AST id of each constant of enum symbol `sym`'s sort -> its index (the finite value)."""
    return {x.get_id(): i for i, x in enumerate(READING.enum(_dom_of(sym))[1].values())}


# ---- the abstracted counters' equations, read by the finite reading -----------------------------
@lru_cache(maxsize=None)
def _equations(cfg: LConfig) -> tuple[tuple[str, Any], ...]:
    u = universe(cfg)
    out = []
    for name, (params, count) in PROTO.abstractions.items():
        f = PROTO.func(name)
        vs = [Var(p.name, p.sort) for p in params]
        body: Any = f(*vs) == count
        for v in reversed(vs):
            body = Forall(v, body)
        out.append((name, compile_closed(u, body, f"abstraction {name}")))
    return tuple(out)


def abstraction_holds(cfg: LConfig, s: Conc) -> list[str]:
    """The abstracted counters whose equation fails in `s` ([] if all hold)."""
    return [f"{name} is not what it counts" for name, fn in _equations(cfg) if not fn(CONCRETE, s)]


def pretty(var: str, v: Any) -> str:
    """Value text for CTI lines: labels for program counters, 0/1 for Booleans."""
    if var.startswith("pc.t"):
        return TOOL_LABELS[int(v)]
    if var == "pc.d0":
        return DISPATCH_LABELS[int(v)]
    if var == "pc.h0":
        return COMPLETE_LABELS[int(v)]
    return str(int(v)) if isinstance(v, bool) else str(v)


__all__ = ["LStructure", "abstraction_holds", "pretty", "universe"]
