"""Lifecycle properties (digest §4 P1, P3-P9, §5), findings and non-vacuity witnesses.

Each property is written once against the Backend and read both ways (Z3 for the prover, concrete
for the checker). `SCENARIO` says which optional behaviours (drain timeouts, deactivate, profile
destroy) a property is checked with; `FINDINGS` are residual risks of the final design that the
model is expected to exhibit: they are reported with counterexamples, never as tool failures.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..backend import Backend, Term
from ..model import Action, Model
from ..properties import Property, StateFn, Witness, idle, no_stuck_threads
from .variants import hook_tags
from .vocabulary import D_FLIGHT, D_HOOKED, FREE, P_NONE, P_SPM, PUBLISHED, LConfig, State, collects_on, count


def _cfg(m: Model) -> LConfig:
    return m.cfg  # type: ignore[return-value]


def ser_on(b: Backend, s: State, a: int) -> Term:
    """The agent's serializer is (or, on first lookup, will be created) ENABLED."""
    return b.Or(b.And(s[f"ser.ex.{a}"], s[f"ser.en.{a}"]), count(b, s, a) > 0)


def post(b: Backend, s: State, act: Action, name: str) -> Term:
    """`name` after `act` (its pre-state value when the step does not write it: a mutant of the
    definition may have lost the update)."""
    return act.effect(b, s).get(name, s[name])


# ---- P1 with the lifecycle attached ---------------------------------------------------------
def mirrors(b: Backend, s: State, m: Model) -> Term:
    """The definition's claim of that name (spec/lifecycle/definition.py) at m's size."""
    return m.claim('serializer-mirrors-refcount')(b, s)


# ---- P3 -----------------------------------------------------------------------------------------
def _is(kind: str) -> Callable[[Action], bool]:
    return lambda act: act.kind == kind


def p3_decision(b: Backend, s: State, m: Model, act: Action) -> Term:
    a, k = int(act.params["agent"]), int(act.params["id"])  # type: ignore[arg-type]
    return b.Implies(ser_on(b, s, a), post(b, s, act, f"rq.{k}"))


def submit_serialized_if_enabled(b: Backend, s: State, m: Model, act: Action) -> Term:
    k = int(act.params["id"])  # type: ignore[arg-type]
    return b.And(*[b.Implies(b.And(s[f"da.{k}"] == a, ser_on(b, s, a)), s[f"rq.{k}"])
                   for a in range(_cfg(m).agents)])


# ---- P4 -----------------------------------------------------------------------------------------
def delivered_once(b: Backend, s: State, m: Model) -> Term:
    """The definition's claim of that name (spec/lifecycle/definition.py) at m's size."""
    return m.claim('in-flight-completion-delivered')(b, s)


def _sync_ok(act: Action) -> bool:
    """A queue_sync step that reports success (the observed `drained` is a constant per action)."""
    from ..backend import CONCRETE

    return act.kind == "queue_sync" and act.observed(CONCRETE, {}).get("drained") is True


def map_empty_counted(b: Backend, s: State, m: Model, act: Action) -> Term:
    """When queue_controller_sync() succeeds for context c, no dispatch the drain counted
    (submitted: async_started ran) still has a packet in c's packet_return_map (digest §4 P4)."""
    c = int(act.params["ctx"])  # type: ignore[arg-type]
    return b.And(*[b.Implies(s[f"st.{k}"] >= D_FLIGHT, b.Not(s[f"mp.{k}.{c}"])) for k in range(_cfg(m).dispatches)])


def map_empty_all(b: Backend, s: State, m: Model, act: Action) -> Term:
    c = int(act.params["ctx"])  # type: ignore[arg-type]
    return b.And(*[b.Not(s[f"mp.{k}.{c}"]) for k in range(_cfg(m).dispatches)])


def _stop_returns(act: Action) -> bool:
    return act.kind == "marker_release" and act.label == "stop_release"


def returned_after_delivery(b: Backend, s: State, m: Model, act: Action) -> Term:
    c = int(act.params["ctx"])  # type: ignore[arg-type]
    return b.And(*[b.Implies(b.And(s[f"st.{k}"] >= D_FLIGHT, s[f"pk.{k}.{c}"] == P_SPM), b.Not(s[f"mp.{k}.{c}"]))
                   for k in range(_cfg(m).dispatches)])


def profile_alive_at_completion(b: Backend, s: State, m: Model, act: Action) -> Term:
    k = int(act.params["id"])  # type: ignore[arg-type]
    return b.And(*[b.Implies(b.And(s[f"mp.{k}.{c}"], s[f"pk.{k}.{c}"] == P_SPM), s[f"prof.{c}"])
                   for c in range(_cfg(m).contexts)])


# ---- P6 -----------------------------------------------------------------------------------------
def tags_disjoint(b: Backend, s: State, m: Model) -> Term:
    tags = list(hook_tags(m.variant).values())  # type: ignore[arg-type]
    distinct = len(set(tags)) == len(tags) and -1 not in tags
    return b.And(distinct, *[b.Or(h < 1, h > s["ids"]) for h in tags])


# ---- P7 -----------------------------------------------------------------------------------------
def scoped_step(b: Backend, s: State, m: Model, act: Action) -> Term:
    cfg = _cfg(m)
    if act.kind == "dispatch_write":
        a, k = int(act.params["agent"]), int(act.params["id"])  # type: ignore[arg-type]
        return b.And(*[b.Implies(post(b, s, act, f"pk.{k}.{c}") != P_NONE, collects_on(b, s, cfg, c, a))
                       for c in range(cfg.contexts)])
    c = int(act.params["ctx"])  # type: ignore[arg-type]
    restricted = b.Or(*[s[f"ag.{c}.{a}"] for a in range(cfg.agents)])
    return b.Implies(restricted, post(b, s, act, "rc.all") == s["rc.all"])


def _scoping_watch(act: Action) -> bool:
    return act.kind in ("dispatch_write", "spm_enable", "spm_disable")


# ---- P8 -----------------------------------------------------------------------------------------
def disjoint_active(b: Backend, s: State, m: Model) -> Term:
    """The definition's claim of that name (spec/lifecycle/definition.py) at m's size."""
    return m.claim('spm-contexts-disjoint')(b, s)


# ---- P9 -----------------------------------------------------------------------------------------
def busy_on(b: Backend, s: State, m: Model, c: int) -> Term:
    return b.Or(*[b.And(b.Not(idle(s, t)), s[f"cx.{t}"] == c) for t in _cfg(m).tool_ids()])


def balanced(b: Backend, s: State, m: Model) -> Term:
    cfg = _cfg(m)
    C = range(cfg.contexts)
    keys = ["all"] + [str(a) for a in range(cfg.agents)]
    parts = [s[f"rc.{x}"] == b.Sum([s[f"hd.{c}.{x}"] for c in C]) for x in keys]
    for c in C:
        parts += [s[f"hd.{c}.{x}"] <= 1 for x in keys]
        quiet = b.And(s[f"slot.{c}"] == FREE, b.Not(s[f"mk.{c}"]), b.Not(busy_on(b, s, m, c)))
        parts.append(b.Implies(quiet, b.And(*[s[f"hd.{c}.{x}"] == 0 for x in keys])))
    return b.And(*parts)


# ---- batching gate (§5.2) ------------------------------------------------------------------------
def unrelated_batched(b: Backend, s: State, m: Model, act: Action) -> Term:
    cfg = _cfg(m)
    a = int(act.params["agent"])  # type: ignore[arg-type]
    related = b.Or(*[b.And(s[f"slot.{c}"] == PUBLISHED, collects_on(b, s, cfg, c, a)) for c in range(cfg.contexts)])
    return b.Implies(b.Not(related), act.observed(b, s)["batch"])


# ---- witnesses ------------------------------------------------------------------------------------
def _any_k(fn: Callable[[Backend, State, Model, int], Term]) -> StateFn:
    return lambda b, s, m: b.Or(*[fn(b, s, m, k) for k in range(_cfg(m).dispatches)])


W_SERIALIZED = Witness("spm-dispatch-serialized", "a dispatch carries an SPM packet and is serialized",
                       (_any_k(lambda b, s, m, k: b.And(s[f"sz.{k}"], b.Or(*[s[f"pk.{k}.{c}"] == P_SPM
                                                                             for c in range(_cfg(m).contexts)]))),))
W_AFTER_STOP = Witness(
    "in-flight-completion-after-stop",
    "stop has cleared `enabled` while an SPM dispatch is in flight; that dispatch is then delivered",
    (_any_k(lambda b, s, m, k: b.Or(*[b.And(s[f"mk.{c}"], b.Not(s[f"en.{c}"]), s[f"st.{k}"] == D_FLIGHT,
                                          s[f"pk.{k}.{c}"] == P_SPM) for c in range(_cfg(m).contexts)])),
     _any_k(lambda b, s, m, k: b.And(s[f"ks.{k}"] == 1, b.Or(*[b.And(b.Not(s[f"en.{c}"]), s[f"pk.{k}.{c}"] == P_SPM)
                                                            for c in range(_cfg(m).contexts)])))))
W_TWO_DISJOINT = Witness("two-disjoint-contexts-active", "two SPM contexts are published at once",
                         (lambda b, s, m: b.And(*[s[f"slot.{c}"] == PUBLISHED for c in range(_cfg(m).contexts)]),))
W_TIMEOUT = Witness("drain-timeout", "queue_controller_sync() times out in a stop", (lambda b, s, m: s["g.timeout"],))
W_CONFLICT = Witness("conflict-refused", "a start is refused with CONTEXT_CONFLICT", (lambda b, s, m: s["g.conflict"],))
W_LOCKED = Witness("set-agents-refused", "set_dispatch_agents is refused with CONFIGURATION_LOCKED",
                   (lambda b, s, m: s["g.locked"],))
W_RC2 = Witness("two-contexts-hold-references", "two contexts hold serialization references at once "
                "(a count of 2 on one agent is unreachable: overlapping contexts conflict)",
                (lambda b, s, m: b.And(*[b.Or(s[f"hd.{c}.all"] > 0, *[s[f"hd.{c}.{a}"] > 0 for a in range(_cfg(m).agents)])
                                         for c in range(_cfg(m).contexts)]),))
W_EN_ENTRY = Witness("serializer-entry-enabled", "an agent's serializer entry exists and is ENABLED",
                     (lambda b, s, m: b.Or(*[b.And(s[f"ser.ex.{a}"], s[f"ser.en.{a}"]) for a in range(_cfg(m).agents)]),))
W_GPU0_UNTOUCHED = Witness(
    "gpu0-write-while-gpu1-context-active",
    "a dispatch on GPU-0 passes the enter hook uninstrumented while a context restricted to GPU-1 is published",
    (_any_k(lambda b, s, m, k: b.And(s[f"da.{k}"] == 0, s[f"st.{k}"] == D_HOOKED,
                                     *[s[f"pk.{k}.{c}"] == P_NONE for c in range(_cfg(m).contexts)],
                                     b.Or(*[b.And(s[f"slot.{c}"] == PUBLISHED, s[f"ag.{c}.1"], b.Not(s[f"ag.{c}.0"]))
                                            for c in range(_cfg(m).contexts)]))),))
W_ID = Witness("registry-id-issued", "add_callback hands out registry ids", (lambda b, s, m: s["ids"] >= 2,))


def _drain_waits(b: Backend, s: State, m: Model) -> Term:
    from ..programs import pc_of

    busy = b.Or(*[s[f"inf.{a}"] > 0 for a in range(_cfg(m).agents)])
    return b.And(busy, b.Or(*[s[f"pc.{t}"] == pc_of("tool", "drain") for t in _cfg(m).tool_ids()]))


# With drain timeouts on, no thread inside an operation ever blocks for good in the final design
# (mutex-taking steps only wait for set_dispatch_agents, which itself waits for every marker), so
# the witness is the one real wait: a stop inside queue_controller_sync() with kernels in flight.
W_BLOCKED = Witness("stop-waits-in-drain", "a stop waits in queue_controller_sync() while kernels are in flight",
                    (_drain_waits,))


@dataclass(frozen=True)
class Meta:
    scenario: dict[str, bool]
    finding: bool = False
    question: str = ""


def _p(name: str, summary: str, source: str, **kw: object) -> Property:
    return Property(name, summary, source, **kw)  # type: ignore[arg-type]


LPROPERTIES: dict[str, Property] = {p.name: p for p in (
    _p("serializer-mirrors-refcount", "P1 with the lifecycle attached: an existing serializer entry is "
       "ENABLED iff its agent's refcount > 0", "digest §4 P1; the core proof (spec.programs) for the atomic "
       "reading of update_serialization()/serializer()", state=mirrors, witnesses=(W_EN_ENTRY, W_RC2)),
    _p("lock-order-acyclic", "P5: lock nesting of the lifecycle steps (with the core's) is acyclic and no "
       "reachable state has every busy thread waiting", "digest §1.3, §4 P5", state=no_stuck_threads,
       witnesses=(W_BLOCKED,), static_lock_graph=True),
    _p("no-unserialized-dispatch-while-enabled", "P3 (decision-point form): when the enter hook snapshots "
       "the active slots for a dispatch on agent a and a's serializer is (or will be created) ENABLED, "
       "some context in the snapshot requests serialization", "digest §4 P3; bwelton #8887 issue 2; "
       "spm/core.cpp 'the ordering is load-bearing'", watches=_is("dispatch_write"), step=p3_decision,
       witnesses=(W_SERIALIZED, W_TWO_DISJOINT)),
    _p("in-flight-completion-delivered", "P4: each dispatch's SPMPacket gets exactly one kfd_stop + "
       "DISPATCH_END at completion and is erased from its context's packet_return_map, also after stop",
       "digest §4 P4; bwelton #8887 issue 1; seed question 'In-flight SPM dispatch still gets "
       "DISPATCH_END / kfd_stop after stop?'", state=delivered_once, witnesses=(W_AFTER_STOP, W_TIMEOUT)),
    _p("map-empty-after-drain", "P4 corollary: when queue_controller_sync() succeeds in a stop, every "
       "dispatch the drain counted (submitted) has left the context's packet_return_map",
       "digest §4 P4 corollary; seed question 'packet_return_map empty?'", watches=_sync_ok,
       step=map_empty_counted, witnesses=(W_AFTER_STOP,)),
    _p("tags-disjoint", "P6: hook tags are pairwise distinct, not -1, and never equal an id add_callback "
       "handed out", "digest §4 P6, §2.11; client_ids.hpp static_assert", state=tags_disjoint,
       witnesses=(W_ID,)),
    _p("agent-scoping", "P7: a context restricted to some agents never instruments a dispatch on another "
       "agent, and its start/stop touch only its agents' refcounts", "digest §4 P7; seed question "
       "'GPU-1-only SPM leave GPU-0 alone?'", watches=_scoping_watch, step=scoped_step,
       witnesses=(W_GPU0_UNTOUCHED,)),
    _p("spm-contexts-disjoint", "P8: two SPM contexts hold (reserved or published) slots at once only if "
       "their agent sets are disjoint", "digest §4 P8, §5.1; finding 'SPM conflict check races with "
       "context activation'; test concurrent_overlapping_context_starts_admit_exactly_one",
       state=disjoint_active, witnesses=(W_TWO_DISJOINT, W_CONFLICT)),
    _p("refcount-balanced", "P9: refcounts equal the references contexts hold, at most one per agent per "
       "context, and none once a context is stopped", "digest §4 P9; set_dispatch_agents source comment; "
       "test concurrent_context_start_stop_does_not_pin_serialization", state=balanced,
       witnesses=(W_RC2, W_LOCKED)),
    _p("unrelated-queues-batched", "a write on an agent outside every active SPM context keeps batching",
       "digest §5.2; finding 'Process-wide SPM batching disable affects unrelated GPU queues'; commit 4bbc5a8",
       watches=_is("dispatch_write"), step=unrelated_batched, witnesses=(W_GPU0_UNTOUCHED,)),
    # ---- residual risks of the final design (findings) ----
    _p("drain-covers-hooked-dispatches", "finding: when queue_controller_sync() succeeds, no dispatch at "
       "all (also one between the enter hook and async_started) holds a packet in the context's map",
       "digest §4 P3 residual (i): async_started() runs after the hook decisions [SRC id 58056341233]",
       watches=_sync_ok, step=map_empty_all),
    _p("no-unserialized-submit-while-enabled", "finding: no dispatch is submitted without serialization "
       "while its agent's serializer is ENABLED (submission-time form of P3)",
       "digest §4 P3 residual (i): snapshot-to-kernel_dispatch TOCTOU at start",
       watches=_is("dispatch_submit"), step=submit_serialized_if_enabled),
    _p("stop-returns-after-delivery", "finding: when rocprofiler_stop_context returns, every submitted "
       "SPM dispatch of the context has been delivered (DISPATCH_END not after stop)",
       "digest §4 P4 residuals: 'a drain timeout delivers DISPATCH_END after rocprofiler_stop_context "
       "returned'; §2.9 Queue::sync only warns", watches=_stop_returns, step=returned_after_delivery),
    _p("deactivate-releases-references", "finding: P9 with deactivate_client_contexts: a context "
       "deactivated without stop keeps its serialization reference", "digest §4 P9 (b), §2.8 "
       "deactivate_client_contexts (SPM doc gap 1)", state=balanced),
    _p("no-completion-after-profile-destroyed", "finding: a completion never reaches the packet_return_map "
       "entry of a profile the tool destroyed after stop", "seed commit 'Restores the queue_controller_sync()': "
       "'the drain also incidentally covered stop_context followed by destroying the counter config'",
       watches=_is("completion_exit"), step=profile_alive_at_completion),
)}

META: dict[str, Meta] = {
    "drain-covers-hooked-dispatches": Meta({}, True),
    "no-unserialized-submit-while-enabled": Meta({}, True),
    "stop-returns-after-delivery": Meta({"timeouts": True}, True),
    "deactivate-releases-references": Meta({"deactivate": True, "timeouts": False}, True),
    "no-completion-after-profile-destroyed": Meta({"timeouts": True, "destroy": True}, True),
}
CORE_LPROPS = [n for n in LPROPERTIES if n not in META]
FINDINGS = [n for n in LPROPERTIES if n in META]


def meta(name: str) -> Meta:
    return META.get(name, Meta({}))


def scenario(cfg: LConfig, name: str) -> LConfig:
    from dataclasses import replace

    return replace(cfg, **meta(name).scenario)  # type: ignore[arg-type]
