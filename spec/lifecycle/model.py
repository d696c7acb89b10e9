"""Instantiate the lifecycle at a fixed size; same interface as spec.model.Model, so the Z3
encoding, BMC, induction, replay and the recorder work on it unchanged.

`LifecycleModel` instantiates the hand-written closures of `programs.py`; `DefinedLifecycleModel`
compiles `definition.definition(variant, cfg)` through `spec.lang.finite`, as spec.model.Model
does for the core (the differential test holds the two to the same behaviour until the closures
go).
"""
from __future__ import annotations

from functools import cached_property

from ..lang.finite import Universe
from ..model import Action, Model, _step, legacy_params
from ..programs import LABELS
from ..vocabulary import VarDecl
from . import programs as lp
from .definition import definition
from .variants import LVARIANTS, LVariant
from .vocabulary import LConfig, declare


class DefinedLifecycleModel(Model):
    kind = "lifecycle"

    def __init__(self, cfg: LConfig, variant: LVariant | str) -> None:  # type: ignore[override]
        self.cfg = cfg  # type: ignore[assignment]
        self.variant = LVARIANTS[variant] if isinstance(variant, str) else variant  # type: ignore[assignment]
        self.protocol = definition(self.variant, cfg)
        self.universe = Universe(self.protocol, {"agent": cfg.agents, "context": cfg.contexts,
                                                 "kernel": cfg.dispatches, "tool": cfg.tools,
                                                 "dispatch": 1, "complete": 1})
        self._claims = {}

    @cached_property
    def actions(self) -> list[Action]:
        out: list[Action] = []
        u = self.universe
        for t in self.cfg.threads():
            role = {"t": "tool", "d": "dispatch", "h": "complete"}[t[0]]
            pc = self.protocol.pc[role]
            for act in self.protocol.actions:
                if act.role.name != role:
                    continue
                for env in u.bindings(act):
                    out.append(Action(len(out), t, _step(u, act, t, env, pc), legacy_params(act, env)))
        return out


class LifecycleModel(Model):
    kind = "lifecycle"

    def __init__(self, cfg: LConfig, variant: LVariant | str) -> None:  # type: ignore[override]
        self.cfg = cfg  # type: ignore[assignment]
        self.variant = LVARIANTS[variant] if isinstance(variant, str) else variant  # type: ignore[assignment]
        self.steps = lp.build_steps(cfg, self.variant)

    @cached_property
    def vars(self) -> list[VarDecl]:
        return declare(self.cfg, LABELS)

    @cached_property
    def actions(self) -> list[Action]:
        out: list[Action] = []
        for t in self.cfg.threads():
            role = {"t": "tool", "d": "dispatch", "h": "complete"}[t[0]]
            for st in self.steps:
                if st.role != role:
                    continue
                for p in lp.instantiate_params(self.cfg, st):
                    out.append(Action(len(out), t, st, p))
        return out
