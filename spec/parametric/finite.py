"""Finite structures: the bridge between a fixed-size state (spec.vocabulary names) and a
parametric state whose sorts are fixed to that many agents / updaters / lookups.

`Structure` declares one distinct constant per element and, under `finite_universe`, every
quantifier of the parametric definitions expands over exactly those elements (the domain-closure
reading). `pin` equates a parametric pre-state with a concrete state; `read` evaluates a
(post-)state in a Z3 model back to concrete variable names. Both are used by the agreement test
(parametric vs spec.model), the cross-checks (invariants on reached states) and CTI rendering.
"""
from __future__ import annotations

from typing import Iterator, Mapping

import z3

from ..lang.finite import Universe
from ..lang.syntax import BoolDom, EnumDom, Func, IntDom, SortDom
from ..vocabulary import Config
from .encoding import READING, Agent, Holder, Lookup, PState, Updater, finite_universe


class Structure:
    def __init__(self, cfg: Config, tag: str = "e") -> None:
        self.cfg = cfg
        self.agents = [z3.Const(f"a{i}!{tag}", Agent) for i in range(cfg.agents)]
        self.updaters = [z3.Const(f"{u}!{tag}", Updater) for u in cfg.updater_ids()]
        self.lookups = [z3.Const(f"{l}!{tag}", Lookup) for l in cfg.lookup_ids()]
        self.holders = [z3.Const(f"{h}!{tag}", Holder) for h in cfg.holder_ids()]
        self.elems = {Agent: self.agents, Updater: self.updaters, Lookup: self.lookups, Holder: self.holders}

    def universe(self):  # type: ignore[no-untyped-def]
        return finite_universe(self.elems)

    def axioms(self) -> list[z3.BoolRef]:
        """Distinct elements and domain closure (for the quantified, non-expanded reading)."""
        out: list[z3.BoolRef] = []
        for sort, es in self.elems.items():
            if len(es) > 1:
                out.append(z3.Distinct(*es))
            x = z3.Const(f"dc!{sort.name()}", sort)
            out.append(z3.ForAll([x], z3.Or(*[x == e for e in es])))
        return out

    def distinct(self) -> list[z3.BoolRef]:
        return [z3.Distinct(*es) for es in self.elems.values() if len(es) > 1]

    def cells(self) -> list[tuple[str, str, tuple[z3.ExprRef, ...]]]:
        """(concrete variable, parametric symbol, argument elements) for every symbol of the
        reading at this size; the concrete name is the fixed-size reading's key for the same
        application, so both sides come from the one definition. Listed once per structure
        (the agreement tests pin and read hundreds of states through one)."""
        got: list[tuple[str, str, tuple[z3.ExprRef, ...]]] | None = self.__dict__.get("_cells")
        if got is None:
            got = self.__dict__["_cells"] = list(self._cells())
        return got

    def applications(self, s: PState) -> list[z3.ExprRef]:
        """Each cell's application in state `s`, in `cells()` order, built once per state: the
        agreement tests pin one pre-state and read one post-state per action in each reached
        state's model, and z3py's application building cost more than the evaluation. Keyed
        by the state object, which the cache keeps alive."""
        cache: dict[int, tuple[PState, list[z3.ExprRef]]] = self.__dict__.setdefault("_apps", {})
        got = cache.get(id(s))
        if got is None or got[0] is not s:
            got = cache[id(s)] = (s, [s.fns[sym](*args) for _, sym, args in self.cells()])
        return got[1]

    def _cells(self) -> Iterator[tuple[str, str, tuple[z3.ExprRef, ...]]]:
        u = Universe(READING.proto, {"agent": self.cfg.agents, "updater": self.cfg.updaters,
                                     "lookup": self.cfg.lookups, "holder": self.cfg.n_holders})
        z3_elems = {"agent": self.agents, "updater": self.updaters, "lookup": self.lookups,
                    "holder": self.holders}
        for (fname, leaves), sym in READING.symbols.items():
            f = READING.proto.func(fname)
            combos: list[tuple[tuple[object, z3.ExprRef], ...]] = [()]
            for leaf in leaves:
                names = u.elems(next(x for x in READING.proto.leaf_sorts() if x.name == leaf))
                combos = [c + (pair,) for c in combos for pair in zip(names, z3_elems[leaf])]
            for c in combos:
                yield u.key(f, [n for n, _ in c]), sym, tuple(e for _, e in c)

    def _func(self, sym: str) -> Func:
        for (fname, _), name in READING.symbols.items():
            if name == sym:
                return READING.proto.func(fname)
        raise KeyError(sym)

    def to_term(self, sym: str, val: int | bool) -> z3.ExprRef:
        d = self._func(sym).dom
        if isinstance(d, EnumDom):
            return READING.enum(d)[1][d.labels[int(val)]]
        if isinstance(d, SortDom):
            return self.agents[int(val)]
        if isinstance(d, IntDom):
            return z3.IntVal(int(val))
        assert isinstance(d, BoolDom)
        return z3.BoolVal(bool(val))

    def pin(self, s: PState, conc: Mapping[str, int | bool]) -> list[z3.BoolRef]:
        return [app == self.to_term(sym, conc[var]) for (var, sym, _), app in zip(self.cells(), self.applications(s))]

    def from_value(self, sym: str, v: z3.ExprRef, agent_of: Mapping[str, int]) -> int | bool:
        d = self._func(sym).dom
        if isinstance(d, EnumDom):
            consts = READING.enum(d)[1]
            return next(i for i, lab in enumerate(d.labels) if consts[lab].eq(v))
        if isinstance(d, SortDom):
            return agent_of[str(v)]
        if isinstance(d, IntDom):
            return v.as_long()  # type: ignore[attr-defined]
        return z3.is_true(v)

    def read(self, m: z3.ModelRef, s: PState) -> dict[str, int | bool]:
        """Every mapped variable of `s` evaluated in `m` (elements must be this structure's)."""
        agent_of = {str(m.eval(a, model_completion=True)): i for i, a in enumerate(self.agents)}
        out: dict[str, int | bool] = {}
        for (var, sym, _), app in zip(self.cells(), self.applications(s)):
            out[var] = self.from_value(sym, m.eval(app, model_completion=True), agent_of)
        return out

    def mapped_vars(self) -> set[str]:
        return {var for var, _, _ in self.cells()}


__all__ = ["Structure"]
