"""Parametric vocabulary of the SPM context lifecycle (digest §2.4-§2.11) over uninterpreted sorts.

The state symbols, sorts and enumeration constants are those of the definition's any-size
reading (spec/parametric/lifecycle_transitions.py); this module names the derived notions the
invariants and the property forms speak of. Each one that the definition also uses is read off
the definition (`Lifecycle.unrestricted`, `collects_on`, `intersects`, `instruments`, `gate`,
the mutex and marker guards), so none is written twice.

The any-size reading differs from the fixed-size state in three declared ways (spec.lang.syntax):

* `mtx` (0 free, i+1 held by tool i) is the relation `mo(t)` "t holds the contexts mutex"
  (`OwnerDom`); mutual exclusion of `mo` is an invariant conjunct.
* `inf(a)` (Queue::_active_kernels) and `ks(k)` (kfd_stop + DISPATCH_END deliveries) have no
  symbol (`Protocol.abstractions`): the definition reads inf only through what it counts
  (inf(a) = #{k : da(k)=a, st(k) in {flight, exited}}; the drain guards read the dispatch phases
  snapshotted when the drain began, and "this completion empties its queue" is "no other
  dispatch of its agent is in flight or exited", first-order), and P4
  reads "no exited dispatch still has its SPM packet in a context's map" (ks(k) = #{c : pk(k,c)
  = spm, mp(k,c) erased}). Why those equations hold at every size is a counting argument, not a
  Z3 query (cardinality is not first-order): each step changes both sides by the same amount
  (the submit adds one dispatch of da(k) to the flight set and +1 to inf(da(k)), the
  completion signal removes it and -1; a delivery erases the packet it counts). The tests check
  the equations on reached states at several sizes, and that every step keeps them.
* `dispatch_write` may take any dispatch not yet written (the fixed size takes the next index
  `dn`), `dispatch_submit` the hooked one; `add_callback` has no registry cap (`Action.any_size`).

Refcounts keep their integers; their increments saturate at the fixed size's caps (2C+1 for rc,
3 for the ghost hd), which the definition marks as bounds of the finite model (`Protocol.bounds`),
so any size reads the code's unbounded increment (the decrement's clamp at 0 is the code's and
kept). The P9 invariant proves every count <= 1, so the caps are never reached at any size C >= 1
and the proofs cover the saturating finite models too.
rc = Σ_c hd(c,.) is not first-order over a sort; it is proved in the stronger form "at most one
context holds each key, hd in {0,1}, rc = 1 iff some context holds it" (see
lifecycle_invariants), which implies the sum in every finite instance.

The registry id counter `ids` stays an integer: P6 compares tags with it.
"""
from __future__ import annotations

from typing import Callable

import z3

from ..lifecycle.definition import language
from ..lifecycle.variants import LVariant, hook_tags
from .encoding import Agent, Fn, PState, exists, forall
from .lifecycle_transitions import (
    D0, D_DONE, D_EXITED, D_FLIGHT, D_HOOKED, D_NONE, DPC, FREE, H0, HPC, LANG, P_EMPTY, P_NONE, P_SPM, PUBLISHED,
    RESERVED, SYMBOLS, TPC, Ctx, Dispatch, Tool, config, fresh_state, open_expr, var, Scenario,
)

R_OK, R_ALREADY, R_CONFLICT = z3.IntVal(0), z3.IntVal(1), z3.IntVal(2)  # start's scan verdicts (definition R_*)
_C, _C2, _A = var("c", "context"), var("c2", "context"), var("a", "agent")


# ---- derived notions, read off the definition ---------------------------------------------------
def empty(s: PState, c: z3.ExprRef) -> z3.BoolRef:
    """dispatch_spm.agents is empty (= all GPU agents): Lifecycle.unrestricted."""
    return open_expr(LANG.unrestricted(_C), s, c=c)


def collects_on(s: PState, c: z3.ExprRef, a: z3.ExprRef) -> z3.BoolRef:
    """dispatch_spm::collects_on(a) = agents.empty() || a in agents (digest §2.8)."""
    return open_expr(LANG.collects_on(_C, _A), s, c=c, a=a)


def intersects(s: PState, c1: z3.ExprRef, c2: z3.ExprRef) -> z3.BoolRef:
    """true if either agent set is empty, else the sets share an agent (digest §2.8)."""
    return open_expr(LANG.intersects(_C, _C2), s, c=c1, c2=c2)


def _lang(v: LVariant):  # type: ignore[no-untyped-def]
    return language(v, config(Scenario()))


def instruments(s: PState, v: LVariant, c: z3.ExprRef, a: z3.ExprRef) -> z3.BoolRef:
    """The enter hook calls pre_kernel_call for c on a dispatch for a (Lifecycle.instruments)."""
    return open_expr(_lang(v).instruments(v, _C, _A), s, c=c, a=a)


def gate(s: PState, v: LVariant, a: z3.ExprRef) -> z3.BoolRef:
    """spm::is_active_on_agent(a) (4bbc5a8) or spm::is_any_active() (758072b): Lifecycle.gate."""
    return open_expr(_lang(v).gate(v, _A), s, a=a)


def mutex_free(s: PState) -> z3.BoolRef:
    return open_expr(LANG.mutex_free()[1], s)


def no_markers(s: PState) -> z3.BoolRef:
    """wait_for_stopping_contexts(): the `stopping` set is empty (digest §2.8)."""
    return open_expr(LANG.no_markers()[1], s)


def count(s: PState, a: z3.ExprRef) -> z3.ArithRef:
    """serialization_refcount::count(a) = all + per_agent[a] (Lifecycle.count)."""
    return open_expr(LANG.count(_A), s, a=a)


def ser_on(s: PState, a: z3.ExprRef) -> z3.BoolRef:
    """properties.ser_on: the agent's serializer is (or, on first lookup, will be created) ENABLED."""
    return z3.Or(z3.And(s.ser_ex(a), s.ser_en(a)), count(s, a) > 0)


def in_flight(s: PState, k: z3.ExprRef) -> z3.BoolRef:
    """Counted by Queue::_active_kernels: async_started ran, async_complete not yet."""
    return z3.Or(s.st(k) == D_FLIGHT, s.st(k) == D_EXITED)


def exited(s: PState, k: z3.ExprRef) -> z3.BoolRef:
    return z3.Or(s.st(k) == D_EXITED, s.st(k) == D_DONE)


def spm_tag(v: LVariant) -> int:
    return hook_tags(v)["SPM"]


def tool_at(s: PState, t: z3.ExprRef, *labels: str) -> z3.BoolRef:
    if not labels:
        return z3.BoolVal(False)
    pc = s.pc(t)  # once: a post-state's pc is an If-term built on each application
    return z3.Or(*[pc == TPC[x] for x in labels])


def d_at(s: PState, label: str) -> z3.BoolRef:
    """The dispatch thread d0 is at `label`."""
    return s.dpc(D0) == DPC[label]


def h_at(s: PState, label: str) -> z3.BoolRef:
    """The completion thread h0 is at `label`."""
    return s.hpc(H0) == HPC[label]


Pred = Callable[[z3.ExprRef], z3.BoolRef]

__all__ = ["Ctx", "Tool", "Dispatch", "Agent", "SYMBOLS", "fresh_state", "TPC", "DPC", "HPC", "D_NONE", "D_HOOKED",
           "P_EMPTY", "P_NONE", "P_SPM", "RESERVED", "FREE", "PUBLISHED", "Fn", "exists", "forall"]
