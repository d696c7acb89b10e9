"""State vocabulary of the QueueController core (digest §1.2, §1.3) at a fixed size.

Every piece of state is a named scalar variable (bool or bounded int) so that both readings can
hold it: a dict of Python values, or a dict of Z3 constants per time step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .backend import Backend, Term
from .lang.finite import VarDecl

__all__ = ["VarDecl"]  # re-exported: the lifecycle still declares its own variables

State = Mapping[str, Term]

# Lock classes and the modes the SDK uses on them (digest §1.3). `serializer.<a>` is one exclusive
# lock per agent (a `Synchronized<profiler_serializer>` taken with wlock in these paths).
LOCK_MODES: dict[str, tuple[str, ...]] = {
    "queues": ("shared",),
    "refcount": ("shared", "exclusive"),
    "serializer_map": ("shared", "exclusive"),
}
SERIALIZER_LOCK = "serializer"  # lock class; instances are serializer.<agent>


@dataclass(frozen=True)
class Config:
    """Model size: agents, updater (tool) threads, lookup (dispatch/queue-creation) threads and
    holders (contexts owning a reference; 0: one per updater, as a format-v1 header implies)."""

    agents: int = 2
    updaters: int = 2
    lookups: int = 2
    holders: int = 0

    @property
    def n_holders(self) -> int:
        return self.holders or self.updaters

    def holder_ids(self) -> list[str]:
        return [f"c{i}" for i in range(self.n_holders)]

    def updater_ids(self) -> list[str]:
        return [f"u{i}" for i in range(self.updaters)]

    def lookup_ids(self) -> list[str]:
        return [f"l{i}" for i in range(self.lookups)]

    def threads(self) -> list[str]:
        return self.updater_ids() + self.lookup_ids()

    def lock_instances(self) -> list[str]:
        return list(LOCK_MODES) + [f"{SERIALIZER_LOCK}.{a}" for a in range(self.agents)]

    def describe(self) -> str:
        extra = f", {self.holders} holders" if self.holders else ""
        return f"{self.agents} agents, {self.updaters} updaters, {self.lookups} lookups{extra}"


def lock_modes(lock: str) -> tuple[str, ...]:
    return ("exclusive",) if lock.startswith(SERIALIZER_LOCK + ".") else LOCK_MODES[lock]


def lv(lock: str, mode: str, t: str) -> str:
    """Variable: thread t holds `lock` in `mode`."""
    return f"lk.{lock}.{'w' if mode == 'exclusive' else 'r'}.{t}"


def count(b: Backend, s: State, a: int) -> Term:
    """refcount(a) = all + per_agent[a]  (serialization_refcount::count, digest §1.2)."""
    return s["rc.all"] + s[f"rc.{a}"]


def enabled(b: Backend, s: State, a: int) -> Term:
    """serialization_refcount::enabled(a) = count(a) > 0."""
    return count(b, s, a) > 0


def holds(s: State, lock: str, mode: str, t: str) -> Term:
    return s[lv(lock, mode, t)]


def shared_free(b: Backend, s: State, cfg: Config, lock: str) -> Term:
    """No thread holds `lock` exclusively (a shared acquire can proceed)."""
    if "exclusive" not in lock_modes(lock):
        return b.true()
    return b.And(*[b.Not(s[lv(lock, "exclusive", u)]) for u in cfg.threads()])


def exclusive_free(b: Backend, s: State, cfg: Config, lock: str) -> Term:
    """Nobody holds `lock` in any mode (an exclusive acquire can proceed)."""
    terms = []
    for u in cfg.threads():
        for m in lock_modes(lock):
            terms.append(b.Not(s[lv(lock, m, u)]))
    return b.And(*terms)
