"""The SPM context lifecycle executed by real OS threads (digest §2.4-§2.11), writing lifecycle traces.

This is the system under test, not a second model: it keeps the SDK's data (active slots, the
`stopping` marker set, per-context `enabled` flags and dispatch agent sets, the QueueController
refcounts and lazily created serializer entries, per-queue in-flight counts, per-context
packet_return_maps, the registry id counter) and takes the SDK's locks with the scopes of the
chosen `LVariant`: the contexts mutex + condition variable for start/stop/set_agents/deactivate,
a lock-free CAS for slot publish/clear, the refcount lock around update_serialization() and the
serializer lookup, the queue lock + condition variable for async_started/async_complete and
Queue::sync with a real bounded wait. Every step writes its event through `checker.recorder` at
the instant it happens (the effect runs inside the recorder's mutex), and observed values are
computed from this data, never from spec/. Nothing here decides a verdict.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from spmcheck.spec.lifecycle.variants import LVariant, hook_tags

from .recorder import Args, Recorder

FREE, RESERVED, PUBLISHED = 0, 1, 2  # active-slot states: empty, reserved under the mutex, CAS-published
NO_PACKET, EMPTY_PACKET, SPM_PACKET = 0, 1, 2  # what pre_kernel_call inserted (EmptyAQLPacket fallback)
R_OK, R_ALREADY, R_CONFLICT = 0, 1, 2  # start status
S_FOUND, S_NOT_FOUND = 0, 1  # stop / deactivate status
A_OK, A_LOCKED = 0, 1  # set_dispatch_agents status


@dataclass
class Dispatch:
    agent: int
    requested: bool  # some context asked the WriteInterceptor to serialize
    newest_id: int  # registry ids handed out when the write ran (what the exit pre-scan compares)
    packets: dict[int, int] = field(default_factory=dict)  # context -> packet kind inserted
    submitted: bool = False


class Lifecycle:
    """Shared state of one process: contexts, QueueController, queues, registry."""

    def __init__(self, v: LVariant, agents: int, contexts: int, rec: Recorder, sync_timeout: float,
                 timeouts: bool) -> None:
        self.v, self.agents, self.contexts, self.rec = v, agents, contexts, rec
        self.sync_timeout = sync_timeout
        self.timeouts = timeouts  # Queue::sync may give up (5 s in the SDK, `sync_timeout` here)
        # contexts mutex + cv (wait_for_stopping_contexts) and the data it protects
        self.mutex = threading.Lock()
        self.cv = threading.Condition(self.mutex)
        self.stopping: set[int] = set()
        self.slot = [FREE] * contexts  # written under the mutex (reserve, clear) or by CAS (publish)
        self.registered = [False] * contexts
        self.profile_alive = [True] * contexts
        self.dispatch_agents: list[tuple[int, ...]] = [()] * contexts  # () = all agents
        self.enabled = [False] * contexts  # spm `enabled` atomic
        # start attempts in progress per context (guards profile destroy, see _destroy)
        self.starting = [0] * contexts
        self.starting_lock = threading.Lock()
        # QueueController: refcounts + serializer entries, all under the refcount lock
        self.rc_lock = threading.Lock()
        self.rc_all = 0
        self.rc = [0] * agents
        self.ser: dict[int, bool] = {}  # agent -> ENABLED, created lazily, never erased
        self.refs_cap = 2 * contexts + 1  # the model's counter range; never reached by a sane run
        # queues: one per agent; async_started/async_complete and Queue::sync under the queue lock
        self.qcv = threading.Condition(threading.Lock())
        self.inflight = [0] * agents
        # per-context packet_return_map: dispatch id -> packet kind
        self.packet_map: list[dict[int, int]] = [{} for _ in range(contexts)]
        self.ids = 0  # registry client ids handed out by add_callback
        self.dispatches: list[Dispatch] = []
        self.spm_tag = hook_tags(v)["SPM"]

    # ---- helpers on the SDK data (callers hold what the SDK holds, or the recorder's mutex) -----
    def count(self, a: int) -> int:
        return self.rc_all + self.rc[a]

    def collects_on(self, c: int, a: int) -> bool:
        ags = self.dispatch_agents[c]
        return not ags or a in ags

    def intersects(self, c1: int, c2: int) -> bool:
        x, y = self.dispatch_agents[c1], self.dispatch_agents[c2]
        return not x or not y or bool(set(x) & set(y))

    def scan(self, c: int) -> int:
        """start's scan over get_active_contexts(): published slots only (reserved ones are null)."""
        if self.slot[c] == PUBLISHED:
            return R_ALREADY
        if any(self.slot[o] == PUBLISHED and self.intersects(c, o) for o in range(self.contexts) if o != c):
            return R_CONFLICT
        return R_OK

    def scoped_all(self, c: int) -> bool:
        return not self.v.scoped or not self.dispatch_agents[c]

    def mask(self, c: int) -> int:
        if not self.v.scoped:
            return 0
        return sum(1 << a for a in self.dispatch_agents[c])

    def update_serialization(self, c: int, enable: bool) -> None:
        """enable/disable_serialization(agents(c)): refcount change and serializer transitions in
        one refcount-lock scope (the final core, proved in spec.programs)."""
        def step(x: int) -> int:
            return min(x + 1, self.refs_cap) if enable else max(x - 1, 0)

        with self.rc_lock:
            if self.scoped_all(c):
                self.rc_all = step(self.rc_all)
            else:
                for a in self.dispatch_agents[c]:
                    self.rc[a] = step(self.rc[a])
            for a in self.ser:
                self.ser[a] = self.count(a) > 0

    def instruments(self, c: int, a: int) -> bool:
        """SPM enter hook over the active contexts: pre_kernel_call for context c on agent a."""
        return self.slot[c] == PUBLISHED and (self.collects_on(c, a) if self.v.scoped else True)

    def gate(self, a: int) -> bool:
        """is_active_on_agent(a) (per-agent gate) or is_any_active() (process-wide)."""
        if self.v.per_agent_gate:
            return any(self.slot[c] == PUBLISHED and self.collects_on(c, a) for c in range(self.contexts))
        return any(self.slot[c] == PUBLISHED for c in range(self.contexts))


class LWorker:
    """One thread: name, seeded RNG, jitter at step boundaries, and the step helper."""

    def __init__(self, name: str, lc: Lifecycle, seed: int, jitter: float) -> None:
        self.name = name
        self.lc = lc
        self.rng = random.Random(f"{seed}:{name}")
        self.jitter = jitter

    def pause(self) -> None:
        # only between steps: widens exactly the windows the lock scopes leave open
        if self.jitter and self.rng.random() < self.jitter:
            if self.rng.random() < 0.5:
                time.sleep(0)
            else:
                time.sleep(self.rng.uniform(0, 0.0005))

    def step(self, kind: str, static: Args = (), effect: Callable[[], Args] | None = None) -> None:
        self.lc.rec.step(self.name, kind, static, effect)
        self.pause()

    def wait_quiet(self, extra: Callable[[], bool] = lambda: True) -> None:
        """Holding the contexts mutex: wait_for_stopping_contexts() (cv wait until the `stopping`
        set is empty) and `extra`. The timeout only re-checks conditions that change without a
        notify (a CAS publish happens outside the mutex)."""
        lc = self.lc
        while lc.stopping or not extra():
            lc.cv.wait(0.001)


# ---- tool operations ------------------------------------------------------------------------------
def register(w: LWorker, c: int) -> None:
    lc = w.lc

    def eff() -> Args:
        lc.registered[c] = True
        return ()

    w.step("context_register", (("ctx", c),), eff)


def add_callback(w: LWorker) -> None:
    lc = w.lc

    def eff() -> Args:
        lc.ids += 1  # `static atomic<ClientID> client_id{1}`: fetch_add
        return (("id", lc.ids),)

    w.step("add_callback", (), eff)


def start(w: LWorker, c: int) -> None:
    """rocprofiler_start_context for an SPM context (context.cpp + spm::start_context)."""
    lc, v = w.lc, w.lc.v
    ctx = (("ctx", c),)
    scanned = [R_OK]
    if not v.scan_locked:
        def scan_eff() -> Args:
            scanned[0] = lc.scan(c)
            return (("result", scanned[0]),)

        w.step("start_scan", ctx, scan_eff)  # baseline: scan before taking the mutex
    result = [R_OK]
    with lc.mutex:
        # one slot per context (the model's [INF] gap): a start never reserves a second slot
        w.wait_quiet(lambda: lc.slot[c] != RESERVED)

        def begin() -> Args:
            result[0] = lc.scan(c) if v.scan_locked else scanned[0]
            if result[0] == R_OK:
                lc.slot[c] = RESERVED
                if v.start_marker:
                    lc.stopping.add(c)
            return (("result", result[0]),)

        w.step("start_begin", ctx, begin)
    w.pause()  # a lock boundary: the unlock -> CAS publish window the review argued about
    if result[0] != R_OK:
        return

    def publish() -> Args:
        lc.slot[c] = PUBLISHED  # CAS null -> ctx after unlock
        return ()

    w.step("slot_publish", ctx, publish)

    def enable() -> Args:
        mask = lc.mask(c)
        lc.update_serialization(c, True)
        return (("agents_mask", mask),)

    w.step("spm_enable", ctx, enable)

    def set_enabled() -> Args:
        lc.enabled[c] = True
        return ()

    w.step("spm_set_enabled", ctx, set_enabled)
    if v.start_marker:
        release_marker(w, c)


def release_marker(w: LWorker, c: int) -> None:
    lc = w.lc
    with lc.mutex:
        def eff() -> Args:
            lc.stopping.discard(c)
            return ()

        w.step("marker_release", (("ctx", c),), eff)
        lc.cv.notify_all()


def stop(w: LWorker, c: int) -> None:
    """rocprofiler_stop_context: find + mark; spm::stop_context; clear the slot; drop the marker."""
    lc, v = w.lc, w.lc.v
    ctx = (("ctx", c),)
    found = [False]
    lc.mutex.acquire()
    try:
        w.wait_quiet()

        def begin() -> Args:
            found[0] = lc.slot[c] == PUBLISHED
            if found[0]:
                lc.stopping.add(c)
                if v.slot_cleared_first:
                    lc.slot[c] = FREE  # pre-fix: CAS the slot to null before the services stop
            return (("result", S_FOUND if found[0] else S_NOT_FOUND),)

        w.step("stop_begin", ctx, begin)
    finally:
        if not (found[0] and v.slot_cleared_first):
            lc.mutex.release()
            w.pause()
    # pre-fix stop kept the contexts mutex across spm::stop_context (LOCK_CHAINS note)
    held = found[0] and v.slot_cleared_first
    try:
        if not found[0]:
            return
        was = [False]

        def clear() -> Args:
            was[0] = lc.enabled[c]
            lc.enabled[c] = False
            return (("was", was[0]),)

        w.step("spm_clear_enabled", ctx, clear)
        if was[0] or not v.stop_disable_guarded:
            queue_sync(w, c)

            def disable() -> Args:
                mask = lc.mask(c)
                lc.update_serialization(c, False)
                return (("agents_mask", mask),)

            w.step("spm_disable", ctx, disable)
    finally:
        if held:
            lc.mutex.release()
            w.pause()
    if not v.slot_cleared_first:
        with lc.mutex:
            def clear_slot() -> Args:
                lc.slot[c] = FREE
                return ()

            w.step("slot_clear", ctx, clear_slot)
        w.pause()
    release_marker(w, c)


def queue_sync(w: LWorker, c: int) -> None:
    """queue_controller_sync(): Queue::sync on every queue, a bounded wait for _active_kernels == 0
    (a timeout only warns, digest §2.9)."""
    lc = w.lc
    with lc.qcv:
        idle = lambda: not any(lc.inflight)  # noqa: E731
        if lc.timeouts:
            lc.qcv.wait_for(idle, timeout=lc.sync_timeout)
        else:
            lc.qcv.wait_for(idle)

        def eff() -> Args:
            return (("drained", idle()),)  # read at the instant of the step, under the queue lock

        w.step("queue_sync", (("ctx", c),), eff)


def set_agents(w: LWorker, c: int, members: tuple[int, ...]) -> None:
    lc, v = w.lc, w.lc.v
    text = ",".join(map(str, members)) if members else "all"
    static = (("ctx", c), ("agents", text))
    with lc.mutex:
        if v.set_agents_waits:
            w.wait_quiet()
        locked = [False]

        def check() -> Args:
            locked[0] = lc.slot[c] == PUBLISHED
            return (("result", A_LOCKED if locked[0] else A_OK),)

        w.step("set_agents_check", static, check)
        if locked[0]:
            return

        def write() -> Args:
            lc.dispatch_agents[c] = members
            return ()

        w.step("set_agents_write", (("ctx", c),), write)


def deactivate(w: LWorker, c: int) -> None:
    lc = w.lc
    with lc.mutex:
        w.wait_quiet()

        def eff() -> Args:
            found = lc.slot[c] == PUBLISHED
            if found:
                lc.slot[c] = FREE  # CAS to null without stopping the services (SPM doc gap 1)
            return (("result", S_FOUND if found else S_NOT_FOUND),)

        w.step("deactivate", (("ctx", c),), eff)


def destroy(w: LWorker, c: int) -> bool:
    """Tool destroys the SPM profile of a stopped context. Under the contexts mutex (slot free, no
    stop in flight) and only while no start of c is between its scan and its reservation, so a
    start never finds its profile gone half-way (the model has no failing path there)."""
    lc = w.lc
    with lc.mutex:
        with lc.starting_lock:
            if lc.slot[c] != FREE or c in lc.stopping or not lc.profile_alive[c] or lc.starting[c]:
                return False

            def eff() -> Args:
                lc.profile_alive[c] = False
                return ()

            w.step("profile_destroy", (("ctx", c),), eff)
    return True


def try_start(w: LWorker, c: int) -> bool:
    lc = w.lc
    with lc.starting_lock:
        if not (lc.registered[c] and lc.profile_alive[c]):
            return False
        lc.starting[c] += 1
    try:
        start(w, c)
    finally:
        with lc.starting_lock:
            lc.starting[c] -= 1
    return True


# ---- dispatch thread: WriteInterceptor ---------------------------------------------------------------
def dispatch(w: LWorker, k: int, a: int) -> None:
    lc = w.lc
    ident = (("id", k),)
    batch = [True]

    def gate() -> Args:
        # WriteInterceptor's entry: the batching decision, before the enter hook's snapshot
        batch[0] = not lc.gate(a)
        return (("batch", batch[0]),)

    w.step("dispatch_gate", (("agent", a), ("id", k)), gate)

    def write() -> Args:
        hits = [c for c in range(lc.contexts) if lc.instruments(c, a)]
        d = Dispatch(a, bool(hits), lc.ids)
        for c in hits:
            # pre_kernel_call: SPMPacket if enabled, else the EmptyAQLPacket fallback; both inserted
            d.packets[c] = SPM_PACKET if lc.enabled[c] else EMPTY_PACKET
            lc.packet_map[c][k] = d.packets[c]
        lc.dispatches.append(d)
        return (("batch", batch[0]), ("instrumented", sum(1 << c for c in hits)),
                ("serialize", d.requested),
                ("spm", sum(1 << c for c in hits if d.packets[c] == SPM_PACKET)))

    w.step("dispatch_write", (("agent", a), ("id", k)), write)
    d = lc.dispatches[k]
    with lc.qcv:
        with lc.rc_lock:
            def submit() -> Args:
                serialized = False
                if d.requested:
                    if a not in lc.ser:
                        lc.ser[a] = lc.count(a) > 0  # serializer(queue) creates the entry
                    serialized = lc.ser[a]
                d.submitted = True
                lc.inflight[a] += 1  # async_started()
                return (("serialized", serialized),)

            w.step("dispatch_submit", ident, submit)


# ---- completion thread: AsyncSignalHandler ------------------------------------------------------------
def complete(w: LWorker, k: int) -> None:
    lc, v = w.lc, w.lc.v
    d = lc.dispatches[k]

    def exit_hooks() -> Args:
        prescan = bool(d.packets) or d.newest_id == lc.spm_tag
        delivered = 0
        for c in range(lc.contexts):
            routed = lc.slot[c] == PUBLISHED if v.exit_over_active else lc.registered[c]
            if prescan and routed and k in lc.packet_map[c]:
                if lc.packet_map[c].pop(k) == SPM_PACKET:
                    delivered += 1  # kfd_stop + DISPATCH_END
        return (("prescan", prescan), ("delivered", delivered))

    w.step("completion_exit", (("id", k),), exit_hooks)
    with lc.qcv:
        def signal() -> Args:
            lc.inflight[d.agent] -= 1  # async_complete(), the last statement
            return ()

        w.step("completion_signal", (("id", k),), signal)
        lc.qcv.notify_all()
