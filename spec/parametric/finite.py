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

from ..programs import LOOKUP_LABELS, UPDATER_LABELS
from ..vocabulary import Config, lv
from .encoding import LPC, UPC, Agent, Lookup, PState, Updater, finite_universe

# parametric symbol -> how it is named in the fixed-size model (role locals and lock variables)
_LOCK_VAR = {"uq": ("queues", "shared"), "uw": ("refcount", "exclusive"),
             "usr": ("serializer_map", "shared"), "usw": ("serializer_map", "exclusive"),
             "lr": ("refcount", "shared"), "lsr": ("serializer_map", "shared"),
             "lsw": ("serializer_map", "exclusive")}


class Structure:
    def __init__(self, cfg: Config, tag: str = "e") -> None:
        self.cfg = cfg
        self.agents = [z3.Const(f"a{i}!{tag}", Agent) for i in range(cfg.agents)]
        self.updaters = [z3.Const(f"{u}!{tag}", Updater) for u in cfg.updater_ids()]
        self.lookups = [z3.Const(f"{l}!{tag}", Lookup) for l in cfg.lookup_ids()]
        self.elems = {Agent: self.agents, Updater: self.updaters, Lookup: self.lookups}

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

    def cells(self) -> Iterator[tuple[str, str, tuple[z3.ExprRef, ...]]]:
        """(concrete variable, parametric symbol, argument elements) for every mapped variable."""
        cfg = self.cfg
        yield "rc.all", "rc_all", ()
        yield "flag", "flag", ()
        for i, a in enumerate(self.agents):
            yield f"rc.{i}", "rc", (a,)
            yield f"ser.ex.{i}", "ex", (a,)
            yield f"ser.en.{i}", "en", (a,)
        for name, u in zip(cfg.updater_ids(), self.updaters):
            for sym in ("uq", "uw", "usr", "usw"):
                yield lv(_LOCK_VAR[sym][0], _LOCK_VAR[sym][1], name), sym, (u,)
            yield f"pc.{name}", "upc", (u,)
            for k in ("hold", "enable", "all"):
                yield f"{k}.{name}", k, (u,)
            for i, a in enumerate(self.agents):
                yield lv(f"serializer.{i}", "exclusive", name), "us", (u, a)
                for k, sym in (("in", "inn"), ("pend", "pend"), ("was", "was"), ("wh", "wh")):
                    yield f"{k}.{name}.{i}", sym, (u, a)
        for name, l in zip(cfg.lookup_ids(), self.lookups):
            for sym in ("lr", "lsr", "lsw"):
                yield lv(_LOCK_VAR[sym][0], _LOCK_VAR[sym][1], name), sym, (l,)
            yield f"pc.{name}", "lpc", (l,)
            yield f"ag.{name}", "ag", (l,)
            yield f"sh.{name}", "sh", (l,)
            for i, a in enumerate(self.agents):
                yield lv(f"serializer.{i}", "exclusive", name), "ls", (l, a)

    def to_term(self, sym: str, val: int | bool) -> z3.ExprRef:
        if sym == "upc":
            return UPC[UPDATER_LABELS[int(val)]]
        if sym == "lpc":
            return LPC[LOOKUP_LABELS[int(val)]]
        if sym == "ag":
            return self.agents[int(val)]
        if sym in ("rc_all", "rc"):
            return z3.IntVal(int(val))
        return z3.BoolVal(bool(val))

    def pin(self, s: PState, conc: Mapping[str, int | bool]) -> list[z3.BoolRef]:
        return [s.fns[sym](*args) == self.to_term(sym, conc[var]) for var, sym, args in self.cells()]

    def from_value(self, sym: str, v: z3.ExprRef, agent_of: Mapping[str, int]) -> int | bool:
        if sym == "upc":
            return UPDATER_LABELS.index(str(v)[2:])
        if sym == "lpc":
            return LOOKUP_LABELS.index(str(v)[2:])
        if sym == "ag":
            return agent_of[str(v)]
        if sym in ("rc_all", "rc"):
            return v.as_long()  # type: ignore[attr-defined]
        return z3.is_true(v)

    def read(self, m: z3.ModelRef, s: PState) -> dict[str, int | bool]:
        """Every mapped variable of `s` evaluated in `m` (elements must be this structure's)."""
        agent_of = {str(m.eval(a, model_completion=True)): i for i, a in enumerate(self.agents)}
        out: dict[str, int | bool] = {}
        for var, sym, args in self.cells():
            v = m.eval(s.fns[sym](*args), model_completion=True)
            out[var] = self.from_value(sym, v, agent_of)
        return out

    def mapped_vars(self) -> set[str]:
        return {var for var, _, _ in self.cells()}


__all__ = ["Structure"]
