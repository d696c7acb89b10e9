"""Instantiate the lifecycle programs at a fixed size; same interface as spec.model.Model, so the
Z3 encoding, BMC, induction, replay and the recorder work on it unchanged."""
from __future__ import annotations

from functools import cached_property

from ..model import Action, Model
from ..programs import LABELS
from ..vocabulary import VarDecl
from . import programs as lp
from .variants import LVARIANTS, LVariant
from .vocabulary import LConfig, declare


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
