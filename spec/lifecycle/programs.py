"""The SPM context lifecycle, written once as thread programs (digest §2.4-§2.11).

Roles: `tool` (context::start_context / stop_context / set_dispatch_agents / deactivate / profile
destroy / registry add_callback), `dispatch` (WriteInterceptor with the SPM enter hook),
`complete` (AsyncSignalHandler with the SPM exit hook). Work done entirely under one lock (the
contexts mutex, a `Synchronized` map lock) is one step: nothing another thread can observe happens
inside it. The steps are cut exactly at the gaps the review argued about: unlock -> CAS publish ->
service start -> marker release in start; the four phases of stop; hook snapshot -> submission
in WriteInterceptor; exit hooks -> async_complete in the completion handler.
"""
from __future__ import annotations

from typing import Callable

from ..backend import Backend, Term
from ..model import Params, StepDef
from ..programs import pc_of
from .variants import LVariant, hook_tags
from .vocabulary import (
    D_EXITED, D_DONE, D_FLIGHT, D_HOOKED, D_NONE, FREE, P_EMPTY, P_NONE, P_SPM, PUBLISHED, RESERVED,
    LConfig, State, collects_on, count, intersects, set_text,
)

# labels and result codes are the definition's (one list); these closures are kept only for the
# differential test against it (tests/test_lifecycle_definition.py)
from .definition import (  # noqa: E402
    A_LOCKED, A_OK, COMPLETE_LABELS, DISPATCH_LABELS, R_ALREADY, R_CONFLICT, R_OK, S_FOUND, S_NOT_FOUND,
    TOOL_LABELS,
)

Obs = Callable[[Backend, State, str, Params], dict[str, Term]]


def _pc(role: str, label: str) -> int:
    return pc_of(role, label)


def _no_guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
    return []


class LifecycleBuilder:
    def __init__(self, cfg: LConfig, v: LVariant) -> None:
        self.cfg = cfg
        self.v = v
        self.steps: list[StepDef] = []

    def step(self, role: str, at: str, kind: str, per: str, static: Callable[[Params], dict[str, object]],
             guard: Callable[[Backend, State, str, Params], list[tuple[str, Term]]],
             effect: Callable[[Backend, State, str, Params], dict[str, Term]], source: str,
             observed: Obs | None = None,
             selectors: Callable[[Backend, State, str, Params], list[tuple[str, Term]]] | None = None) -> None:
        self.steps.append(StepDef(role, at, kind, per, static, guard, effect,
                                  observed or (lambda b, s, t, p: {}), source, selectors or _no_guard))


# ---- shared pieces -----------------------------------------------------------------------------
def mutex_free(b: Backend, s: State) -> list[tuple[str, Term]]:
    return [("contexts mutex is free", s["mtx"] == 0)]


def no_markers(b: Backend, s: State, cfg: LConfig) -> list[tuple[str, Term]]:
    """wait_for_stopping_contexts(): cv wait until the `stopping` set is empty (digest §2.8)."""
    return [("no start/stop in progress (stopping set empty)",
             b.And(*[b.Not(s[f"mk.{c}"]) for c in range(cfg.contexts)]))]


def scope_all(b: Backend, s: State, cfg: LConfig, v: LVariant, c: int) -> Term:
    if not v.scoped:
        return b.true()
    return b.Not(b.Or(*[s[f"ag.{c}.{a}"] for a in range(cfg.agents)]))


def scope_mask(b: Backend, s: State, cfg: LConfig, v: LVariant, c: int) -> Term:
    """The agent set an update covers, as a bitmask; 0 = all agents (the SDK's empty set)."""
    if not v.scoped:
        return 0
    return b.Sum([b.If(s[f"ag.{c}.{a}"], 1 << a, 0) for a in range(cfg.agents)])


def update_serialization(b: Backend, s: State, cfg: LConfig, v: LVariant, c: int, enable: bool) -> dict[str, Term]:
    """QueueController::enable/disable_serialization(agents(c)) as one atomic step, with the
    ghost references context c holds (hd.*) moved alongside (digest §2.2 post-fix, §4 P9)."""
    def step(x: Term, cap: int) -> Term:
        return b.If(x < cap, x + 1, x) if enable else b.If(x > 0, x - 1, x)

    is_all = scope_all(b, s, cfg, v, c)
    refs = 2 * cfg.contexts + 1
    upd: dict[str, Term] = {"rc.all": b.If(is_all, step(s["rc.all"], refs), s["rc.all"]),
                            f"hd.{c}.all": b.If(is_all, step(s[f"hd.{c}.all"], 3), s[f"hd.{c}.all"])}
    for a in range(cfg.agents):
        inside = b.And(b.Not(is_all), s[f"ag.{c}.{a}"])
        upd[f"rc.{a}"] = b.If(inside, step(s[f"rc.{a}"], refs), s[f"rc.{a}"])
        upd[f"hd.{c}.{a}"] = b.If(inside, step(s[f"hd.{c}.{a}"], 3), s[f"hd.{c}.{a}"])
    for a in range(cfg.agents):
        now = upd["rc.all"] + upd[f"rc.{a}"]
        # transitions applied inside the refcount write lock from the post-update count (P1 final)
        upd[f"ser.en.{a}"] = b.If(s[f"ser.ex.{a}"], now > 0, s[f"ser.en.{a}"])
    return upd


def build_steps(cfg: LConfig, v: LVariant) -> list[StepDef]:
    pb = LifecycleBuilder(cfg, v)
    _tool(pb)
    _dispatch(pb)
    _complete(pb)
    return pb.steps


def _sel_ctx(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
    return [(f"{t} works on context {p['ctx']}", s[f"cx.{t}"] == int(p["ctx"]))]  # type: ignore[arg-type]


def _ctx_static(p: Params) -> dict[str, object]:
    return {"ctx": p["ctx"]}


# ---------------------------------------------------------------------------------------------
# tool threads: rocprofiler_start_context / stop_context / spm set_agents / ... (digest §2.7, §2.8)
# ---------------------------------------------------------------------------------------------
def _tool(pb: LifecycleBuilder) -> None:
    cfg, v = pb.cfg, pb.v
    R = "tool"
    C = range(cfg.contexts)
    src_ctx = "digest §2.8 post [SRC amd-vkale@504daf36 / ROCm@003ba9fb context.cpp]"

    def at(label: str) -> int:
        return _pc(R, label)

    # -- registration (allocate_context + SPM configure; registered contexts are never dropped) --
    pb.step(R, "idle", "context_register", "ctx", _ctx_static,
            lambda b, s, t, p: [(f"context {p['ctx']} not yet registered", b.Not(s[f"reg.{p['ctx']}"]))],
            lambda b, s, t, p: {f"reg.{p['ctx']}": True},
            "digest §1.2 registered contexts (registry + published snapshot; retired kept alive)")

    # -- registry client (PC sampling / thread trace / device counters still use add_callback) --
    pb.step(R, "idle", "add_callback", "", lambda p: {},
            lambda b, s, t, p: [("registry ids left in the model", s["ids"] < cfg.max_ids)],
            lambda b, s, t, p: {"ids": s["ids"] + 1},
            "digest §2.11: `static atomic<ClientID> client_id{1}` in QueueController::add_callback",
            observed=lambda b, s, t, p: {"id": s["ids"] + 1})

    # -- start_context ---------------------------------------------------------------------------
    def scan(b: Backend, s: State, c: int) -> Term:
        """Result of the scan over get_active_contexts(): published slots only (null skipped)."""
        conflict = b.Or(*[b.And(s[f"slot.{o}"] == PUBLISHED, intersects(b, s, cfg, c, o))
                          for o in C if o != c])
        return b.If(s[f"slot.{c}"] == PUBLISHED, R_ALREADY, b.If(conflict, R_CONFLICT, R_OK))

    def reserve(b: Backend, s: State, t: str, c: int, result: Term) -> dict[str, Term]:
        ok = result == R_OK
        upd: dict[str, Term] = {
            f"slot.{c}": b.If(ok, RESERVED, s[f"slot.{c}"]),
            f"cx.{t}": c,
            f"pc.{t}": b.If(ok, at("publish"), at("idle")),
            "g.conflict": b.Or(s["g.conflict"], result == R_CONFLICT),
        }
        if v.start_marker:
            upd[f"mk.{c}"] = b.If(ok, True, s[f"mk.{c}"])
        return upd

    def start_guard(b: Backend, s: State, t: str, c: int) -> list[tuple[str, Term]]:
        g = mutex_free(b, s) + no_markers(b, s, cfg)
        g.append((f"context {c} registered", s[f"reg.{c}"]))
        g.append((f"context {c} profile alive", s[f"prof.{c}"]))
        # [INF] model gap: a second concurrent start of a context whose slot is reserved but not
        # yet published would reserve a second slot; one slot per context is modelled.
        g.append((f"context {c} has no reserved-unpublished slot", s[f"slot.{c}"] != RESERVED))
        return g

    if v.scan_locked:
        pb.step(R, "idle", "start_begin", "ctx", _ctx_static,
                lambda b, s, t, p: start_guard(b, s, t, int(p["ctx"])),  # type: ignore[arg-type]
                lambda b, s, t, p: reserve(b, s, t, int(p["ctx"]), scan(b, s, int(p["ctx"]))),  # type: ignore[arg-type]
                src_ctx + ": lock; wait_for_stopping_contexts; scan (same id -> SUCCESS, intersects -> "
                "CONTEXT_CONFLICT); reserve slot; stopping.insert(id); unlock",
                observed=lambda b, s, t, p: {"result": scan(b, s, int(p["ctx"]))})  # type: ignore[arg-type]
    else:
        pb.step(R, "idle", "start_scan", "ctx", _ctx_static,
                lambda b, s, t, p: [(f"context {p['ctx']} registered", s[f"reg.{p['ctx']}"]),
                                    (f"context {p['ctx']} profile alive", s[f"prof.{p['ctx']}"])],
                lambda b, s, t, p: {f"sc.{t}": scan(b, s, int(p["ctx"])), f"cx.{t}": int(p["ctx"]),  # type: ignore[arg-type]
                                    f"pc.{t}": at("scan_done")},
                "digest §5.1 variant A: conflict scan over get_active_contexts() before the mutex "
                "(mirror context.cpp L283-295)",
                observed=lambda b, s, t, p: {"result": scan(b, s, int(p["ctx"]))})  # type: ignore[arg-type]
        pb.step(R, "scan_done", "start_begin", "ctx", _ctx_static,
                lambda b, s, t, p: start_guard(b, s, t, int(p["ctx"])),  # type: ignore[arg-type]
                lambda b, s, t, p: reserve(b, s, t, int(p["ctx"]), s[f"sc.{t}"]),  # type: ignore[arg-type]
                "digest §5.1 variant A: lock; reserve slot from the earlier scan's verdict; unlock",
                observed=lambda b, s, t, p: {"result": s[f"sc.{t}"]}, selectors=_sel_ctx)

    pb.step(R, "publish", "slot_publish", "ctx", _ctx_static, _no_guard,
            lambda b, s, t, p: {f"slot.{p['ctx']}": PUBLISHED, f"pc.{t}": at("spm_enable")},
            src_ctx + ": CAS slot[idx] null -> cfg after unlock", selectors=_sel_ctx)

    pb.step(R, "spm_enable", "spm_enable", "ctx", _ctx_static, _no_guard,
            lambda b, s, t, p: {**update_serialization(b, s, cfg, v, int(p["ctx"]), True),  # type: ignore[arg-type]
                                f"pc.{t}": at("spm_set_enabled")},
            "spm::start_context: controller->enable_serialization(ctx.dispatch_spm.agents), digest §2.7 "
            "post [SRC amd-vkale@5d4ce3a9]" + ("" if v.scoped else "; unscoped enable_serialization() "
                                                 "[SRC ROCm@80e98e0c]"),
            observed=lambda b, s, t, p: {"agents_mask": scope_mask(b, s, cfg, v, int(p["ctx"]))},  # type: ignore[arg-type]
            selectors=_sel_ctx)

    pb.step(R, "spm_set_enabled", "spm_set_enabled", "ctx", _ctx_static, _no_guard,
            lambda b, s, t, p: {f"en.{p['ctx']}": True,
                                f"pc.{t}": at("start_release") if v.start_marker else at("idle")},
            "spm::start_context: W(enabled): enabled = true (after acquiring), digest §2.7",
            selectors=_sel_ctx)

    if v.start_marker:
        pb.step(R, "start_release", "marker_release", "ctx", _ctx_static,
                lambda b, s, t, p: mutex_free(b, s),
                lambda b, s, t, p: {f"mk.{p['ctx']}": False, f"pc.{t}": at("idle")},
                src_ctx + ": lock; stopping.erase(id); unlock; cv.notify_all", selectors=_sel_ctx)

    # -- stop_context ----------------------------------------------------------------------------
    def stop_begin_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        c = int(p["ctx"])  # type: ignore[arg-type]
        found = s[f"slot.{c}"] == PUBLISHED
        upd: dict[str, Term] = {f"mk.{c}": b.If(found, True, s[f"mk.{c}"]), f"cx.{t}": c,
                                f"pc.{t}": b.If(found, at("spm_clear_enabled"), at("idle"))}
        if v.slot_cleared_first:
            upd[f"slot.{c}"] = b.If(found, FREE, s[f"slot.{c}"])
        return upd

    pb.step(R, "idle", "stop_begin", "ctx", _ctx_static,
            lambda b, s, t, p: mutex_free(b, s) + no_markers(b, s, cfg),
            stop_begin_effect,
            (src_ctx + " phase 1: lock; wait; find slot (none -> CONTEXT_NOT_FOUND); stopping.insert; unlock")
            if not v.slot_cleared_first else
            "digest §2.8 before the ordering fix: lock; find slot; CAS slot -> null first (context.cpp:371), "
            "then services (context.cpp:383) under the same lock",
            observed=lambda b, s, t, p: {"result": b.If(s[f"slot.{p['ctx']}"] == PUBLISHED, S_FOUND, S_NOT_FOUND)})

    def clear_enabled(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        c = int(p["ctx"])  # type: ignore[arg-type]
        was = s[f"en.{c}"]
        after_no_release = at("stop_release") if v.slot_cleared_first else at("slot_clear")
        nxt = at("drain") if not v.stop_disable_guarded else b.If(was, at("drain"), after_no_release)
        return {f"en.{c}": False, f"was.{t}": was, f"pc.{t}": nxt}

    pb.step(R, "spm_clear_enabled", "spm_clear_enabled", "ctx", _ctx_static, _no_guard, clear_enabled,
            "spm::stop_context: W(enabled): was = enabled; enabled = false, digest §2.7 post"
            + ("" if v.stop_disable_guarded else "; mid version releases unconditionally [SRC ROCm@80e98e0c]"),
            observed=lambda b, s, t, p: {"was": s[f"en.{p['ctx']}"]}, selectors=_sel_ctx)

    def idle_queues(b: Backend, s: State) -> Term:
        return b.And(*[s[f"inf.{a}"] == 0 for a in range(cfg.agents)])

    pb.step(R, "drain", "queue_sync", "ctx", _ctx_static,
            lambda b, s, t, p: [("every queue's _active_kernels is 0", idle_queues(b, s))],
            lambda b, s, t, p: {f"pc.{t}": at("spm_disable")},
            "queue_controller_sync(): Queue::sync() on every queue of every agent returns true, digest §2.9",
            observed=lambda b, s, t, p: {"drained": True}, selectors=_sel_ctx)
    if cfg.timeouts:
        pb.step(R, "drain", "queue_sync", "ctx", _ctx_static,
                lambda b, s, t, p: [("some queue still has kernels in flight", b.Not(idle_queues(b, s)))],
                lambda b, s, t, p: {f"pc.{t}": at("spm_disable"), "g.timeout": True},
                "Queue::sync(): 5 s timeout, ROCP_WARNING 'Timeout while waiting for queue sync'; "
                "spm::stop_context ignores the result, digest §2.9",
                observed=lambda b, s, t, p: {"drained": False}, selectors=_sel_ctx)

    pb.step(R, "spm_disable", "spm_disable", "ctx", _ctx_static, _no_guard,
            lambda b, s, t, p: {**update_serialization(b, s, cfg, v, int(p["ctx"]), False),  # type: ignore[arg-type]
                                f"pc.{t}": at("stop_release") if v.slot_cleared_first else at("slot_clear")},
            "spm::stop_context: controller->disable_serialization(ctx.dispatch_spm.agents), digest §2.7",
            observed=lambda b, s, t, p: {"agents_mask": scope_mask(b, s, cfg, v, int(p["ctx"]))},  # type: ignore[arg-type]
            selectors=_sel_ctx)

    if not v.slot_cleared_first:
        pb.step(R, "slot_clear", "slot_clear", "ctx", _ctx_static,
                lambda b, s, t, p: mutex_free(b, s),
                lambda b, s, t, p: {f"slot.{p['ctx']}": FREE, f"pc.{t}": at("stop_release")},
                src_ctx + " phase 3: lock; CAS slot ctx -> null; num_active--; unlock", selectors=_sel_ctx)

    pb.step(R, "stop_release", "marker_release", "ctx", _ctx_static,
            lambda b, s, t, p: mutex_free(b, s),
            lambda b, s, t, p: {f"mk.{p['ctx']}": False, f"pc.{t}": at("idle")},
            src_ctx + " scope guard: lock; stopping.erase(id); unlock; cv.notify_all", selectors=_sel_ctx)

    # -- set_dispatch_agents (digest §2.7) ----------------------------------------------------------
    def sa_static(p: Params) -> dict[str, object]:
        return {"ctx": p["ctx"], "agents": set_text(p["set"])}  # type: ignore[arg-type]

    def sa_guard(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
        g = mutex_free(b, s)
        if v.set_agents_waits:
            g += no_markers(b, s, cfg)
        return g

    def sa_check(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        c = int(p["ctx"])  # type: ignore[arg-type]
        members: tuple[int, ...] = p["set"]  # type: ignore[assignment]
        active = s[f"slot.{c}"] == PUBLISHED
        upd: dict[str, Term] = {"mtx": b.If(active, 0, int(t[1:]) + 1), f"cx.{t}": c,
                                f"pc.{t}": b.If(active, at("idle"), at("sa_write")),
                                "g.locked": b.Or(s["g.locked"], active)}
        for a in range(cfg.agents):
            upd[f"sa.{t}.{a}"] = a in members
        return upd

    pb.step(R, "idle", "set_agents_check", "ctxset", sa_static, sa_guard, sa_check,
            "set_dispatch_agents [SRC 5d4ce3a9]: lock; " + ("wait_for_stopping_contexts; " if v.set_agents_waits
                                                            else "") +
            "refuse with CONFIGURATION_LOCKED if ctx is in the active slots",
            observed=lambda b, s, t, p: {"result": b.If(s[f"slot.{p['ctx']}"] == PUBLISHED, A_LOCKED, A_OK)})

    pb.step(R, "sa_write", "set_agents_write", "ctx", _ctx_static,
            lambda b, s, t, p: [(f"{t} holds the contexts mutex", s["mtx"] == int(t[1:]) + 1)],
            lambda b, s, t, p: {**{f"ag.{p['ctx']}.{a}": s[f"sa.{t}.{a}"] for a in range(cfg.agents)},
                                "mtx": 0, f"pc.{t}": at("idle")},
            "set_dispatch_agents: ctx.dispatch_spm.agents = selected; unlock (no lock of its own: "
            "readers rely on the refusal while active)", selectors=_sel_ctx)

    # -- scenario extras -----------------------------------------------------------------------------
    if cfg.deactivate:
        pb.step(R, "idle", "deactivate", "ctx", _ctx_static,
                lambda b, s, t, p: mutex_free(b, s) + no_markers(b, s, cfg),
                lambda b, s, t, p: {f"slot.{p['ctx']}": FREE},
                "deactivate_client_contexts [SRC 504daf36]: lock; wait; CAS matching slots -> null "
                "without stopping services (digest §2.8, SPM doc gap 1)",
                observed=lambda b, s, t, p: {"result": b.If(s[f"slot.{p['ctx']}"] == PUBLISHED, S_FOUND,
                                                           S_NOT_FOUND)})
    if cfg.destroy:
        pb.step(R, "idle", "profile_destroy", "ctx", _ctx_static,
                lambda b, s, t, p: [(f"context {p['ctx']} stopped (slot free, no stop in progress)",
                                     b.And(s[f"slot.{p['ctx']}"] == FREE, b.Not(s[f"mk.{p['ctx']}"]))),
                                    ("profile not yet destroyed", s[f"prof.{p['ctx']}"]),
                                    # a tool destroying a profile it is still starting is a tool bug,
                                    # not a protocol race (and would leave that start with no step)
                                    (f"no tool inside an operation on context {p['ctx']}",
                                     b.Not(b.Or(*[b.And(s[f"cx.{u}"] == int(p["ctx"]),  # type: ignore[arg-type]
                                                        s[f"pc.{u}"] != _pc(R, "idle")) for u in cfg.tool_ids()])))],
                lambda b, s, t, p: {f"prof.{p['ctx']}": False},
                "tool destroys the SPM profile/config after rocprofiler_stop_context returned (seed: "
                "'the drain also incidentally covered stop_context followed by destroying the counter config')")


# ---------------------------------------------------------------------------------------------
# dispatch thread: WriteInterceptor + SPM enter hook + serializer (digest §2.4, §2.5, §3.2)
# ---------------------------------------------------------------------------------------------
def instruments(b: Backend, s: State, cfg: LConfig, v: LVariant, c: int, a: int) -> Term:
    """The enter hook calls pre_kernel_call for context c on a dispatch for agent a."""
    vis = s[f"slot.{c}"] == PUBLISHED
    return b.And(vis, collects_on(b, s, cfg, c, a)) if v.scoped else vis


def gate(b: Backend, s: State, cfg: LConfig, v: LVariant, a: int) -> Term:
    """spm::is_active_on_agent(a) (commit 4bbc5a8) or spm::is_any_active() (758072b), digest §2.10."""
    if v.per_agent_gate:
        return b.Or(*[b.And(s[f"slot.{c}"] == PUBLISHED, collects_on(b, s, cfg, c, a)) for c in range(cfg.contexts)])
    return b.Or(*[s[f"slot.{c}"] == PUBLISHED for c in range(cfg.contexts)])


def _dispatch(pb: LifecycleBuilder) -> None:
    cfg, v = pb.cfg, pb.v
    R = "dispatch"
    C = range(cfg.contexts)

    def sel_k(b: Backend, s: State, t: str, p: Params) -> list[tuple[str, Term]]:
        return [(f"dispatch {p['id']} is the next one", s["dn"] == int(p["id"]))]  # type: ignore[arg-type]

    def write_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        a, k = int(p["agent"]), int(p["id"])  # type: ignore[arg-type]
        upd: dict[str, Term] = {f"da.{k}": a, f"st.{k}": D_HOOKED, f"pc.{t}": _pc(R, "hooked"),
                                f"rt.{k}": s["ids"]}
        for c in C:
            ins = instruments(b, s, cfg, v, c, a)
            # pre_kernel_call: enabled -> SPMPacket, else the EmptyAQLPacket fallback; both inserted
            # into the context's packet_return_map, both return serialize=true (digest §2.5)
            upd[f"pk.{k}.{c}"] = b.If(ins, b.If(s[f"en.{c}"], P_SPM, P_EMPTY), P_NONE)
            upd[f"mp.{k}.{c}"] = ins
        upd[f"rq.{k}"] = b.Or(*[instruments(b, s, cfg, v, c, a) for c in C])
        return upd

    def write_obs(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        a = int(p["agent"])  # type: ignore[arg-type]
        return {"batch": b.Not(gate(b, s, cfg, v, a)),
                "instrumented": b.Sum([b.If(instruments(b, s, cfg, v, c, a), 1 << c, 0) for c in C]),
                "serialize": b.Or(*[instruments(b, s, cfg, v, c, a) for c in C])}

    pb.step(R, "idle", "dispatch_write", "agent_id", lambda p: {"agent": p["agent"], "id": p["id"]},
            lambda b, s, t, p: [],
            write_effect,
            "WriteInterceptor: gate (" + ("is_active_on_agent" if v.per_agent_gate else "is_any_active") +
            "), registry write_interceptor loop, SPM enter hook over active contexts" +
            (" with collects_on(agent)" if v.scoped else " (no collects_on, v1 hooks)") +
            ", pre_kernel_call; digest §2.4, §2.5", observed=write_obs, selectors=sel_k)

    def submit_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        k = int(p["id"])  # type: ignore[arg-type]
        upd: dict[str, Term] = {f"st.{k}": D_FLIGHT, "dn": s["dn"] + 1, f"pc.{t}": _pc(R, "idle")}
        for a in range(cfg.agents):
            mine = s[f"da.{k}"] == a
            # serializer(queue): create the agent's entry from the refcount if missing (atomic
            # under R(rc) in the final core), then kernel_dispatch; async_started() +1
            created_en = b.If(s[f"ser.ex.{a}"], s[f"ser.en.{a}"], count(b, s, a) > 0)
            upd[f"ser.ex.{a}"] = b.Or(s[f"ser.ex.{a}"], b.And(mine, s[f"rq.{k}"]))
            upd[f"ser.en.{a}"] = b.If(b.And(mine, s[f"rq.{k}"]), created_en, s[f"ser.en.{a}"])
            upd[f"inf.{a}"] = b.If(mine, s[f"inf.{a}"] + 1, s[f"inf.{a}"])
        upd[f"sz.{k}"] = b.And(s[f"rq.{k}"], b.Or(*[b.And(s[f"da.{k}"] == a, b.If(s[f"ser.ex.{a}"], s[f"ser.en.{a}"],
                                                                                 count(b, s, a) > 0))
                                                   for a in range(cfg.agents)]))
        return upd

    pb.step(R, "hooked", "dispatch_submit", "id", lambda p: {"id": p["id"]}, lambda b, s, t, p: [],
            submit_effect,
            "WriteInterceptor: if is_serialized: serializer(queue).kernel_dispatch (serialized iff requested "
            "and the agent's serializer ENABLED, digest §3.2); queue.async_started(); writer(out)",
            observed=lambda b, s, t, p: {"serialized": submit_effect(b, s, t, p)[f"sz.{p['id']}"]},
            selectors=sel_k)


# ---------------------------------------------------------------------------------------------
# completion thread: AsyncSignalHandler + SPM exit hook + post_kernel_call (digest §2.6)
# ---------------------------------------------------------------------------------------------
def _complete(pb: LifecycleBuilder) -> None:
    cfg, v = pb.cfg, pb.v
    R = "complete"
    C = range(cfg.contexts)
    spm_tag = hook_tags(v)["SPM"]

    def prescan(b: Backend, s: State, k: int) -> Term:
        return b.Or(*[s[f"pk.{k}.{c}"] != P_NONE for c in C], s[f"rt.{k}"] == spm_tag)

    def routed(b: Backend, s: State, c: int) -> Term:
        if v.exit_over_active:
            return s[f"slot.{c}"] == PUBLISHED
        return s[f"reg.{c}"]

    def delivers(b: Backend, s: State, k: int, c: int) -> Term:
        """post_kernel_call of context c finds the dispatch's SPMPacket in its own map."""
        return b.And(prescan(b, s, k), routed(b, s, c), s[f"mp.{k}.{c}"], s[f"pk.{k}.{c}"] == P_SPM)

    def exit_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        k = int(p["id"])  # type: ignore[arg-type]
        upd: dict[str, Term] = {f"st.{k}": D_EXITED, "hk": k, f"pc.{t}": _pc(R, "exited")}
        n = b.Sum([delivers(b, s, k, c) for c in C])
        upd[f"ks.{k}"] = b.If(s[f"ks.{k}"] + n < 3, s[f"ks.{k}"] + n, 3)
        for c in C:
            erase = b.And(prescan(b, s, k), routed(b, s, c), s[f"mp.{k}.{c}"])
            upd[f"mp.{k}.{c}"] = b.And(s[f"mp.{k}.{c}"], b.Not(erase))
        return upd

    pb.step(R, "idle", "completion_exit", "id", lambda p: {"id": p["id"]},
            lambda b, s, t, p: [(f"dispatch {p['id']} is in flight", s[f"st.{p['id']}"] == D_FLIGHT)],
            exit_effect,
            "AsyncSignalHandler: SPM exit hook (pre-scan for SPM_CLIENT_ID; over " +
            ("ACTIVE contexts, v1 [SRC id 59876318601]" if v.exit_over_active else
             "REGISTERED contexts, v2 [SRC ROCm@03c67769]") +
            "); post_kernel_call erases its own packet, kfd_stop + DISPATCH_END for an SPMPacket; digest §2.6",
            observed=lambda b, s, t, p: {"prescan": prescan(b, s, int(p["id"])),  # type: ignore[arg-type]
                                         "delivered": b.Sum([delivers(b, s, int(p["id"]), c) for c in C])})  # type: ignore[arg-type]

    def signal_effect(b: Backend, s: State, t: str, p: Params) -> dict[str, Term]:
        k = int(p["id"])  # type: ignore[arg-type]
        upd: dict[str, Term] = {f"st.{k}": D_DONE, f"pc.{t}": _pc(R, "idle")}
        for a in range(cfg.agents):
            upd[f"inf.{a}"] = b.If(b.And(s[f"da.{k}"] == a, s[f"inf.{a}"] > 0), s[f"inf.{a}"] - 1, s[f"inf.{a}"])
        return upd

    pb.step(R, "exited", "completion_signal", "id", lambda p: {"id": p["id"]}, lambda b, s, t, p: [],
            signal_effect,
            "AsyncSignalHandler: serializer.kernel_completion_signal; queue.async_complete() (-1, last "
            "statement), digest §2.6",
            selectors=lambda b, s, t, p: [(f"{t} completes dispatch {p['id']}", s["hk"] == int(p["id"]))])  # type: ignore[arg-type]


# lock nesting per step kind (outer -> inner), for the static half of P5 (digest §1.3)
UPDATE_CHAIN = ("queues", "refcount", "serializer_map", "serializer")
LOCK_CHAINS: dict[str, tuple[tuple[str, ...], ...]] = {
    "spm_enable": (UPDATE_CHAIN, ("enabled",)),
    "spm_disable": (UPDATE_CHAIN,),
    "spm_set_enabled": (("enabled",),),
    "spm_clear_enabled": (("enabled",),),
    "queue_sync": (("queues",),),
    "dispatch_write": (("queue_callbacks",), ("enabled",), ("packet_return_map",)),
    "dispatch_submit": (("refcount", "serializer_map", "serializer"), ("serializer",)),
    "completion_exit": (("packet_return_map",), ("packet_cache",)),
    "completion_signal": (("serializer",),),
    "start_begin": (("contexts_mutex",),), "stop_begin": (("contexts_mutex",),),
    "slot_clear": (("contexts_mutex",),), "marker_release": (("contexts_mutex",),),
    "set_agents_check": (("contexts_mutex",),), "deactivate": (("contexts_mutex",),),
    "add_callback": (("callback_cache", "queues", "queue_callbacks"),),
    "context_register": (("registry",),),
    # lock-free or holding only what an earlier step took: CAS publish, the write half of
    # set_dispatch_agents (mutex taken by set_agents_check), the scan of conflict-scan-unlocked,
    # the tool-side profile destroy
    "slot_publish": (), "set_agents_write": (), "start_scan": (), "profile_destroy": (),
}


def lock_chains(kind: str, slot_cleared_first: bool) -> tuple[tuple[str, ...], ...]:
    chains = LOCK_CHAINS[kind]  # every step kind has an entry (tests/test_lifecycle_prover.py)
    if slot_cleared_first and kind in ("spm_clear_enabled", "queue_sync", "spm_disable"):
        # pre-fix stop held the contexts mutex across spm::stop_context (bgopesh [PR])
        chains = tuple(("contexts_mutex",) + ch for ch in chains)
    return chains


def instantiate_params(cfg: LConfig, step: StepDef) -> list[Params]:
    C, N = range(cfg.contexts), range(cfg.dispatches)
    if step.per == "ctx":
        return [{"ctx": c} for c in C]
    if step.per == "ctxset":
        return [{"ctx": c, "set": m} for c in C for m in cfg.agent_sets()]
    if step.per == "agent_id":
        return [{"agent": a, "id": k} for k in N for a in range(cfg.agents)]
    if step.per == "id":
        return [{"id": k} for k in N]
    return [{}]


__all__ = ["build_steps", "instantiate_params", "instruments", "gate", "TOOL_LABELS", "D_NONE", "D_EXITED",
           "D_DONE", "FREE"]
