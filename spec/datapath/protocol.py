"""The data path, written once in the protocol language (`spec.lang`).

What the control-path models (spec/programs.py, spec/lifecycle/) leave out and the fidelity
audit (../shared/reference/fidelity-audit.md §1.6-§1.10, §2, §3) found the hazards in:

* `app` threads, one per queue: `WriteInterceptor` writes of two packets (the second a kernel
  dispatch or, in a mixed write, a barrier packet), the gate (raw fast path, batching) computed
  once per write, the enter hooks and `kernel_dispatch` per packet, `async_started()` where the
  revision puts it, submission; also `create_queue` and `destroy_queue` (5 s `Queue::sync`).
* the `gpu` thread: the queue executes packets in order (transition fences, the serializer's
  ready and block barriers, kernel run and end) and runs the session completion handlers
  (`AsyncSignalHandler`: SPM exit hook, `kernel_completion_signal` 1- or 2-argument,
  `async_complete()`).
* `tool` threads, one per SPM context: start (marker, publish, `enable_serialization`, enabled),
  stop (marker, enabled cleared, `interposition_sync()` with no timeout, `Queue::sync()` per queue
  under `_queues` shared, `disable_serialization`, slot cleared).
* a `tracer` thread: a thread-trace context, a second holder of serialization references whose
  hook returns `bSerialize=false` for untraced dispatches (audit Z3).

`update_serialization()` is one atomic step here (the core model proves its locking); what it
does to the serializer is modelled: status, and the transition barrier it pushes
(`hsa_barrier::set_barrier` records `_active_kernels` per queue of the agent).

Fixed in the definition (the finite reading must use these sizes): two packets per write
(`pkt` = 2), two transition-barrier slots per agent (`bar` = 2; a transition that needs a third
live barrier waits, which the README states as a bound), at most two queues (the serializer's
`_dispatch_ready` FIFO then holds at most one queue, so its order is not stored).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..lang.syntax import (
    BOOL,
    And,
    BoolParam,
    Builder,
    EnumDom,
    Every,
    Exists,
    Expr,
    ExprLike,
    Forall,
    Implies,
    IntDom,
    Ite,
    Lit,
    Not,
    Or,
    Protocol,
    SortDom,
    Var,
)
from .variants import DVariant

PKTS = (0, 1)  # packets per write
BARS = (0, 1)  # transition barrier slots per agent
MAXACT = 4  # _active_kernels bound: 2 writes x 2 sessions
PKT_STATES = ("none", "queued", "ready", "done")


@dataclass(frozen=True)
class Scope:
    """Sizes and scenario switches of one exploration (what the run may do)."""

    agents: int = 1
    queues: int = 2
    ctxs: int = 1
    tracers: int = 0
    writes: int = 1  # WriteInterceptor calls per queue
    packets: int = 2  # packets per write (1: a single dispatch; the definition's bound is 2)
    tracing: bool = True  # kernel-dispatch tracing is on: writes are intercepted, registry batches
    mixed: bool = False  # a write may carry a non-dispatch (barrier) packet second
    barrier_second: bool = False  # with `mixed`: the second packet is always a barrier packet
    create: bool = True  # queues are created during the run (else they exist on agent 0 at the start)
    destroy: bool = False  # an app thread may destroy its queue after its writes
    timeouts: bool = True  # Queue::sync() may time out (5 s) with sessions still active

    def sizes(self) -> dict[str, int]:
        return {"agent": self.agents, "queue": self.queues, "ctx": self.ctxs,
                "tracer": self.tracers, "gpu": 1, "pkt": len(PKTS), "bar": len(BARS)}

    def describe(self) -> str:
        """`1 agent, 1 queue x 2 dispatches, 1 SPM context, tracing, timeouts` (the scope's size and switches)."""
        second = ("dispatch or barrier" if self.mixed and not self.barrier_second
                  else "barrier" if self.mixed else "dispatch")
        pk = "1 dispatch" if self.packets == 1 else f"dispatch + {second}"
        bits = [f"{self.agents} agent{'s' * (self.agents != 1)}",
                f"{self.queues} queue{'s' * (self.queues != 1)} x {self.writes} write{'s' * (self.writes != 1)} "
                f"of {pk}", f"{self.ctxs} SPM context{'s' * (self.ctxs != 1)}"]
        bits += [name for name, on in (("thread trace", self.tracers > 0), ("kernel tracing", self.tracing),
                                       ("queue create", self.create), ("queue destroy", self.destroy))
                 if on]
        bits.append("sync timeouts" if self.timeouts else "no sync timeouts")
        return ", ".join(bits)


def _app_labels(v: DVariant) -> list[str]:
    out = ["idle", "open", "raw"]
    out += (["b_start"] if v.early_async else []) + ["b_hook0", "b_kd0", "b_hook1", "b_kd1", "b_submit"]
    for k in PKTS:
        out += ([f"start{k}"] if v.early_async else []) + [f"hook{k}", f"kd{k}", f"submit{k}"]
    return out + ["gone"]


TOOL_LABELS = ["idle", "enable", "set_enabled", "active", "isync", "qsync_begin", "qsync",
               "disable", "clear", "done"]
DRAIN_LABELS = ("isync", "qsync_begin", "qsync")

# claim names (the step claims' conditions sit on their actions)
H1 = "batched-not-serialized"
H2 = "active-kernels-count-sessions"
H2B = "no-self-counted-fence"
H3 = "counted-completions-register"
H5 = "no-dangling-queue"
H6 = "one-hw-spm-session-per-agent"
P3 = "no-unserialized-submit-while-enabled"
DRAIN = "drain-covers-hooked-dispatches"
LATE = "no-delivery-after-stop-returns"
GATE = "unrelated-queues-batched"
GRANT = "grant-released-iff-held"


class DP:
    """Sorts and state of the data path."""

    def __init__(self, b: Builder, v: DVariant, sc: Scope) -> None:
        self.b, self.v, self.sc = b, v, sc
        self.agent = b.sort("agent")
        self.queue = b.sort("queue", "q")
        self.ctx = b.sort("ctx", "c")
        self.tracer = b.sort("tracer", "tt")
        self.gpu = b.sort("gpu", "g")
        self.pkt = b.sort("pkt")
        self.bar = b.sort("bar")
        A, Q, C, T, P, B = self.agent, self.queue, self.ctx, self.tracer, self.pkt, self.bar
        cnt = IntDom(0, MAXACT)
        s = b.state
        # serializer side, per agent (digest §3.1)
        self.rc = s("rc", (A,), IntDom(0, 3), 0, "rc.{0}", "serialization refcount of a")
        self.sen = s("sen", (A,), BOOL, False, "ser.en.{0}", "profiler_serializer status ENABLED")
        self.blive = s("blive", (A, B), BOOL, False, "bar.{0}.{1}", "transition barrier slot b is incomplete")
        self.bold = s("bold", (A, B), BOOL, False, "bar.old.{0}.{1}",
                      "the barrier's state: in-flight sessions complete under ENABLED rules")
        self.bnew = s("bnew", (A,), SortDom(B), 0, "bar.new.{0}", "the newest barrier slot")
        self.bw = s("bw", (A, B, Q), cnt, 0, "bar.wait.{0}.{1}.{2}", "hsa_barrier queue_waiting[q]")
        self.benq = s("benq", (A, B, Q), BOOL, False, "bar.enq.{0}.{1}.{2}", "fence already enqueued on q")
        # per queue
        self.qpc = s("qpc", (Q,), EnumDom("QPc", tuple(_app_labels(v))), "idle" if sc.create else "open",
                     "pc.{0}")
        self.qag = s("qag", (Q,), SortDom(A), 0, "qag.{0}", "the queue's agent")
        self.alive = s("alive", (Q,), BOOL, not sc.create, "alive.{0}", "the queue exists")
        self.gone = s("gone", (Q,), BOOL, False, "gone.{0}", "the queue was destroyed (freed)")
        self.act = s("act", (Q,), cnt, 0, "act.{0}", "Queue::_active_kernels")
        self.bat = s("bat", (Q,), BOOL, False, "bat.{0}", "the current write is batched (one session)")
        self.raw = s("raw", (Q,), BOOL, False, "raw.{0}", "the current write took the raw fast path")
        self.nw = s("nw", (Q,), IntDom(0, sc.writes), 0, "nw.{0}", "writes done")
        self.rdy = s("rdy", (Q,), BOOL, False, "rdy.{0}", "ready_signal consumed (not 0)")
        self.gr = s("gr", (Q,), BOOL, False, "gr.{0}", "_dispatch_queue == q (block_signal 0)")
        self.wq = s("wq", (Q,), BOOL, False, "wq.{0}", "q is in _dispatch_ready")
        # per packet of the current write
        self.st = s("st", (Q, P), EnumDom("Pkt", PKT_STATES), "none", "st.{0}.{1}", "packet stage on the GPU")
        self.disp = s("disp", (Q, P), BOOL, False, "disp.{0}.{1}", "the packet is a kernel dispatch")
        self.ser = s("ser", (Q, P), BOOL, False, "ser.{0}.{1}", "is_serialized (the hooks' request)")
        self.rb = s("rb", (Q, P), BOOL, False, "rb.{0}.{1}", "kernel_dispatch emitted ready+block")
        self.hd = s("hd", (Q, P), BOOL, False, "hd.{0}.{1}", "the session handler is on this packet's signal")
        self.ins = s("ins", (Q, P), BOOL, False, "ins.{0}.{1}", "in a submitted session, not yet completed")
        self.sst = s("sst", (Q, P), BOOL, False, "sst.{0}.{1}", "its session was counted (ghost)")
        self.sp = s("sp", (Q, P, C), BOOL, False, "sp.{0}.{1}.{2}", "carries an SPMPacket of context c")
        # (packet, barrier, queue): the queue last, so an update can range over every queue
        self.fb = s("fb", (P, B, Q), BOOL, False, "fb.{2}.{0}.{1}", "packet p of q waits behind barrier b's fence")
        self.cb = s("cb", (P, B, Q), BOOL, False, "cb.{2}.{0}.{1}", "barrier b counted the session of packet p of q (ghost)")
        # SPM contexts (one tool thread each)
        self.cpc = s("cpc", (C,), EnumDom("CPc", tuple(TOOL_LABELS)), "idle", "pc.{0}")
        self.cag = s("cag", (C,), SortDom(A), 0, "cag.{0}", "the context's agent (set_dispatch_agents)")
        self.slot = s("slot", (C,), BOOL, False, "slot.{0}", "published in the active slots")
        self.spen = s("spen", (C,), BOOL, False, "spen.{0}", "dispatch_spm.enabled")
        self.mark = s("mark", (C,), BOOL, False, "mark.{0}", "start/stop marker in `stopping`")
        self.ret = s("ret", (C,), BOOL, False, "ret.{0}", "its stop returned to the tool (ghost)")
        self.qp = s("qp", (C, Q), BOOL, False, "qp.{0}.{1}", "Queue::sync still to run on q")
        self.qlk = s("qlk", (C,), BOOL, False, "lk.queues.r.{0}", "holds _queues shared")
        # thread trace
        self.tpc = s("tpc", (T,), EnumDom("TPc", ("idle", "on")), "idle", "pc.{0}")
        self.tag = s("tag", (T,), SortDom(A), 0, "tag.{0}", "the tracer's agent")
        self.tton = s("tton", (T,), BOOL, False, "tton.{0}", "thread trace active on its agent")
        self.gpc = s("gpc", (self.gpu,), EnumDom("GPc", ("idle",)), "idle", "pc.{0}")
        b.p.pc = {"queue": self.qpc, "ctx": self.cpc, "tracer": self.tpc, "gpu": self.gpc}

    # ---- derived expressions ----
    def spm_on(self, a: Expr | None) -> Expr:
        c = Var("c_", self.ctx)
        return Exists(c, And(self.slot(c), self.cag(c) == a) if a is not None else self.slot(c))

    def tt_on(self, a: Expr | None) -> Expr:
        t = Var("t_", self.tracer)
        return Exists(t, And(self.tton(t), self.tag(t) == a) if a is not None else self.tton(t))

    def hw(self, q: Expr, k: int) -> Expr:
        """An SPM hardware session of this packet: kfd_start ran (the kernel started), kfd_stop
        (in the completion handler's exit hook) not yet."""
        c = Var("c_", self.ctx)
        return And(Exists(c, self.sp(q, K(k), c)), self.st(q, K(k)) == "done")

    def update(self, a: Var, enable: bool) -> tuple[list, Expr]:
        """update_serialization(enable, {a}) as one step: refcount, status, transition barrier.
        Returns (updates, capacity guard)."""
        old = self.rc(a)
        trans = old == 0 if enable else old == 1
        q = Var("q_", self.queue)
        counted = Exists(q, And(self.qag(q) == a, self.alive(q), self.act(q) > 0))
        push = And(trans, counted)  # with no session in flight set_barrier completes at once
        ups: list = [(self.rc(a), old + 1 if enable else Ite(old > 0, old - 1, old)),
                     (self.sen(a), Ite(trans, enable, self.sen(a))),
                     (self.bnew(a), Ite(push, Ite(Not(self.blive(a, K(0))), K(0), K(1)), self.bnew(a)))]
        for b in BARS:
            new = And(push, Not(self.blive(a, K(0))) if b == 0 else self.blive(a, K(0)))
            ups += [(self.blive(a, K(b)), Or(self.blive(a, K(b)), new)),
                    (self.bold(a, K(b)), Ite(new, not enable, self.bold(a, K(b)))),
                    Every(q, self.bw(a, K(b), q),
                          Ite(new, Ite(And(self.qag(q) == a, self.alive(q)), self.act(q), 0), self.bw(a, K(b), q))),
                    Every(q, self.benq(a, K(b), q), And(self.benq(a, K(b), q), Not(new)))]
            for k in PKTS:
                ups.append(Every(q, self.cb(K(k), K(b), q),
                                 Ite(And(new, self.qag(q) == a), self.sst(q, K(k)), self.cb(K(k), K(b), q))))
        room = Or(Not(push), Not(self.blive(a, K(0))), Not(self.blive(a, K(1))))
        return ups, room


def K(i: int) -> Lit:
    return Lit(i)


def _reset(d: DP, q: Expr, k: int, fences: bool) -> list:
    """A packet leaves the model: its per-packet state back to the initial values."""
    c, b = Var("c_", d.ctx), Var("b_", d.bar)
    ups: list = [(d.st(q, K(k)), "none"), (d.ser(q, K(k)), False), (d.rb(q, K(k)), False),
                 (d.hd(q, K(k)), False), (d.ins(q, K(k)), False), (d.sst(q, K(k)), False),
                 Every(c, d.sp(q, K(k), c), False)] + [(d.cb(K(k), K(bb), q), False) for bb in BARS]
    if fences:
        ups += [(d.fb(K(k), K(bb), q), False) for bb in BARS]
    return ups


# ---------------------------------------------------------------------------------------------
# app threads: WriteInterceptor, create_queue, destroy_queue   (digest §2.4, audit §1.6, §1.9)
# ---------------------------------------------------------------------------------------------
def _app(d: DP) -> None:
    b, v, sc = d.b, d.v, d.sc
    R = d.queue
    q = Var("t", R)
    a = Var("agent", d.agent)
    on = (("{t} is on agent {agent}", d.qag(q) == a),)
    c = Var("c", d.ctx)
    src_wi = "hsa/queue.cpp WriteInterceptor"
    if sc.create:
        b.action(R, "idle", "queue_create", q, params=(a,), static={"agent": a},
                 guard=(("no stop holds _queues shared (create takes it exclusive)",
                         Forall(c, Not(d.qlk(c)))),),
                 updates=((d.qag(q), a), (d.alive(q), True)), goto="open",
                 source="QueueController::create_queue: serializer() then add_queue under _queues W "
                 "[SRC amd-vkale@5d4ce3a9; audit §2.2]")
    mixed = BoolParam("mixed")
    gate_spm = d.spm_on(a if v.gate_per_agent else None)
    gate_tt = d.tt_on(a if v.gate_per_agent else None)
    consumers = Or(sc.tracing, gate_spm, gate_tt)
    batch = And(consumers, Not(gate_spm), Not(gate_tt))
    first = "b_start" if v.early_async else "b_hook0"
    unb = "start0" if v.early_async else "hook0"
    two = sc.packets == 2
    ups = [(d.raw(q), Not(consumers)), (d.bat(q), batch), (d.nw(q), d.nw(q) + 1),
           (d.disp(q, K(0)), True)] + ([(d.disp(q, K(1)), Not(mixed) if sc.mixed else True)] if two else [])
    choose = sc.mixed and not sc.barrier_second
    if sc.mixed and sc.barrier_second:
        ups[-1] = (d.disp(q, K(1)), False)
    b.action(R, "open", "write_begin", q, params=(a, mixed) if choose else (a,),
             static={"agent": a, "mixed": mixed} if choose else {"agent": a}, select=on,
             guard=(("{t}'s queue exists", d.alive(q)),
                    ("{t} has writes left", d.nw(q) < sc.writes),
                    ("{t}'s previous packets left the queue",
                     And(*[d.st(q, K(k)) == "none" for k in PKTS]))),
             updates=ups, goto=Ite(Not(consumers), "raw", Ite(batch, first, unb)),
             observe={"raw": Not(consumers), "batched": batch},
             checks=((GATE, "a write of {t} on agent {agent}, where no SPM context or thread trace is "
                      "active, is batched or raw",
                      Implies(And(Not(d.spm_on(a)), Not(d.tt_on(a))), Or(Not(consumers), batch))),),
             source=src_wi + ": the gate is computed once per call: no_real_consumers and "
             "should_batch_packets from " + ("is_active_on_agent(agent)" if v.gate_per_agent
                                              else "is_any_active() (process-wide)")
             + " [audit §1.9 G1; ROCm@ee045e38 `const bool spm_active`]")
    b.action(R, "raw", "write_raw", q, params=(a,), static={"agent": a}, select=on,
             updates=[(d.st(q, K(k)), "queued") for k in PKTS[:sc.packets]],
             goto="open",
             checks=((P3, "a dispatch of {t} submitted on agent {agent} while its serializer is enabled "
                      "goes through the serializer", Not(d.sen(a))),),
             source=src_wi + ": no_real_consumers -> writer(raw packets): no hook, no serializer, "
             "no async_started [audit §1.9 G2]")

    def session_start(at: str, ks: tuple[int, ...], goto: ExprLike) -> None:
        # the ghost marks the packets whose session data the counted session carries: a batch's
        # dispatches, or the one packet of an unbatched process_packet_batch (even a barrier)
        b.action(R, at, "async_started", q, params=(a,), static={"agent": a}, select=on,
                 updates=[(d.act(q), d.act(q) + 1)]
                 + [(d.sst(q, K(k)), d.disp(q, K(k)) if len(ks) > 1 else True) for k in ks],
                 goto=goto, observe={"active": d.act(q) + 1},
                 source="process_packet_batch: queue.async_started() at the top, before the hooks, "
                 "for every batch [ROCm@ee045e38/03c67769/a027fa94/810df56a; audit §0]")

    def hook(at: str, k: int, goto: ExprLike) -> None:
        skip = d.bat(q) if v.hook_reads_gate else Lit(False)
        spm = Exists(c, And(d.slot(c), d.cag(c) == a))
        b.action(R, at, "enter_hook", q, params=(a,), static={"agent": a, "packet": str(k)}, select=on,
                 updates=(Every(c, d.sp(q, K(k), c), And(Not(skip), d.slot(c), d.cag(c) == a, d.spen(c))),
                          # thread trace returns bSerialize=false for an untraced dispatch (audit Z3)
                          (d.ser(q, K(k)), And(Not(skip), spm))),
                 goto=goto, observe={"serialize": And(Not(skip), spm)},
                 source="process_packet_batch: per packet, the SPM enter hook re-reads the active slots: "
                 "get_active_contexts -> collects_on -> pre_kernel_call (SPMPacket if enabled, else "
                 "EmptyAQLPacket; serialize=true either way) [spm/queue_hooks.cpp@ROCm/03c67769, "
                 "spm/dispatch_handlers.cpp@amd-vkale/b23259fa]; thread trace hook bSerialize=false "
                 "[thread_trace/core.cpp@amd-vkale/5d4ce3a9]"
                 + ("; hypothetical: skipped for a write the gate batched" if v.hook_reads_gate else ""))

    def kd(at: str, k: int, goto: ExprLike) -> None:
        s = d.ser(q, K(k))
        ups: list = [(d.rb(q, K(k)), And(s, d.sen(a)))]
        emits = []
        for bb in BARS:
            e = And(s, d.bnew(a) == bb, d.blive(a, K(bb)), Not(d.benq(a, K(bb), q)))
            emits.append((bb, e))
            ups += [(d.fb(K(k), K(bb), q), e), (d.benq(a, K(bb), q), Or(d.benq(a, K(bb), q), e))]
        b.action(R, at, "kernel_dispatch", q, params=(a,), static={"agent": a, "packet": str(k)}, select=on,
                 updates=ups, goto=goto,
                 observe={"serialized": And(s, d.sen(a)), "fence": Or(*[e for _, e in emits])},
                 checks=((H2B, "the transition fence kernel_dispatch puts before {t}'s packet " + str(k)
                          + " does not count that packet's own session",
                          And(*[Implies(e, Not(d.cb(K(k), K(bb), q))) for bb, e in emits])),),
                 source="if(is_serialized) serializer(queue).rlock(kernel_dispatch): fence on the newest "
                 "incomplete barrier once per queue, then ready+block if ENABLED "
                 "[hsa/profile_serializer.cpp L163-202, mirror 1b1610fc; digest §3.1]")

    def submit(at: str, ks: tuple[int, ...], handler: dict[int, Expr], goto: ExprLike) -> None:
        has = Or(*[d.disp(q, K(k)) for k in ks])
        ups: list = []
        if not v.early_async:
            ups += [(d.act(q), Ite(has, d.act(q) + 1, d.act(q)))]
            ups += [(d.sst(q, K(k)), d.disp(q, K(k))) for k in ks]
        for k in ks:
            ups += [(d.st(q, K(k)), "queued"), (d.ins(q, K(k)), d.disp(q, K(k))), (d.hd(q, K(k)), handler[k])]
        p3 = And(*[Implies(And(d.disp(q, K(k)), d.sen(a)), d.rb(q, K(k))) for k in ks])
        b.action(R, at, "submit", q, params=(a,), static={"agent": a, "packets": ",".join(map(str, ks))},
                 select=on, updates=ups, goto=goto, observe={"active": d.act(q) if v.early_async else
                                                             Ite(has, d.act(q) + 1, d.act(q))},
                 checks=((P3, "every dispatch {t} submits on agent {agent} while its serializer is enabled "
                          "went through its grant protocol", p3),),
                 source="process_packet_batch: " + ("" if v.early_async else
                                                   "queue.async_started() only when packet_data is non-empty "
                                                   "[amd-vkale@2a7bb457]; ")
                 + "signal_async_handler(last completion signal, session); writer(out)")

    # batched: one process_packet_batch for the whole write
    ks = PKTS[:sc.packets]
    if v.early_async:
        session_start("b_start", ks, "b_hook0")
    hook("b_hook0", 0, "b_kd0")
    if two:
        kd("b_kd0", 0, Ite(d.disp(q, K(1)), "b_hook1", "b_submit"))
        hook("b_hook1", 1, "b_kd1")
        kd("b_kd1", 1, "b_submit")
        submit("b_submit", PKTS, {0: Not(d.disp(q, K(1))), 1: d.disp(q, K(1))}, "open")
    else:
        kd("b_kd0", 0, "b_submit")
        submit("b_submit", ks, {0: Lit(True)}, "open")
    # not batched: one process_packet_batch per packet
    for k in ks:
        nxt = "open" if k == ks[-1] else (f"start{k + 1}" if v.early_async
                                            else Ite(d.disp(q, K(k + 1)), f"hook{k + 1}", f"submit{k + 1}"))
        if v.early_async:
            session_start(f"start{k}", (k,), Ite(d.disp(q, K(k)), f"hook{k}", f"submit{k}"))
        hook(f"hook{k}", k, f"kd{k}")
        kd(f"kd{k}", k, f"submit{k}")
        submit(f"submit{k}", (k,), {k: d.disp(q, K(k))}, nxt)
    if sc.destroy:
        b.action(R, "open", "queue_destroy", q, params=(a,), static={"agent": a}, select=on,
                 guard=(("{t}'s queue exists", d.alive(q)),
                        ("no stop holds _queues shared (destroy erases under _queues W)",
                         Forall(c, Not(d.qlk(c)))),
                        ("Queue::sync() drained it" + (" or timed out (5 s)" if sc.timeouts else ""),
                         Or(d.act(q) == 0, sc.timeouts))),
                 updates=((d.alive(q), False), (d.gone(q), True)), goto="gone",
                 observe={"synced": d.act(q) == 0},
                 source="QueueController::destroy_queue: queue->sync() (5 s, warns on timeout), erase "
                 "under _queues W; never calls profiler_serializer::destroy_queue [SRC amd-vkale@5d4ce3a9; "
                 "audit §2.2]")


# ---------------------------------------------------------------------------------------------
# the GPU: in-order packet execution, barriers, completion handlers   (digest §2.6, §3.1)
# ---------------------------------------------------------------------------------------------
def _gpu(d: DP) -> None:
    b, v = d.b, d.v
    R = d.gpu
    g = Var("t", R)
    q = Var("queue", d.queue)
    a = Var("agent", d.agent)
    q2 = Var("q2", d.queue)
    on = (("{queue} is on agent {agent}", d.qag(q) == a),)
    for k in PKTS:
        P = K(k)
        head = [("packet " + str(k) + " of {queue} is queued", d.st(q, P) == "queued")]
        if k:
            head.append(("the packet before it finished", Or(d.st(q, K(k - 1)) == "done", d.st(q, K(k - 1)) == "none")))
        head.append(("no transition fence holds it", And(*[Not(d.fb(P, K(bb), q)) for bb in BARS])))
        st = {"queue": q, "agent": a, "packet": str(k)}
        # a barrier (non-dispatch) packet executes and leaves
        b.action(R, "idle", "barrier_packet", g, params=(q, a), static=st, select=on,
                 guard=tuple(head) + (("it is not a dispatch", Not(d.disp(q, P))),),
                 updates=_reset(d, q, k, fences=True),
                 source="AQL barrier/vendor packet of a mixed write (audit H2)")
        b.action(R, "idle", "kernel_start", g, params=(q, a), static=st, select=on,
                 guard=tuple(head) + (("a dispatch without ready/block barriers", And(d.disp(q, P), Not(d.rb(q, P)))),),
                 updates=((d.st(q, P), "done"),),
                 source="the kernel runs and its completion signal fires (SPM: barrier 1 -> "
                 "spm::AsyncSignalHandler kfd_start before it) [digest §2.5]")
        anyg = Exists(q2, And(d.qag(q2) == a, d.gr(q2)))
        b.action(R, "idle", "ready_barrier", g, params=(q, a), static=st, select=on,
                 guard=tuple(head) + (("it carries ready/block barriers", d.rb(q, P)),
                                      ("ready_signal of {queue} is 0", Not(d.rdy(q)))),
                 updates=((d.st(q, P), "ready"), (d.rdy(q), True), (d.gr(q), Not(anyg)), (d.wq(q), anyg)),
                 observe={"granted": Not(anyg)},
                 source="ready barrier passes (ready_signal 0 -> -1) and queue_ready grants or queues "
                 "[profile_serializer.cpp queue_ready L124-161]")
        b.action(R, "idle", "block_barrier", g, params=(q, a), static=st, select=on,
                 guard=(("packet " + str(k) + " of {queue} passed its ready barrier", d.st(q, P) == "ready"),
                        ("{queue} holds the grant (block_signal 0)", d.gr(q))),
                 updates=((d.st(q, P), "done"),),
                 source="block barrier passes once the serializer granted the queue; the kernel runs "
                 "and its completion signal fires [digest §3.1]")
        # raw / handler-less dispatches leave at once; session packets wait for their handler
        b.action(R, "idle", "packet_retire", g, params=(q, a), static=st, select=on,
                 guard=(("packet " + str(k) + " of {queue} is done", d.st(q, P) == "done"),
                        ("it is in no session", Not(d.ins(q, P)))),
                 updates=_reset(d, q, k, fences=True),
                 source="a raw (uninstrumented) dispatch: no session, no handler [audit §1.9 G2]")
        _completion(d, g, q, a, k, on)


def _completion(d: DP, g: Var, q: Var, a: Var, k: int, on: tuple) -> None:
    # the same Var objects as the other gpu actions: spec.lang.mutate tells actions apart by ==
    b, v = d.b, d.v
    P = K(k)
    c = Var("c", d.ctx)
    q2 = Var("q2", d.queue)
    other = K(1 - k)
    # the session's handler fires on its last dispatch's completion signal; a batched session's
    # packets are completed in order, the session ends (async_complete) after its last packet
    fired = Or(*[And(d.hd(q, K(j)), d.st(q, K(j)) == "done") for j in PKTS])
    ready = Ite(d.bat(q), And(fired, d.st(q, P) == "done", Not(d.ins(q, K(0))) if k == 1 else Lit(True)),
                And(d.hd(q, P), d.st(q, P) == "done"))
    last = Ite(d.bat(q), Not(d.ins(q, other)) if k == 0 else Lit(True), Lit(True))
    signals = Lit(True) if v.completion_two_arg else d.ser(q, P)
    tracked = {bb: And(signals, d.bw(a, K(bb), q) > 0) for bb in BARS}
    ups: list = []
    for bb in BARS:
        B_ = K(bb)
        others_zero = Forall(q2, Or(q2 == q, d.bw(a, B_, q2) == 0))
        clears = And(d.blive(a, B_), tracked[bb], d.bw(a, B_, q) == 1, others_zero)
        ups += [(d.bw(a, B_, q), Ite(tracked[bb], d.bw(a, B_, q) - 1, d.bw(a, B_, q))),
                (d.blive(a, B_), And(d.blive(a, B_), Not(clears))),
                Every(q2, d.benq(a, B_, q2), And(d.benq(a, B_, q2), Not(clears)))]
        for j in PKTS:
            ups.append(Every(q2, d.fb(K(j), B_, q2), And(d.fb(K(j), B_, q2), Not(And(clears, d.qag(q2) == a)))))
    t0, t1 = tracked[0], tracked[1]
    state = Ite(And(t0, t1), Ite(d.bnew(a) == 0, d.bold(a, K(1)), d.bold(a, K(0))),
                Ite(t0, d.bold(a, K(0)), Ite(t1, d.bold(a, K(1)), d.sen(a))))
    hand = And(d.ser(q, P), state)
    ups += [Every(q2, d.gr(q2), Ite(And(hand, d.qag(q2) == a), d.wq(q2), d.gr(q2))),
            Every(q2, d.wq(q2), And(d.wq(q2), Not(And(hand, d.qag(q2) == a)))),
            (d.rdy(q), And(d.rdy(q), Not(hand))),
            (d.act(q), Ite(And(last, d.act(q) > 0), d.act(q) - 1, d.act(q)))]
    ups += _reset(d, q, k, fences=False)
    late = Forall(c, Implies(d.sp(q, P, c), Not(d.ret(c))))
    b.action(d.gpu, "idle", "completion", g, params=(q, a),
             static={"queue": q, "agent": a, "packet": str(k)}, select=on,
             guard=(("the session handler of {queue} runs for packet " + str(k), And(d.ins(q, P), ready)),),
             updates=ups,
             observe={"released": hand, "session_end": last},
             checks=((LATE, "no DISPATCH_END for packet " + str(k) + " of {queue} reaches a context whose "
                      "stop already returned (tool-owned callback data may be freed)", late),
                     (GRANT, "the completion of packet " + str(k) + " of {queue} releases the agent's "
                      "grant exactly when that dispatch held it (went through ready/block barriers)",
                      hand == d.rb(q, P)),
                     (H3, "the completion of packet " + str(k) + " of {queue} registers with every "
                      "transition barrier that counted {queue}",
                      And(*[Implies(d.bw(a, K(bb), q) > 0, signals) for bb in BARS]))),
             source="AsyncSignalHandler: SPM exit hook (kfd_stop, record_cb DISPATCH_END), "
             + ("kernel_completion_signal(queue, packet.is_serialized) for every packet "
                "[hsa/queue.cpp@810df56a/4e5c7a53/2a7bb457]" if v.completion_two_arg else
                "if(packet.is_serialized) kernel_completion_signal(queue) [hsa/queue.cpp@ee045e38/"
                "03c67769/a027fa94]")
             + "; register_completion on every barrier, oldest tracking barrier decides "
             "[profile_serializer.cpp L79-121]; queue.async_complete() after the session's last packet")


# ---------------------------------------------------------------------------------------------
# tool threads: one SPM context each   (context.cpp@amd-vkale/504daf36, spm/core.cpp@5d4ce3a9)
# ---------------------------------------------------------------------------------------------
def _tool(d: DP) -> None:
    b, sc = d.b, d.sc
    R = d.ctx
    c = Var("t", R)
    a = Var("agent", d.agent)
    o = Var("o", d.ctx)
    q = Var("queue", d.queue)
    q2 = Var("q2", d.queue)
    mine = (("{t} collects on agent {agent}", d.cag(c) == a),)
    no_marks = ("no start or stop in progress (wait_for_stopping_contexts)", Forall(o, Not(d.mark(o))))
    b.action(R, "idle", "context_start", c, params=(a,), static={"agent": a},
             guard=(no_marks, ("no active SPM context intersects agent {agent}",
                               Forall(o, Not(And(d.slot(o), d.cag(o) == a))))),
             updates=((d.mark(c), True), (d.cag(c), a), (d.slot(c), True)), goto="enable",
             source="context::start_context: marker, conflict scan (intersects), CAS publish "
             "[context/context.cpp@amd-vkale/504daf36]")
    ups, room = d.update(a, True)
    b.action(R, "enable", "serialization_enable", c, params=(a,), static={"agent": a}, select=mine,
             guard=(("a free transition barrier slot on agent {agent} (model bound: 2)", room),),
             updates=ups, goto="set_enabled",
             source="spm::start_context -> enable_serialization(agents) -> update_serialization -> "
             "profiler_serializer::enable(queues) -> hsa_barrier::set_barrier [spm/core.cpp@amd-vkale/5d4ce3a9]")
    b.action(R, "set_enabled", "spm_enabled", c, updates=((d.spen(c), True), (d.mark(c), False)),
             goto="active", source="spm::start_context: enabled.wlock(set); start marker released")
    b.action(R, "active", "context_stop", c, guard=(no_marks,),
             updates=((d.mark(c), True), (d.spen(c), False)), goto="isync",
             source="context::stop_context phase 1 (marker) + spm::stop_context: enabled cleared "
             "[context.cpp@504daf36, spm/core.cpp@5d4ce3a9]")
    qq, kk = Var("qi", d.queue), PKTS
    pending = Exists(qq, Or(*[d.ins(qq, K(k)) for k in kk]))
    b.action(R, "isync", "interposition_sync", c,
             guard=(("every submitted session completed (no timeout)", Not(pending)),),
             goto="qsync_begin",
             source="queue_controller_sync -> queue_interposition::interposition_sync -> "
             "drain_completion_monitor: a cv wait with no timeout [audit S2(a)]")
    b.action(R, "qsync_begin", "queues_lock", c,
             updates=((d.qlk(c), True), Every(q, d.qp(c, q), d.alive(q))),
             goto=Ite(Exists(q, d.alive(q)), "qsync", "disable"),
             source="queue_controller_sync: iterate_queues under _queues shared [audit S2]")
    b.action(R, "qsync", "queue_sync", c, params=(q,), static={"queue": q},
             guard=(("Queue::sync() of {queue} is next", d.qp(c, q)),
                    ("_active_kernels of {queue} is 0" + (" or the 5 s wait timed out" if sc.timeouts else ""),
                     Or(d.act(q) == 0, sc.timeouts))),
             updates=((d.qp(c, q), False),), goto=Ite(Exists(q2, And(q2 != q, d.qp(c, q2))), "qsync", "disable"),
             observe={"drained": d.act(q) == 0},
             source="Queue::sync(): hsa_signal_wait(_active_kernels == 0, 5 s), sequential per queue; "
             "result ignored by spm::stop_context [digest §2.9]")
    ups, room = d.update(a, False)
    drained = Forall(qq, And(*[Not(d.sp(qq, K(k), c)) for k in kk]))
    b.action(R, "disable", "serialization_disable", c, params=(a,), static={"agent": a}, select=mine,
             guard=(("a free transition barrier slot on agent {agent} (model bound: 2)", room),),
             updates=[(d.qlk(c), False)] + ups, goto="clear",
             checks=((DRAIN, "when {t}'s drain returns, no dispatch carrying its SPM packet is unfinished",
                      drained),),
             source="spm::stop_context: _queues released, disable_serialization(agents) after the drain")
    b.action(R, "clear", "context_cleared", c,
             updates=((d.slot(c), False), (d.mark(c), False), (d.ret(c), True)), goto="done",
             source="context::stop_context phase 3 (CAS slot -> null) and the scope guard's marker erase")


def _tracer(d: DP) -> None:
    R = d.tracer
    t = Var("t", R)
    a = Var("agent", d.agent)
    ups, room = d.update(a, True)
    d.b.action(R, "idle", "tt_start", t, params=(a,), static={"agent": a},
               guard=(("a free transition barrier slot on agent {agent} (model bound: 2)", room),),
               updates=[(d.tton(t), True), (d.tag(t), a)] + ups, goto="on",
               source="thread trace start: per-agent serialization reference + active "
               "[thread_trace/core.cpp@amd-vkale/5d4ce3a9; audit Z3]")


def _claims(d: DP) -> None:
    b = d.b
    q, q2, c = Var("q", d.queue), Var("q2", d.queue), Var("c", d.ctx)
    a, bb = Var("a", d.agent), Var("bb", d.bar)
    b.invariant(H1, "H1: a batched session holds no serialized and no SPM-instrumented packet",
                "audit §3 H1, §1.9 G1 [hsa/queue.cpp@ee045e38 WriteInterceptor; 810df56a]",
                Forall(q, Implies(d.bat(q), And(*[And(Not(d.ser(q, K(k))), Forall(c, Not(d.sp(q, K(k), c))))
                                                  for k in PKTS]))))
    def counted(q: Expr) -> Expr:
        s0, s1 = d.sst(q, K(0)), d.sst(q, K(1))
        return Ite(d.bat(q), Ite(Or(s0, s1), 1, 0), Ite(s0, 1, 0) + Ite(s1, 1, 0))
    b.invariant(H2, "H2: _active_kernels of a queue is the number of its sessions still in flight",
                "audit §3 H2 [process_packet_batch@ee045e38/03c67769/a027fa94/810df56a]",
                Forall(q, d.act(q) == counted(q)))
    b.step_claim(H2B, "H2b: no dispatch is put behind a transition fence that counts its own session",
                 "audit §3 H2b [queue.cpp L317 before L415 (mirror); ee045e38/03c67769/a027fa94/810df56a]")
    b.invariant(H5, "H5: no serializer entry, barrier or session refers to a destroyed queue",
                "audit §3 H5, §2.2 [QueueController::destroy_queue@amd-vkale/5d4ce3a9]",
                Forall(q, Implies(d.gone(q), And(Not(d.gr(q)), Not(d.wq(q)),
                                                 *[Not(d.ins(q, K(k))) for k in PKTS],
                                                 Forall(a, Forall(bb, d.bw(a, bb, q) == 0))))))
    pairs = []
    for k1 in PKTS:
        for k2 in PKTS:
            diff = Lit(True) if k1 != k2 else (q != q2)
            pairs.append(Implies(And(diff, d.qag(q) == d.qag(q2)), Not(And(d.hw(q, k1), d.hw(q2, k2)))))
    b.invariant(H6, "H6: at most one SPM hardware session (kfd_start..kfd_stop) per agent at a time",
                "audit §3 H6 [spm/dispatch_handlers.cpp@amd-vkale/b23259fa; P8 is over slots]",
                Forall(q, Forall(q2, And(*pairs))))
    b.step_claim(H3, "H3: a completion registers with every transition barrier that counted its queue",
                 "audit §3 H3 [AsyncSignalHandler@ROCm/03c67769/ee045e38/a027fa94: 1-argument call only "
                 "if(packet.is_serialized); hsa_barrier::set_barrier counts every session]")
    b.step_claim(GRANT, "H2b, later ordering: a completion releases the serializer's grant exactly when "
                 "its dispatch held it (a session no transition barrier counted completes under the current "
                 "status: after an enable it releases a grant it never had, after a disable it keeps one)",
                 "audit H2b last paragraph; profile_serializer.cpp kernel_completion_signal L79-121 (state from "
                 "the oldest tracking barrier, else the current status)")
    b.step_claim(GATE, "gate: a write on an agent with no active SPM context or thread trace is not "
                 "slowed (batched, or raw when nothing consumes)",
                 "digest §5.2 'process-wide SPM batching disable'; audit §1.9")
    b.step_claim(P3, "P3 over every holder: no dispatch is submitted unserialized while its agent's "
                 "serializer is enabled", "digest §4 P3; audit Z3 (thread trace bSerialize=false)")
    b.step_claim(DRAIN, "drain-covers-hooked-dispatches: a stop's drain returns only after every "
                 "dispatch its context instrumented finished",
                 "audit S3, §4 [async_started placement, §0]")
    b.step_claim(LATE, "late delivery (reframed no-completion-after-profile-destroyed): no DISPATCH_END "
                 "after the context's stop returned", "audit X4, §4 [spm/core.hpp@amd-vkale/5d4ce3a9 "
                 "shared_ptr config]")


@lru_cache(maxsize=None)
def definition(v: DVariant, sc: Scope, mutation: str = "") -> Protocol:
    """The data path at variant `v`'s knobs and scope `sc`'s scenario switches."""
    if sc.queues > 2:
        raise ValueError("the data path is written for at most 2 queues (the ready FIFO is not stored)")
    b = Builder(f"datapath/{v.name}")
    d = DP(b, v, sc)
    _claims(d)
    _app(d)
    _gpu(d)
    _tool(d)
    _tracer(d)
    if mutation:
        from ..lang.mutate import Mutation, apply

        return apply(b.p, Mutation.parse(mutation))
    return b.p


def dp_of(v: DVariant, sc: Scope) -> DP:
    """The state functions (for predicates written outside the definition: progress, witnesses)."""
    return DP(Builder("datapath/view"), v, sc)


def claim_text(name: str) -> tuple[str, str]:
    """(summary, source) of a claim of the definition, as its builder wrote them (for rules and
    reports; read from the latest revision at the default scope: the text is the same in all)."""
    from .variants import DVARIANTS, LATEST

    c = definition(DVARIANTS[LATEST], Scope()).claims[name]
    return c.summary, c.source
