"""Instantiate the lifecycle at a fixed size; same interface as spec.model.Model, so the Z3
encoding, BMC, induction, replay and the recorder work on it unchanged.

The actions are `definition.definition(variant, cfg)` compiled through `spec.lang.finite`, as
spec.model.Model does for the core: nothing here restates a guard or an update.
"""
from __future__ import annotations

from functools import cached_property

from ..lang.finite import Universe
from ..model import Action, Model, _step, legacy_params
from .definition import definition
from .variants import LVARIANTS, LVariant
from .vocabulary import LConfig

ROLE_OF_PREFIX = {"t": "tool", "d": "dispatch", "h": "complete"}


class LifecycleModel(Model):
    kind = "lifecycle"

    def __init__(self, cfg: LConfig, variant: LVariant | str) -> None:  # type: ignore[override]
        self.cfg = cfg  # type: ignore[assignment]
        self.variant = LVARIANTS[variant] if isinstance(variant, str) else variant  # type: ignore[assignment]
        self.protocol = definition(self.variant, cfg)  # type: ignore[arg-type]
        # one dispatch thread d0 and one completion thread h0 (LConfig.threads)
        self.universe = Universe(self.protocol, {"agent": cfg.agents, "context": cfg.contexts,
                                                 "kernel": cfg.dispatches, "tool": cfg.tools,
                                                 "dispatch": 1, "complete": 1})
        self._claims = {}

    @cached_property
    def actions(self) -> list[Action]:
        out: list[Action] = []
        u = self.universe
        for t in self.cfg.threads():
            role = ROLE_OF_PREFIX[t[0]]
            pc = self.protocol.pc[role]
            for act in self.protocol.actions:
                if act.role.name != role:
                    continue
                for env in u.bindings(act):
                    out.append(Action(len(out), t, _step(u, act, t, env, pc), legacy_params(act, env)))
        return out
