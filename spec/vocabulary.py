"""State vocabulary of the QueueController core (digest §1.2, §1.3) at a fixed size.

Every piece of state is a named scalar variable (bool or bounded int) so that both readings can
hold it: a dict of Python values, or a dict of Z3 constants per time step.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .backend import Backend, Term

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
    """Model size: agents, updater (tool) threads and lookup (dispatch/queue-creation) threads."""

    agents: int = 2
    updaters: int = 2
    lookups: int = 2

    def updater_ids(self) -> list[str]:
        return [f"u{i}" for i in range(self.updaters)]

    def lookup_ids(self) -> list[str]:
        return [f"l{i}" for i in range(self.lookups)]

    def threads(self) -> list[str]:
        return self.updater_ids() + self.lookup_ids()

    def lock_instances(self) -> list[str]:
        return list(LOCK_MODES) + [f"{SERIALIZER_LOCK}.{a}" for a in range(self.agents)]

    def describe(self) -> str:
        return f"{self.agents} agents, {self.updaters} updaters, {self.lookups} lookups"


@dataclass(frozen=True)
class VarDecl:
    name: str
    kind: str  # "bool" or "int"
    init: int | bool
    lo: int = 0
    hi: int = 1


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


def declare(cfg: Config, pc_labels: Mapping[str, list[str]]) -> list[VarDecl]:
    n_u = cfg.updaters
    out: list[VarDecl] = [VarDecl("rc.all", "int", 0, 0, n_u)]
    out += [VarDecl(f"rc.{a}", "int", 0, 0, n_u) for a in range(cfg.agents)]
    out += [VarDecl(f"ser.ex.{a}", "bool", False) for a in range(cfg.agents)]
    out += [VarDecl(f"ser.en.{a}", "bool", False) for a in range(cfg.agents)]
    out.append(VarDecl("flag", "bool", False))
    for lock in cfg.lock_instances():
        for m in lock_modes(lock):
            out += [VarDecl(lv(lock, m, t), "bool", False) for t in cfg.threads()]
    for t in cfg.updater_ids():
        out.append(VarDecl(f"pc.{t}", "int", 0, 0, len(pc_labels["updater"]) - 1))
        out += [VarDecl(f"{k}.{t}", "bool", False) for k in ("hold", "enable", "all")]
        for a in range(cfg.agents):
            out += [VarDecl(f"{k}.{t}.{a}", "bool", False) for k in ("in", "pend", "was", "wh")]
    for t in cfg.lookup_ids():
        out.append(VarDecl(f"pc.{t}", "int", 0, 0, len(pc_labels["lookup"]) - 1))
        out.append(VarDecl(f"ag.{t}", "int", 0, 0, max(cfg.agents - 1, 0)))
        out.append(VarDecl(f"sh.{t}", "bool", False))
    return out
