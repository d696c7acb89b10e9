"""The core protocol, written once in the protocol language (`spec.lang`).

Two roles run lock-step programs: *updaters* (tool threads in `update_serialization()`, digest
§2.2) and *lookups* (threads in `serializer()`, digest §2.1). One step = one action = one trace
event; every lock acquire and release is its own step. Work done under a lock between two lock
operations is attached to the step that begins it (an acquire, or the data step under the lock);
nothing another thread could observe in between is lost, because the state it touches is
protected by the lock the thread holds.

`definition(variant)` builds the protocol for one variant's knobs. The fixed-size prover, the
recorder and the trace checker all read what it returns (`spec.lang.finite`); nothing else
restates a guard or an update.
"""
from __future__ import annotations

from functools import lru_cache

from .lang.syntax import (
    BOOL,
    And,
    BoolParam,
    Builder,
    Card,
    EnumDom,
    Every,
    Exists,
    Expr,
    ExprLike,
    Forall,
    Func,
    Implies,
    IntDom,
    Ite,
    Not,
    Or,
    Protocol,
    ScopeParam,
    Sort,
    SortDom,
    Var,
    lift,
)
from .variants import Variant

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


_ROLE_BY_PREFIX = {"u": "updater", "l": "lookup", "t": "tool", "d": "dispatch", "h": "complete"}


def role_of(t: str) -> str:
    """Thread name -> role: u*/l* in the core model, t*/d*/h* in the lifecycle (spec.lifecycle)."""
    return _ROLE_BY_PREFIX[t[0]]


class Core:
    """Sorts and state of the core (digest §1.2 state, §1.3 locks)."""

    def __init__(self, b: Builder) -> None:
        self.b = b
        self.agent = b.sort("agent")
        self.updater = b.sort("updater", "u")
        self.lookup = b.sort("lookup", "l")
        self.thread = b.sort("thread", parts=(self.updater, self.lookup))
        # holders: what owns a reference (a context started with enable_serialization and stopped
        # with disable_serialization); any updater thread may act for any holder, so one tool
        # thread can start several contexts before stopping any (issue 11)
        self.holder = b.sort("holder", "c")
        A, U, L, T, H = self.agent, self.updater, self.lookup, self.thread, self.holder
        holders = IntDom(0, Card(H))  # at most one reference per holder
        # `guarded`: the lock classes that protect each shared variable (digest §1.3): the
        # refcount state is `Synchronized<serialization_refcount>`, the map's entries are the
        # map's, an entry's state is its own `Synchronized<profiler_serializer>` (or the map's
        # while emplace constructs it); `_serialized_enabled` is an atomic
        self.rc_all = b.state("rc_all", (), holders, 0, "rc.all",
                              "serialization_refcount::all (empty agent list)", guarded=("refcount",))
        self.rc = b.state("rc", (A,), holders, 0, "rc.{0}", "serialization_refcount::per_agent[a]",
                          guarded=("refcount",))
        self.ex = b.state("ex", (A,), BOOL, False, "ser.ex.{0}", "a serializer entry exists for a",
                          guarded=("serializer_map",))
        self.en = b.state("en", (A,), BOOL, False, "ser.en.{0}", "the entry is ENABLED",
                          guarded=("serializer", "serializer_map"))
        self.flag = b.state("flag", (), BOOL, False, "flag", "_serialized_enabled")
        # locks: one holding relation per (lock class, mode); `serializer.<a>` is one exclusive
        # lock per agent (a Synchronized<profiler_serializer> taken with wlock on these paths)
        self.lk: dict[tuple[str, str], Func] = {}
        for lock, modes in (("queues", ("shared",)), ("refcount", ("shared", "exclusive")),
                            ("serializer_map", ("shared", "exclusive"))):
            for m in modes:
                w = "w" if m == "exclusive" else "r"
                self.lk[(lock, m)] = b.state(f"lk_{lock}_{w}", (T,), BOOL, False,
                                             f"lk.{lock}.{w}.{{0}}", f"holds {lock} {m}", (lock, m))
        self.lk_ser = b.state("lk_serializer_w", (T, A), BOOL, False, "lk.serializer.{1}.w.{0}",
                              "holds serializer.<a> exclusive", ("serializer", "exclusive"))
        # holder bookkeeping (ghost: the code keeps no record of who holds what): whether h holds a
        # reference and the agent set it holds it on, so its stop must name the set its start named
        self.held = b.state("held", (H,), BOOL, False, "held.{0}", "holder h holds a reference (ghost)")
        self.hall = b.state("hall", (H,), BOOL, False, "hall.{0}", "h's reference covers all agents (ghost)")
        self.hin = b.state("hin", (H, A), BOOL, False, "hin.{0}.{1}", "a is in h's agent set (ghost)")
        # updater locals: pc, the call's arguments, and per-agent scratch
        self.upc = b.state("upc", (U,), EnumDom("UPc", tuple(UPDATER_LABELS)), "idle", "pc.{0}")
        self.enable = b.state("enable", (U,), BOOL, False, "enable.{0}", "the call's `enable`")
        self.all = b.state("all", (U,), BOOL, False, "all.{0}", "the call's agent list is empty")
        self.anyv = b.state("anyv", (U,), BOOL, False, "any.{0}",
                            "`any_enabled = state.any()`, computed under W(rc), stored after U(rc)")
        self.inn = b.state("inn", (U, A), BOOL, False, "in.{0}.{1}", "a is in the call's agent list")
        self.pend = b.state("pend", (U, A), BOOL, False, "pend.{0}.{1}", "a still to count/apply")
        self.was = b.state("was", (U, A), BOOL, False, "was.{0}.{1}", "enabled(a) before the update")
        self.wh = b.state("wh", (U, A), BOOL, False, "wh.{0}.{1}", "a was in the map at the snapshot")
        # lookup locals
        self.lpc = b.state("lpc", (L,), EnumDom("LPc", tuple(LOOKUP_LABELS)), "idle", "pc.{0}")
        self.ag = b.state("ag", (L,), SortDom(A), 0, "ag.{0}", "the queue's agent")
        self.sh = b.state("sh", (L,), BOOL, False, "sh.{0}", "should_serialize")
        b.lay((self.rc_all,), (self.rc,), (self.ex,), (self.en,),
              (self.flag,))
        b.lay(*[(f,) for f in self.lk.values()], (self.lk_ser,))
        b.lay((self.held, self.hall, self.hin))
        b.lay((self.upc, self.enable, self.all, self.anyv, self.inn, self.pend, self.was, self.wh))
        b.lay((self.lpc, self.ag, self.sh))
        b.p.pc = {"updater": self.upc, "lookup": self.lpc}

    # ---- derived expressions (digest §1.2) ----
    def count(self, a: Expr) -> Expr:
        """refcount(a) = all + per_agent[a]  (serialization_refcount::count)."""
        return self.rc_all() + self.rc(a)

    def enabled(self, a: Expr) -> Expr:
        """serialization_refcount::enabled(a) = count(a) > 0."""
        return self.count(a) > 0

    def any_enabled(self) -> Expr:
        """serialization_refcount::any()."""
        x = Var("x", self.agent)
        return Or(self.rc_all() > 0, Exists(x, self.rc(x) > 0))

    # an updater between changing a count and applying the transitions it causes (issue 11 item 2:
    # P1 is judged per agent wherever no update of that agent is mid-transition, so continuous
    # lookups cannot hide a stale serializer); a lookup between creating an entry and enabling it.
    # Checked against QueueController::update_serialization / serializer() at amd-vkale@5d4ce3a9:
    # the counts change inside `_serialization_refcount.wlock`, the transitions follow in the same
    # scope under `_profiler_serializer.wlock` (one `ser_itr->second->wlock` per crossed entry), and
    # the window closes when that map lock is released; in serializer() the window is the emplace
    # and the `enable({})` under the same `ulock` upgrade
    UPDATER_WINDOW = ("count", "release_refcount_early", "acq_map", "apply", "set_state", "release_serializer")
    LOOKUP_WINDOW = ("acq_serializer", "enable")

    def settled(self, a: Expr) -> Expr:
        """No count change of agent a is waiting to be applied, and no entry for a is being
        created: the points where P1 is determined for a."""
        u, l = Var("u", self.updater), Var("l", self.lookup)
        return And(Forall(u, Not(And(Or(*[self.upc(u) == lab for lab in self.UPDATER_WINDOW]),
                                     Or(self.all(u), self.inn(u, a))))),
                   Forall(l, Not(And(Or(*[self.lpc(l) == lab for lab in self.LOOKUP_WINDOW]),
                                     self.ag(l) == a))))

    def quiescent(self, a: Expr) -> Expr:
        """No thread is inside update_serialization() (for a's agent set) or serializer() for a."""
        u, l = Var("u", self.updater), Var("l", self.lookup)
        return And(Forall(u, Not(And(self.upc(u) != "idle", Or(self.all(u), self.inn(u, a))))),
                   Forall(l, Not(And(self.lpc(l) != "idle", self.ag(l) == a))))

    def free(self, lock: str, mode: str, agent: Expr | None) -> Expr:
        """An acquire of `lock` in `mode` can proceed: no thread holds it exclusively (shared), or
        nobody holds it at all (exclusive)."""
        u = Var("u", self.thread)
        if lock == "serializer":
            assert agent is not None
            return Forall(u, Not(self.lk_ser(u, agent)))
        held = [self.lk[(lock, m)](u) for (lk, m) in self.lk if lk == lock
                and (mode == "exclusive" or m == "exclusive")]
        return Forall(u, Not(Or(*held))) if held else And()

    def holds(self, lock: str, mode: str, agent: Expr | None, t: Var) -> Expr:
        return self.lk_ser(t, agent) if lock == "serializer" else self.lk[(lock, mode)](t)


class Program:
    """Appends the lock-step actions of one role."""

    def __init__(self, c: Core, role: Sort, pc_labels: list[str]) -> None:
        self.c = c
        self.role = role
        self.t = Var("t", role)
        self.a = Var("agent", c.agent)
        self.labels = pc_labels

    def lock(self, at: str, acquire: bool, lock: str, mode: str, goto: Expr | str, *,
             per_agent: bool = False, extra: tuple = (), guard: tuple = (), select: tuple = (),
             source: str = "") -> None:
        """A lock acquire or release step (digest §1.3 lock inventory)."""
        c, t = self.c, self.t
        agent = self.a if lock == "serializer" else None
        name = "serializer.{agent}" if lock == "serializer" else lock
        if acquire:
            cond = (f"{name} available for {mode} acquire", c.free(lock, mode, agent))
        else:
            cond = (f"{{t}} holds {name} {mode}", c.holds(lock, mode, agent, t))
        target = c.lk_ser(t, agent) if lock == "serializer" else c.lk[(lock, mode)](t)
        c.b.action(self.role, at, "lock_acquire" if acquire else "lock_release", t,
                   params=(self.a,) if per_agent else (),
                   static={"lock": name, "mode": mode}, select=select,
                   guard=tuple(guard) + (cond,), updates=tuple(extra) + ((target, acquire),),
                   goto=goto, source=source or "digest §1.3 lock inventory")


def _every(x: Var, target_fn: Func, t: Var, value: ExprLike) -> Every:
    """`target_fn(t, x) := value` for every element x (a row of a thread's per-agent locals)."""
    return Every(x, target_fn(t, x), lift(value))


# ---------------------------------------------------------------------------------------------
# update_serialization(agents | all, enable)   — digest §2.2
# ---------------------------------------------------------------------------------------------
def _updater(c: Core, v: Variant) -> None:
    pr = Program(c, c.updater, UPDATER_LABELS)
    b, t, a = c.b, pr.t, pr.a
    R = c.updater
    x = Var("x", c.agent)
    src_post = "digest §2.2 post-fix [SRC amd-vkale@5d4ce3a9 update_serialization]"
    src_pre = "digest §2.2 pre-fix [PR #11869/#11870 reconstruction]"
    src_g0 = "digest §2.2 G0 [SRC mirror queue_controller.cpp L323-365]"
    S = ScopeParam("scope", c.agent, sets=not v.global_flag)
    en = BoolParam("enable")

    # A call acts for a holder (a context: start enables its agent set, stop disables the same set,
    # digest §2.2 callers); the holder is the event's `holder=` key, by default the thread itself.
    # One action per (scope, enable).
    h = Var("holder", c.holder)
    same_scope = And(Ite(S.is_all(), c.hall(h), Not(c.hall(h))),
                     Forall(x, Ite(S.is_all(), True, c.hin(h, x) == S.has(x))))
    for enable in (True, False):
        guard = ((("{holder} holds no reference (a start must precede its stop)", Not(c.held(h))),)
                 if enable else
                 (("{holder} holds a reference", c.held(h)),
                  ("{holder} stops the same agent set it started", same_scope)))
        scope = ((c.hall(h), S.is_all()), _every(x, c.hin, h, S.has(x))) if enable else \
            ((c.hall(h), False), _every(x, c.hin, h, False))
        b.action(R, "idle", "update_begin", t, params=(h, S), consts={"enable": enable},
                 static={"agents": S, "enable": en, "holder": h}, implied=("holder",), guard=guard,
                 updates=((c.held(h), en), *scope, (c.enable(t), en), (c.all(t), S.is_all()),
                          _every(x, c.inn, t, S.has(x)), _every(x, c.pend, t, False),
                          _every(x, c.was, t, False), _every(x, c.wh, t, False)),
                 goto="acq_queues",
                 source="QueueController::update_serialization entry (enable_serialization / "
                 "disable_serialization wrappers, called by a context's start / stop), digest §2.2")

    def step(old: Expr) -> Expr:
        """++ on enable, -- clamped at 0 otherwise."""
        return Ite(c.enable(t), old + 1, Ite(old > 0, old - 1, old))

    if v.global_flag:
        pr.lock("acq_queues", True, "queues", "shared", "global_store_flag", source=src_g0)
        # rc.all is a ghost here: the logical number of holders, which the G0 code never counts.
        b.action(R, "global_store_flag", "flag_store", t,
                 updates=((c.flag(), c.enable(t)), (c.rc_all(), step(c.rc_all()))), goto="acq_map",
                 ghost=("rc_all",),
                 observe={"value": c.enable(t)}, source=src_g0 + " `_serialized_enabled.store(b)`")
        pr.lock("acq_map", True, "serializer_map", "exclusive", "apply",
                extra=(_every(x, c.pend, t, c.ex(x)),), source=src_g0)
    else:
        pr.lock("acq_queues", True, "queues", "shared", "acq_refcount", source=src_post)
        to_count = _every(x, c.pend, t, And(Not(c.all(t)), c.inn(t, x)))
        if v.apply_inside_refcount:
            pr.lock("acq_refcount", True, "refcount", "exclusive", "snapshot", source=src_post)
            pr.lock("snapshot", True, "serializer_map", "shared", "snapshot_release",
                    extra=(_every(x, c.wh, t, c.ex(x)), _every(x, c.was, t, c.enabled(x))),
                    source=src_post + " (was[a] for agents already in the map)")
            pr.lock("snapshot_release", False, "serializer_map", "shared", "count",
                    extra=(to_count,), source=src_post)
        else:
            pr.lock("acq_refcount", True, "refcount", "exclusive", "count",
                    extra=(_every(x, c.was, t, c.enabled(x)), to_count), source=src_pre)

        after_count = "acq_map" if v.apply_inside_refcount else "release_refcount_early"
        # agents are visited in the order of an unordered_set/unordered_map (audit U3; issue 11):
        # any pending agent may come next, so the model fixes no order over agent ids
        more = Exists(x, And(x != a, c.pend(t, x)))
        b.action(R, "count", "refcount_change", t, params=(a,), static={"agent": a},
                 guard=(("{t} updates an agent set", Not(c.all(t))),
                        ("agent {agent} is pending for {t}", c.pend(t, a))),
                 updates=((c.rc(a), step(c.rc(a))), (c.pend(t, a), False)),
                 goto=Ite(more, "count", after_count),
                 observe={"old": c.rc(a), "new": step(c.rc(a))},
                 source="update_serialization: ++/-- per_agent[a] (clamped at 0), digest §2.2; "
                 "agents in unordered_set order [SRC amd-vkale@5d4ce3a9]")
        b.action(R, "count", "refcount_change", t, static={"agent": "all"},
                 guard=(("{t} updates all agents", c.all(t)),),
                 updates=((c.rc_all(), step(c.rc_all())),), goto=after_count,
                 observe={"old": c.rc_all(), "new": step(c.rc_all())},
                 source="update_serialization: ++/-- all (clamped at 0), digest §2.2")

        if v.apply_inside_refcount:
            pr.lock("acq_map", True, "serializer_map", "exclusive", "apply",
                    extra=(_every(x, c.pend, t, And(c.wh(t, x), c.was(t, x) != c.enabled(x))),),
                    source=src_post + " (transition iff was[a] != now[a], entries in `was` only)")
        else:
            pr.lock("release_refcount_early", False, "refcount", "exclusive", "acq_map",
                    extra=(_every(x, c.pend, t, c.was(t, x) != c.enabled(x)),
                           (c.anyv(t), c.any_enabled())),
                    source=src_pre + " — the gap: crossings applied after U(rc)")
            pr.lock("acq_map", True, "serializer_map", "exclusive", "apply",
                    extra=(_every(x, c.pend, t, And(c.pend(t, x), c.ex(x))),),
                    source=src_pre + " (find(a) or continue)")

    # ---- apply loop (shared by every variant) ----
    pr.lock("apply", True, "serializer", "exclusive", "set_state", per_agent=True,
            guard=(("agent {agent} needs a transition", c.pend(t, a)),),
            source="profiler_serializer wlock in update_serialization, digest §2.2; `for(auto& [a, _] "
            ": m)` over an unordered_map, so in no fixed agent order [SRC amd-vkale@5d4ce3a9]")
    from_count = v.action_from_count and not v.global_flag
    decision = c.enabled(a) if from_count else c.enable(t)
    why = "post-update count(a) > 0" if from_count else "the caller's enable flag"
    for kind, want in (("serializer_enable", True), ("serializer_disable", False)):
        b.action(R, "set_state", kind, t, params=(a,), static={"agent": a},
                 guard=(("{t} holds serializer.{agent}", c.lk_ser(t, a)),
                        (f"{'enable' if want else 'disable'} chosen from {why}",
                         decision if want else Not(decision))),
                 updates=((c.en(a), want),), goto="release_serializer",
                 source="profiler_serializer::enable/disable(queues), digest §3.1")
    pr.lock("release_serializer", False, "serializer", "exclusive", "apply", per_agent=True,
            extra=((c.pend(t, a), False),))

    after_map = ("release_queues" if v.global_flag
                 else "release_refcount" if v.apply_inside_refcount else "store_flag")
    pr.lock("apply", False, "serializer_map", "exclusive", after_map,
            guard=(("no agent left to transition", Forall(x, Not(c.pend(t, x)))),))
    if not v.global_flag:
        if v.apply_inside_refcount:
            pr.lock("release_refcount", False, "refcount", "exclusive", "store_flag",
                    extra=((c.anyv(t), c.any_enabled()),),
                    source=src_post + " (`any_enabled = state.any()` is the last thing under W(rc))")
        # the value stored is the one computed under the lock, so two updaters can store theirs in
        # the opposite order (fidelity-audit U2): a stale stored flag is a reachable state
        b.action(R, "store_flag", "flag_store", t, updates=((c.flag(), c.anyv(t)),),
                 goto="release_queues", observe={"value": c.anyv(t)},
                 source="_serialized_enabled.store(any_enabled) after U(rc), digest §2.2 / P1 residual; "
                 "fidelity-audit U2")
    pr.lock("release_queues", False, "queues", "shared", "end")
    b.action(R, "end", "update_end", t, updates=((c.anyv(t), False),), goto="idle",
             source="update_serialization return (its local `any_enabled` dies)")


# ---------------------------------------------------------------------------------------------
# QueueController::serializer(queue) for the queue's agent   — digest §2.1
# ---------------------------------------------------------------------------------------------
def _lookup(c: Core, v: Variant) -> None:
    pr = Program(c, c.lookup, LOOKUP_LABELS)
    b, t, a = c.b, pr.t, pr.a
    R = c.lookup
    sel = (("{t} looks up agent {agent}", c.ag(t) == a),)
    holds_rc = v.lookup_holds_refcount and not v.global_flag
    first = ("acq_map_shared" if v.global_flag else "acq_map_first" if v.lookup_map_before_refcount
             else "acq_refcount")
    b.action(R, "idle", "lookup_begin", t, params=(a,), static={"agent": a},
             updates=((c.ag(t), a), (c.sh(t), False)), goto=first,
             source="QueueController::serializer(queue) entry (create_queue, WriteInterceptor, "
             "AsyncSignalHandler), digest §1.1")

    def lock(at: str, acquire: bool, lock: str, mode: str, goto: Expr | str, source: str = "") -> None:
        # the lock steps of serializer() are instantiated per agent so the agent selects the path
        pr.lock(at, acquire, lock, mode, goto, per_agent=True, select=sel, source=source)

    src_post = "digest §2.1 post-fix [SRC amd-vkale@5d4ce3a9 serializer()]"
    src_pre = "digest §2.1 pre-fix [PR #11870 reconstruction]"
    src_g0 = "digest §2.1 G0 [SRC mirror queue_controller.cpp L283-307]"

    if not v.global_flag:
        if v.lookup_map_before_refcount:
            lock("acq_map_first", True, "serializer_map", "exclusive", "acq_refcount",
                 source="hypothetical inversion: W(smap) then R(rc)")
        lock("acq_refcount", True, "refcount", "shared", "read", source=src_post)
        after_read = ("insert" if v.lookup_map_before_refcount
                      else "acq_map_shared" if holds_rc else "release_refcount_early")
        b.action(R, "read", "refcount_read", t, params=(a,), static={"agent": a}, select=sel,
                 updates=((c.sh(t), c.enabled(a)),), goto=after_read,
                 observe={"count": c.count(a)},
                 source="serializer(): should_serialize = refcount.enabled(agent)")
        if not holds_rc:
            lock("release_refcount_early", False, "refcount", "shared", "acq_map_shared",
                 source=src_pre + " — the gap: R(rc) released before the map is touched")

    lock("acq_map_shared", True, "serializer_map", "shared", "find", source=src_post + " ulock read")
    b.action(R, "find", "serializer_lookup", t, params=(a,), static={"agent": a}, select=sel,
             goto=Ite(c.ex(a), "release_map_hit", "release_map_miss"), observe={"found": c.ex(a)},
             source="serializer(): find under the ulock read phase")
    lock("release_map_hit", False, "serializer_map", "shared", "release_refcount" if holds_rc else "end")
    lock("release_map_miss", False, "serializer_map", "shared", "acq_map",
         source="ulock: shared lock released before the exclusive one (not an upgrade)")
    lock("acq_map", True, "serializer_map", "exclusive", "insert", source=src_post + " ulock write")
    created = Not(c.ex(a))
    should = c.flag() if v.global_flag else c.sh(t)
    w = Var("w", c.thread)
    p2 = Implies(created, And(should == c.enabled(a), Forall(w, Not(c.lk[("refcount", "exclusive")](w)))))
    b.action(R, "insert", "serializer_insert", t, params=(a,), static={"agent": a}, select=sel,
             updates=((c.ex(a), True), (c.en(a), Ite(created, False, c.en(a))), (c.sh(t), should)),
             # `if(should_serialize) ret->wlock(enable({}))` runs for the entry emplace returns,
             # new or inserted by a racing lookup between the two phases of ulock (audit L2)
             goto=Ite(should, "acq_serializer", "release_map"),
             observe={"created": created},
             checks=((P2, "a new entry for agent {agent} is created in the state the refcount gives now "
                      "(should_serialize == enabled), with no refcount write in progress", p2),),
             source=(src_g0 + " emplace; enable if _serialized_enabled.load()") if v.global_flag
             else "serializer(): emplace(agent, new) then enable({}) if should_serialize")
    pr.lock("acq_serializer", True, "serializer", "exclusive", "enable", per_agent=True, select=sel)
    b.action(R, "enable", "serializer_enable", t, params=(a,), static={"agent": a}, select=sel,
             guard=(("{t} holds serializer.{agent}", c.lk_ser(t, a)),),
             updates=((c.en(a), True),), goto="release_serializer",
             source="serializer(): ret->wlock(enable({})) after emplace, new entry or not "
             "[SRC amd-vkale@5d4ce3a9; fidelity-audit L2]")
    pr.lock("release_serializer", False, "serializer", "exclusive", "release_map", per_agent=True,
            select=sel)
    lock("release_map", False, "serializer_map", "exclusive",
         "release_refcount" if holds_rc or v.lookup_map_before_refcount else "end")
    if holds_rc or v.lookup_map_before_refcount:
        lock("release_refcount", False, "refcount", "shared", "end", source=src_post)
    b.action(R, "end", "lookup_end", t, params=(a,), static={"agent": a}, select=sel, goto="idle",
             source="serializer() return")


P1, P2 = "serializer-mirrors-refcount", "creation-consistent"
FLAG = "stored-flag-mirrors-refcount"
# an updater between changing a count and storing the `any_enabled` it computed: the stored flag
# may lag only there (for G0, the store comes first: no window)
FLAG_WINDOW = ("count", "release_refcount_early", "acq_map", "apply", "set_state", "release_serializer",
               "release_refcount", "store_flag")


def _claims(c: Core) -> None:
    """The core's named properties (digest §4); step claims' conditions sit on their actions."""
    x = Var("a", c.agent)
    c.b.invariant(P1, "P1: an existing entry for agent a is enabled iff refcount(a) > 0 whenever no count "
                  "change of a is waiting to be applied and no entry for a is being created",
                  "digest §4 P1; PR #11869/#11870; CBMC harness ref 69151498078 'P1'; issue 11 item 2 "
                  "(judged per agent, not only when no thread at all is inside a call)",
                  Forall(x, Implies(And(c.settled(x), c.ex(x)), c.en(x) == c.enabled(x))))
    u = Var("u", c.updater)
    c.b.finding(FLAG, "U2: _serialized_enabled equals refcount.any() whenever no update_serialization() is "
                "between its count change and its store (QueueController::serialization_enabled() reads it)",
                "fidelity-audit U2: `any_enabled` is computed under W(rc) and stored after U(rc), so two updaters "
                "can store in the opposite order; queue_controller.cpp@amd-vkale/5d4ce3a9 update_serialization; "
                "serialization_enabled() 'exposed for unit-test verification' (queue_controller.hpp@04650a10)",
                Implies(Forall(u, Not(Or(*[c.upc(u) == lab for lab in FLAG_WINDOW]))),
                        c.flag() == c.any_enabled()))
    c.b.step_claim(P2, "P2: an entry is created in the state the refcount gives at that moment, with no "
                   "refcount update in progress (atomic w.r.t. updates)",
                   "digest §4 P2; PR #11870 'created from a stale observation'")


@lru_cache(maxsize=None)
def definition(v: Variant) -> Protocol:
    """The core protocol at variant `v`'s knobs (sizes are chosen by the reading); the
    lock-discipline checks are derived last, from the (possibly mutated) actions."""
    from .lang.discipline import derive

    b = Builder(f"core/{v.name}")
    c = Core(b)
    _claims(c)
    _updater(c, v)
    _lookup(c, v)
    if v.mutation:
        from .lang.mutate import Mutation, apply

        return derive(apply(b.p, Mutation.parse(v.mutation)))
    return derive(b.p)
