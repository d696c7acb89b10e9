"""Parametric vocabulary of the SPM context lifecycle (digest §2.4-§2.11) over uninterpreted sorts.

Sorts: `Agent` (shared with the core encoding), `Ctx` (SPM contexts), `Tool` (tool threads calling
start/stop/set_dispatch_agents/...), `Dispatch` (kernel dispatches). The dispatch thread d0 and the
completion thread h0 are singletons: their locals are 0-ary state (`dpc`, `dk`, `hpc`, `hk`).

State mirrors spec/lifecycle/vocabulary.py name for name (`slot(c)`, `en(c)`, `mk(c)`, `reg(c)`,
`ag(c,a)`, `hd_all(c)`, `hd(c,a)`, `rc_all`, `rc(a)`, `ser_ex/ser_en(a)`, `pc/cx/was/sc/sa` of a
tool, `st/da/rq/sz/rt/pk/mp` of a dispatch, `ids`, the `g.*` witnesses), with these exceptions:

* `mtx` (0 free, i+1 held by tool i) is the relation `mo(t)` "t owns the contexts mutex".
  Abstraction: mtx == i+1 <-> mo(t_i); mutual exclusion of `mo` is an invariant conjunct.
* `inf(a)` (Queue::_active_kernels, a counter) is NOT a state symbol. The only reader is the drain
  guard "every queue's _active_kernels is 0", which here reads "no dispatch is in flight"
  (st in {flight, exited}). Abstraction function: inf(a) = #{k : da(k)=a, st(k) in {flight,
  exited}}. Why that is sound at any size: the counter changes only at dispatch_submit (+1 on
  da(k), while k moves hooked -> flight) and completion_signal (-1 on da(k), clamped at 0, while k
  moves exited -> done; the clamp never fires because k itself is counted): each step changes both
  sides by the same amount, so the equation is inductive for every number of dispatches (a
  counting argument, not a Z3 query: cardinality is not first-order). The fixed-size Houdini
  invariant has the same conjunct (`inf.a == #in-flight on a`); the tests check the equation on
  every sampled reachable state at several sizes and that every step preserves it.
* `dn` (index of the next dispatch) is not a symbol: dispatch_write may pick ANY dispatch still in
  state `none` (a superset of "the next one", marked relaxed), and d0 remembers the one it hooked
  in `dk`. Abstraction: dn = #{k : st(k) >= flight}, and d0 at `hooked` -> dk = dispatch dn.
* `ks(k)` (kfd_stop + DISPATCH_END count, capped at 3) is not a symbol. Abstraction function:
  ks(k) = #{c : pk(k,c) = spm and not mp(k,c)} -- a delivery (post_kernel_call finding its own
  SPMPacket) erases the packet, and an erased SPM packet was always delivered (`delivers` is
  `erase` and pk = spm), so each step adds to both sides the same number. P4 then reads: no
  exited dispatch still has an SPM packet in a context's map. Checked like `inf` by the tests.
* refcounts keep their integers; increments are NOT clamped at the fixed size's cap (2C+1 for rc,
  3 for hd), which is a bound of the finite model, not of the code (the code's decrement clamp at
  0 is kept). The P9 invariant proves rc <= 1 for `final`, so the cap is never reached there.
  rc = Σ_c hd(c,.) is not first-order over a sort; it is proved in the stronger form "at most one
  context holds each key, hd in {0,1}, rc = 1 iff some context holds it" (see
  lifecycle_invariants), which implies the sum in every finite instance.
* `hk` (the dispatch h0 completes) is a Dispatch constant; `cx` a Tool -> Ctx function.

The registry id counter `ids` stays an integer: P6 compares tags with it.
"""
from __future__ import annotations

from typing import Callable

import z3

from ..lifecycle.definition import COMPLETE_LABELS, DISPATCH_LABELS, TOOL_LABELS
from ..lifecycle.variants import LVariant, hook_tags
from .encoding import Agent, Fn, PState, exists, forall

Ctx = z3.DeclareSort("Ctx")
Tool = z3.DeclareSort("Tool")
Dispatch = z3.DeclareSort("Dispatch")

TPc, _T = z3.EnumSort("TPc", [f"t.{x}" for x in TOOL_LABELS])
DPc, _D = z3.EnumSort("DPc", [f"d.{x}" for x in DISPATCH_LABELS])
HPc, _H = z3.EnumSort("HPc", [f"h.{x}" for x in COMPLETE_LABELS])
SlotS, _SL = z3.EnumSort("Slot", ["free", "reserved", "published"])
DSt, _ST = z3.EnumSort("DSt", ["none", "hooked", "flight", "exited", "done"])
PkS, _PK = z3.EnumSort("Pk", ["p.none", "p.empty", "p.spm"])
ScanS, _SC = z3.EnumSort("Scan", ["r.ok", "r.already", "r.conflict"])

TPC: dict[str, z3.ExprRef] = dict(zip(TOOL_LABELS, _T))
DPC: dict[str, z3.ExprRef] = dict(zip(DISPATCH_LABELS, _D))
HPC: dict[str, z3.ExprRef] = dict(zip(COMPLETE_LABELS, _H))
FREE, RESERVED, PUBLISHED = _SL
D_NONE, D_HOOKED, D_FLIGHT, D_EXITED, D_DONE = _ST
P_NONE, P_EMPTY, P_SPM = _PK
R_OK, R_ALREADY, R_CONFLICT = _SC
# concrete integer codes (spec.lifecycle.vocabulary / programs) -> enum constants, by position
ENUM_VALUES: dict[z3.SortRef, list[z3.ExprRef]] = {
    TPc: list(_T), DPc: list(_D), HPc: list(_H), SlotS: list(_SL), DSt: list(_ST), PkS: list(_PK), ScanS: list(_SC)}

I, B = z3.IntSort(), z3.BoolSort()

# name -> (domain sorts, range sort): the whole lifecycle state
SYMBOLS: dict[str, tuple[tuple[z3.SortRef, ...], z3.SortRef]] = {
    "ids": ((), I),
    "g_conflict": ((), B), "g_locked": ((), B), "g_timeout": ((), B),
    "rc_all": ((), I),
    "rc": ((Agent,), I),
    "ser_ex": ((Agent,), B), "ser_en": ((Agent,), B),
    "mo": ((Tool,), B),
    "reg": ((Ctx,), B), "slot": ((Ctx,), SlotS), "en": ((Ctx,), B), "mk": ((Ctx,), B), "prof": ((Ctx,), B),
    "hd_all": ((Ctx,), I),
    "ag": ((Ctx, Agent), B), "hd": ((Ctx, Agent), I),
    "pc": ((Tool,), TPc), "cx": ((Tool,), Ctx), "was": ((Tool,), B), "sc": ((Tool,), ScanS),
    "sa": ((Tool, Agent), B),
    "dpc": ((), DPc), "dk": ((), Dispatch), "hpc": ((), HPc), "hk": ((), Dispatch),
    "st": ((Dispatch,), DSt), "da": ((Dispatch,), Agent), "rq": ((Dispatch,), B), "sz": ((Dispatch,), B),
    "rt": ((Dispatch,), I),
    "pk": ((Dispatch, Ctx), PkS), "mp": ((Dispatch, Ctx), B),
}


def fresh_state(tag: str) -> PState:
    fns: dict[str, Fn] = {}
    for name, (dom, rng) in SYMBOLS.items():
        if dom:
            fns[name] = z3.Function(f"L{name}@{tag}", *dom, rng)
        else:
            c = z3.Const(f"L{name}@{tag}", rng)
            fns[name] = (lambda c=c: c)
    return PState(fns)


# ---- derived notions (one definition each, mirroring spec.lifecycle.vocabulary/programs) ------
def empty(s: PState, c: z3.ExprRef) -> z3.BoolRef:
    """dispatch_spm.agents is empty (= all GPU agents)."""
    return forall(Agent, lambda x: z3.Not(s.ag(c, x)))


def collects_on(s: PState, c: z3.ExprRef, a: z3.ExprRef) -> z3.BoolRef:
    """dispatch_spm::collects_on(a) = agents.empty() || a in agents (digest §2.8)."""
    return z3.Or(s.ag(c, a), empty(s, c))


def intersects(s: PState, c1: z3.ExprRef, c2: z3.ExprRef) -> z3.BoolRef:
    """true if either agent set is empty, else the sets share an agent (digest §2.8)."""
    return z3.Or(empty(s, c1), empty(s, c2), exists(Agent, lambda x: z3.And(s.ag(c1, x), s.ag(c2, x))))


def count(s: PState, a: z3.ExprRef) -> z3.ArithRef:
    """serialization_refcount::count(a) = all + per_agent[a]."""
    return s.rc_all() + s.rc(a)


def ser_on(s: PState, a: z3.ExprRef) -> z3.BoolRef:
    """properties.ser_on: the agent's serializer is (or, on first lookup, will be created) ENABLED."""
    return z3.Or(z3.And(s.ser_ex(a), s.ser_en(a)), count(s, a) > 0)


def instruments(s: PState, v: LVariant, c: z3.ExprRef, a: z3.ExprRef) -> z3.BoolRef:
    """programs.instruments: the enter hook calls pre_kernel_call for c on a dispatch for a."""
    vis = s.slot(c) == PUBLISHED
    return z3.And(vis, collects_on(s, c, a)) if v.scoped else vis


def gate(s: PState, v: LVariant, a: z3.ExprRef) -> z3.BoolRef:
    """programs.gate: spm::is_active_on_agent(a) (4bbc5a8) or spm::is_any_active() (758072b)."""
    if v.per_agent_gate:
        return exists(Ctx, lambda c: z3.And(s.slot(c) == PUBLISHED, collects_on(s, c, a)))
    return exists(Ctx, lambda c: s.slot(c) == PUBLISHED)


def in_flight(s: PState, k: z3.ExprRef) -> z3.BoolRef:
    """Counted by Queue::_active_kernels: async_started ran, async_complete not yet."""
    return z3.Or(s.st(k) == D_FLIGHT, s.st(k) == D_EXITED)


def exited(s: PState, k: z3.ExprRef) -> z3.BoolRef:
    return z3.Or(s.st(k) == D_EXITED, s.st(k) == D_DONE)


def spm_tag(v: LVariant) -> int:
    return hook_tags(v)["SPM"]


def tool_at(s: PState, t: z3.ExprRef, *labels: str) -> z3.BoolRef:
    return z3.Or(*[s.pc(t) == TPC[x] for x in labels]) if labels else z3.BoolVal(False)


def mutex_free(s: PState) -> z3.BoolRef:
    return forall(Tool, lambda t: z3.Not(s.mo(t)))


def no_markers(s: PState) -> z3.BoolRef:
    """wait_for_stopping_contexts(): the `stopping` set is empty (digest §2.8)."""
    return forall(Ctx, lambda c: z3.Not(s.mk(c)))


Pred = Callable[[z3.ExprRef], z3.BoolRef]

__all__ = ["Ctx", "Tool", "Dispatch", "Agent", "SYMBOLS", "fresh_state", "TPC", "DPC", "HPC"]
