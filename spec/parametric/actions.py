"""One parametric transition per step of spec/programs.py, for each variant knob.

Each transition is existential over the acting thread `t` (and agent `a` for per-agent steps, the
scope for `update_begin`); a query Skolemises them as constants. The mirror is step-for-step:
same labels, kinds, guards and effects as `spec.programs._updater` / `_lookup`, with the same
`source` strings, and `tests/test_parametric.py` checks on concrete states of the fixed-size model
that every action instance is enabled in one reading iff in the other and reaches the same state.

One deliberate difference: the fixed-size model processes pending agents lowest first (an order
over agent ids). An uninterpreted sort has no order, so here any pending agent may be chosen
(`relaxed=True`). That is a superset of the fixed-size behaviours, so an invariant proved here
covers them; the agreement test checks "concrete enabled => parametric enabled" and equal
post-states for those steps. For the deadlock half of P5 a superset of moves is not sound (a
thread might look movable only through a choice the code never makes), so those steps carry a
`strict` conjunct (every pending agent's serializer is free) that implies the fixed-size guard.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from ..variants import Variant
from .encoding import (
    PC,
    ROLE_SORT,
    Agent,
    Fn,
    PState,
    const,
    enabled,
    exclusive_free,
    exists,
    forall,
    holds,
    LOCK_REL,
    row,
    set1,
    set2,
    shared_free,
)

T, F = z3.BoolVal(True), z3.BoolVal(False)


@dataclass(frozen=True)
class Params:
    """The existential parameters of one firing. `enable` is fixed per begin action."""

    t: z3.ExprRef
    a: z3.ExprRef
    all_p: z3.ExprRef = T
    scope: Callable[[z3.ExprRef], z3.ExprRef] = lambda x: F
    tag: str = "p"  # names the fresh constants a step introduces (`more`, `any`)


@dataclass(frozen=True)
class Fired:
    guards: list[tuple[str, z3.BoolRef]]
    side: list[z3.BoolRef]  # definitions of the step's fresh constants (asserted with the step)
    post: PState
    strict: list[z3.BoolRef] = field(default_factory=list)

    def enabled(self) -> z3.BoolRef:
        return z3.And(*[g for _, g in self.guards]) if self.guards else T


Build = Callable[[PState, Params], Fired]


@dataclass(frozen=True)
class PAction:
    name: str
    role: str
    at: str
    kind: str
    per: str  # "" | "agent" | "scope" — as StepDef.per
    build: Build
    source: str
    targets: tuple[str, ...]  # labels the thread can be at afterwards (lock-table dataflow)
    lock: tuple[str, str, bool] | None = None  # (class, mode, acquire) for lock steps
    enable: bool | None = None  # update_begin only
    relaxed: bool = False

    def fire(self, s: PState, p: Params) -> Fired:
        return self.build(s, p)


Extra = Callable[[PState, Params], dict[str, Fn]]
GuardX = Callable[[PState, Params], list[tuple[str, z3.BoolRef]]]


class Builder:
    def __init__(self, v: Variant) -> None:
        self.v = v
        self.out: list[PAction] = []

    def add(self, role: str, at: str, kind: str, per: str, build: Build, source: str,
            targets: tuple[str, ...], name: str = "", **kw: object) -> None:
        nm = name or f"{role[0]}.{at}.{kind}" + ("" if per != "agent" else "[a]")
        self.out.append(PAction(nm, role, at, kind, per, build, source, targets, **kw))  # type: ignore[arg-type]

    def lock(self, role: str, at: str, acquire: bool, cls: str, mode: str,
             goto: str | tuple[Callable[[PState, Params], z3.ExprRef], tuple[str, ...]],
             extra: Extra | None = None, per: str = "", extra_guard: GuardX | None = None,
             source: str = "", relaxed: bool = False,
             strict: Callable[[PState, Params], list[z3.BoolRef]] | None = None) -> None:
        """Mirror of programs.ProgramBuilder.lock (+ the per-agent selector of lookup steps)."""
        rel = LOCK_REL[(role, cls, mode)]
        sel = role == "lookup" and per == "agent"

        def build(s: PState, p: Params) -> Fired:
            a = p.a if cls == "serializer" else None
            g = [(f"at {at}", s.upc(p.t) == PC[role][at] if role == "updater" else s.lpc(p.t) == PC[role][at])]
            if sel:
                g.append(("looks up a", s.ag(p.t) == p.a))
            g += extra_guard(s, p) if extra_guard else []
            if acquire:
                free = shared_free(s, cls, a) if mode == "shared" else exclusive_free(s, cls, a)
                g.append((f"{cls} available for {mode} acquire", free))
            else:
                g.append((f"holds {cls} {mode}", holds(s, role, p.t, cls, mode, a)))
            upd = dict(extra(s, p)) if extra else {}
            val = T if acquire else F
            upd[rel] = set2(s, rel, p.t, p.a, val) if cls == "serializer" else set1(s, rel, p.t, val)
            pcn = "upc" if role == "updater" else "lpc"
            upd[pcn] = set1(s, pcn, p.t, PC[role][goto] if isinstance(goto, str) else goto[0](s, p))
            return Fired(g, [], s.with_(upd), strict(s, p) if strict else [])

        targets = (goto,) if isinstance(goto, str) else goto[1]
        kind = "lock_acquire" if acquire else "lock_release"
        self.add(role, at, kind, per, build, source or "digest §1.3 lock inventory", targets,
                 lock=(cls, mode, acquire), relaxed=relaxed)


def pc_step(s: PState, role: str, t: z3.ExprRef, label: str) -> dict[str, Fn]:
    pcn = "upc" if role == "updater" else "lpc"
    return {pcn: set1(s, pcn, t, PC[role][label])}


def build_actions(v: Variant) -> list[PAction]:
    b = Builder(v)
    _updater(b)
    _lookup(b)
    return b.out


def _rc_new(s: PState, old: z3.ArithRef, t: z3.ExprRef) -> z3.ArithRef:
    """++ on enable, clamped -- on disable (digest §2.2 'rc.all>0 ? --rc.all : no-op')."""
    return z3.If(s.enable(t), old + 1, z3.If(old > 0, old - 1, old))


# ---------------------------------------------------------------------------------------------
# update_serialization(agents | all, enable)   — digest §2.2
# ---------------------------------------------------------------------------------------------
def _updater(b: Builder) -> None:
    v = b.v
    R = "updater"
    src_post = "digest §2.2 post-fix [SRC amd-vkale@5d4ce3a9 update_serialization]"
    src_pre = "digest §2.2 pre-fix [PR #11869/#11870 reconstruction]"
    src_g0 = "digest §2.2 G0 [SRC mirror queue_controller.cpp L323-365]"
    at = lambda s, p, lab: s.upc(p.t) == PC[R][lab]  # noqa: E731

    for en in (True, False):
        def begin(s: PState, p: Params, en: bool = en) -> Fired:
            g = [("at idle", at(s, p, "idle"))]
            side: list[z3.BoolRef] = []
            if en:
                g.append(("holds no reference (a start must precede its stop)", z3.Not(s.hold(p.t))))
                # scopes of the fixed-size model: `all` (empty set) or a nonempty agent set;
                # global-flag has only `all` (programs.scopes(allow_sets=False))
                if v.global_flag:
                    side.append(p.all_p)
                side.append(z3.If(p.all_p, forall(Agent, lambda x: z3.Not(p.scope(x))),
                                  exists(Agent, lambda x: p.scope(x))))
            else:
                g.append(("holds a reference", s.hold(p.t)))
                g.append(("stops the same agent set it started",
                          z3.And(s.all(p.t) == p.all_p,
                                 forall(Agent, lambda x: z3.Or(p.all_p, s.inn(p.t, x) == p.scope(x))))))
                side.append(z3.Implies(p.all_p, forall(Agent, lambda x: z3.Not(p.scope(x)))))
            upd: dict[str, Fn] = {
                "hold": set1(s, "hold", p.t, z3.BoolVal(en)),
                "enable": set1(s, "enable", p.t, z3.BoolVal(en)),
                "all": set1(s, "all", p.t, p.all_p),
                "inn": row(s, "inn", p.t, lambda x: z3.And(z3.Not(p.all_p), p.scope(x))),
                "pend": row(s, "pend", p.t, lambda x: F),
                "was": row(s, "was", p.t, lambda x: F),
                "wh": row(s, "wh", p.t, lambda x: F),
            }
            upd.update(pc_step(s, R, p.t, "acq_queues"))
            return Fired(g, side, s.with_(upd))

        b.add(R, "idle", "update_begin", "scope", begin,
              "QueueController::update_serialization entry (enable_serialization / "
              "disable_serialization wrappers), digest §2.2", ("acq_queues",),
              name=f"u.idle.update_begin[{'enable' if en else 'disable'}]", enable=en)

    if v.global_flag:
        b.lock(R, "acq_queues", True, "queues", "shared", "global_store_flag", source=src_g0)

        def gstore(s: PState, p: Params) -> Fired:
            en = s.enable(p.t)
            # rc.all is a ghost here: the logical number of holders, which the G0 code never counts
            upd = {"flag": const(en), "rc_all": const(_rc_new(s, s.rc_all(), p.t))}
            upd.update(pc_step(s, R, p.t, "acq_map"))
            return Fired([("at global_store_flag", at(s, p, "global_store_flag"))], [], s.with_(upd))

        b.add(R, "global_store_flag", "flag_store", "", gstore,
              src_g0 + " `_serialized_enabled.store(b)`", ("acq_map",))
        b.lock(R, "acq_map", True, "serializer_map", "exclusive", "apply", source=src_g0,
               extra=lambda s, p: {"pend": row(s, "pend", p.t, lambda x: s.ex(x))})
    else:
        b.lock(R, "acq_queues", True, "queues", "shared", "acq_refcount", source=src_post)
        if v.apply_inside_refcount:
            b.lock(R, "acq_refcount", True, "refcount", "exclusive", "snapshot", source=src_post)
            b.lock(R, "snapshot", True, "serializer_map", "shared", "snapshot_release",
                   extra=lambda s, p: {"wh": row(s, "wh", p.t, lambda x: s.ex(x)),
                                       "was": row(s, "was", p.t, lambda x: enabled(s, x))},
                   source=src_post + " (was[a] for agents already in the map)")
            b.lock(R, "snapshot_release", False, "serializer_map", "shared", "count",
                   extra=lambda s, p: {"pend": row(s, "pend", p.t,
                                                   lambda x: z3.And(z3.Not(s.all(p.t)), s.inn(p.t, x)))},
                   source=src_post)
        else:
            b.lock(R, "acq_refcount", True, "refcount", "exclusive", "count", source=src_pre,
                   extra=lambda s, p: {"was": row(s, "was", p.t, lambda x: enabled(s, x)),
                                       "pend": row(s, "pend", p.t,
                                                   lambda x: z3.And(z3.Not(s.all(p.t)), s.inn(p.t, x)))})
        after_count = "acq_map" if v.apply_inside_refcount else "release_refcount_early"

        def count_agent(s: PState, p: Params) -> Fired:
            # `more`: another agent is still pending (the fixed size asks for a *higher* one; with
            # the lowest-first guard those coincide)
            more = z3.Bool(f"more@{p.tag}")
            side = [more == exists(Agent, lambda x: z3.And(x != p.a, s.pend(p.t, x)))]
            g = [("at count", at(s, p, "count")), ("updates an agent set", z3.Not(s.all(p.t))),
                 ("agent a is pending", s.pend(p.t, p.a))]
            upd = {"rc": set1(s, "rc", p.a, _rc_new(s, s.rc(p.a), p.t)),
                   "pend": set2(s, "pend", p.t, p.a, F),
                   "upc": set1(s, "upc", p.t, z3.If(more, PC[R]["count"], PC[R][after_count]))}
            return Fired(g, side, s.with_(upd))

        b.add(R, "count", "refcount_change", "agent", count_agent,
              "update_serialization: ++/-- per_agent[a] (clamped at 0), digest §2.2",
              ("count", after_count), relaxed=True)

        def count_all(s: PState, p: Params) -> Fired:
            upd = {"rc_all": const(_rc_new(s, s.rc_all(), p.t))}
            upd.update(pc_step(s, R, p.t, after_count))
            return Fired([("at count", at(s, p, "count")), ("updates all agents", s.all(p.t))], [],
                         s.with_(upd))

        b.add(R, "count", "refcount_change", "", count_all,
              "update_serialization: ++/-- all (clamped at 0), digest §2.2", (after_count,),
              name="u.count.refcount_change[all]")

        if v.apply_inside_refcount:
            b.lock(R, "acq_map", True, "serializer_map", "exclusive", "apply",
                   extra=lambda s, p: {"pend": row(s, "pend", p.t, lambda x: z3.And(
                       s.wh(p.t, x), s.was(p.t, x) != enabled(s, x)))},
                   source=src_post + " (transition iff was[a] != now[a], entries in `was` only)")
        else:
            b.lock(R, "release_refcount_early", False, "refcount", "exclusive", "acq_map",
                   extra=lambda s, p: {"pend": row(s, "pend", p.t, lambda x: s.was(p.t, x) != enabled(s, x))},
                   source=src_pre + " — the gap: crossings applied after U(rc)")
            b.lock(R, "acq_map", True, "serializer_map", "exclusive", "apply",
                   extra=lambda s, p: {"pend": row(s, "pend", p.t, lambda x: z3.And(s.pend(p.t, x), s.ex(x)))},
                   source=src_pre + " (find(a) or continue)")

    # ---- apply loop (shared by every variant) ----
    def ser_free_for_all_pending(s: PState, p: Params) -> list[z3.BoolRef]:
        return [forall(Agent, lambda x: z3.Implies(s.pend(p.t, x), exclusive_free(s, "serializer", x)))]

    b.lock(R, "apply", True, "serializer", "exclusive", "set_state", per="agent",
           extra_guard=lambda s, p: [("agent a needs a transition", s.pend(p.t, p.a))],
           source="profiler_serializer wlock in update_serialization, digest §2.2", relaxed=True,
           strict=ser_free_for_all_pending)

    def decision(s: PState, p: Params) -> z3.BoolRef:
        if v.action_from_count and not v.global_flag:
            return enabled(s, p.a)
        return s.enable(p.t)

    for kind, want in (("serializer_enable", True), ("serializer_disable", False)):
        def set_state(s: PState, p: Params, want: bool = want) -> Fired:
            d = decision(s, p)
            g = [("at set_state", at(s, p, "set_state")), ("holds serializer.a", s.us(p.t, p.a)),
                 ("decision", d if want else z3.Not(d))]
            upd = {"en": set1(s, "en", p.a, z3.BoolVal(want))}
            upd.update(pc_step(s, R, p.t, "release_serializer"))
            return Fired(g, [], s.with_(upd))

        b.add(R, "set_state", kind, "agent", set_state,
              "profiler_serializer::enable/disable(queues), digest §3.1", ("release_serializer",))

    b.lock(R, "release_serializer", False, "serializer", "exclusive", "apply", per="agent",
           extra=lambda s, p: {"pend": set2(s, "pend", p.t, p.a, F)})
    after_map = ("release_queues" if v.global_flag
                 else "release_refcount" if v.apply_inside_refcount else "store_flag")
    b.lock(R, "apply", False, "serializer_map", "exclusive", after_map,
           extra_guard=lambda s, p: [("no agent left to transition",
                                      forall(Agent, lambda x: z3.Not(s.pend(p.t, x))))])
    if not v.global_flag:
        if v.apply_inside_refcount:
            b.lock(R, "release_refcount", False, "refcount", "exclusive", "store_flag", source=src_post)

        def store(s: PState, p: Params) -> Fired:
            anyen = z3.Bool(f"any@{p.tag}")
            side = [anyen == z3.Or(s.rc_all() > 0, exists(Agent, lambda x: s.rc(x) > 0))]
            upd = {"flag": const(anyen)}
            upd.update(pc_step(s, R, p.t, "release_queues"))
            return Fired([("at store_flag", at(s, p, "store_flag"))], side, s.with_(upd))

        b.add(R, "store_flag", "flag_store", "", store,
              "_serialized_enabled.store(state.any()) after U(rc), digest §2.2 / P1 residual",
              ("release_queues",))
    b.lock(R, "release_queues", False, "queues", "shared", "end")

    def end(s: PState, p: Params) -> Fired:
        return Fired([("at end", at(s, p, "end"))], [], s.with_(pc_step(s, R, p.t, "idle")))

    b.add(R, "end", "update_end", "", end, "update_serialization return", ("idle",))


# ---------------------------------------------------------------------------------------------
# QueueController::serializer(queue) for the queue's agent   — digest §2.1
# ---------------------------------------------------------------------------------------------
def _lookup(b: Builder) -> None:
    v = b.v
    R = "lookup"
    holds_rc = v.lookup_holds_refcount and not v.global_flag
    first = ("acq_map_shared" if v.global_flag else "acq_map_first" if v.lookup_map_before_refcount
             else "acq_refcount")
    src_post = "digest §2.1 post-fix [SRC amd-vkale@5d4ce3a9 serializer()]"
    src_pre = "digest §2.1 pre-fix [PR #11870 reconstruction]"
    src_g0 = "digest §2.1 G0 [SRC mirror queue_controller.cpp L283-307]"

    def sel(s: PState, p: Params, label: str) -> list[tuple[str, z3.BoolRef]]:
        return [(f"at {label}", s.lpc(p.t) == PC[R][label]), ("looks up a", s.ag(p.t) == p.a)]

    def begin(s: PState, p: Params) -> Fired:
        upd = {"ag": set1(s, "ag", p.t, p.a), "sh": set1(s, "sh", p.t, F)}
        upd.update(pc_step(s, R, p.t, first))
        return Fired([("at idle", s.lpc(p.t) == PC[R]["idle"])], [], s.with_(upd))

    b.add(R, "idle", "lookup_begin", "agent", begin,
          "QueueController::serializer(queue) entry (create_queue, WriteInterceptor, "
          "AsyncSignalHandler), digest §1.1", (first,))

    def L(at: str, acquire: bool, cls: str, mode: str, goto: str | tuple, source: str = "", **kw: object) -> None:
        b.lock(R, at, acquire, cls, mode, goto, per="agent", source=source, **kw)  # type: ignore[arg-type]

    if not v.global_flag:
        if v.lookup_map_before_refcount:
            L("acq_map_first", True, "serializer_map", "exclusive", "acq_refcount",
              source="hypothetical inversion: W(smap) then R(rc)")
        L("acq_refcount", True, "refcount", "shared", "read", source=src_post)
        after_read = ("insert" if v.lookup_map_before_refcount
                      else "acq_map_shared" if holds_rc else "release_refcount_early")

        def read(s: PState, p: Params) -> Fired:
            upd = {"sh": set1(s, "sh", p.t, enabled(s, p.a))}
            upd.update(pc_step(s, R, p.t, after_read))
            return Fired(sel(s, p, "read"), [], s.with_(upd))

        b.add(R, "read", "refcount_read", "agent", read,
              "serializer(): should_serialize = refcount.enabled(agent)", (after_read,))
        if not holds_rc:
            L("release_refcount_early", False, "refcount", "shared", "acq_map_shared",
              source=src_pre + " — the gap: R(rc) released before the map is touched")

    L("acq_map_shared", True, "serializer_map", "shared", "find", source=src_post + " ulock read")

    def find(s: PState, p: Params) -> Fired:
        upd = {"lpc": set1(s, "lpc", p.t, z3.If(s.ex(p.a), PC[R]["release_map_hit"], PC[R]["release_map_miss"]))}
        return Fired(sel(s, p, "find"), [], s.with_(upd))

    b.add(R, "find", "serializer_lookup", "agent", find, "serializer(): find under the ulock read phase",
          ("release_map_hit", "release_map_miss"))
    L("release_map_hit", False, "serializer_map", "shared", "release_refcount" if holds_rc else "end")
    L("release_map_miss", False, "serializer_map", "shared", "acq_map",
      source="ulock: shared lock released before the exclusive one (not an upgrade)")
    L("acq_map", True, "serializer_map", "exclusive", "insert", source=src_post + " ulock write")

    def insert(s: PState, p: Params) -> Fired:
        created = z3.Not(s.ex(p.a))
        should = s.flag() if v.global_flag else s.sh(p.t)
        upd = {"ex": set1(s, "ex", p.a, T),
               "en": set1(s, "en", p.a, z3.If(created, F, s.en(p.a))),
               "sh": set1(s, "sh", p.t, should),
               "lpc": set1(s, "lpc", p.t, z3.If(z3.And(created, should), PC[R]["acq_serializer"],
                                                PC[R]["release_map"]))}
        return Fired(sel(s, p, "insert"), [], s.with_(upd))

    b.add(R, "insert", "serializer_insert", "agent", insert,
          (src_g0 + " emplace; enable if _serialized_enabled.load()") if v.global_flag
          else "serializer(): emplace(agent, new) then enable({}) if should_serialize",
          ("acq_serializer", "release_map"))
    L("acq_serializer", True, "serializer", "exclusive", "enable")

    def enable(s: PState, p: Params) -> Fired:
        g = sel(s, p, "enable") + [("holds serializer.a", s.ls(p.t, p.a))]
        upd = {"en": set1(s, "en", p.a, T)}
        upd.update(pc_step(s, R, p.t, "release_serializer"))
        return Fired(g, [], s.with_(upd))

    b.add(R, "enable", "serializer_enable", "agent", enable,
          "serializer(): ret->wlock(enable({})) on insertion", ("release_serializer",))
    L("release_serializer", False, "serializer", "exclusive", "release_map")
    L("release_map", False, "serializer_map", "exclusive",
      "release_refcount" if holds_rc or v.lookup_map_before_refcount else "end")
    if holds_rc or v.lookup_map_before_refcount:
        L("release_refcount", False, "refcount", "shared", "end", source=src_post)

    def end(s: PState, p: Params) -> Fired:
        return Fired(sel(s, p, "end"), [], s.with_(pc_step(s, R, p.t, "idle")))

    b.add(R, "end", "lookup_end", "agent", end, "serializer() return", ("idle",))


__all__ = ["PAction", "Params", "Fired", "build_actions", "ROLE_SORT"]
