"""Lifecycle properties (digest §4 P1, P3-P9, §5), findings and non-vacuity witnesses.

Every property is a claim of the definition (spec/lifecycle/definition.py `_claims`): an invariant
read by `Model.claim`, or a step claim whose conditions the watched actions list in `checks`. This
module binds metadata to them: names, witnesses, `META` (the scenario switches a property is
checked with: drain timeouts, deactivate, profile destroy; and whether it is a finding, a residual
risk of the final design the model is expected to exhibit, reported with counterexamples, never as
a tool failure). P5 is read generically (the static lock graph and spec.properties'
no_stuck_threads). Witnesses are still predicates over fixed-size states.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ..backend import Backend, Term
from ..model import Action, Model
from ..properties import Property, StateFn, StepFn, Witness, _step_claim, no_stuck_threads, reads_claim
from .definition import (DESTROYED, DRAIN_ALL, GATE, LATE_STOP, P1, P3, P4, P4M, P5, P6, P7, P8, P9, SUBMIT,
                         definition)
from .variants import LVARIANTS
from .vocabulary import D_FLIGHT, D_HOOKED, P_NONE, P_SPM, PUBLISHED, LConfig, State


def _cfg(m: Model) -> LConfig:
    return m.cfg  # type: ignore[return-value]


_FINDS = definition(LVARIANTS["final"], LConfig()).findings


@lru_cache(maxsize=None)
def claim_state(name: str) -> StateFn:
    """The definition's invariant claim `name`, compiled at the model's size (and variant). One
    function per claim: two properties reading one claim (P9 and its deactivate finding) share it,
    which is how the checker tells that they are one check."""
    def state(b: Backend, s: State, m: Model) -> Term:
        return m.claim(name)(b, s)

    return reads_claim(state, name)


@lru_cache(maxsize=None)
def claim_step(name: str) -> tuple[Callable[[Action], bool], StepFn]:
    """The definition's step claim (or step finding) `name`: the actions listing a condition
    for it, and the conjunction of those conditions in the pre-state."""
    watches, step = _step_claim(name)

    def finds(act: Action) -> bool:
        d = act.step.defn
        return d is not None and any(c == name for c, _, _ in d.finding_checks)

    return (finds if name in _FINDS else watches), step


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


# names, summaries and sources of the claims and findings are the definition's (`_claims`)
_CLAIMS = {**definition(LVARIANTS["final"], LConfig()).claims, **_FINDS}


def _state(name: str, **kw: object) -> Property:
    return _p(name, _CLAIMS[name].summary, _CLAIMS[name].source, state=claim_state(name), **kw)


def _step(name: str, **kw: object) -> Property:
    watches, step = claim_step(name)
    return _p(name, _CLAIMS[name].summary, _CLAIMS[name].source, watches=watches, step=step, **kw)


LPROPERTIES: dict[str, Property] = {p.name: p for p in (
    _state(P1, witnesses=(W_EN_ENTRY, W_RC2)),
    # P5's claim is read generically: the static lock graph and no stuck threads
    _p(P5, _CLAIMS[P5].summary, _CLAIMS[P5].source, state=no_stuck_threads, witnesses=(W_BLOCKED,),
       static_lock_graph=True),
    _step(P3, witnesses=(W_SERIALIZED, W_TWO_DISJOINT)),
    _state(P4, witnesses=(W_AFTER_STOP, W_TIMEOUT)),
    _step(P4M, witnesses=(W_AFTER_STOP,)),
    _state(P6, witnesses=(W_ID,)),
    _step(P7, witnesses=(W_GPU0_UNTOUCHED,)),
    _state(P8, witnesses=(W_TWO_DISJOINT, W_CONFLICT)),
    _state(P9, witnesses=(W_RC2, W_LOCKED)),
    _step(GATE, witnesses=(W_GPU0_UNTOUCHED,)),
    # ---- residual risks of the final design (findings) ----
    _step(DRAIN_ALL),
    _step(SUBMIT),
    _step(LATE_STOP),
    # P9's claim in the deactivate scenario (the checker reports P9 under this name there)
    _p("deactivate-releases-references", "finding: P9 with deactivate_client_contexts: a context "
       "deactivated without stop keeps its serialization reference", "digest §4 P9 (b), §2.8 "
       "deactivate_client_contexts (SPM doc gap 1)", state=claim_state(P9)),
    _step(DESTROYED),
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
