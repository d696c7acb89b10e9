"""The SPM context lifecycle, written once in the protocol language (`spec.lang`; digest §2.4-§2.11).

Roles: `tool` (context::start_context / stop_context / set_dispatch_agents / deactivate / profile
destroy / registry add_callback), `dispatch` (WriteInterceptor with the SPM enter hook),
`complete` (AsyncSignalHandler with the SPM exit hook). Work done entirely under one lock (the
contexts mutex, a `Synchronized` map lock) is one step: nothing another thread can observe happens
inside it. The steps are cut exactly at the gaps the review argued about: unlock -> CAS publish ->
service start -> marker release in start; the four phases of stop; hook snapshot -> submission
in WriteInterceptor; exit hooks -> async_complete in the completion handler.

update_serialization() and serializer() appear here as single atomic steps (`_update_serialization`
in `spm_enable`/`spm_disable`; the serializer() part of `dispatch_submit`). That the final core's
lock-step calls (spec.programs) refine them is checked in Z3 by spec/refinement.py, reading both
definitions: run alone in every order, each call leaves the refcounts and serializer entries as
the atomic step does (from any pre-state satisfying P1), and it holds the refcount lock (W resp. R)
from its first access of that state to its last, the lock being mutually exclusive; with the lock
discipline this is two-phase locking, so every interleaving is equivalent to the atomic reading
(tests/test_refinement.py; apply-after-unlock and stale-lookup fail it). The core's own races
(P1/P2 with several updaters and lookups) are proved by the core model.

`definition(variant, cfg)` builds the protocol for one variant's knobs and one configuration's
scenario switches (drain timeouts, deactivate, profile destroy) and caps (registry ids, refcount
cap 2C+1); the sizes of the sorts are chosen by the reading (`spec.lang.finite.Universe`). Each
state function's key template is the fixed-size variable name the stored invariants
(spec/proofs/lc-*.inv), the certificates and the trace corpus use.
"""
from __future__ import annotations

from functools import lru_cache

from ..lang.syntax import (
    BOOL,
    TRUE,
    And,
    Builder,
    Card,
    Count,
    EnumDom,
    Every,
    Exists,
    Expr,
    ExprLike,
    Forall,
    Implies,
    IntDom,
    Ite,
    Mask,
    NOBODY,
    Not,
    Or,
    Post,
    Protocol,
    Reported,
    ScopeParam,
    SortDom,
    Var,
    owner,
    owner_dom,
)
from ..programs import LABELS
from .variants import LVariant, hook_tags
from .vocabulary import PACKET, PHASE, SLOT, LConfig

TOOL_LABELS = ["idle", "scan_done", "publish", "spm_enable", "spm_set_enabled", "start_release",
               "spm_clear_enabled", "drain", "spm_disable", "slot_clear", "stop_release", "sa_write"]
# `gated` last: the labels before it keep the program-counter codes older stored paths name
DISPATCH_LABELS = ["idle", "hooked", "gated"]
COMPLETE_LABELS = ["idle", "exited"]
LABELS.update({"tool": TOOL_LABELS, "dispatch": DISPATCH_LABELS, "complete": COMPLETE_LABELS})

# start_begin / start_scan results, stop/deactivate/set_agents results (API status codes, §6.2)
R_OK, R_ALREADY, R_CONFLICT = 0, 1, 2
S_FOUND, S_NOT_FOUND = 0, 1
A_OK, A_LOCKED = 0, 1
HD_CAP = 3  # ghost references one context holds per key (a bound of the finite model)

# the claims of the definition (`_claims` states each; a step claim's condition sits on the
# actions it watches, in their `checks`); spec/lifecycle/properties.py binds names to them
P1, P3, P4 = "serializer-mirrors-refcount", "no-unserialized-dispatch-while-enabled", "in-flight-completion-delivered"
P4M, P5, P6 = "map-empty-after-drain", "lock-order-acyclic", "tags-disjoint"
P7, P8, P9 = "agent-scoping", "spm-contexts-disjoint", "refcount-balanced"
GATE = "unrelated-queues-batched"
# findings: residual risks of the final design, kept in `Protocol.findings` (their conditions in
# the actions' `finding_checks`); properties.META says which scenario each needs
DRAIN_ALL, SUBMIT, LATE_STOP = ("drain-covers-hooked-dispatches", "no-unserialized-submit-while-enabled",
                                "stop-returns-after-delivery")
DESTROYED = "no-completion-after-profile-destroyed"


class Lifecycle:
    """Sorts and state of the lifecycle (digest §1.2, §2.4-§2.11) and its derived expressions."""

    def __init__(self, b: Builder, cfg: LConfig) -> None:
        self.b = b
        self.agent = A = b.sort("agent")
        self.context = C = b.sort("context")
        self.kernel = K = b.sort("kernel")  # a kernel dispatch, by its id (0, 1, ...)
        self.tool = T = b.sort("tool", "t")
        self.dispatch = D = b.sort("dispatch", "d")  # the dispatch thread d0 (WriteInterceptor)
        self.complete = H = b.sort("complete", "h")  # the completion thread h0 (AsyncSignalHandler)
        self.refs = 2 * cfg.contexts + 1  # two references per context and one spare
        rcdom = IntDom(0, self.refs)
        st = b.state
        # the core's refcount and serializer entries (update_serialization()/serializer() atomic)
        self.rc_all = st("rc_all", (), rcdom, 0, "rc.all", "serialization_refcount::all")
        self.rc = st("rc", (A,), rcdom, 0, "rc.{0}", "serialization_refcount::per_agent[a]")
        self.ex = st("ex", (A,), BOOL, False, "ser.ex.{0}", "a serializer entry exists for a")
        self.ser_en = st("ser_en", (A,), BOOL, False, "ser.en.{0}", "the entry is ENABLED")
        self.inf = st("inf", (A,), IntDom(0, Card(K)), 0, "inf.{0}", "the queue's _active_kernels")
        self.mtx = st("mtx", (), owner_dom(T), NOBODY, "mtx", "contexts mutex: 0 free, i+1 held by t<i>")
        self.ids = st("ids", (), IntDom(0, cfg.max_ids), 0, "ids", "registry ids handed out so far")
        self.g_conflict = st("g_conflict", (), BOOL, False, "g.conflict", "a start saw CONTEXT_CONFLICT (ghost)")
        self.g_locked = st("g_locked", (), BOOL, False, "g.locked", "set_dispatch_agents refused (ghost)")
        self.g_timeout = st("g_timeout", (), BOOL, False, "g.timeout", "a drain timed out (ghost)")
        # contexts
        self.reg = st("reg", (C,), BOOL, False, "reg.{0}", "registered (registry + published snapshot)")
        self.slot = st("slot", (C,), SLOT, "free",
                       "slot.{0}", "the context's entry in the active-slot vector (digest §2.8)")
        self.en = st("en", (C,), BOOL, False, "en.{0}", "dispatch_spm `enabled`")
        self.mk = st("mk", (C,), BOOL, False, "mk.{0}", "in the `stopping` set (start/stop in progress)")
        self.prof = st("prof", (C,), BOOL, True, "prof.{0}", "the SPM profile/config is alive")
        self.hd_all = st("hd_all", (C,), IntDom(0, HD_CAP), 0, "hd.{0}.all", "references c holds on all (ghost)")
        self.ag = st("ag", (C, A), BOOL, False, "ag.{0}.{1}", "a is in dispatch_spm.agents (empty: all)")
        self.hd = st("hd", (C, A), IntDom(0, HD_CAP), 0, "hd.{0}.{1}", "references c holds on a (ghost)")
        # tool thread locals
        self.tpc = st("tpc", (T,), EnumDom("ToolPc", tuple(TOOL_LABELS)), "idle", "pc.{0}")
        self.cx = st("cx", (T,), SortDom(C), 0, "cx.{0}", "the context the tool works on")
        self.was = st("was", (T,), BOOL, False, "was.{0}", "stop's `was_enabled`")
        self.sc = st("sc", (T,), IntDom(0, 2), 0, "sc.{0}", "the unlocked conflict scan's verdict")
        self.sa = st("sa", (T, A), BOOL, False, "sa.{0}.{1}", "the agent set set_dispatch_agents installs")
        # queue_controller_sync() syncs the queues one after another (digest §2.9), so the drain
        # is judged over its whole span, not at one instant: the phase of every dispatch when the
        # tool's drain began ("none" outside a drain) and, per dispatch, whether its
        # async_complete() emptied its queue (see `_drain_saw` and cpp/DIVERGENCES.md L3)
        self.ds = st("ds", (T, K), PHASE, "none", "ds.{0}.{1}", "k's phase when t's drain began (ghost)")
        # the dispatch and completion threads
        self.dpc = st("dpc", (D,), EnumDom("WriterPc", tuple(DISPATCH_LABELS)), "idle", "pc.{0}")
        self.dn = st("dn", (), IntDom(0, Card(K)), 0, "dn", "the next dispatch the writer takes")
        # what WriteInterceptor decided at its entry, carried to the enter hook (the code's locals)
        self.gk = st("gk", (D,), SortDom(K), 0, "gk.{0}", "the dispatch the writer's gate was for")
        self.ga = st("ga", (D,), SortDom(A), 0, "ga.{0}", "the agent (queue) the writer's gate was for")
        self.gb = st("gb", (D,), BOOL, False, "gb.{0}", "the gate's decision: the write stays batched")
        self.hpc = st("hpc", (H,), EnumDom("HandlerPc", tuple(COMPLETE_LABELS)), "idle", "pc.{0}")
        self.hk = st("hk", (), SortDom(K), 0, "hk", "the dispatch the handler completes")
        # dispatches
        self.st = st("st", (K,), PHASE, "none",
                     "st.{0}", "not written, enter hooks ran, submitted, exit hooks ran, completed")
        self.da = st("da", (K,), SortDom(A), 0, "da.{0}", "the dispatch's agent (its queue)")
        self.rq = st("rq", (K,), BOOL, False, "rq.{0}", "the enter hooks asked for serialization")
        self.sz = st("sz", (K,), BOOL, False, "sz.{0}", "the dispatch was serialized")
        self.ks = st("ks", (K,), IntDom(0, 3), 0, "ks.{0}", "kfd_stop + DISPATCH_END deliveries (capped)")
        self.rt = st("rt", (K,), IntDom(0, cfg.max_ids), 0, "rt.{0}", "registry ids issued at the write")
        self.pk = st("pk", (K, C), PACKET, "none", "pk.{0}.{1}",
                     "the packet pre_kernel_call inserted into c's packet_return_map (digest §2.5)")
        self.mp = st("mp", (K, C), BOOL, False, "mp.{0}.{1}", "that packet is still in c's map")
        self.ze = st("ze", (K,), BOOL, False, "ze.{0}",
                     "the dispatch's async_complete() brought its queue's _active_kernels to 0 (ghost)")
        b.lay((self.rc_all,), (self.rc,), (self.ex,), (self.ser_en,), (self.inf,), (self.mtx,), (self.ids,),
              (self.g_conflict,), (self.g_locked,), (self.g_timeout,))
        b.lay((self.reg, self.slot, self.en, self.mk, self.prof, self.hd_all, self.ag, self.hd))
        b.lay((self.tpc, self.cx, self.was, self.sc, self.sa))
        b.lay((self.ds,))  # over (tool, dispatch): its own group (a group iterates its arguments jointly)
        b.lay((self.dpc,), (self.dn,), (self.gk, self.ga, self.gb), (self.hpc,), (self.hk,))
        b.lay((self.st, self.da, self.rq, self.sz, self.ks, self.rt, self.pk, self.mp, self.ze))
        b.p.pc = {"tool": self.tpc, "dispatch": self.dpc, "complete": self.hpc}
        # counters the any-size reading reads through what they count (Protocol.abstractions):
        # _active_kernels counts the queue's dispatches between async_started and async_complete
        # (+1 at the submit, -1 at the completion signal, each moving one dispatch in or out);
        # ks counts the SPM packets delivered, each delivery erasing its packet from the map (the
        # fixed size caps it at 3; no reachable state of <= 3 contexts reaches the cap)
        x, k, c = Var("x", A), Var("k", K), Var("c", C)
        b.abstract(self.inf, (x,), Count(k, And(self.da(k) == x, Or(self.st(k) == "flight", self.st(k) == "exited"))))
        b.abstract(self.ks, (k,), Count(c, And(self.pk(k, c) == "spm", Not(self.mp(k, c)))))

    # ---- derived expressions ----
    def count(self, a: Expr) -> Expr:
        return self.rc_all() + self.rc(a)

    def unrestricted(self, c: Expr) -> Expr:
        """dispatch_spm.agents is empty: the context covers every agent."""
        x = Var("x", self.agent)
        return Not(Exists(x, self.ag(c, x)))

    def collects_on(self, c: Expr, a: Expr) -> Expr:
        """dispatch_spm::collects_on(a) = agents.empty() || a in agents (digest §2.8) [SRC context.hpp]."""
        return Or(self.ag(c, a), self.unrestricted(c))

    def intersects(self, c1: Expr, c2: Expr) -> Expr:
        """true if either agent set is empty, else set intersection non-empty (digest §2.8) [SRC]."""
        x = Var("x", self.agent)
        return Or(self.unrestricted(c1), self.unrestricted(c2), Exists(x, And(self.ag(c1, x), self.ag(c2, x))))

    def published(self, c: Expr) -> Expr:
        return self.slot(c) == "published"

    def submitted(self, k: Expr) -> Expr:
        """async_started() ran for dispatch k (in flight, exit hooks ran, or completed)."""
        return Or(self.st(k) == "flight", self.st(k) == "exited", self.st(k) == "done")

    def erased(self, k: Expr) -> Expr:
        """No context's packet_return_map still holds dispatch k's SPMPacket."""
        c = Var("c", self.context)
        return Forall(c, Not(And(self.mp(k, c), self.pk(k, c) == "spm")))

    def ser_on(self, a: Expr) -> Expr:
        """The agent's serializer is (or, on first lookup, will be created) ENABLED."""
        return Or(And(self.ex(a), self.ser_en(a)), self.count(a) > 0)

    def related(self, a: Expr) -> Expr:
        """Some published context collects on agent a (the gate's question, asked per agent)."""
        c = Var("c", self.context)
        return Exists(c, And(self.published(c), self.collects_on(c, a)))

    def mutex_free(self) -> tuple[str, Expr]:
        return ("contexts mutex is free", self.mtx() == NOBODY)

    def no_markers(self) -> tuple[str, Expr]:
        """wait_for_stopping_contexts(): cv wait until the `stopping` set is empty (digest §2.8)."""
        o = Var("o", self.context)
        return ("no start/stop in progress (stopping set empty)", Forall(o, Not(self.mk(o))))

    def instruments(self, v: LVariant, c: Expr, a: Expr) -> Expr:
        """The enter hook calls pre_kernel_call for context c on a dispatch for agent a."""
        return And(self.published(c), self.collects_on(c, a)) if v.scoped else self.published(c)

    def gate(self, v: LVariant, a: Expr) -> Expr:
        """spm::is_active_on_agent(a) (commit 4bbc5a8) or spm::is_any_active() (758072b), digest §2.10."""
        c = Var("c", self.context)
        if v.per_agent_gate:
            return Exists(c, And(self.published(c), self.collects_on(c, a)))
        return Exists(c, self.published(c))


def _update_serialization(m: Lifecycle, v: LVariant, c: Expr, enable: bool) -> list:
    """QueueController::enable/disable_serialization(agents(c)) as one atomic step, with the
    ghost references context c holds (hd.*) moved alongside (digest §2.2 post-fix, §4 P9). The
    core's lock-step update_serialization() refines it: spec/refinement.py (Z3)."""
    x = Var("x", m.agent)

    def step(old: Expr, cap: int) -> Expr:
        # the caps (2C+1 references, 3 ghost references) bound the finite model, not the code:
        # any size reads the increment unbounded; the P9 invariant keeps every count <= 1
        return Ite(m.b.bound(old < cap), old + 1, old) if enable else Ite(old > 0, old - 1, old)

    is_all = m.unrestricted(c) if v.scoped else TRUE
    inside = And(Not(is_all), m.ag(c, x))
    rc_all = Ite(is_all, step(m.rc_all(), m.refs), m.rc_all())
    rc = Ite(inside, step(m.rc(x), m.refs), m.rc(x))
    return [(m.rc_all(), rc_all), (m.hd_all(c), Ite(is_all, step(m.hd_all(c), HD_CAP), m.hd_all(c))),
            Every(x, m.rc(x), rc), Every(x, m.hd(c, x), Ite(inside, step(m.hd(c, x), HD_CAP), m.hd(c, x))),
            # transitions applied inside the refcount write lock from the post-update count (P1 final)
            Every(x, m.ser_en(x), Ite(m.ex(x), rc_all + rc > 0, m.ser_en(x)))]


def _scope_mask(m: Lifecycle, v: LVariant, c: Expr) -> ExprLike:
    """The agent set an update covers, as a bitmask; 0 = all agents (the SDK's empty set)."""
    return Mask(Var("x", m.agent), m.ag(c, Var("x", m.agent))) if v.scoped else 0


def _drain_saw(m: Lifecycle, t: Expr, x: Expr) -> tuple[Expr, Expr]:
    """(idle, busy): queue x's _active_kernels was 0 / was > 0 at some instant since tool t's
    drain began, read from the dispatch phases snapshotted then (`ds`) and the completions that
    emptied a queue (`ze`). inf(x) counts x's dispatches in flight or exited (the abstraction in
    `Lifecycle.__init__`), so x was busy at the start iff one of them was then, it became idle
    later iff a completion since then emptied it, and it became busy later iff a dispatch was
    submitted on it since then."""
    k = Var("k", m.kernel)
    mine = m.da(k) == x
    busy_at_start = Exists(k, And(mine, Or(m.ds(t, k) == "flight", m.ds(t, k) == "exited")))
    emptied_since = Exists(k, And(mine, m.ds(t, k) != "done", m.st(k) == "done", m.ze(k)))
    submitted_since = Exists(k, And(mine, Or(m.ds(t, k) == "none", m.ds(t, k) == "hooked"), m.submitted(k)))
    return Or(Not(busy_at_start), emptied_since), Or(busy_at_start, submitted_since)


# ---------------------------------------------------------------------------------------------
# tool threads: rocprofiler_start_context / stop_context / spm set_agents / ... (digest §2.7, §2.8)
# ---------------------------------------------------------------------------------------------
def _tool(m: Lifecycle, v: LVariant, cfg: LConfig) -> None:
    b = m.b
    R = m.tool
    t = Var("t", R)
    ctx = Var("ctx", m.context)
    o = Var("o", m.context)
    src_ctx = "digest §2.8 post [SRC amd-vkale@504daf36 / ROCm@003ba9fb context.cpp]"
    on_ctx = {"ctx": ctx}
    sel = (("{t} works on context {ctx}", m.cx(t) == ctx),)

    # -- registration (allocate_context + SPM configure; registered contexts are never dropped) --
    b.action(R, "idle", "context_register", t, params=(ctx,), static=on_ctx,
             guard=(("context {ctx} not yet registered", Not(m.reg(ctx))),),
             updates=((m.reg(ctx), True),),
             source="digest §1.2 registered contexts (registry + published snapshot; retired kept alive)")

    # -- registry client (PC sampling / thread trace / device counters still use add_callback) --
    # the cap is a bound of the finite model, not of the code (a 32-bit counter): dropped any size
    cap = "registry ids left in the model"
    b.action(R, "idle", "add_callback", t, guard=((cap, m.ids() < cfg.max_ids),),
             updates=((m.ids(), m.ids() + 1),), observe={"id": m.ids() + 1}, any_size={cap: TRUE},
             source="digest §2.11: `static atomic<ClientID> client_id{1}` in QueueController::add_callback")

    # -- start_context ---------------------------------------------------------------------------
    # the scan over get_active_contexts(): published slots only (null skipped)
    conflict = Exists(o, And(o != ctx, m.published(o), m.intersects(ctx, o)))
    scan = Ite(m.published(ctx), R_ALREADY, Ite(conflict, R_CONFLICT, R_OK))

    def reserve(result: Expr) -> tuple[list, Expr]:
        ok = result == R_OK
        ups: list = [(m.slot(ctx), Ite(ok, "reserved", m.slot(ctx))), (m.cx(t), ctx),
                     (m.g_conflict(), Or(m.g_conflict(), result == R_CONFLICT))]
        if v.start_marker:
            ups.append((m.mk(ctx), Ite(ok, True, m.mk(ctx))))
        return ups, Ite(ok, "publish", "idle")

    # [INF] model gap: a second concurrent start of a context whose slot is reserved but not
    # yet published would reserve a second slot; one slot per context is modelled.
    start_guard = (m.mutex_free(), m.no_markers(), ("context {ctx} registered", m.reg(ctx)),
                   ("context {ctx} profile alive", m.prof(ctx)),
                   ("context {ctx} has no reserved-unpublished slot", m.slot(ctx) != "reserved"))
    if v.scan_locked:
        ups, goto = reserve(scan)
        b.action(R, "idle", "start_begin", t, params=(ctx,), static=on_ctx, guard=start_guard,
                 updates=ups, goto=goto, observe={"result": scan},
                 source=src_ctx + ": lock; wait_for_stopping_contexts; scan (same id -> SUCCESS, intersects -> "
                 "CONTEXT_CONFLICT); reserve slot; stopping.insert(id); unlock")
    else:
        b.action(R, "idle", "start_scan", t, params=(ctx,), static=on_ctx,
                 guard=(("context {ctx} registered", m.reg(ctx)), ("context {ctx} profile alive", m.prof(ctx))),
                 updates=((m.sc(t), scan), (m.cx(t), ctx)), goto="scan_done", observe={"result": scan},
                 source="digest §5.1 variant A: conflict scan over get_active_contexts() before the mutex "
                 "(mirror context.cpp L283-295)")
        ups, goto = reserve(m.sc(t))
        b.action(R, "scan_done", "start_begin", t, params=(ctx,), static=on_ctx, select=sel, guard=start_guard,
                 updates=ups, goto=goto, observe={"result": m.sc(t)},
                 source="digest §5.1 variant A: lock; reserve slot from the earlier scan's verdict; unlock")

    # P7 at start/stop: a context restricted to some agents leaves the `all` refcount alone
    scoped = (P7, "context {ctx}'s update_serialization() touches only its agents' refcounts",
              Implies(Not(m.unrestricted(ctx)), Post(m.rc_all()) == m.rc_all()))
    b.action(R, "publish", "slot_publish", t, params=(ctx,), static=on_ctx, select=sel,
             updates=((m.slot(ctx), "published"),), goto="spm_enable",
             source=src_ctx + ": CAS slot[idx] null -> cfg after unlock")
    b.action(R, "spm_enable", "spm_enable", t, params=(ctx,), static=on_ctx, select=sel,
             updates=_update_serialization(m, v, ctx, True), checks=(scoped,), goto="spm_set_enabled",
             observe={"agents_mask": _scope_mask(m, v, ctx)},
             source="spm::start_context: controller->enable_serialization(ctx.dispatch_spm.agents), digest §2.7 "
             "post [SRC amd-vkale@5d4ce3a9]" + ("" if v.scoped else "; unscoped enable_serialization() "
                                                  "[SRC ROCm@80e98e0c]"))
    b.action(R, "spm_set_enabled", "spm_set_enabled", t, params=(ctx,), static=on_ctx, select=sel,
             updates=((m.en(ctx), True),), goto="start_release" if v.start_marker else "idle",
             source="spm::start_context: W(enabled): enabled = true (after acquiring), digest §2.7")
    if v.start_marker:
        b.action(R, "start_release", "marker_release", t, params=(ctx,), static=on_ctx, select=sel,
                 guard=(m.mutex_free(),), updates=((m.mk(ctx), False),), goto="idle",
                 source=src_ctx + ": lock; stopping.erase(id); unlock; cv.notify_all")

    # -- stop_context ----------------------------------------------------------------------------
    found = m.published(ctx)
    ups = [(m.mk(ctx), Ite(found, True, m.mk(ctx))), (m.cx(t), ctx)]
    if v.slot_cleared_first:
        ups.append((m.slot(ctx), Ite(found, "free", m.slot(ctx))))
    b.action(R, "idle", "stop_begin", t, params=(ctx,), static=on_ctx, guard=(m.mutex_free(), m.no_markers()),
             updates=ups, goto=Ite(found, "spm_clear_enabled", "idle"),
             observe={"result": Ite(found, S_FOUND, S_NOT_FOUND)},
             source=(src_ctx + " phase 1: lock; wait; find slot (none -> CONTEXT_NOT_FOUND); stopping.insert; unlock")
             if not v.slot_cleared_first else
             "digest §2.8 before the ordering fix: lock; find slot; CAS slot -> null first (context.cpp:371), "
             "then services (context.cpp:383) under the same lock")

    after_no_release = "stop_release" if v.slot_cleared_first else "slot_clear"
    k = Var("k", m.kernel)
    drains = TRUE if not v.stop_disable_guarded else m.en(ctx)
    b.action(R, "spm_clear_enabled", "spm_clear_enabled", t, params=(ctx,), static=on_ctx, select=sel,
             # the drain begins here: snapshot every dispatch's phase (the ghost `ds`, see _drain_saw)
             updates=((m.en(ctx), False), (m.was(t), m.en(ctx)),
                      Every(k, m.ds(t, k), Ite(drains, m.st(k), "none"))),
             goto="drain" if not v.stop_disable_guarded else Ite(m.en(ctx), "drain", after_no_release),
             observe={"was": m.en(ctx)},
             source="spm::stop_context: W(enabled): was = enabled; enabled = false, digest §2.7 post"
             + ("" if v.stop_disable_guarded else "; mid version releases unconditionally [SRC ROCm@80e98e0c]"))

    x = Var("x", m.agent)
    # queue_controller_sync() runs Queue::sync() on every queue ONE AFTER ANOTHER, each waiting
    # (5 s) for that queue's _active_kernels to be 0 (digest §2.9 [SRC 5d4ce3a9, id 58056341233]):
    # a synced queue can take a new dispatch while a later one is still syncing. It returns true
    # iff every queue's wait saw 0 at some instant of the drain, false iff some queue's wait saw
    # > 0 throughout its window (so that queue was busy at some instant of the drain). The model
    # has no clock or queue order, so it admits any instants: an over-approximation of the code's
    # order (any order of syncs), the safe direction for a checker of real runs. Before, the
    # model required every queue idle at one instant and rejected correct runs
    # (cpp/DIVERGENCES.md L3).
    seen_idle = Forall(x, _drain_saw(m, t, x)[0])
    seen_busy = Exists(x, _drain_saw(m, t, x)[1])
    done_draining = Every(k, m.ds(t, k), "none")
    b.action(R, "drain", "queue_sync", t, params=(ctx,), static=on_ctx, select=sel,
             guard=(("every queue's _active_kernels was 0 at some instant of the drain", seen_idle),),
             updates=(done_draining,), goto="spm_disable", observe={"drained": True},
             checks=((P4M, "every dispatch the drain counted (submitted) has left context {ctx}'s "
                      "packet_return_map", Forall(k, Implies(m.submitted(k), Not(m.mp(k, ctx))))),),
             finding_checks=((DRAIN_ALL, "no dispatch at all (also one between the enter hook and async_started) "
                      "holds a packet in context {ctx}'s map", Forall(k, Not(m.mp(k, ctx)))),),
             source="queue_controller_sync(): Queue::sync() on every queue of every agent, one after another, "
             "each returns true, digest §2.9")
    if cfg.timeouts:
        b.action(R, "drain", "queue_sync", t, params=(ctx,), static=on_ctx, select=sel,
                 guard=(("some queue had kernels in flight at some instant of the drain", seen_busy),),
                 updates=((m.g_timeout(), True), done_draining), goto="spm_disable", observe={"drained": False},
                 source="Queue::sync(): 5 s timeout, ROCP_WARNING 'Timeout while waiting for queue sync'; "
                 "spm::stop_context ignores the result, digest §2.9")

    b.action(R, "spm_disable", "spm_disable", t, params=(ctx,), static=on_ctx, select=sel,
             updates=_update_serialization(m, v, ctx, False), checks=(scoped,),
             goto="stop_release" if v.slot_cleared_first else "slot_clear",
             observe={"agents_mask": _scope_mask(m, v, ctx)},
             source="spm::stop_context: controller->disable_serialization(ctx.dispatch_spm.agents), digest §2.7")
    if not v.slot_cleared_first:
        b.action(R, "slot_clear", "slot_clear", t, params=(ctx,), static=on_ctx, select=sel,
                 guard=(m.mutex_free(),), updates=((m.slot(ctx), "free"),), goto="stop_release",
                 source=src_ctx + " phase 3: lock; CAS slot ctx -> null; num_active--; unlock")
    b.action(R, "stop_release", "marker_release", t, params=(ctx,), static=on_ctx, select=sel,
             guard=(m.mutex_free(),), updates=((m.mk(ctx), False),), goto="idle",
             finding_checks=((LATE_STOP, "every submitted SPM dispatch of context {ctx} has been delivered when "
                      "rocprofiler_stop_context returns", Forall(k, Implies(
                          And(m.submitted(k), m.pk(k, ctx) == "spm"), Not(m.mp(k, ctx))))),),
             source=src_ctx + " scope guard: lock; stopping.erase(id); unlock; cv.notify_all")

    # -- set_dispatch_agents (digest §2.7) ----------------------------------------------------------
    agents = ScopeParam("set", m.agent)
    active = m.published(ctx)
    held = owner(t)  # mtx's value while t holds the contexts mutex
    b.action(R, "idle", "set_agents_check", t, params=(ctx, agents), static={"ctx": ctx, "agents": agents},
             guard=(m.mutex_free(),) + ((m.no_markers(),) if v.set_agents_waits else ()),
             updates=((m.mtx(), Ite(active, NOBODY, held)), (m.cx(t), ctx), (m.g_locked(), Or(m.g_locked(), active)),
                      Every(x, m.sa(t, x), agents.has(x))),
             goto=Ite(active, "idle", "sa_write"), observe={"result": Ite(active, A_LOCKED, A_OK)},
             source="set_dispatch_agents [SRC 5d4ce3a9]: lock; " + ("wait_for_stopping_contexts; "
                                                                   if v.set_agents_waits else "") +
             "refuse with CONFIGURATION_LOCKED if ctx is in the active slots")
    b.action(R, "sa_write", "set_agents_write", t, params=(ctx,), static=on_ctx, select=sel,
             guard=(("{t} holds the contexts mutex", m.mtx() == held),),
             updates=(Every(x, m.ag(ctx, x), m.sa(t, x)), (m.mtx(), NOBODY)), goto="idle",
             source="set_dispatch_agents: ctx.dispatch_spm.agents = selected; unlock (no lock of its own: "
             "readers rely on the refusal while active)")

    # -- scenario extras -----------------------------------------------------------------------------
    if cfg.deactivate:
        b.action(R, "idle", "deactivate", t, params=(ctx,), static=on_ctx, guard=(m.mutex_free(), m.no_markers()),
                 updates=((m.slot(ctx), "free"),), observe={"result": Ite(m.published(ctx), S_FOUND, S_NOT_FOUND)},
                 source="deactivate_client_contexts [SRC 504daf36]: lock; wait; CAS matching slots -> null "
                 "without stopping services (digest §2.8, SPM doc gap 1)")
    if cfg.destroy:
        u = Var("u", R)
        b.action(R, "idle", "profile_destroy", t, params=(ctx,), static=on_ctx,
                 guard=(("context {ctx} stopped (slot free, no stop in progress)",
                         And(m.slot(ctx) == "free", Not(m.mk(ctx)))),
                        ("profile not yet destroyed", m.prof(ctx)),
                        # a tool destroying a profile it is still starting is a tool bug, not a
                        # protocol race (and would leave that start with no step)
                        ("no tool inside an operation on context {ctx}",
                         Not(Exists(u, And(m.cx(u) == ctx, m.tpc(u) != "idle"))))),
                 updates=((m.prof(ctx), False),),
                 source="tool destroys the SPM profile/config after rocprofiler_stop_context returned (seed: "
                 "'the drain also incidentally covered stop_context followed by destroying the counter config')")


# ---------------------------------------------------------------------------------------------
# dispatch thread: WriteInterceptor + SPM enter hook + serializer (digest §2.4, §2.5, §3.2)
# ---------------------------------------------------------------------------------------------
def _dispatch(m: Lifecycle, v: LVariant) -> None:
    b = m.b
    R = m.dispatch
    t = Var("t", R)
    k, a = Var("id", m.kernel), Var("agent", m.agent)
    c, x = Var("c", m.context), Var("x", m.agent)
    # dispatches are numbered in write order at the fixed size (the cursor `dn`); any size reads
    # "the next one" as "one not yet written" at the write and "the one being written" at the
    # submit (one dispatch thread: at most one dispatch is hooked), a superset of the order
    nxt_label = "dispatch {id} is the next one"
    nxt = ((nxt_label, m.dn() == k),)
    ins = m.instruments(v, c, a)
    gate_name = "is_active_on_agent" if v.per_agent_gate else "is_any_active"
    # WriteInterceptor decides at its entry whether the write is batched (no_real_consumers and
    # should_batch read the SPM gate), and its enter hook snapshots the active slots only later,
    # per packet: a start's CAS publish or a stop's slot clear can fall between the two. So the
    # gate is its own step, keeping the decision in the thread's locals (gk, ga, gb) for the
    # write to report (cpp/DIVERGENCES.md L1)
    batch = Not(m.gate(v, a))
    b.action(R, "idle", "dispatch_gate", t, params=(k, a), static={"agent": a, "id": k}, select=nxt,
             any_size={nxt_label: m.st(k) == "none"},
             updates=((m.gk(t), k), (m.ga(t), a), (m.gb(t), batch)), goto="gated",
             observe={"batch": batch},
             checks=((GATE, "a write on agent {agent}, which no published SPM context collects on, keeps "
                      "batching", Implies(Not(m.related(a)), batch)),),
             source=f"WriteInterceptor entry: no_real_consumers / should_batch read spm::{gate_name}(agent) "
             "once per write, before the packets are processed (digest §2.4, §2.10; " +
             ("commit 4bbc5a8, queue.cpp#L446-L450" if v.per_agent_gate else "#8887 at 758072b, queue.cpp#L318-L322")
             + ")")
    b.action(R, "gated", "dispatch_write", t, params=(k, a), static={"agent": a, "id": k},
             select=nxt + (("{t} gated dispatch {id} on agent {agent}", And(m.gk(t) == k, m.ga(t) == a)),),
             any_size={nxt_label: m.st(k) == "none"},
             updates=((m.da(k), a), (m.st(k), "hooked"), (m.rt(k), m.ids()),
                      # pre_kernel_call: enabled -> SPMPacket, else the EmptyAQLPacket fallback; both
                      # inserted into the context's packet_return_map, both serialize=true (digest §2.5).
                      # The code reads `enabled` per context after its snapshot of the active slots
                      # (a stop's spm_clear_enabled or a start's spm_set_enabled can fall between):
                      # the kind is the one the event reports (`spm`), the model's own step reads
                      # `enabled` at the snapshot (cpp/DIVERGENCES.md L7)
                      Every(c, m.pk(k, c), Ite(ins, Ite(Reported("spm", c), "spm", "empty"), "none")),
                      Every(c, m.mp(k, c), ins), (m.rq(k), Exists(c, ins))),
             goto="hooked",
             observe={"batch": m.gb(t), "instrumented": Mask(c, ins), "serialize": Exists(c, ins),
                      "spm": Mask(c, And(ins, m.en(c)))},
             # the claim reads the observation's own expression (no mutation operator touches one)
             checks=((P3, "the enter hooks request serialization for dispatch {id} on agent {agent}, whose "
                      "serializer is (or will be created) ENABLED", Implies(m.ser_on(a), Post(m.rq(k)))),
                     (P7, "dispatch {id} on agent {agent} is instrumented only by contexts collecting on "
                      "agent {agent}", Forall(c, Implies(Post(m.pk(k, c)) != "none", m.collects_on(c, a))))),
             source="WriteInterceptor: registry write_interceptor loop, SPM enter hook over get_active_contexts()" +
             (" with collects_on(agent)" if v.scoped else " (no collects_on, v1 hooks)") +
             ", pre_kernel_call; the batching decided at the entry (gb); digest §2.4, §2.5")
    # logs written before the gate had its own event (format v1 corpus, v2 logs of older writers)
    b.shorthand(R, ("idle", "dispatch_gate"), ("gated", "dispatch_write"),
                "a dispatch_write with no dispatch_gate of its thread before it: the gate at the same instant "
                "(traces/FORMAT.md)")

    # serializer(queue): create the agent's entry from the refcount if missing (atomic under R(rc)
    # in the final core), then kernel_dispatch; async_started() +1
    mine = And(m.da(k) == x, m.rq(k))
    created_en = Ite(m.ex(x), m.ser_en(x), m.count(x) > 0)
    serialized = And(m.rq(k), Exists(x, And(m.da(k) == x, created_en)))
    b.action(R, "hooked", "dispatch_submit", t, params=(k,), static={"id": k}, select=nxt,
             any_size={nxt_label: m.st(k) == "hooked"},
             updates=((m.st(k), "flight"), (m.dn(), m.dn() + 1),
                      Every(x, m.ex(x), Or(m.ex(x), mine)), Every(x, m.ser_en(x), Ite(mine, created_en, m.ser_en(x))),
                      Every(x, m.inf(x), Ite(m.da(k) == x, m.inf(x) + 1, m.inf(x))), (m.sz(k), serialized)),
             goto="idle", observe={"serialized": serialized},
             finding_checks=((SUBMIT, "dispatch {id} is not submitted unserialized while its agent's serializer is "
                      "(or will be created) ENABLED", Forall(x, Implies(And(m.da(k) == x, m.ser_on(x)), m.rq(k)))),),
             source="WriteInterceptor: if is_serialized: serializer(queue).kernel_dispatch (serialized iff requested "
             "and the agent's serializer ENABLED, digest §3.2); queue.async_started(); writer(out)")


# ---------------------------------------------------------------------------------------------
# completion thread: AsyncSignalHandler + SPM exit hook + post_kernel_call (digest §2.6)
# ---------------------------------------------------------------------------------------------
def _complete(m: Lifecycle, v: LVariant) -> None:
    b = m.b
    R = m.complete
    t = Var("t", R)
    k, j = Var("id", m.kernel), Var("j", m.kernel)
    c, x = Var("c", m.context), Var("x", m.agent)
    spm_tag = hook_tags(v)["SPM"]
    prescan = Or(Exists(c, m.pk(k, c) != "none"), m.rt(k) == spm_tag)
    routed = m.published(c) if v.exit_over_active else m.reg(c)
    erase = And(prescan, routed, m.mp(k, c))
    # post_kernel_call of context c finds the dispatch's SPMPacket in its own map
    delivered = Count(c, And(erase, m.pk(k, c) == "spm"))
    # ks counts the deliveries the run reports (the model's step reports `delivered`): a run that
    # delivers a packet twice, or not at all, makes this step and then fails P4
    got = Reported("delivered")
    b.action(R, "idle", "completion_exit", t, params=(k,), static={"id": k},
             guard=(("dispatch {id} is in flight", m.st(k) == "flight"),),
             updates=((m.st(k), "exited"), (m.hk(), k),
                      (m.ks(k), Ite(b.bound(m.ks(k) + got < 3), m.ks(k) + got, 3)),
                      Every(c, m.mp(k, c), And(m.mp(k, c), Not(erase)))),
             goto="exited", observe={"prescan": prescan, "delivered": delivered},
             finding_checks=((DESTROYED, "the completion of dispatch {id} reaches no packet_return_map entry of a "
                      "destroyed profile", Forall(c, Implies(And(m.mp(k, c), m.pk(k, c) == "spm"), m.prof(c)))),),
             source="AsyncSignalHandler: SPM exit hook (pre-scan for SPM_CLIENT_ID; over " +
             ("ACTIVE contexts, v1 [SRC id 59876318601]" if v.exit_over_active else
              "REGISTERED contexts, v2 [SRC ROCm@03c67769]") +
             "); post_kernel_call erases its own packet, kfd_stop + DISPATCH_END for an SPMPacket; digest §2.6")
    b.action(R, "exited", "completion_signal", t, params=(k,), static={"id": k},
             select=(("{t} completes dispatch {id}", m.hk() == k),),
             updates=(Every(x, m.inf(x), Ite(And(m.da(k) == x, m.inf(x) > 0), m.inf(x) - 1, m.inf(x))),
                      (m.st(k), "done"),
                      # the queue is idle after this step iff k was its only dispatch in flight
                      # or exited (inf(x) == 1, read through what inf counts: first-order at any size)
                      (m.ze(k), Not(Exists(j, And(j != k, m.da(j) == m.da(k),
                                                  Or(m.st(j) == "flight", m.st(j) == "exited")))))),
             goto="idle",
             source="AsyncSignalHandler: serializer.kernel_completion_signal; queue.async_complete() (-1, last "
             "statement), digest §2.6")


# ---------------------------------------------------------------------------------------------
# the properties, written once as claims of the definition (properties.py binds metadata to them)
# ---------------------------------------------------------------------------------------------


def _claims(m: Lifecycle, v: LVariant) -> None:
    """The lifecycle's named properties (digest §4, §5) and the findings (residual risks of the
    final design); step claims' conditions sit on the actions they watch (`checks`)."""
    b = m.b
    a, k = Var("a", m.agent), Var("k", m.kernel)
    c, c1, c2 = Var("c", m.context), Var("c1", m.context), Var("c2", m.context)
    t = Var("t", m.tool)
    b.invariant(P1, "P1 with the lifecycle attached: an existing serializer entry is ENABLED iff its agent's "
                "refcount > 0", "digest §4 P1; the core proof (spec.programs) for the atomic reading of "
                "update_serialization()/serializer()",
                Forall(a, Implies(m.ex(a), m.ser_en(a) == (m.count(a) > 0))))
    spm = Count(c, m.pk(k, c) == "spm")
    done = Or(m.st(k) == "exited", m.st(k) == "done")
    b.invariant(P4, "P4: each dispatch's SPMPacket gets exactly one kfd_stop + DISPATCH_END at completion and "
                "is erased from its context's packet_return_map, also after stop",
                "digest §4 P4; bwelton #8887 issue 1; seed question 'In-flight SPM dispatch still gets "
                "DISPATCH_END / kfd_stop after stop?'",
                Forall(k, And(m.ks(k) <= spm, Implies(done, And(m.ks(k) == spm, m.erased(k))))))
    b.step_claim(P3, "P3 (decision-point form): when the enter hook snapshots the active slots for a dispatch "
                 "on agent a and a's serializer is (or will be created) ENABLED, some context in the snapshot "
                 "requests serialization", "digest §4 P3; bwelton #8887 issue 2; spm/core.cpp 'the ordering is "
                 "load-bearing'")
    b.step_claim(P4M, "P4 corollary: when queue_controller_sync() succeeds in a stop, every dispatch the drain "
                 "counted (submitted) has left the context's packet_return_map",
                 "digest §4 P4 corollary; seed question 'packet_return_map empty?'")
    # P5 lists no condition: the readings derive it (the static lock graph of spec.lifecycle.locks,
    # the generic no-stuck-threads check of spec.properties and its any-size form)
    b.step_claim(P5, "P5: lock nesting of the lifecycle steps (with the core's) is acyclic and no reachable "
                 "state has every busy thread waiting", "digest §1.3, §4 P5")
    tags = list(hook_tags(v).values())
    distinct = len(set(tags)) == len(tags) and -1 not in tags
    b.invariant(P6, "P6: hook tags are pairwise distinct, not -1, and never equal an id add_callback handed out",
                "digest §4 P6, §2.11; client_ids.hpp static_assert",
                And(distinct, *[Or(h < 1, m.ids() < h) for h in tags]))
    b.step_claim(P7, "P7: a context restricted to some agents never instruments a dispatch on another agent, "
                 "and its start/stop touch only its agents' refcounts", "digest §4 P7; seed question "
                 "'GPU-1-only SPM leave GPU-0 alone?'")
    b.invariant(P8, "P8: two SPM contexts hold (reserved or published) slots at once only if their agent "
                "sets are disjoint", "digest §4 P8, §5.1; finding 'SPM conflict check races with context "
                "activation'; test concurrent_overlapping_context_starts_admit_exactly_one",
                Forall(c1, Forall(c2, Implies(And(c1 != c2, m.slot(c1) != "free", m.slot(c2) != "free"),
                                              Not(m.intersects(c1, c2))))))
    # rc = the sum of the references contexts hold: with every hd in {0, 1} (a conjunct) the sum
    # is the number of contexts holding one, which the language counts
    busy = Exists(t, And(m.tpc(t) != "idle", m.cx(t) == c))
    quiet = And(m.slot(c) == "free", Not(m.mk(c)), Not(busy))
    b.invariant(P9, "P9: refcounts equal the references contexts hold, at most one per agent per context, "
                "and none once a context is stopped", "digest §4 P9; set_dispatch_agents source comment; "
                "test concurrent_context_start_stop_does_not_pin_serialization",
                And(m.rc_all() == Count(c, m.hd_all(c) > 0), Forall(a, m.rc(a) == Count(c, m.hd(c, a) > 0)),
                    Forall(c, And(m.hd_all(c) <= 1, Forall(a, m.hd(c, a) <= 1),
                                  Implies(quiet, And(m.hd_all(c) == 0, Forall(a, m.hd(c, a) == 0)))))))
    b.step_claim(GATE, "a write on an agent outside every active SPM context keeps batching",
                 "digest §5.2; finding 'Process-wide SPM batching disable affects unrelated GPU queues'; "
                 "commit 4bbc5a8")
    b.step_finding(DRAIN_ALL, "finding: when queue_controller_sync() succeeds, no dispatch at all (also one between "
                 "the enter hook and async_started) holds a packet in the context's map",
                 "digest §4 P3 residual (i): async_started() runs after the hook decisions [SRC id 58056341233]")
    b.step_finding(SUBMIT, "finding: no dispatch is submitted without serialization while its agent's serializer "
                 "is ENABLED (submission-time form of P3)",
                 "digest §4 P3 residual (i): snapshot-to-kernel_dispatch TOCTOU at start")
    b.step_finding(LATE_STOP, "finding: when rocprofiler_stop_context returns, every submitted SPM dispatch of the "
                 "context has been delivered (DISPATCH_END not after stop)",
                 "digest §4 P4 residuals: 'a drain timeout delivers DISPATCH_END after rocprofiler_stop_context "
                 "returned'; §2.9 Queue::sync only warns")
    b.step_finding(DESTROYED, "finding: a completion never reaches the packet_return_map entry of a profile the "
                 "tool destroyed after stop", "seed commit 'Restores the queue_controller_sync()': 'the drain "
                 "also incidentally covered stop_context followed by destroying the counter config'")


def definition(v: LVariant, cfg: LConfig) -> Protocol:
    """The lifecycle at variant `v`'s knobs and `cfg`'s scenario switches and caps."""
    return language(v, cfg).b.p


def language(v: LVariant, cfg: LConfig) -> Lifecycle:
    """The definition's sorts, state functions and derived expressions (`instruments`, `gate`,
    ...), for properties and invariant candidates that name them."""
    return _built(v, cfg.timeouts, cfg.deactivate, cfg.destroy, cfg.max_ids, cfg.contexts)


@lru_cache(maxsize=None)
def _built(v: LVariant, timeouts: bool, deactivate: bool, destroy: bool, max_ids: int, contexts: int) -> Lifecycle:
    cfg = LConfig(contexts=contexts, max_ids=max_ids, timeouts=timeouts, deactivate=deactivate, destroy=destroy)
    m = Lifecycle(Builder(f"lifecycle/{v.name}"), cfg)
    _claims(m, v)
    _tool(m, v, cfg)
    _dispatch(m, v)
    _complete(m, v)
    if v.mutation:
        from ..lang.mutate import Mutation, apply

        m.b.p = apply(m.b.p, Mutation.parse(v.mutation))
    return m
