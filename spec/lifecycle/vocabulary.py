"""State of the SPM context lifecycle at a fixed size (digest §1.2, §2.4-§2.11).

Sizes: agents, contexts, tool threads t0.. (start/stop/set_agents/...), one dispatch thread d0
(WriteInterceptor), one completion thread h0 (AsyncSignalHandler), `dispatches` dispatches.
Each queue is identified with its agent (one queue per agent) [INF: enough for every property
here; the serializer's per-queue grant protocol is not modelled, only whether a dispatch is
serialized, digest §3.2].

update_serialization() and serializer() appear here as single atomic steps; the final core's
lock-step calls refine them (checked in Z3 by spec/refinement.py, see spec/lifecycle/definition.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Mapping

from ..backend import Backend, Term
from ..lang.syntax import EnumDom

State = Mapping[str, Term]

# slot of a context in the active-slot vector (digest §2.8): free, reserved (under the mutex,
# still null), published (CAS null -> ctx)
SLOT = EnumDom("SlotState", ("free", "reserved", "published"))
# dispatch phases: not yet written, enter hooks ran, submitted (async_started), exit hooks ran,
# completed (async_complete)
PHASE = EnumDom("KernelPhase", ("none", "hooked", "flight", "exited", "done"))
# SPM packet inserted into a context's packet_return_map by pre_kernel_call (digest §2.5)
PACKET = EnumDom("Packet", ("none", "empty", "spm"))
# the finite reading stores an enumeration's label index: these are the values properties compare
FREE, RESERVED, PUBLISHED = range(len(SLOT.labels))
D_NONE, D_HOOKED, D_FLIGHT, D_EXITED, D_DONE = range(len(PHASE.labels))
P_NONE, P_EMPTY, P_SPM = range(len(PACKET.labels))


@dataclass(frozen=True)
class LConfig:
    agents: int = 2
    contexts: int = 2
    tools: int = 2
    dispatches: int = 3
    max_ids: int = 4  # registry ids add_callback may hand out (1..max_ids)
    # scenario switches: behaviours outside the main proof scenario, used by the findings
    timeouts: bool = True  # Queue::sync may time out (5 s) and only warn
    deactivate: bool = False  # deactivate_client_contexts
    destroy: bool = False  # destroying an SPM profile after stop

    def tool_ids(self) -> list[str]:
        return [f"t{i}" for i in range(self.tools)]

    def threads(self) -> list[str]:
        return self.tool_ids() + ["d0", "h0"]

    def lock_instances(self) -> list[str]:
        return []

    def agent_sets(self) -> list[tuple[int, ...]]:
        """Every agent set set_dispatch_agents can install; () means all GPU agents."""
        out: list[tuple[int, ...]] = [()]
        for k in range(1, self.agents + 1):
            out += list(combinations(range(self.agents), k))
        return out

    def describe(self) -> str:
        extra = "".join(f", {n}" for n, on in (("timeouts", self.timeouts), ("deactivate", self.deactivate),
                                              ("profile destroy", self.destroy)) if on)
        return (f"{self.agents} agents, {self.contexts} contexts, {self.tools} tool threads, 1 dispatch "
                f"thread, 1 completion thread, {self.dispatches} dispatches{extra}")


def set_text(members: tuple[int, ...]) -> str:
    return ",".join(map(str, members)) if members else "all"


def collects_on(b: Backend, s: State, cfg: LConfig, c: int, a: int) -> Term:
    """dispatch_spm::collects_on(a) = agents.empty() || a in agents (digest §2.8) [SRC context.hpp]."""
    return b.Or(s[f"ag.{c}.{a}"], *[b.Not(b.Or(*[s[f"ag.{c}.{x}"] for x in range(cfg.agents)]))])


def count(b: Backend, s: State, a: int) -> Term:
    return s["rc.all"] + s[f"rc.{a}"]
