"""Finite structures for the lifecycle: pin a parametric state to a LifecycleModel state and read
one back, through the abstraction functions of lifecycle_encoding (mtx <-> mo, dn <-> dk,
inf / ks derived). Used by the agreement test, the cross-checks and CTI rendering.
"""
from __future__ import annotations

from typing import Iterator, Mapping

import z3

from ..lifecycle.definition import COMPLETE_LABELS, DISPATCH_LABELS, TOOL_LABELS
from ..lifecycle.vocabulary import D_EXITED, D_FLIGHT, P_SPM, LConfig
from .encoding import Agent, PState, finite_universe
from .lifecycle_encoding import ENUM_VALUES, SYMBOLS, Ctx, Dispatch, Tool

Conc = Mapping[str, int | bool]


class LStructure:
    def __init__(self, cfg: LConfig, tag: str = "e") -> None:
        self.cfg = cfg
        self.agents = [z3.Const(f"a{i}!{tag}", Agent) for i in range(cfg.agents)]
        self.ctxs = [z3.Const(f"c{i}!{tag}", Ctx) for i in range(cfg.contexts)]
        self.tools = [z3.Const(f"t{i}!{tag}", Tool) for i in range(cfg.tools)]
        self.disps = [z3.Const(f"k{i}!{tag}", Dispatch) for i in range(cfg.dispatches)]
        self.elems = {Agent: self.agents, Ctx: self.ctxs, Tool: self.tools, Dispatch: self.disps}

    def universe(self):  # type: ignore[no-untyped-def]
        return finite_universe(self.elems)

    def distinct(self) -> list[z3.BoolRef]:
        return [z3.Distinct(*es) for es in self.elems.values() if len(es) > 1]

    def cells(self) -> Iterator[tuple[str, str, tuple[z3.ExprRef, ...]]]:
        """(concrete variable, parametric symbol, argument elements) for every variable mapped one
        to one. `mtx`, `dn`, `inf.*`, `ks.*` go through the abstraction functions below."""
        cfg = self.cfg
        for g in ("ids", "rc_all"):
            yield ("rc.all" if g == "rc_all" else g), g, ()
        for g in ("conflict", "locked", "timeout"):
            yield f"g.{g}", f"g_{g}", ()
        for i, a in enumerate(self.agents):
            yield f"rc.{i}", "rc", (a,)
            yield f"ser.ex.{i}", "ser_ex", (a,)
            yield f"ser.en.{i}", "ser_en", (a,)
        for j, c in enumerate(self.ctxs):
            for v in ("reg", "slot", "en", "mk", "prof"):
                yield f"{v}.{j}", v, (c,)
            yield f"hd.{j}.all", "hd_all", (c,)
            for i, a in enumerate(self.agents):
                yield f"ag.{j}.{i}", "ag", (c, a)
                yield f"hd.{j}.{i}", "hd", (c, a)
        for name, t in zip(cfg.tool_ids(), self.tools):
            for v in ("pc", "cx", "was", "sc"):
                yield f"{v}.{name}", v, (t,)
            for i, a in enumerate(self.agents):
                yield f"sa.{name}.{i}", "sa", (t, a)
        yield "pc.d0", "dpc", ()
        yield "pc.h0", "hpc", ()
        yield "hk", "hk", ()
        for n, k in enumerate(self.disps):
            for v in ("st", "da", "rq", "sz", "rt"):
                yield f"{v}.{n}", v, (k,)
            for j, c in enumerate(self.ctxs):
                yield f"pk.{n}.{j}", "pk", (k, c)
                yield f"mp.{n}.{j}", "mp", (k, c)

    def to_term(self, sym: str, val: int | bool) -> z3.ExprRef:
        rng = SYMBOLS[sym][1]
        if rng in ENUM_VALUES:
            return ENUM_VALUES[rng][int(val)]
        if rng == Ctx:
            return self.ctxs[int(val)]
        if rng == Agent:
            return self.agents[int(val)]
        if rng == Dispatch:
            return self.disps[int(val)]
        if rng == z3.IntSort():
            return z3.IntVal(int(val))
        return z3.BoolVal(bool(val))

    def pin(self, s: PState, conc: Conc) -> list[z3.BoolRef]:
        out = [s.fns[sym](*args) == self.to_term(sym, conc[var]) for var, sym, args in self.cells()]
        out += [s.mo(t) == (int(conc["mtx"]) == i + 1) for i, t in enumerate(self.tools)]
        if DISPATCH_LABELS[int(conc["pc.d0"])] == "hooked":
            out.append(s.dk() == self.disps[int(conc["dn"])])
        return out

    def from_value(self, sym: str, v: z3.ExprRef, elem_of: Mapping[str, int]) -> int | bool:
        rng = SYMBOLS[sym][1]
        if rng in ENUM_VALUES:
            return [str(x) for x in ENUM_VALUES[rng]].index(str(v))
        if rng in (Ctx, Agent, Dispatch, Tool):
            return elem_of[str(v)]
        if rng == z3.IntSort():
            return v.as_long()  # type: ignore[attr-defined]
        return z3.is_true(v)

    def read(self, m: z3.ModelRef, s: PState) -> dict[str, int | bool]:
        """Every mapped variable of `s` in `m`, plus `mtx` (from `mo`) and `dk` (as an index)."""
        elem_of: dict[str, int] = {}
        for es in self.elems.values():
            for i, e in enumerate(es):
                elem_of[str(m.eval(e, model_completion=True))] = i
        out: dict[str, int | bool] = {}
        for var, sym, args in self.cells():
            out[var] = self.from_value(sym, m.eval(s.fns[sym](*args), model_completion=True), elem_of)
        owners = [i + 1 for i, t in enumerate(self.tools) if z3.is_true(m.eval(s.mo(t), model_completion=True))]
        out["mtx"] = owners[0] if len(owners) == 1 else (0 if not owners else -len(owners))
        out["dk"] = self.from_value("dk", m.eval(s.dk(), model_completion=True), elem_of)
        return out

    def mapped_vars(self) -> set[str]:
        return {var for var, _, _ in self.cells()} | {"mtx"}


# ---- abstraction functions (lifecycle_encoding docstring) ---------------------------------------
def abstraction_holds(cfg: LConfig, s: Conc) -> list[str]:
    """The equations the abstracted counters satisfy; [] if the state satisfies all of them."""
    K, C = range(cfg.dispatches), range(cfg.contexts)
    bad = []
    for a in range(cfg.agents):
        n = sum(1 for k in K if s[f"da.{k}"] == a and D_FLIGHT <= int(s[f"st.{k}"]) <= D_EXITED)
        if s[f"inf.{a}"] != n:
            bad.append(f"inf.{a} = {s[f'inf.{a}']} but {n} dispatches in flight on agent {a}")
    sub = sum(1 for k in K if int(s[f"st.{k}"]) >= D_FLIGHT)
    if s["dn"] != sub:
        bad.append(f"dn = {s['dn']} but {sub} dispatches submitted")
    if DISPATCH_LABELS[int(s["pc.d0"])] == "hooked" and (int(s["dn"]) >= cfg.dispatches or s[f"st.{s['dn']}"] != 1):
        bad.append("d0 hooked but dispatch dn is not the hooked one")
    for k in K:
        n = min(3, sum(1 for c in C if s[f"pk.{k}.{c}"] == P_SPM and not s[f"mp.{k}.{c}"]))
        if s[f"ks.{k}"] != n:
            bad.append(f"ks.{k} = {s[f'ks.{k}']} but {n} SPM packets delivered (spm and erased)")
    if not 0 <= int(s["mtx"]) <= cfg.tools:
        bad.append("mtx out of range")
    return bad


def pretty(var: str, v: int | bool) -> str:
    """Value text for CTI lines: labels for program counters, 0/1 for Booleans."""
    if var.startswith("pc.t"):
        return TOOL_LABELS[int(v)]
    if var == "pc.d0":
        return DISPATCH_LABELS[int(v)]
    if var == "pc.h0":
        return COMPLETE_LABELS[int(v)]
    return str(int(v)) if isinstance(v, bool) else str(v)


__all__ = ["LStructure", "abstraction_holds", "pretty"]
