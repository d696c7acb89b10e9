"""The protocol, written once: each thread role is a program of lock-step-granular steps.

One step = one action = one trace event. A step is enabled at a program-counter label; its guard,
its effect on the state and the values it observes are functions of a `Backend`, so the prover
reads them as Z3 terms and the checker/recorder evaluate them on concrete values.

Lock-protected computation that happens between two lock operations is attached to the step that
begins it (an acquire, or the data step under the lock); nothing another thread could observe in
between is lost, because the state it touches is protected by the lock the thread holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Callable, Sequence

from .backend import Backend, Term
from .variants import Variant
from .vocabulary import (
    SERIALIZER_LOCK,
    Config,
    State,
    count,
    enabled,
    exclusive_free,
    holds,
    lv,
    shared_free,
)

Params = dict[str, object]
GuardFn = Callable[[Backend, State, str, Params], list[tuple[str, Term]]]
EffectFn = Callable[[Backend, State, str, Params], dict[str, Term]]
ObsFn = Callable[[Backend, State, str, Params], dict[str, Term]]

UPDATER_LABELS = [
    "idle", "acq_queues", "acq_refcount", "snapshot", "snapshot_release", "count",
    "release_refcount_early", "acq_map", "apply", "set_state", "release_serializer",
    "release_refcount", "store_flag", "global_store_flag", "release_queues", "end",
]
LOOKUP_LABELS = [
    "idle", "acq_refcount", "read", "release_refcount_early", "acq_map_shared", "find",
    "release_map_hit", "release_map_miss", "acq_map", "insert", "acq_serializer", "enable",
    "release_serializer", "release_map", "release_refcount", "end", "acq_map_first",
]
LABELS = {"updater": UPDATER_LABELS, "lookup": LOOKUP_LABELS}


def pc_of(role: str, label: str) -> int:
    return LABELS[role].index(label)


def _no_guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
    return []


def _no_obs(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
    return {}


@dataclass(frozen=True)
class StepDef:
    role: str
    at: str
    kind: str
    per: str  # "" (one instance), "agent" (one per agent), "scope" (one per update scope x enable)
    static: Callable[[Params], dict[str, object]]
    guard: GuardFn
    effect: EffectFn
    observed: ObsFn
    source: str
    selectors: Callable[[Backend, State, str, Params], list[tuple[str, Term]]] = field(
        default=_no_guard
    )


def scopes(cfg: Config, allow_sets: bool) -> list[tuple[str, tuple[int, ...]]]:
    """Update scopes: `all` (empty agent set in the SDK) and, per-agent era, every agent subset."""
    out: list[tuple[str, tuple[int, ...]]] = [("all", ())]
    if allow_sets:
        for k in range(1, cfg.agents + 1):
            for combo in combinations(range(cfg.agents), k):
                out.append((",".join(map(str, combo)), combo))
    return out


class ProgramBuilder:
    def __init__(self, cfg: Config, v: Variant) -> None:
        self.cfg = cfg
        self.v = v
        self.steps: list[StepDef] = []

    # ---- generic lock steps -------------------------------------------------------------
    def lock(
        self,
        role: str,
        at: str,
        acquire: bool,
        lock: str,
        mode: str,
        goto: Callable[[Backend, State, str, Params], Term] | str,
        extra: EffectFn | None = None,
        per_agent: bool = False,
        extra_guard: GuardFn | None = None,
        source: str = "",
    ) -> None:
        cfg = self.cfg
        lock_name = (lambda p: f"{SERIALIZER_LOCK}.{p['agent']}") if per_agent else (lambda p: lock)

        def static(p: Params) -> dict[str, object]:
            return {"lock": lock_name(p), "mode": mode}

        def guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
            ln = lock_name(p)
            g = list(extra_guard(b, s, t, p)) if extra_guard else []
            if acquire:
                free = shared_free(b, s, cfg, ln) if mode == "shared" else exclusive_free(b, s, cfg, ln)
                g.append((f"{ln} available for {mode} acquire", free))
            else:
                g.append((f"{t} holds {ln} {mode}", holds(s, ln, mode, t)))
            return g

        def effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            ln = lock_name(p)
            upd = dict(extra(b, s, t, p)) if extra else {}
            upd[lv(ln, mode, t)] = b.true() if acquire else b.false()
            upd[f"pc.{t}"] = goto(b, s, t, p) if callable(goto) else pc_of(role, goto)
            return upd

        self.steps.append(
            StepDef(role, at, "lock_acquire" if acquire else "lock_release",
                    "agent" if per_agent else "", static, guard, effect, _no_obs,
                    source or "digest §1.3 lock inventory")
        )

    def add(self, role: str, at: str, kind: str, per: str, static: Callable[[Params], dict[str, object]],
            guard: GuardFn, effect: EffectFn, observed: ObsFn = _no_obs, source: str = "",
            selectors: Callable[[Backend, State, str, Params], list[tuple[str, Term]]] | None = None) -> None:
        self.steps.append(StepDef(role, at, kind, per, static, guard, effect, observed, source,
                                  selectors or _no_guard))


def build_steps(cfg: Config, v: Variant) -> list[StepDef]:
    pb = ProgramBuilder(cfg, v)
    _updater(pb)
    _lookup(pb)
    return pb.steps


def _pc(role: str, label: str) -> Callable[[Backend, State, str, Params], Term]:
    return lambda b, s, t, p: pc_of(role, label)


# ---------------------------------------------------------------------------------------------
# update_serialization(agents | all, enable)   — digest §2.2
# ---------------------------------------------------------------------------------------------
def _updater(pb: ProgramBuilder) -> None:
    cfg, v = pb.cfg, pb.v
    R = "updater"
    A = range(cfg.agents)
    src_post = "digest §2.2 post-fix [SRC amd-vkale@5d4ce3a9 update_serialization]"
    src_pre = "digest §2.2 pre-fix [PR #11869/#11870 reconstruction]"
    src_g0 = "digest §2.2 G0 [SRC mirror queue_controller.cpp L323-365]"

    def in_scope(b: Backend, s: State, t: str, a: int) -> Term:
        return b.Or(s[f"all.{t}"], s[f"in.{t}.{a}"])

    # Tool threads behave as holders (context start/stop): enable a scope, later disable the same
    # scope. Each begin is one instance per (scope, enable).
    def begin_static(p: Params) -> dict[str, object]:
        return {"agents": p["scope_name"], "enable": int(bool(p["enable"]))}

    def begin_guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
        members: tuple[int, ...] = p["scope"]  # type: ignore[assignment]
        is_all = p["scope_name"] == "all"
        if p["enable"]:
            return [(f"{t} holds no reference (a start must precede its stop)", b.Not(s[f"hold.{t}"]))]
        same = [s[f"all.{t}"] if is_all else b.Not(s[f"all.{t}"])]
        if not is_all:
            same += [s[f"in.{t}.{a}"] if a in members else b.Not(s[f"in.{t}.{a}"]) for a in A]
        return [(f"{t} holds a reference", s[f"hold.{t}"]),
                (f"{t} stops the same agent set it started", b.And(*same))]

    def begin_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        members: tuple[int, ...] = p["scope"]  # type: ignore[assignment]
        upd: dict[str, Term] = {
            f"hold.{t}": bool(p["enable"]),
            f"enable.{t}": bool(p["enable"]),
            f"all.{t}": p["scope_name"] == "all",
            f"pc.{t}": pc_of(R, "acq_queues"),
        }
        for a in A:
            upd[f"in.{t}.{a}"] = a in members
            upd[f"pend.{t}.{a}"] = False
            upd[f"was.{t}.{a}"] = False
            upd[f"wh.{t}.{a}"] = False
        return upd

    pb.add(R, "idle", "update_begin", "scope", begin_static, begin_guard, begin_effect,
           source="QueueController::update_serialization entry (enable_serialization / "
           "disable_serialization wrappers), digest §2.2")

    if v.global_flag:
        pb.lock(R, "acq_queues", True, "queues", "shared", "global_store_flag", source=src_g0)

        def gstore_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            en = s[f"enable.{t}"]
            old = s["rc.all"]
            # rc.all is a ghost here: the logical number of holders, which the G0 code never counts.
            return {"flag": en, "rc.all": b.If(en, old + 1, b.If(old > 0, old - 1, old)),
                    f"pc.{t}": pc_of(R, "acq_map")}

        pb.add(R, "global_store_flag", "flag_store", "", lambda p: {},
               _no_guard, gstore_effect, lambda b, s, t, p: {"value": s[f"enable.{t}"]},
               source=src_g0 + " `_serialized_enabled.store(b)`")

        def g_pend(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            return {f"pend.{t}.{a}": s[f"ser.ex.{a}"] for a in A}

        pb.lock(R, "acq_map", True, "serializer_map", "exclusive", "apply", extra=g_pend, source=src_g0)
    else:
        pb.lock(R, "acq_queues", True, "queues", "shared", "acq_refcount", source=src_post)
        if v.apply_inside_refcount:
            pb.lock(R, "acq_refcount", True, "refcount", "exclusive", "snapshot", source=src_post)

            def snap(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
                upd: dict[str, Term] = {}
                for a in A:
                    upd[f"wh.{t}.{a}"] = s[f"ser.ex.{a}"]
                    upd[f"was.{t}.{a}"] = enabled(b, s, a)
                return upd

            pb.lock(R, "snapshot", True, "serializer_map", "shared", "snapshot_release", extra=snap,
                    source=src_post + " (was[a] for agents already in the map)")

            def to_count(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
                return {f"pend.{t}.{a}": b.And(b.Not(s[f"all.{t}"]), s[f"in.{t}.{a}"]) for a in A}

            pb.lock(R, "snapshot_release", False, "serializer_map", "shared", "count", extra=to_count,
                    source=src_post)
        else:
            def pre_snap(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
                upd: dict[str, Term] = {}
                for a in A:
                    upd[f"was.{t}.{a}"] = enabled(b, s, a)
                    upd[f"pend.{t}.{a}"] = b.And(b.Not(s[f"all.{t}"]), s[f"in.{t}.{a}"])
                return upd

            pb.lock(R, "acq_refcount", True, "refcount", "exclusive", "count", extra=pre_snap,
                    source=src_pre)

        after_count = "acq_map" if v.apply_inside_refcount else "release_refcount_early"

        def lowest_pending(b: Backend, s: State, t: str, a: int) -> list[tuple[str, Term]]:
            return [(f"agent {a} is pending for {t}", s[f"pend.{t}.{a}"]),
                    ("no lower agent pending (agents are processed in order)",
                     b.And(*[b.Not(s[f"pend.{t}.{x}"]) for x in range(a)]))]

        def rc_step(key: str) -> tuple[Callable[[Backend, State, str], Term], Callable[[Backend, State, str], Term]]:
            def new(b: Backend, s: State, t: str) -> Term:
                old = s[key]
                return b.If(s[f"enable.{t}"], old + 1, b.If(old > 0, old - 1, old))
            return (lambda b, s, t: s[key]), new

        def count_agent_guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
            a = int(p["agent"])  # type: ignore[arg-type]
            return [(f"{t} updates an agent set", b.Not(s[f"all.{t}"]))] + lowest_pending(b, s, t, a)

        def count_agent_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            a = int(p["agent"])  # type: ignore[arg-type]
            _, new = rc_step(f"rc.{a}")
            more = b.Or(*[s[f"pend.{t}.{x}"] for x in range(a + 1, cfg.agents)])
            return {f"rc.{a}": new(b, s, t), f"pend.{t}.{a}": False,
                    f"pc.{t}": b.If(more, pc_of(R, "count"), pc_of(R, after_count))}

        def count_agent_obs(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            a = int(p["agent"])  # type: ignore[arg-type]
            _, new = rc_step(f"rc.{a}")
            return {"old": s[f"rc.{a}"], "new": new(b, s, t)}

        pb.add(R, "count", "refcount_change", "agent", lambda p: {"agent": p["agent"]},
               count_agent_guard, count_agent_effect, count_agent_obs,
               source="update_serialization: ++/-- per_agent[a] (clamped at 0), digest §2.2")

        def count_all_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            _, new = rc_step("rc.all")
            return {"rc.all": new(b, s, t), f"pc.{t}": pc_of(R, after_count)}

        pb.add(R, "count", "refcount_change", "", lambda p: {"agent": "all"},
               lambda b, s, t, p: [(f"{t} updates all agents", s[f"all.{t}"])],
               count_all_effect,
               lambda b, s, t, p: {"old": s["rc.all"], "new": rc_step("rc.all")[1](b, s, t)},
               source="update_serialization: ++/-- all (clamped at 0), digest §2.2")

        if v.apply_inside_refcount:
            def crossed(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
                return {f"pend.{t}.{a}": b.And(s[f"wh.{t}.{a}"], s[f"was.{t}.{a}"] != enabled(b, s, a))
                        for a in A}

            pb.lock(R, "acq_map", True, "serializer_map", "exclusive", "apply", extra=crossed,
                    source=src_post + " (transition iff was[a] != now[a], entries in `was` only)")
        else:
            def crossed_pre(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
                return {f"pend.{t}.{a}": s[f"was.{t}.{a}"] != enabled(b, s, a) for a in A}

            pb.lock(R, "release_refcount_early", False, "refcount", "exclusive", "acq_map",
                    extra=crossed_pre, source=src_pre + " — the gap: crossings applied after U(rc)")

            def find(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
                return {f"pend.{t}.{a}": b.And(s[f"pend.{t}.{a}"], s[f"ser.ex.{a}"]) for a in A}

            pb.lock(R, "acq_map", True, "serializer_map", "exclusive", "apply", extra=find,
                    source=src_pre + " (find(a) or continue)")

    # ---- apply loop (shared by every variant) ----
    def apply_guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
        a = int(p["agent"])  # type: ignore[arg-type]
        return [(f"agent {a} needs a transition", s[f"pend.{t}.{a}"]),
                ("no lower agent pending", b.And(*[b.Not(s[f"pend.{t}.{x}"]) for x in range(a)]))]

    pb.lock(R, "apply", True, "", "exclusive", "set_state", per_agent=True, extra_guard=apply_guard,
            source="profiler_serializer wlock in update_serialization, digest §2.2")

    def decision(b: Backend, s: State, t: str, a: int) -> Term:
        if v.action_from_count and not v.global_flag:
            return enabled(b, s, a)
        return s[f"enable.{t}"]

    why = ("post-update count(a) > 0" if v.action_from_count and not v.global_flag
           else "the caller's enable flag")
    for kind, want in (("serializer_enable", True), ("serializer_disable", False)):
        def set_guard(b: Backend, s: State, t: str, p: Params, want: bool = want) -> list[tuple[str, Term]]:
            a = int(p["agent"])  # type: ignore[arg-type]
            d = decision(b, s, t, a)
            return [(f"{t} holds serializer.{a}", holds(s, f"{SERIALIZER_LOCK}.{a}", "exclusive", t)),
                    (f"{'enable' if want else 'disable'} chosen from {why}", d if want else b.Not(d))]

        def set_effect(b: Backend, s: State, t: str, p: Params, want: bool = want) -> dict[str, Term]:
            a = int(p["agent"])  # type: ignore[arg-type]
            return {f"ser.en.{a}": want, f"pc.{t}": pc_of(R, "release_serializer")}

        pb.add(R, "set_state", kind, "agent", lambda p: {"agent": p["agent"]}, set_guard, set_effect,
               source="profiler_serializer::enable/disable(queues), digest §3.1")

    def clear_pend(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        return {f"pend.{t}.{p['agent']}": False}

    pb.lock(R, "release_serializer", False, "", "exclusive", "apply", per_agent=True, extra=clear_pend)

    after_map = ("release_queues" if v.global_flag
                 else "release_refcount" if v.apply_inside_refcount else "store_flag")
    pb.lock(R, "apply", False, "serializer_map", "exclusive", after_map,
            extra_guard=lambda b, s, t, p: [("no agent left to transition",
                                             b.And(*[b.Not(s[f"pend.{t}.{a}"]) for a in A]))])
    if not v.global_flag:
        if v.apply_inside_refcount:
            pb.lock(R, "release_refcount", False, "refcount", "exclusive", "store_flag", source=src_post)

        def any_enabled(b: Backend, s: State) -> Term:
            return b.Or(s["rc.all"] > 0, *[s[f"rc.{a}"] > 0 for a in A])

        pb.add(R, "store_flag", "flag_store", "", lambda p: {}, _no_guard,
               lambda b, s, t, p: {"flag": any_enabled(b, s), f"pc.{t}": pc_of(R, "release_queues")},
               lambda b, s, t, p: {"value": any_enabled(b, s)},
               source="_serialized_enabled.store(state.any()) after U(rc), digest §2.2 / P1 residual")
    pb.lock(R, "release_queues", False, "queues", "shared", "end")
    pb.add(R, "end", "update_end", "", lambda p: {}, _no_guard,
           lambda b, s, t, p: {f"pc.{t}": pc_of(R, "idle")}, source="update_serialization return")


# ---------------------------------------------------------------------------------------------
# QueueController::serializer(queue) for the queue's agent   — digest §2.1
# ---------------------------------------------------------------------------------------------
def _lookup(pb: ProgramBuilder) -> None:
    v = pb.v
    R = "lookup"

    def sel(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
        return [(f"{t} looks up agent {p['agent']}", s[f"ag.{t}"] == int(p["agent"]))]  # type: ignore[arg-type]

    holds_rc = v.lookup_holds_refcount and not v.global_flag
    first = ("acq_map_shared" if v.global_flag else "acq_map_first" if v.lookup_map_before_refcount
             else "acq_refcount")
    pb.add(R, "idle", "lookup_begin", "agent", lambda p: {"agent": p["agent"]}, _no_guard,
           lambda b, s, t, p: {f"ag.{t}": int(p["agent"]), f"sh.{t}": False,  # type: ignore[arg-type]
                               f"pc.{t}": pc_of(R, first)},
           source="QueueController::serializer(queue) entry (create_queue, WriteInterceptor, "
           "AsyncSignalHandler), digest §1.1")

    def per_agent_lock(at: str, acquire: bool, lock: str, mode: str, goto: str | Callable[..., Term],
                       extra: EffectFn | None = None, source: str = "") -> None:
        # the lock steps of serializer() are instantiated per agent so the agent selects the path
        before = len(pb.steps)
        pb.lock(R, at, acquire, lock, mode, goto, extra=extra, source=source)
        st = pb.steps[before]
        pb.steps[before] = StepDef(st.role, st.at, st.kind, "agent", st.static, st.guard, st.effect,
                                   st.observed, st.source, sel)

    src_post = "digest §2.1 post-fix [SRC amd-vkale@5d4ce3a9 serializer()]"
    src_pre = "digest §2.1 pre-fix [PR #11870 reconstruction]"
    src_g0 = "digest §2.1 G0 [SRC mirror queue_controller.cpp L283-307]"

    if not v.global_flag:
        if v.lookup_map_before_refcount:
            per_agent_lock("acq_map_first", True, "serializer_map", "exclusive", "acq_refcount",
                           source="hypothetical inversion: W(smap) then R(rc)")
        per_agent_lock("acq_refcount", True, "refcount", "shared", "read", source=src_post)
        after_read = ("insert" if v.lookup_map_before_refcount
                      else "acq_map_shared" if holds_rc else "release_refcount_early")

        def read_eff(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
            a = int(p["agent"])  # type: ignore[arg-type]
            return {f"sh.{t}": enabled(b, s, a), f"pc.{t}": pc_of(R, after_read)}

        pb.add(R, "read", "refcount_read", "agent", lambda p: {"agent": p["agent"]}, _no_guard, read_eff,
               lambda b, s, t, p: {"count": count(b, s, int(p["agent"]))},  # type: ignore[arg-type]
               source="serializer(): should_serialize = refcount.enabled(agent)", selectors=sel)
        if not holds_rc:
            per_agent_lock("release_refcount_early", False, "refcount", "shared", "acq_map_shared",
                           source=src_pre + " — the gap: R(rc) released before the map is touched")

    per_agent_lock("acq_map_shared", True, "serializer_map", "shared", "find", source=src_post + " ulock read")

    def find_eff(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        a = int(p["agent"])  # type: ignore[arg-type]
        return {f"pc.{t}": b.If(s[f"ser.ex.{a}"], pc_of(R, "release_map_hit"), pc_of(R, "release_map_miss"))}

    pb.add(R, "find", "serializer_lookup", "agent", lambda p: {"agent": p["agent"]}, _no_guard, find_eff,
           lambda b, s, t, p: {"found": s[f"ser.ex.{p['agent']}"]},
           source="serializer(): find under the ulock read phase", selectors=sel)
    per_agent_lock("release_map_hit", False, "serializer_map", "shared",
                   "release_refcount" if holds_rc else "end")
    per_agent_lock("release_map_miss", False, "serializer_map", "shared", "acq_map",
                   source="ulock: shared lock released before the exclusive one (not an upgrade)")
    per_agent_lock("acq_map", True, "serializer_map", "exclusive", "insert", source=src_post + " ulock write")

    def ins_eff(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        a = int(p["agent"])  # type: ignore[arg-type]
        created = b.Not(s[f"ser.ex.{a}"])
        should = s["flag"] if v.global_flag else s[f"sh.{t}"]
        return {f"ser.ex.{a}": True,
                f"ser.en.{a}": b.If(created, False, s[f"ser.en.{a}"]),
                f"sh.{t}": should,
                f"pc.{t}": b.If(b.And(created, should), pc_of(R, "acq_serializer"), pc_of(R, "release_map"))}

    pb.add(R, "insert", "serializer_insert", "agent", lambda p: {"agent": p["agent"]}, _no_guard, ins_eff,
           lambda b, s, t, p: {"created": b.Not(s[f"ser.ex.{p['agent']}"])},
           source=(src_g0 + " emplace; enable if _serialized_enabled.load()") if v.global_flag
           else "serializer(): emplace(agent, new) then enable({}) if should_serialize", selectors=sel)

    def ser_lock(at: str, acquire: bool, goto: str) -> None:
        before = len(pb.steps)
        pb.lock(R, at, acquire, "", "exclusive", goto, per_agent=True)
        st = pb.steps[before]
        pb.steps[before] = StepDef(st.role, st.at, st.kind, st.per, st.static, st.guard, st.effect,
                                   st.observed, st.source, sel)

    ser_lock("acq_serializer", True, "enable")
    pb.add(R, "enable", "serializer_enable", "agent", lambda p: {"agent": p["agent"]},
           lambda b, s, t, p: [(f"{t} holds serializer.{p['agent']}",
                                holds(s, f"{SERIALIZER_LOCK}.{p['agent']}", "exclusive", t))],
           lambda b, s, t, p: {f"ser.en.{p['agent']}": True, f"pc.{t}": pc_of(R, "release_serializer")},
           source="serializer(): ret->wlock(enable({})) on insertion", selectors=sel)
    ser_lock("release_serializer", False, "release_map")
    per_agent_lock("release_map", False, "serializer_map", "exclusive",
                   "release_refcount" if holds_rc or v.lookup_map_before_refcount else "end")
    if holds_rc or v.lookup_map_before_refcount:
        per_agent_lock("release_refcount", False, "refcount", "shared", "end", source=src_post)
    pb.add(R, "end", "lookup_end", "agent", lambda p: {"agent": p["agent"]}, _no_guard,
           lambda b, s, t, p: {f"pc.{t}": pc_of(R, "idle")}, source="serializer() return", selectors=sel)


_ROLE_BY_PREFIX = {"u": "updater", "l": "lookup", "t": "tool", "d": "dispatch", "h": "complete"}


def role_of(t: str) -> str:
    """Thread name -> role: u*/l* in the core model, t*/d*/h* in the lifecycle (spec.lifecycle)."""
    return _ROLE_BY_PREFIX[t[0]]


def instantiate_params(cfg: Config, v: Variant, step: StepDef) -> Sequence[Params]:
    if step.per == "agent":
        return [{"agent": a} for a in range(cfg.agents)]
    if step.per == "scope":
        out: list[Params] = []
        for name, members in scopes(cfg, allow_sets=not v.global_flag):
            for en in (True, False):
                out.append({"scope_name": name, "scope": members, "enable": en})
        return out
    return [{}]
