"""Named safety properties and non-vacuity witnesses, written against the Backend (both readings).

State properties must hold in every reachable state; step properties must hold in the pre-state of
every firing of the actions they watch. Each names the digest section / review text it models.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .backend import Backend, Term
from .model import Action, Model
from .lang.discipline import CLAIM as DISCIPLINE
from .programs import FLAG, P1, P2, definition, pc_of, role_of
from .variants import VARIANTS
from .vocabulary import State, enabled, lv

StateFn = Callable[[Backend, State, Model], Term]
StepFn = Callable[[Backend, State, Model, Action], Term]


@dataclass(frozen=True)
class Witness:
    """A scenario that must be reachable: state predicates that hold at increasing steps."""

    name: str
    summary: str
    stages: tuple[StateFn, ...]


@dataclass(frozen=True)
class Property:
    name: str
    summary: str
    source: str
    state: StateFn | None = None
    # step property: (which actions it watches, the condition on their pre-state)
    watches: Callable[[Action], bool] | None = None
    step: StepFn | None = None
    witnesses: tuple[Witness, ...] = field(default=())
    static_lock_graph: bool = False


def idle(s: State, t: str) -> Term:
    return s[f"pc.{t}"] == pc_of(role_of(t), "idle")


def updater_inside_for(b: Backend, s: State, t: str, a: int) -> Term:
    return b.And(b.Not(idle(s, t)), b.Or(s[f"all.{t}"], s[f"in.{t}.{a}"]))


def lookup_inside_for(b: Backend, s: State, t: str, a: int) -> Term:
    return b.And(b.Not(idle(s, t)), s[f"ag.{t}"] == a)


def quiescent(b: Backend, s: State, m: Model, a: int) -> Term:
    """No thread is inside update_serialization() or serializer() for agent a."""
    return b.And(*[b.Not(updater_inside_for(b, s, t, a)) for t in m.cfg.updater_ids()],
                 *[b.Not(lookup_inside_for(b, s, t, a)) for t in m.cfg.lookup_ids()])


def reads_claim(fn: StateFn, name: str) -> StateFn:
    """Mark a state function as `m.claim(name)(b, s)`, nothing else: a reader may then evaluate
    the claim its own way (checker/replay.py: `Model.claim_recording`, its reads noted inline)."""
    fn.claim = name  # type: ignore[attr-defined]
    return fn


def claim_of(fn: StateFn | None) -> str | None:
    """The claim a state function reads (`reads_claim`), or None for any other predicate."""
    return getattr(fn, "claim", None)


def mirrors(b: Backend, s: State, m: Model) -> Term:
    """P1 as the definition states it (spec.programs `_claims`), compiled at the model's size."""
    return m.claim(P1)(b, s)


def stored_flag(b: Backend, s: State, m: Model) -> Term:
    """The definition's finding of that name (spec.programs `_claims`) at the model's size."""
    return m.claim(FLAG)(b, s)


reads_claim(mirrors, P1)
reads_claim(stored_flag, FLAG)


def _step_claim(name: str) -> tuple[Callable[[Action], bool], StepFn]:
    """A step claim of the definition: the actions that list a condition for it, and the
    conjunction of those conditions in the pre-state."""
    def watches(act: Action) -> bool:
        return name in act.claims()

    def step(b: Backend, s: State, m: Model, act: Action) -> Term:
        return b.And(*[x for _, x in act.checks(b, s, name)])

    return watches, step


_creates, creation_ok = _step_claim(P2)
_disciplined, lock_discipline = _step_claim(DISCIPLINE)


def can_move(b: Backend, s: State, m: Model, t: str) -> Term:
    return b.Or(*[act.enabled(b, s) for act in m.actions if act.thread == t])


def no_stuck_threads(b: Backend, s: State, m: Model) -> Term:
    """Not (some thread is inside an operation and every such thread is blocked)."""
    threads = m.cfg.threads()
    some_inside = b.Or(*[b.Not(idle(s, t)) for t in threads])
    all_blocked = b.And(*[b.Or(idle(s, t), b.Not(can_move(b, s, m, t))) for t in threads])
    return b.Not(b.And(some_inside, all_blocked))


# ---- witnesses ------------------------------------------------------------------------------
def _created_enabled(b: Backend, s: State, m: Model) -> Term:
    return b.Or(*[s[f"pc.{t}"] == pc_of("lookup", "release_serializer") for t in m.cfg.lookup_ids()])


def _rc(n: int) -> StateFn:
    return lambda b, s, m: b.Or(*[s["rc.all"] + s[f"rc.{a}"] == n for a in range(m.cfg.agents)])


def _rc0_quiet(b: Backend, s: State, m: Model) -> Term:
    return b.And(*[s["rc.all"] + s[f"rc.{a}"] == 0 for a in range(m.cfg.agents)],
                 *[idle(s, t) for t in m.cfg.threads()])


def _interleaved(b: Backend, s: State, m: Model) -> Term:
    return b.Or(*[
        b.And(lookup_inside_for(b, s, l, a), updater_inside_for(b, s, u, a))
        for l in m.cfg.lookup_ids() for u in m.cfg.updater_ids() for a in range(m.cfg.agents)
    ])


def _en_entry(b: Backend, s: State, m: Model) -> Term:
    return b.Or(*[b.And(s[f"ser.ex.{a}"], s[f"ser.en.{a}"]) for a in range(m.cfg.agents)])


def _dis_after(b: Backend, s: State, m: Model) -> Term:
    return b.Or(*[b.And(s[f"ser.ex.{a}"], b.Not(s[f"ser.en.{a}"]), quiescent(b, s, m, a))
                  for a in range(m.cfg.agents)])


def _blocked(b: Backend, s: State, m: Model) -> Term:
    return b.Or(*[b.And(b.Not(idle(s, t)), b.Not(can_move(b, s, m, t))) for t in m.cfg.threads()])


W_CREATED_EN = Witness("entry-created-enabled", "serializer() inserts an entry and enables it",
                       (_created_enabled,))
W_RC_020 = Witness("refcount-0-2-0", "a refcount goes 0 -> 2 -> 0 (two holders, both released)",
                   (_rc(2), _rc0_quiet))
W_INTERLEAVE = Witness("lookup-during-update", "a serializer() lookup is in progress while an "
                       "update_serialization() for the same agent is in progress", (_interleaved,))
W_BOTH_WAYS = Witness("enabled-then-disabled", "an entry is enabled and later disabled again",
                      (_en_entry, _dis_after))
W_BLOCKED = Witness("thread-blocks-on-lock", "some thread inside an operation waits for a lock",
                    (_blocked,))

# names, summaries and sources of the claims are the definition's (spec/programs.py `_claims`)
_CLAIMS = definition(VARIANTS["final"]).claims

PROPERTIES: dict[str, Property] = {
    p.name: p
    for p in (
        Property(
            P1,
            _CLAIMS[P1].summary,
            _CLAIMS[P1].source,
            state=mirrors,
            witnesses=(W_RC_020, W_BOTH_WAYS, W_INTERLEAVE),
        ),
        Property(
            P2,
            _CLAIMS[P2].summary,
            _CLAIMS[P2].source,
            watches=_creates,
            step=creation_ok,
            witnesses=(W_CREATED_EN, W_INTERLEAVE),
        ),
        Property(
            DISCIPLINE,
            _CLAIMS[DISCIPLINE].summary,
            _CLAIMS[DISCIPLINE].source + "; derived by spec.lang.discipline from the `guarded` locks "
            "of spec.programs' state",
            watches=_disciplined,
            step=lock_discipline,
            witnesses=(W_CREATED_EN, W_INTERLEAVE),
        ),
        Property(
            "lock-order-acyclic",
            "P5: the lock-acquisition graph of all actions has no cycle, and no reachable state "
            "has every thread that is inside an operation blocked",
            "digest §1.3, §4 P5; seed: 'Lock order is refcount -> serializer map -> per-agent "
            "serializer in both paths'",
            state=no_stuck_threads,
            witnesses=(W_BLOCKED,),
            static_lock_graph=True,
        ),
    )
}


# residual risks of the final design (the definition's `findings`): proved only against `final`
# (FINDING_VARIANTS), reported with a counterexample as a finding, never a failure; the checker
# notes them and keeps its verdict. Kept out of PROPERTIES so no table takes one for a claim.
_FINDS = definition(VARIANTS["final"]).findings
CORE_FINDINGS: dict[str, Property] = {
    FLAG: Property(FLAG, _FINDS[FLAG].summary, _FINDS[FLAG].source, state=stored_flag,
                   witnesses=(W_RC_020,)),
}
FINDING_VARIANTS = ("final",)


def core_property(name: str) -> Property:
    """A core property or finding by name."""
    return PROPERTIES.get(name) or CORE_FINDINGS[name]


def settled(b: Backend, s: State, m: Model) -> Term:
    """A quiescent state reachable by running complete calls one at a time (no interleaving).

    Every thread idle and no lock held; each holder either holds no reference or holds one on a
    scope it enabled; refcounts equal the holders; entries exist for any subset of agents and
    mirror the count. BMC may start from any such state: `spec.setup.prefix_for` rebuilds the
    sequential calls that reach it, so every counterexample is still a path from Init.
    """
    cfg = m.cfg
    parts: list[Term] = []
    for t in cfg.threads():
        parts.append(idle(s, t))
    for lock in cfg.lock_instances():
        from .vocabulary import lock_modes

        for mode in lock_modes(lock):
            parts += [b.Not(s[lv(lock, mode, t)]) for t in cfg.threads()]
    for h in cfg.holder_ids():
        parts.append(b.Implies(s[f"held.{h}"], b.Or(s[f"hall.{h}"], *[s[f"hin.{h}.{a}"] for a in range(cfg.agents)])))
        parts.append(b.Implies(b.Not(s[f"held.{h}"]), b.Not(s[f"hall.{h}"])))
        if m.variant.global_flag:
            parts.append(b.Implies(s[f"held.{h}"], s[f"hall.{h}"]))
        for a in range(cfg.agents):
            parts.append(b.Implies(b.Or(s[f"hall.{h}"], b.Not(s[f"held.{h}"])), b.Not(s[f"hin.{h}.{a}"])))
    for t in cfg.updater_ids():
        # an idle updater's call arguments (enable, all, in) are dead: its next begin overwrites
        # them before reading (spec.setup.dead); its scratch is cleared
        for a in range(cfg.agents):
            parts += [b.Not(s[f"pend.{t}.{a}"]), b.Not(s[f"was.{t}.{a}"]), b.Not(s[f"wh.{t}.{a}"])]
            parts.append(b.Implies(s[f"all.{t}"], b.Not(s[f"in.{t}.{a}"])))
        parts.append(b.Not(s[f"any.{t}"]))
    for i, t in enumerate(cfg.lookup_ids()):
        # dead locals, pinned to what spec.setup leaves behind: the first lookup thread creates
        # the entries in agent order, so it last looked up the highest existing agent
        last: Term = 0
        if i == 0:
            for a in range(1, cfg.agents):
                last = b.If(s[f"ser.ex.{a}"], a, last)
        parts += [s[f"ag.{t}"] == last, b.Not(s[f"sh.{t}"])]
    holders_all = b.Sum([b.And(s[f"held.{h}"], s[f"hall.{h}"]) for h in cfg.holder_ids()])
    parts.append(s["rc.all"] == holders_all)
    for a in range(cfg.agents):
        holders_a = b.Sum([b.And(s[f"held.{h}"], s[f"hin.{h}.{a}"]) for h in cfg.holder_ids()])
        parts.append(s[f"rc.{a}"] == holders_a)
        if m.variant.global_flag:
            parts.append(s[f"ser.en.{a}"] == b.And(s[f"ser.ex.{a}"], s["flag"]))
        else:
            parts.append(s[f"ser.en.{a}"] == b.And(s[f"ser.ex.{a}"], enabled(b, s, a)))
    parts.append(s["flag"] == b.Or(s["rc.all"] > 0, *[s[f"rc.{a}"] > 0 for a in range(cfg.agents)]))
    return b.And(*parts)
