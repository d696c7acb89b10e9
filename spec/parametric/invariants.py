"""Inductive invariants for P1, P2 and the dynamic half of P5, quantified over the sorts.

Layers (a property's invariant is the conjunction of the layers it lists in `LAYERS`):

  locks  lock ownership follows the program counter (a table derived by dataflow over the
         transitions of the variant at hand, so it is the program's own, not a copy) and the
         mutual exclusion of each lock (digest §1.3)
  p2     a lookup holding R(rc) past its read sees the current count (digest §2.1 post-fix)
  p1     per-phase facts of an updater holding W(rc) and the mirror lemma (digest §2.2 post-fix)
  p5     progress facts: a thread inside an operation always has a step it may take unless a
         lock it wants is held (digest §4 P5)

Every conjunct is universally quantified except where marked ∀∃ (the existential is over a
sort with no function back into the universal's sort, except the mirror lemma, see `mirror`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import z3

from ..variants import Variant
from .transitions import PAction, build_actions
from .encoding import (
    LOCK_REL,
    Agent,
    Lookup,
    PState,
    Updater,
    at,
    enabled,
    exists,
    forall,
)

InvFn = Callable[[PState], z3.BoolRef]


@dataclass(frozen=True)
class Conjunct:
    name: str
    layer: str
    fn: InvFn
    source: str
    fragment: str = "EPR"  # "EPR" | "quantified LIA" | "∀∃ with a function cycle"


ROLE_RELS = {"updater": ("uq", "uw", "usr", "usw", "us"), "lookup": ("lr", "lsr", "lsw", "ls")}


def lock_table(actions: list[PAction], role: str) -> dict[str, frozenset[str]]:
    """Label -> lock relations the thread holds there (dataflow from idle with no lock held).

    Raises if a label is reached with two different lock sets: then "ownership follows the pc"
    would be false and the invariant below could not be stated.
    """
    table: dict[str, frozenset[str]] = {"idle": frozenset()}
    todo = ["idle"]
    while todo:
        lab = todo.pop()
        for act in actions:
            if act.role != role or act.at != lab:
                continue
            held = set(table[lab])
            if act.lock is not None:
                cls, mode, acquire = act.lock
                rel = LOCK_REL[(role, cls, mode)]
                (held.add if acquire else held.discard)(rel)
            for nxt in act.targets:
                h = frozenset(held)
                if nxt in table and table[nxt] != h:
                    raise ValueError(f"{role} reaches '{nxt}' with locks {sorted(table[nxt])} and {sorted(h)}")
                if nxt not in table:
                    table[nxt] = h
                    todo.append(nxt)
    return table


def _labels_with(table: dict[str, frozenset[str]], rel: str) -> list[str]:
    return sorted(lab for lab, held in table.items() if rel in held)


def conjuncts(v: Variant) -> list[Conjunct]:
    acts = build_actions(v)
    out: list[Conjunct] = []

    def add(name: str, layer: str, fn: InvFn, source: str, fragment: str = "EPR") -> None:
        out.append(Conjunct(name, layer, fn, source, fragment))

    # ---- locks: ownership follows the pc --------------------------------------------------
    sort = {"updater": Updater, "lookup": Lookup}
    for role in ("updater", "lookup"):
        table = lock_table(acts, role)
        reached = sorted(table)
        S = sort[role]
        add(f"{role} pc is a reachable label", "locks",
            lambda s, role=role, S=S, reached=reached: forall(S, lambda t: at(s, role, t, *reached)),
            "spec/programs.py control flow")
        for rel in ROLE_RELS[role]:
            labs = _labels_with(table, rel)
            if rel in ("us", "ls"):
                add(f"{rel}(t,x) -> {role} at {labs}", "locks",
                    lambda s, rel=rel, role=role, S=S, labs=labs: forall(S, lambda t: forall(
                        Agent, lambda x: z3.Implies(s.fns[rel](t, x), at(s, role, t, *labs)))),
                    "digest §1.3: per-agent serializer wlock scope")
            else:
                add(f"{rel}(t) <-> {role} at {labs}", "locks",
                    lambda s, rel=rel, role=role, S=S, labs=labs: forall(
                        S, lambda t: s.fns[rel](t) == at(s, role, t, *labs)),
                    "digest §1.3 lock inventory, nesting per spec/programs.py")
    us_labs = _labels_with(lock_table(acts, "updater"), "us")
    ls_labs = _labels_with(lock_table(acts, "lookup"), "ls")
    add("us(t,x) -> pend(t,x); one serializer per updater", "locks",
        lambda s: forall(Updater, lambda t: forall(Agent, lambda x: z3.And(
            z3.Implies(s.us(t, x), s.pend(t, x)),
            forall(Agent, lambda y: z3.Implies(z3.And(s.us(t, x), s.us(t, y)), x == y))))),
        "update_serialization applies one agent at a time, digest §2.2")
    add("ls(l,x) -> x = ag(l)", "locks",
        lambda s: forall(Lookup, lambda l: forall(Agent, lambda x: z3.Implies(s.ls(l, x), x == s.ag(l)))),
        "serializer() locks only its queue's agent, digest §2.1")
    add("lookup at serializer-held labels holds ls(l, ag(l))", "locks",
        lambda s: forall(Lookup, lambda l: z3.Implies(at(s, "lookup", l, *ls_labs), s.ls(l, s.ag(l)))),
        "serializer(): ret->wlock(enable({})), digest §2.1")

    def excl(name: str, fn: InvFn) -> None:
        add(f"exclusion: {name}", "locks", fn, "std::shared_mutex semantics, digest §1.3")

    excl("one refcount writer", lambda s: forall(Updater, lambda u: forall(
        Updater, lambda w: z3.Implies(z3.And(s.uw(u), s.uw(w)), u == w))))
    excl("refcount writer excludes readers", lambda s: forall(Updater, lambda u: forall(
        Lookup, lambda l: z3.Not(z3.And(s.uw(u), s.lr(l))))))
    excl("one map writer (updaters)", lambda s: forall(Updater, lambda u: forall(
        Updater, lambda w: z3.And(z3.Implies(z3.And(s.usw(u), s.usw(w)), u == w),
                                  z3.Not(z3.And(s.usw(u), s.usr(w)))))))
    excl("one map writer (lookups)", lambda s: forall(Lookup, lambda l: forall(
        Lookup, lambda k: z3.And(z3.Implies(z3.And(s.lsw(l), s.lsw(k)), l == k),
                                 z3.Not(z3.And(s.lsw(l), s.lsr(k)))))))
    excl("map writer excludes the other role", lambda s: forall(Updater, lambda u: forall(
        Lookup, lambda l: z3.And(z3.Not(z3.And(s.usw(u), z3.Or(s.lsw(l), s.lsr(l)))),
                                 z3.Not(z3.And(s.lsw(l), s.usr(u)))))))
    excl("one holder per agent serializer", lambda s: forall(Agent, lambda x: z3.And(
        forall(Updater, lambda u: forall(Updater, lambda w: z3.Implies(z3.And(s.us(u, x), s.us(w, x)), u == w))),
        forall(Lookup, lambda l: forall(Lookup, lambda k: z3.Implies(z3.And(s.ls(l, x), s.ls(k, x)), l == k))),
        forall(Updater, lambda u: forall(Lookup, lambda l: z3.Not(z3.And(s.us(u, x), s.ls(l, x))))))))
    _data(v, add)
    _progress(v, add, us_labs)
    return out


def _data(v: Variant, add: Callable[..., None]) -> None:
    E = enabled
    Q = "quantified LIA"
    # ---- p2: a reader holding R(rc) past its read sees the current count ----
    add("lr(l) and past read -> sh(l) == enabled(ag(l))", "p2",
        lambda s: forall(Lookup, lambda l: z3.Implies(
            z3.And(s.lr(l), z3.Not(at(s, "lookup", l, "read"))), s.sh(l) == E(s, s.ag(l)))),
        "digest §2.1 post-fix: R(rc) held across lookup+insert; W(rc) excluded", Q)

    # ---- p1: an updater holding W(rc), phase by phase (digest §2.2 post-fix) ----
    def uph(name: str, labels: tuple[str, ...], body: Callable[[PState, z3.ExprRef, z3.ExprRef], z3.BoolRef],
            src: str) -> None:
        add(f"updater at {'/'.join(labels)}: {name}", "p1",
            lambda s: forall(Updater, lambda t: forall(Agent, lambda x: z3.Implies(
                at(s, "updater", t, *labels), body(s, t, x)))), src, Q)

    mir = lambda s, x: s.en(x) == E(s, x)  # noqa: E731
    uph("entries mirror the count", ("snapshot", "release_refcount"),
        lambda s, t, x: z3.Implies(s.ex(x), mir(s, x)),
        "W(rc) acquired with no writer and no creator in its window (mirror lemma)")
    uph("wh == entry exists, entry state == was", ("snapshot_release", "count", "acq_map"),
        lambda s, t, x: z3.And(s.wh(t, x) == s.ex(x), z3.Implies(s.ex(x), s.en(x) == s.was(t, x))),
        "snapshot under R(smap); inserts need R(rc), excluded by W(rc)")
    uph("nothing pending outside count/apply", ("idle", "acq_queues", "acq_refcount", "snapshot",
                                                "snapshot_release", "release_refcount", "store_flag",
                                                "release_queues", "end"),
        lambda s, t, x: z3.Not(s.pend(t, x)), "update_begin clears the locals")
    uph("was == enabled at snapshot", ("snapshot_release",),
        lambda s, t, x: s.was(t, x) == E(s, x), "was[a] = rc.enabled(a), digest §2.2")
    uph("pending agents are in scope and not yet counted", ("count",),
        lambda s, t, x: z3.Implies(s.pend(t, x), z3.And(z3.Not(s.all(t)), s.inn(t, x), s.was(t, x) == E(s, x))),
        "per-agent ++/-- loop, digest §2.2")
    uph("all-scope not yet counted", ("count",),
        lambda s, t, x: z3.Implies(s.all(t), s.was(t, x) == E(s, x)), "++/-- rc.all, digest §2.2")
    uph("agents outside the scope keep their count", ("snapshot_release", "count", "acq_map", "apply",
                                                     "set_state", "release_serializer"),
        lambda s, t, x: z3.Implies(z3.Not(z3.Or(s.all(t), s.inn(t, x))), s.was(t, x) == E(s, x)),
        "update touches only its agents, digest §2.2")
    uph("counting is monotone in the caller's flag", ("snapshot_release", "count", "acq_map", "apply",
                                                     "set_state", "release_serializer"),
        lambda s, t, x: z3.And(z3.Implies(z3.And(s.enable(t), s.was(t, x)), E(s, x)),
                               z3.Implies(z3.And(z3.Not(s.enable(t)), z3.Not(s.was(t, x))), z3.Not(E(s, x)))),
        "enable ? ++ : clamped --, digest §2.2")
    uph("apply phase: pending = crossed entry", ("apply", "set_state", "release_serializer"),
        lambda s, t, x: z3.And(s.wh(t, x) == s.ex(x),
                               z3.Implies(s.pend(t, x), z3.And(s.wh(t, x), s.was(t, x) != E(s, x))),
                               z3.Implies(z3.And(z3.Not(s.pend(t, x)), s.ex(x)), mir(s, x))),
        "transition iff was[a] != now[a], under W(smap), digest §2.2 post-fix")
    uph("pending entry not yet applied", ("apply", "set_state"),
        lambda s, t, x: z3.Implies(s.pend(t, x), s.en(x) == s.was(t, x)), "digest §2.2")
    uph("applied entry mirrors, others wait", ("release_serializer",),
        lambda s, t, x: z3.And(z3.Implies(s.us(t, x), mir(s, x)),
                               z3.Implies(z3.And(s.pend(t, x), z3.Not(s.us(t, x))), s.en(x) == s.was(t, x))),
        "W(ser[a]): now ? enable : disable, digest §2.2 / §3.1")
    add("enable window: entry present (new or a racer's), to be enabled", "p1",
        lambda s: forall(Lookup, lambda l: z3.Implies(
            at(s, "lookup", l, "acq_serializer", "enable"),
            z3.And(s.ex(s.ag(l)), s.sh(l)))),
        "serializer(): emplace then wlock(enable({})) if should_serialize, new entry or not, "
        "digest §2.1; fidelity-audit L2", "EPR")
    add("mirror lemma", "p1", mirror,
        "digest §4 P1: outside W(rc) and creation windows every entry mirrors the count",
        "∀∃ with a function cycle (Agent -> Lookup -> Agent), quantified LIA")


def mirror(s: PState) -> z3.BoolRef:
    """∀a. entry ∧ ¬(en ↔ count>0) → (∃u W(rc)) ∨ (∃l creating a's entry).

    The ∃l depends on a and `ag` maps Lookup -> Agent, so Skolemising gives a cycle: outside
    EPR. No universal restatement exists without a ghost (which lookup is in the window is local
    state); Z3 answers these queries, and an `unknown` would be reported as such.
    """
    return forall(Agent, lambda x: z3.Implies(
        z3.And(s.ex(x), s.en(x) != enabled(s, x)),
        z3.Or(exists(Updater, lambda u: s.uw(u)),
              exists(Lookup, lambda l: z3.And(s.ag(l) == x, at(s, "lookup", l, "acq_serializer", "enable"))))))


def _progress(v: Variant, add: Callable[..., None], us_labs: list[str]) -> None:
    inside_not_idle = lambda s, t: z3.Not(at(s, "updater", t, "idle"))  # noqa: E731
    add("a call on an agent set names some agent", "p5",
        lambda s: forall(Updater, lambda t: z3.Implies(
            z3.And(inside_not_idle(s, t), z3.Not(s.all(t))),
            exists(Agent, lambda x: s.inn(t, x)))),
        "scopes are `all` or a nonempty agent set (programs.scopes)", "∀∃ (Updater -> Agent), EPR")
    add("counting an agent set: some agent pending", "p5",
        lambda s: forall(Updater, lambda t: z3.Implies(
            z3.And(at(s, "updater", t, "count"), z3.Not(s.all(t))), exists(Agent, lambda x: s.pend(t, x)))),
        "per-agent ++/-- loop, digest §2.2", "∀∃ (Updater -> Agent), EPR")
    add("pending before counting: exactly the scope", "p5",
        lambda s: forall(Updater, lambda t: forall(Agent, lambda x: z3.Implies(
            at(s, "updater", t, "snapshot_release", "acq_queues", "acq_refcount", "snapshot"),
            z3.Not(s.pend(t, x))))),
        "update_begin clears pend", "EPR")
    add("updater at a serializer-held label holds one", "p5",
        lambda s: forall(Updater, lambda t: z3.Implies(
            at(s, "updater", t, *us_labs), exists(Agent, lambda x: s.us(t, x)))),
        "W(ser[a]) held across enable/disable, digest §2.2", "∀∃ (Updater -> Agent), EPR")


# which layers each property's invariant uses
LAYERS: dict[str, tuple[str, ...]] = {
    "creation-consistent": ("locks", "p2"),
    "serializer-mirrors-refcount": ("locks", "p2", "p1"),
    "lock-order-acyclic": ("locks", "p5"),
    "lock-discipline": ("locks",),  # lock ownership follows the pc: all a step's access needs
}


def invariant(v: Variant, prop: str) -> list[Conjunct]:
    return [c for c in conjuncts(v) if c.layer in LAYERS[prop]]
