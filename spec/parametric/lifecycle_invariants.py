"""Inductive invariants of the lifecycle of `final`, quantified over Agent, Ctx, Tool, Dispatch.

Layers (a property's invariant is the conjunction of the layers `LAYERS` lists for it):

  ctl    the contexts mutex is owned exactly by a tool at `sa_write`, by at most one; a tool
         inside a start/stop (between reserve and marker release) keeps its context's marker set,
         at most one tool is inside a start/stop, and never while another holds the mutex
         (digest §2.8: start/stop/set_agents all wait for an empty `stopping` set under the mutex)
  slots  a reserved slot carries a marker; the slot of a busy tool's context per phase; active
         contexts are registered
  p8     the property: two non-free slots have disjoint agent sets (digest §4 P8)
  refs   references (hd) per phase and at rest, holders published and collecting on the key, each
         refcount is 1 iff some context holds the key (unique by p8), the mirror (P1)
  dlv    an exited dispatch has no packet left in any context's packet_return_map; mapped packets
         belong to registered contexts and are real packets (digest §4 P4)
  ids    registry ids handed out are counted from 0 (digest §2.11)

Phase facts name the labels of spec/lifecycle/definition.py for the `final` control flow; for a
variant whose knobs change that flow they simply fail a consecution query, which is the point.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import z3

from ..lifecycle.variants import LVariant
from .encoding import Agent, PState, exists, forall
from .lifecycle_encoding import (
    D0, D_EXITED, D_HOOKED, D_NONE, FREE, P_NONE, PUBLISHED, RESERVED, Ctx, Dispatch, Tool, count, d_at, empty, exited, h_at,
    intersects, tool_at,
)

InvFn = Callable[[PState], z3.BoolRef]

START = ("publish", "spm_enable", "spm_set_enabled", "start_release")
STOP = ("spm_clear_enabled", "drain", "spm_disable", "slot_clear", "stop_release")
BUSY = START + STOP  # labels at which the tool's marker is in the `stopping` set


@dataclass(frozen=True)
class LConjunct:
    name: str
    layer: str
    fn: InvFn
    source: str
    lia: bool = False  # mentions integer arithmetic (refcounts, ids)
    skolem: tuple[tuple[str, str], ...] = ()  # ∀X ∃Y edges (X -> Y) its negation/positive use introduces


def h0_exited(s: PState) -> z3.BoolRef:
    return z3.Implies(h_at(s, "exited"), s.st(s.hk()) == D_EXITED)


def busy(s: PState, t: z3.ExprRef) -> z3.BoolRef:
    return tool_at(s, t, *BUSY)


def nothing(s: PState, c: z3.ExprRef) -> z3.BoolRef:
    """Context c holds no serialization reference."""
    return z3.And(s.hd_all(c) == 0, forall(Agent, lambda x: s.hd(c, x) == 0))


def holds_scope(s: PState, c: z3.ExprRef) -> z3.BoolRef:
    """c holds exactly one reference on its scope: `all` for the empty set, else each member."""
    return z3.If(empty(s, c),
                 z3.And(s.hd_all(c) == 1, forall(Agent, lambda x: s.hd(c, x) == 0)),
                 z3.And(s.hd_all(c) == 0, forall(Agent, lambda x: s.hd(c, x) == z3.If(s.ag(c, x), 1, 0))))


def disjoint_active(s: PState) -> z3.BoolRef:
    """properties.disjoint_active (P8)."""
    return forall(Ctx, lambda c1: forall(Ctx, lambda c2: z3.Implies(
        z3.And(c1 != c2, s.slot(c1) != FREE, s.slot(c2) != FREE), z3.Not(intersects(s, c1, c2)))))


def mirror(s: PState) -> z3.BoolRef:
    """properties.mirrors (P1 with the lifecycle attached)."""
    return forall(Agent, lambda a: z3.Implies(s.ser_ex(a), s.ser_en(a) == (count(s, a) > 0)))


# phase facts of a tool working on context c = cx(t), `final` control flow
SLOT_AT: dict[str, z3.ExprRef] = {"publish": RESERVED, "spm_enable": PUBLISHED, "spm_set_enabled": PUBLISHED,
                                  "start_release": PUBLISHED, "spm_clear_enabled": PUBLISHED, "drain": PUBLISHED,
                                  "spm_disable": PUBLISHED, "slot_clear": PUBLISHED, "stop_release": FREE,
                                  "sa_write": FREE}
# (holds its scope?, enabled?) per label
REFS_AT: dict[str, tuple[bool, bool]] = {"publish": (False, False), "spm_enable": (False, False),
                                         "spm_set_enabled": (True, False), "start_release": (True, True),
                                         "spm_clear_enabled": (True, True), "drain": (True, False),
                                         "spm_disable": (True, False), "slot_clear": (False, False),
                                         "stop_release": (False, False)}


def tool_labels(v: LVariant) -> set[str]:
    """Tool labels reachable from idle over the variant's transitions (dataflow on `targets`)."""
    from .lifecycle_transitions import build_lifecycle_actions

    acts = [a for a in build_lifecycle_actions(v) if a.role == "tool"]
    seen, todo = {"idle"}, ["idle"]
    while todo:
        lab = todo.pop()
        for a in acts:
            if a.at == lab:
                for nxt in a.targets:
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
    return seen


def conjuncts(v: LVariant) -> list[LConjunct]:
    out: list[LConjunct] = []

    def add(name: str, layer: str, fn: InvFn, source: str, lia: bool = False,
            skolem: tuple[tuple[str, str], ...] = ()) -> None:
        out.append(LConjunct(name, layer, fn, source, lia, skolem))

    # ---- ctl ----------------------------------------------------------------------------------
    reached = tool_labels(v)
    add(f"tool pc in {sorted(reached)}", "ctl", lambda s: forall(Tool, lambda t: tool_at(s, t, *sorted(reached))),
        "spec/lifecycle/definition.py control flow (labels reachable from idle)")
    add("mo(t) <-> t at sa_write", "ctl", lambda s: forall(Tool, lambda t: s.mo(t) == tool_at(s, t, "sa_write")),
        "set_dispatch_agents holds the contexts mutex from its check to its write")
    add("one mutex owner", "ctl", lambda s: forall(Tool, lambda t: forall(
        Tool, lambda u: z3.Implies(z3.And(s.mo(t), s.mo(u)), t == u))), "std::mutex")
    add("busy tool -> marker of its context", "ctl",
        lambda s: forall(Tool, lambda t: z3.Implies(busy(s, t), s.mk(s.cx(t)))),
        "stopping.insert(id) at begin, erase at the scope guard (digest §2.8)")
    add("at most one busy tool", "ctl", lambda s: forall(Tool, lambda t: forall(
        Tool, lambda u: z3.Implies(z3.And(busy(s, t), busy(s, u)), t == u))),
        "start/stop begin wait for an empty stopping set under the mutex")
    add("d0 at hooked -> some dispatch hooked", "ctl", lambda s: z3.Implies(
        d_at(s, "hooked"), exists(Dispatch, lambda k: s.st(k) == D_HOOKED)),
        "WriteInterceptor: hooks a dispatch, then submits it (the dispatch thread's step is enabled)")
    add("d0 at gated -> its gated dispatch unwritten", "ctl", lambda s: z3.Implies(
        d_at(s, "gated"), s.st(s.gk(D0)) == D_NONE),
        "WriteInterceptor: the gate at entry, then the enter hook writes that dispatch (the write is enabled)")
    add("h0 at exited -> its dispatch exited", "ctl", h0_exited,
        "completion handler: exit hooks, then async_complete (its signal completes that dispatch)")
    add("no busy tool while the mutex is held", "ctl", lambda s: forall(Tool, lambda t: forall(
        Tool, lambda u: z3.Not(z3.And(busy(s, t), tool_at(s, u, "sa_write"))))),
        "set_dispatch_agents waits for the stopping set; begin needs the mutex")

    # ---- slots --------------------------------------------------------------------------------
    add("reserved slot -> marker", "slots", lambda s: forall(Ctx, lambda c: z3.Implies(s.slot(c) == RESERVED, s.mk(c))),
        "start inserts the in-progress marker before dropping the mutex (commit 4bbc5a8 era)")
    for lab, val in SLOT_AT.items():
        add(f"t at {lab} -> slot(cx t) = {str(val).split('.')[-1]}", "slots",
            lambda s, lab=lab, val=val: forall(Tool, lambda t: z3.Implies(tool_at(s, t, lab), s.slot(s.cx(t)) == val)),
            "context.cpp start/stop phases (digest §2.8 post)")
    add("active slot -> registered", "slots", lambda s: forall(Ctx, lambda c: z3.Implies(s.slot(c) != FREE, s.reg(c))),
        "start_context requires a registered context; registered contexts are never dropped")

    # ---- p8 -----------------------------------------------------------------------------------
    add("P8 disjoint active contexts", "p8", disjoint_active, "digest §4 P8", skolem=(("Ctx", "Agent"),))

    # ---- refs ---------------------------------------------------------------------------------
    add("hd in {0,1}", "refs", lambda s: forall(Ctx, lambda c: z3.And(
        s.hd_all(c) >= 0, s.hd_all(c) <= 1, forall(Agent, lambda x: z3.And(s.hd(c, x) >= 0, s.hd(c, x) <= 1)))),
        "digest §4 P9: one reference per agent per context", lia=True)
    add("holder of all -> published, empty scope", "refs", lambda s: forall(Ctx, lambda c: z3.Implies(
        s.hd_all(c) > 0, z3.And(s.slot(c) == PUBLISHED, empty(s, c)))),
        "enable_serialization({}) between publish and slot clear", lia=True)
    add("holder of a -> published, a in scope", "refs", lambda s: forall(Ctx, lambda c: forall(Agent, lambda x: z3.Implies(
        s.hd(c, x) > 0, z3.And(s.slot(c) == PUBLISHED, s.ag(c, x))))),
        "enable_serialization(agents) between publish and slot clear", lia=True)
    add("rc_all = [some context holds all]", "refs", lambda s: s.rc_all() == z3.If(
        exists(Ctx, lambda c: s.hd_all(c) > 0), 1, 0), "digest §4 P9 (unique holder by P8)", lia=True)
    add("rc(a) = [some context holds a]", "refs", lambda s: forall(Agent, lambda x: s.rc(x) == z3.If(
        exists(Ctx, lambda c: s.hd(c, x) > 0), 1, 0)), "digest §4 P9 (unique holder by P8)", lia=True,
        skolem=(("Agent", "Ctx"),))
    for lab, (held, en) in REFS_AT.items():
        add(f"t at {lab} -> {'holds scope' if held else 'holds nothing'}, en={int(en)}", "refs",
            lambda s, lab=lab, held=held, en=en: forall(Tool, lambda t: z3.Implies(tool_at(s, t, lab), z3.And(
                holds_scope(s, s.cx(t)) if held else nothing(s, s.cx(t)), s.en(s.cx(t)) == en))),
            "spm::start_context / stop_context (digest §2.7 post): acquire, set enabled; clear, drain, release",
            lia=True)
    add("at rest: published -> enabled, holds scope; free -> holds nothing", "refs", lambda s: forall(
        Ctx, lambda c: z3.Implies(z3.Not(s.mk(c)), z3.And(
            z3.Implies(s.slot(c) == PUBLISHED, z3.And(s.en(c), holds_scope(s, c))),
            z3.Implies(s.slot(c) == FREE, z3.And(z3.Not(s.en(c)), nothing(s, c)))))),
        "digest §4 P9: a context outside start/stop holds exactly its scope iff active", lia=True)
    add("mirror (P1)", "refs", mirror, "digest §4 P1; update_serialization/serializer atomic under the refcount lock",
        lia=True)

    # ---- dlv ----------------------------------------------------------------------------------
    add("exited dispatch -> no mapped packet", "dlv", lambda s: forall(Dispatch, lambda k: forall(
        Ctx, lambda c: z3.Implies(exited(s, k), z3.Not(s.mp(k, c))))),
        "exit hook over registered contexts: post_kernel_call erases its own packet (digest §2.6 v2)")
    add("h0 at exited -> its dispatch exited", "dlv", h0_exited,
        "completion handler: exit hooks, then async_complete")
    add("unwritten dispatch -> no packet", "dlv", lambda s: forall(Dispatch, lambda k: forall(
        Ctx, lambda c: z3.Implies(s.st(k) == D_NONE, z3.And(s.pk(k, c) == P_NONE, z3.Not(s.mp(k, c)))))),
        "pre_kernel_call inserts packets at the dispatch's write (what ks counts starts empty)")
    add("mapped packet -> registered context", "dlv", lambda s: forall(Dispatch, lambda k: forall(
        Ctx, lambda c: z3.Implies(s.mp(k, c), s.reg(c)))), "pre_kernel_call only for active contexts")
    add("mapped packet -> a real packet", "dlv", lambda s: forall(Dispatch, lambda k: forall(
        Ctx, lambda c: z3.Implies(s.mp(k, c), s.pk(k, c) != P_NONE))),
        "the pre-scan finds the SPM client's packet (digest §2.6)")
    add("active slot -> registered", "dlv", lambda s: forall(Ctx, lambda c: z3.Implies(s.slot(c) != FREE, s.reg(c))),
        "start_context requires a registered context")
    add("t at publish -> cx t registered", "dlv", lambda s: forall(Tool, lambda t: z3.Implies(
        tool_at(s, t, "publish"), s.reg(s.cx(t)))), "start_context requires a registered context")

    # ---- ids ----------------------------------------------------------------------------------
    add("ids >= 0", "ids", lambda s: s.ids() >= 0, "client_id{1}: ids handed out count up from 0", lia=True)
    return out


# which layers each lifecycle property's invariant uses (empty: the property is a fact of one step)
LAYERS: dict[str, tuple[str, ...]] = {
    "spm-contexts-disjoint": ("ctl", "slots", "p8"),
    "tags-disjoint": ("ids",),
    "agent-scoping": (),
    "unrelated-queues-batched": (),
    "in-flight-completion-delivered": ("dlv",),
    "map-empty-after-drain": ("dlv",),
    "serializer-mirrors-refcount": ("mirror",),
    "no-unserialized-dispatch-while-enabled": ("ctl", "slots", "p8", "refs"),
    "refcount-balanced": ("ctl", "slots", "p8", "refs"),
    "lock-order-acyclic": ("ctl",),
}


@lru_cache(maxsize=None)
def _conjuncts(v: LVariant) -> tuple[LConjunct, ...]:
    return tuple(conjuncts(v))


def invariant(v: LVariant, prop: str) -> list[LConjunct]:
    """The invariant of `prop` (the same conjunct objects for every property of one variant,
    so properties sharing layers share their queries' caches)."""
    layers = LAYERS[prop]
    cs = _conjuncts(v)
    if layers == ("mirror",):
        return [c for c in cs if c.name == "mirror (P1)"]
    return [c for c in cs if c.layer in layers]


__all__ = ["LConjunct", "conjuncts", "invariant", "LAYERS", "busy", "nothing", "holds_scope", "disjoint_active",
           "mirror", "BUSY"]
