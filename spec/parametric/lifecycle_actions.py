"""One parametric transition per step of spec/lifecycle/definition.py, for every LVariant knob and
the scenario switches (drain timeouts, deactivate, profile destroy).

A transition is existential over its parameters (`LParams`: tool t, context c, agent a,
dispatch k, agent set `setp`); a query Skolemises them as constants. Labels, kinds and guards
mirror the fixed-size steps; `tests/test_parametric_lifecycle.py` checks on reached states of
LifecycleModel that every action instance is enabled in one reading iff in the other and reaches
the same state (through the abstraction functions stated in lifecycle_encoding).

Relaxed steps (parametric enabled in more states; a superset of behaviours, so invariants proved
here cover the fixed-size ones): `dispatch_write` may hook any dispatch still in state `none` (the
fixed size takes the next index `dn`), and `add_callback` has no `ids < max_ids` bound (a bound
of the finite model). Fresh Booleans `name@tag` name the existential sub-terms of a step
(`empty@`, `conf@`, `rq@`, `pre@`); `side` defines them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from ..lifecycle.variants import LVariant
from .encoding import Agent, Fn, PState, const, exists, forall
from .lifecycle_encoding import (
    D_EXITED, D_FLIGHT, D_HOOKED, D_NONE, D_DONE, DPC, FREE, HPC, P_EMPTY, P_NONE, P_SPM, PUBLISHED,
    R_ALREADY, R_CONFLICT, R_OK, RESERVED, TPC, Ctx, Tool, count, empty, gate, instruments, intersects, mutex_free,
    no_markers, spm_tag, tool_at,
)

T, F = z3.BoolVal(True), z3.BoolVal(False)


@dataclass(frozen=True)
class LParams:
    t: z3.ExprRef
    c: z3.ExprRef
    a: z3.ExprRef
    k: z3.ExprRef
    setp: Callable[[z3.ExprRef], z3.ExprRef]
    tag: str = "p"


@dataclass(frozen=True)
class LFired:
    guards: list[tuple[str, z3.BoolRef]]
    side: list[z3.BoolRef]
    post: PState
    obs: dict[str, z3.ExprRef] = field(default_factory=dict)  # observed values of the trace event

    def enabled(self) -> z3.BoolRef:
        return z3.And(*[g for _, g in self.guards]) if self.guards else T


LBuild = Callable[[PState, LParams], LFired]


@dataclass(frozen=True)
class LAction:
    name: str
    role: str  # tool | dispatch | complete
    at: str
    kind: str
    per: str  # "" | ctx | ctxset | agent_id | id  (as StepDef.per)
    build: LBuild
    source: str
    targets: tuple[str, ...]
    relaxed: bool = False
    variant_of: str = ""  # distinguishes two steps with the same (role, at, kind): queue_sync ok/timeout

    def fire(self, s: PState, p: LParams) -> LFired:
        return self.build(s, p)


@dataclass(frozen=True)
class Scenario:
    timeouts: bool = True
    deactivate: bool = False
    destroy: bool = False


# ---- point updates --------------------------------------------------------------------------
def up1(s: PState, name: str, k: z3.ExprRef, val: z3.ExprRef) -> Fn:
    old = s.fns[name]
    return lambda x: z3.If(x == k, val, old(x))


def row(s: PState, name: str, k: z3.ExprRef, fn: Callable[[z3.ExprRef], z3.ExprRef]) -> Fn:
    old = s.fns[name]
    return lambda x, y: z3.If(x == k, fn(y), old(x, y))


def tpc(s: PState, t: z3.ExprRef, label: z3.ExprRef | str) -> dict[str, Fn]:
    return {"pc": up1(s, "pc", t, TPC[label] if isinstance(label, str) else label)}


def update_serialization(s: PState, v: LVariant, c: z3.ExprRef, enable: bool, tag: str
                         ) -> tuple[dict[str, Fn], list[z3.BoolRef]]:
    """programs.update_serialization: enable/disable_serialization(agents(c)) as one atomic step
    (sound for the final core, which runs it entirely under W(rc): the core proofs), with the
    ghost references of c moved alongside. Increments are unclamped (see lifecycle_encoding)."""
    emp = z3.Bool(f"empty@{tag}")
    side = [emp == empty(s, c)]
    is_all = emp if v.scoped else T

    def step(x: z3.ArithRef) -> z3.ArithRef:
        return x + 1 if enable else z3.If(x > 0, x - 1, x)

    rc_all = z3.If(is_all, step(s.rc_all()), s.rc_all())
    old_hd_all, old_rc, old_hd, old_en, old_ex = s.hd_all, s.rc, s.hd, s.ser_en, s.ser_ex

    def inside(a: z3.ExprRef) -> z3.BoolRef:
        return z3.And(z3.Not(is_all), s.ag(c, a))

    def rc(a: z3.ExprRef) -> z3.ArithRef:
        return z3.If(inside(a), step(old_rc(a)), old_rc(a))

    upd: dict[str, Fn] = {
        "rc_all": const(rc_all),
        "hd_all": lambda x: z3.If(z3.And(x == c, is_all), step(old_hd_all(c)), old_hd_all(x)),
        "rc": rc,
        "hd": lambda x, a: z3.If(z3.And(x == c, inside(a)), step(old_hd(c, a)), old_hd(x, a)),
        # transitions applied inside the refcount write lock from the post-update count (P1 final)
        "ser_en": lambda a: z3.If(old_ex(a), rc_all + rc(a) > 0, old_en(a)),
    }
    return upd, side


def build_lifecycle_actions(v: LVariant, sc: Scenario = Scenario()) -> list[LAction]:
    out: list[LAction] = []

    def add(role: str, at: str, kind: str, per: str, build: LBuild, source: str, targets: tuple[str, ...],
            relaxed: bool = False, variant_of: str = "") -> None:
        name = f"{role[0]}.{at}.{kind}" + (f"[{variant_of}]" if variant_of else "")
        out.append(LAction(name, role, at, kind, per, build, source, targets, relaxed, variant_of))

    _tool(v, sc, add)
    _dispatch(v, add)
    _complete(v, add)
    return out


Add = Callable[..., None]


def _at(s: PState, p: LParams, label: str) -> tuple[str, z3.BoolRef]:
    return (f"{label}", s.pc(p.t) == TPC[label])


def _sel(s: PState, p: LParams) -> tuple[str, z3.BoolRef]:
    return ("works on c", s.cx(p.t) == p.c)


def _tool(v: LVariant, sc: Scenario, add: Add) -> None:
    R = "tool"

    def simple(at: str, kind: str, goto: str, extra: Callable[[PState, LParams], dict[str, Fn]] | None = None,
               guard: Callable[[PState, LParams], list[tuple[str, z3.BoolRef]]] | None = None,
               source: str = "") -> None:
        def build(s: PState, p: LParams) -> LFired:
            upd = dict(extra(s, p)) if extra else {}
            upd.update(tpc(s, p.t, goto))
            return LFired([_at(s, p, at), _sel(s, p)] + (guard(s, p) if guard else []), [], s.with_(upd))

        add(R, at, kind, "ctx", build, source, (goto,))

    # -- registration / registry client -----------------------------------------------------------
    def register(s: PState, p: LParams) -> LFired:
        return LFired([_at(s, p, "idle"), ("not yet registered", z3.Not(s.reg(p.c)))], [],
                      s.with_({"reg": up1(s, "reg", p.c, T)}))

    add(R, "idle", "context_register", "ctx", register, "digest §1.2 registered contexts", ("idle",))

    def add_cb(s: PState, p: LParams) -> LFired:
        return LFired([_at(s, p, "idle")], [], s.with_({"ids": const(s.ids() + 1)}), {"id": s.ids() + 1})

    add(R, "idle", "add_callback", "", add_cb, "digest §2.11 add_callback client_id{1}", ("idle",), relaxed=True)

    # -- start_context ---------------------------------------------------------------------------------
    def scan(s: PState, p: LParams) -> tuple[z3.ExprRef, list[z3.BoolRef]]:
        conf = z3.Bool(f"conf@{p.tag}")
        side = [conf == exists(Ctx, lambda o: z3.And(o != p.c, s.slot(o) == PUBLISHED, intersects(s, p.c, o)))]
        return z3.If(s.slot(p.c) == PUBLISHED, R_ALREADY, z3.If(conf, R_CONFLICT, R_OK)), side

    def start_guard(s: PState, p: LParams) -> list[tuple[str, z3.BoolRef]]:
        return [("mutex free", mutex_free(s)), ("no markers", no_markers(s)), ("registered", s.reg(p.c)),
                ("profile alive", s.prof(p.c)), ("no reserved-unpublished slot", s.slot(p.c) != RESERVED)]

    def reserve(s: PState, p: LParams, result: z3.ExprRef) -> dict[str, Fn]:
        ok = result == R_OK
        upd: dict[str, Fn] = {"slot": up1(s, "slot", p.c, z3.If(ok, RESERVED, s.slot(p.c))),
                              "cx": up1(s, "cx", p.t, p.c),
                              "g_conflict": const(z3.Or(s.g_conflict(), result == R_CONFLICT))}
        upd.update(tpc(s, p.t, z3.If(ok, TPC["publish"], TPC["idle"])))
        if v.start_marker:
            upd["mk"] = up1(s, "mk", p.c, z3.Or(ok, s.mk(p.c)))
        return upd

    if v.scan_locked:
        def begin(s: PState, p: LParams) -> LFired:
            res, side = scan(s, p)
            return LFired([_at(s, p, "idle")] + start_guard(s, p), side, s.with_(reserve(s, p, res)), {"result": res})

        add(R, "idle", "start_begin", "ctx", begin, "context.cpp start_context under the mutex", ("publish", "idle"))
    else:
        def scan_step(s: PState, p: LParams) -> LFired:
            res, side = scan(s, p)
            upd = {"sc": up1(s, "sc", p.t, res), "cx": up1(s, "cx", p.t, p.c)}
            upd.update(tpc(s, p.t, "scan_done"))
            return LFired([_at(s, p, "idle"), ("registered", s.reg(p.c)), ("profile alive", s.prof(p.c))],
                          side, s.with_(upd), {"result": res})

        add(R, "idle", "start_scan", "ctx", scan_step, "digest §5.1 variant A", ("scan_done",))

        def begin2(s: PState, p: LParams) -> LFired:
            res = s.sc(p.t)
            return LFired([_at(s, p, "scan_done"), _sel(s, p)] + start_guard(s, p), [],
                          s.with_(reserve(s, p, res)), {"result": res})

        add(R, "scan_done", "start_begin", "ctx", begin2, "digest §5.1 variant A", ("publish", "idle"))

    simple("publish", "slot_publish", "spm_enable", lambda s, p: {"slot": up1(s, "slot", p.c, PUBLISHED)},
           source="CAS slot null -> cfg after unlock")

    def spm_update(at: str, enable: bool, goto: str) -> None:
        def build(s: PState, p: LParams) -> LFired:
            upd, side = update_serialization(s, v, p.c, enable, p.tag)
            upd.update(tpc(s, p.t, goto))
            return LFired([_at(s, p, at), _sel(s, p)], side, s.with_(upd))

        add(R, at, "spm_enable" if enable else "spm_disable", "ctx", build,
            "controller->enable/disable_serialization(ctx.dispatch_spm.agents), digest §2.7", (goto,))

    spm_update("spm_enable", True, "spm_set_enabled")
    simple("spm_set_enabled", "spm_set_enabled", "start_release" if v.start_marker else "idle",
           lambda s, p: {"en": up1(s, "en", p.c, T)}, source="W(enabled): enabled = true")
    if v.start_marker:
        simple("start_release", "marker_release", "idle", lambda s, p: {"mk": up1(s, "mk", p.c, F)},
               lambda s, p: [("mutex free", mutex_free(s))], "stopping.erase(id) under the mutex")

    # -- stop_context -------------------------------------------------------------------------------
    def stop_begin(s: PState, p: LParams) -> LFired:
        found = s.slot(p.c) == PUBLISHED
        upd: dict[str, Fn] = {"mk": up1(s, "mk", p.c, z3.Or(found, s.mk(p.c))), "cx": up1(s, "cx", p.t, p.c)}
        upd.update(tpc(s, p.t, z3.If(found, TPC["spm_clear_enabled"], TPC["idle"])))
        if v.slot_cleared_first:
            upd["slot"] = up1(s, "slot", p.c, z3.If(found, FREE, s.slot(p.c)))
        return LFired([_at(s, p, "idle"), ("mutex free", mutex_free(s)), ("no markers", no_markers(s))], [],
                      s.with_(upd), {"result": z3.If(found, z3.IntVal(0), z3.IntVal(1))})

    add(R, "idle", "stop_begin", "ctx", stop_begin, "context.cpp stop_context phase 1", ("spm_clear_enabled", "idle"))

    after_no_release = "stop_release" if v.slot_cleared_first else "slot_clear"

    def clear_enabled(s: PState, p: LParams) -> LFired:
        was = s.en(p.c)
        nxt = TPC["drain"] if not v.stop_disable_guarded else z3.If(was, TPC["drain"], TPC[after_no_release])
        upd = {"en": up1(s, "en", p.c, F), "was": up1(s, "was", p.t, was)}
        upd.update(tpc(s, p.t, nxt))
        return LFired([_at(s, p, "spm_clear_enabled"), _sel(s, p)], [], s.with_(upd), {"was": was})

    add(R, "spm_clear_enabled", "spm_clear_enabled", "ctx", clear_enabled, "W(enabled): was = enabled; false",
        ("drain", after_no_release))

    def idle_queues(s: PState) -> z3.BoolRef:
        # abstraction of inf: every queue's _active_kernels is 0 <-> no dispatch in flight
        from .lifecycle_encoding import Dispatch, in_flight

        return forall(Dispatch, lambda k: z3.Not(in_flight(s, k)))

    def drain(ok: bool) -> LBuild:
        def build(s: PState, p: LParams) -> LFired:
            upd = tpc(s, p.t, "spm_disable")
            if not ok:
                upd["g_timeout"] = const(T)
            return LFired([_at(s, p, "drain"), _sel(s, p),
                           ("queues idle" if ok else "some queue busy", idle_queues(s) if ok else z3.Not(idle_queues(s)))],
                          [], s.with_(upd), {"drained": z3.BoolVal(ok)})
        return build

    add(R, "drain", "queue_sync", "ctx", drain(True), "queue_controller_sync(), digest §2.9", ("spm_disable",),
        variant_of="ok")
    if sc.timeouts:
        add(R, "drain", "queue_sync", "ctx", drain(False), "Queue::sync 5 s timeout, digest §2.9", ("spm_disable",),
            variant_of="timeout")
    spm_update("spm_disable", False, after_no_release)
    if not v.slot_cleared_first:
        simple("slot_clear", "slot_clear", "stop_release", lambda s, p: {"slot": up1(s, "slot", p.c, FREE)},
               lambda s, p: [("mutex free", mutex_free(s))], "CAS slot ctx -> null under the mutex")
    simple("stop_release", "marker_release", "idle", lambda s, p: {"mk": up1(s, "mk", p.c, F)},
           lambda s, p: [("mutex free", mutex_free(s))], "scope guard: stopping.erase(id)")

    # -- set_dispatch_agents ---------------------------------------------------------------------------
    def sa_check(s: PState, p: LParams) -> LFired:
        active = s.slot(p.c) == PUBLISHED
        g = [_at(s, p, "idle"), ("mutex free", mutex_free(s))]
        if v.set_agents_waits:
            g.append(("no markers", no_markers(s)))
        upd: dict[str, Fn] = {"mo": up1(s, "mo", p.t, z3.Not(active)), "cx": up1(s, "cx", p.t, p.c),
                              "g_locked": const(z3.Or(s.g_locked(), active)),
                              "sa": row(s, "sa", p.t, p.setp)}
        upd.update(tpc(s, p.t, z3.If(active, TPC["idle"], TPC["sa_write"])))
        return LFired(g, [], s.with_(upd), {"result": z3.If(active, z3.IntVal(1), z3.IntVal(0))})

    add(R, "idle", "set_agents_check", "ctxset", sa_check, "set_dispatch_agents [SRC 5d4ce3a9]", ("idle", "sa_write"))

    def sa_write(s: PState, p: LParams) -> LFired:
        t = p.t
        upd: dict[str, Fn] = {"ag": row(s, "ag", p.c, lambda a: s.sa(t, a)), "mo": lambda x: F}
        upd.update(tpc(s, t, "idle"))
        return LFired([_at(s, p, "sa_write"), _sel(s, p), ("holds the mutex", s.mo(t))], [], s.with_(upd))

    add(R, "sa_write", "set_agents_write", "ctx", sa_write, "ctx.dispatch_spm.agents = selected; unlock", ("idle",))

    if sc.deactivate:
        def deact(s: PState, p: LParams) -> LFired:
            return LFired([_at(s, p, "idle"), ("mutex free", mutex_free(s)), ("no markers", no_markers(s))], [],
                          s.with_({"slot": up1(s, "slot", p.c, FREE)}))

        add(R, "idle", "deactivate", "ctx", deact, "deactivate_client_contexts", ("idle",))
    if sc.destroy:
        def destroy(s: PState, p: LParams) -> LFired:
            nobody = forall(Tool, lambda u: z3.Not(z3.And(s.cx(u) == p.c, z3.Not(tool_at(s, u, "idle")))))
            return LFired([_at(s, p, "idle"), ("stopped", z3.And(s.slot(p.c) == FREE, z3.Not(s.mk(p.c)))),
                           ("profile alive", s.prof(p.c)), ("no tool inside an operation on it", nobody)], [],
                          s.with_({"prof": up1(s, "prof", p.c, F)}))

        add(R, "idle", "profile_destroy", "ctx", destroy, "tool destroys the SPM profile", ("idle",))


def _dispatch(v: LVariant, add: Add) -> None:
    R = "dispatch"

    def write(s: PState, p: LParams) -> LFired:
        a, k = p.a, p.k
        rqv = z3.Bool(f"rq@{p.tag}")
        side = [rqv == exists(Ctx, lambda c: instruments(s, v, c, a))]
        upd: dict[str, Fn] = {
            "da": up1(s, "da", k, a), "st": up1(s, "st", k, D_HOOKED), "dpc": const(DPC["hooked"]),
            "dk": const(k), "rt": up1(s, "rt", k, s.ids()),
            # pre_kernel_call: enabled -> SPMPacket, else EmptyAQLPacket; both go to the map (§2.5)
            "pk": row(s, "pk", k, lambda c: z3.If(instruments(s, v, c, a), z3.If(s.en(c), P_SPM, P_EMPTY), P_NONE)),
            "mp": row(s, "mp", k, lambda c: instruments(s, v, c, a)),
            "rq": up1(s, "rq", k, rqv),
        }
        # relaxed: any dispatch not yet written (the fixed size takes index dn)
        g = [("d0 idle", s.dpc() == DPC["idle"]), ("dispatch not yet written", s.st(k) == D_NONE)]
        return LFired(g, side, s.with_(upd), {"batch": z3.Not(gate(s, v, a)), "serialize": rqv})

    add(R, "idle", "dispatch_write", "agent_id", write, "WriteInterceptor + SPM enter hook, digest §2.4/§2.5",
        ("hooked",), relaxed=True)

    def submit(s: PState, p: LParams) -> LFired:
        k = p.k
        a = s.da(k)
        created_en = z3.If(s.ser_ex(a), s.ser_en(a), count(s, a) > 0)
        mine = lambda x: z3.And(x == a, s.rq(k))  # noqa: E731
        old_ex, old_en = s.ser_ex, s.ser_en
        upd: dict[str, Fn] = {
            "st": up1(s, "st", k, D_FLIGHT), "dpc": const(DPC["idle"]),
            "ser_ex": lambda x: z3.Or(old_ex(x), mine(x)),
            "ser_en": lambda x: z3.If(mine(x), created_en, old_en(x)),
            "sz": up1(s, "sz", k, z3.And(s.rq(k), created_en)),
        }
        return LFired([("d0 hooked", s.dpc() == DPC["hooked"]), ("k is d0's dispatch", s.dk() == k)], [],
                      s.with_(upd), {"serialized": z3.And(s.rq(k), created_en)})

    add(R, "hooked", "dispatch_submit", "id", submit, "serializer(queue).kernel_dispatch; async_started()", ("idle",))


def _complete(v: LVariant, add: Add) -> None:
    R = "complete"
    tag_spm = spm_tag(v)

    def routed(s: PState, c: z3.ExprRef) -> z3.BoolRef:
        return s.slot(c) == PUBLISHED if v.exit_over_active else s.reg(c)

    def exit_(s: PState, p: LParams) -> LFired:
        k = p.k
        pre = z3.Bool(f"pre@{p.tag}")
        side = [pre == z3.Or(exists(Ctx, lambda c: s.pk(k, c) != P_NONE), s.rt(k) == tag_spm)]
        old_mp = s.mp
        upd: dict[str, Fn] = {
            "st": up1(s, "st", k, D_EXITED), "hk": const(k), "hpc": const(HPC["exited"]),
            "mp": lambda x, c: z3.If(x == k, z3.And(old_mp(k, c), z3.Not(z3.And(pre, routed(s, c), old_mp(k, c)))),
                                     old_mp(x, c)),
        }
        return LFired([("h0 idle", s.hpc() == HPC["idle"]), ("k in flight", s.st(k) == D_FLIGHT)], side,
                      s.with_(upd), {"prescan": pre})

    add(R, "idle", "completion_exit", "id", exit_, "AsyncSignalHandler: SPM exit hook, digest §2.6", ("exited",))

    def signal(s: PState, p: LParams) -> LFired:
        k = p.k
        upd: dict[str, Fn] = {"st": up1(s, "st", k, D_DONE), "hpc": const(HPC["idle"])}
        return LFired([("h0 exited", s.hpc() == HPC["exited"]), ("k is h0's dispatch", s.hk() == k)], [],
                      s.with_(upd))

    add(R, "exited", "completion_signal", "id", signal, "kernel_completion_signal; async_complete()", ("idle",))


def lparams(tag: str, t: z3.ExprRef | None = None, c: z3.ExprRef | None = None, a: z3.ExprRef | None = None,
            k: z3.ExprRef | None = None) -> LParams:
    """Skolem constants for a step's parameters (or the given elements)."""
    from .lifecycle_encoding import Dispatch, Tool

    return LParams(t if t is not None else z3.Const(f"t@{tag}", Tool),
                   c if c is not None else z3.Const(f"c@{tag}", Ctx),
                   a if a is not None else z3.Const(f"a@{tag}", Agent),
                   k if k is not None else z3.Const(f"k@{tag}", Dispatch),
                   z3.Function(f"set@{tag}", Agent, z3.BoolSort()), tag)


__all__ = ["LAction", "LParams", "LFired", "Scenario", "build_lifecycle_actions", "lparams", "D_EXITED", "D_DONE",
           "D_FLIGHT", "P_SPM"]
