"""Instantiate the protocol programs at a fixed size: variables, initial state, action instances."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

from .backend import Backend, Term
from .programs import LABELS, Params, StepDef, build_steps, instantiate_params, role_of
from .variants import VARIANTS, Variant
from .vocabulary import Config, State, VarDecl, declare


@dataclass(frozen=True)
class Action:
    """One action instance: a step of one thread with its parameters bound."""

    index: int
    thread: str
    step: StepDef
    params: Params

    @property
    def kind(self) -> str:
        return self.step.kind

    @property
    def label(self) -> str:
        return self.step.at

    def static_args(self) -> dict[str, object]:
        return self.step.static(self.params)

    def selectors(self, b: Backend, s: State) -> list[tuple[str, Term]]:
        from .programs import pc_of

        role = role_of(self.thread)
        out = [(f"{self.thread} is at '{self.label}'", s[f"pc.{self.thread}"] == pc_of(role, self.label))]
        return out + self.step.selectors(b, s, self.thread, self.params)

    def guards(self, b: Backend, s: State) -> list[tuple[str, Term]]:
        return self.step.guard(b, s, self.thread, self.params)

    def enabled(self, b: Backend, s: State) -> Term:
        return b.And(*[g for _, g in self.selectors(b, s)], *[g for _, g in self.guards(b, s)])

    def effect(self, b: Backend, s: State) -> dict[str, Term]:
        return self.step.effect(b, s, self.thread, self.params)

    def observed(self, b: Backend, s: State) -> dict[str, Term]:
        return self.step.observed(b, s, self.thread, self.params)

    def describe(self) -> str:
        args = " ".join(f"{k}={v}" for k, v in self.static_args().items())
        return f"{self.thread} {self.kind} {args}".rstrip()


class Model:
    def __init__(self, cfg: Config, variant: Variant | str) -> None:
        self.cfg = cfg
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        self.steps = build_steps(cfg, self.variant)

    @cached_property
    def vars(self) -> list[VarDecl]:
        return declare(self.cfg, LABELS)

    @cached_property
    def var_names(self) -> list[str]:
        return [d.name for d in self.vars]

    @cached_property
    def actions(self) -> list[Action]:
        out: list[Action] = []
        for t in self.cfg.threads():
            role = role_of(t)
            for st in self.steps:
                if st.role != role:
                    continue
                for p in instantiate_params(self.cfg, self.variant, st):
                    out.append(Action(len(out), t, st, p))
        return out

    @cached_property
    def actions_by_key(self) -> dict[tuple[str, str, tuple[tuple[str, str], ...]], list[Action]]:
        """(thread, kind, static args as strings) -> candidate actions; used by replay."""
        idx: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[Action]] = {}
        for a in self.actions:
            key = (a.thread, a.kind, tuple((k, str(v)) for k, v in a.static_args().items()))
            idx.setdefault(key, []).append(a)
        return idx

    @cached_property
    def static_keys(self) -> dict[str, tuple[str, ...]]:
        """Event kind -> names of its static (selecting) arguments; the rest are observed values."""
        out: dict[str, tuple[str, ...]] = {}
        for a in self.actions:
            out.setdefault(a.kind, tuple(a.static_args()))
        return out

    def init_state(self) -> dict[str, int | bool]:
        return {d.name: d.init for d in self.vars}

    def writes(self) -> dict[str, list[Action]]:
        """Which actions may write each variable (computed on a concrete probe of every action)."""
        from .backend import CONCRETE

        probe = self.init_state()
        out: dict[str, list[Action]] = {n: [] for n in self.var_names}
        for a in self.actions:
            for name in a.effect(CONCRETE, probe):
                out[name].append(a)
        return out


def apply(model: Model, b: Backend, s: Mapping[str, Term], act: Action) -> dict[str, Term]:
    """Post-state of `act` from `s` (the caller checks enabledness)."""
    nxt = dict(s)
    nxt.update(act.effect(b, s))
    return nxt
