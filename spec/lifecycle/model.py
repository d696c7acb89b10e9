"""Instantiate the lifecycle at a fixed size; same interface as spec.model.Model, so the Z3
encoding, BMC, induction, replay and the recorder work on it unchanged.

The actions are `definition.definition(variant, cfg)` compiled through `spec.lang.finite`, as
spec.model.Model does for the core: nothing here restates a guard or an update.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..lang.finite import Universe, compile_instance, reported_keys, static_of
from ..lang.syntax import Action as LAction
from ..model import Action, Model, StepDef, _step, legacy_params
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
        self._claim_reads = {}
        self._made: dict[int, tuple[LAction, dict[str, Any]]] = {}  # action index -> (definition, env)
        self._off: dict[tuple[int, tuple[tuple[str, int], ...]], Action] = {}

    def _instances(self, acts: list[LAction], start: int) -> list[Action]:
        out: list[Action] = []
        u = self.universe
        for t in self.cfg.threads():
            role = ROLE_OF_PREFIX[t[0]]
            pc = self.protocol.pc[role]
            for act in acts:
                if act.role.name != role:
                    continue
                for env in u.bindings(act):
                    i = start + len(out)
                    self._made[i] = (act, env)
                    out.append(Action(i, t, _step(u, act, t, env, pc), legacy_params(act, env)))
        return out

    def select(self, thread: str, kind: str, args: Mapping[str, str]) -> list[Action]:
        """Model.select, then for each candidate whose definition reads an observation as
        reported (`spec.lang.syntax.Reported`: the completion's `delivered`) the same step with
        the value this event reports, tried last and selected only where the model's own step
        computes another value: a run that reports another value than the model computes still
        makes the step, and the claims judge what it did (a second DISPATCH_END fails P4). Such
        an instance is never among `actions`: the prover and the recorder only take the model's
        own steps, and a path of the model names one step per line."""
        cands = super().select(thread, kind, args)
        extra = []
        for a in cands:
            act, env = self._made[a.index]
            keys = reported_keys(act)
            vals = tuple((k, int(args[k])) for k in keys if args.get(k, "").isdigit())
            if keys and len(vals) == len(keys):
                extra.append(self._off_model(a, act, env, vals))
        return cands + extra

    def _off_model(self, a: Action, act: LAction, env: dict[str, Any], vals: tuple[tuple[str, int], ...]) -> Action:
        got = self._off.get((a.index, vals))
        if got is None:
            pc = self.protocol.pc[act.role.name]
            comp = compile_instance(self.universe, act, a.thread, env, pc, dict(vals))
            static = static_of(act, env)
            # selected only where the model's own step would report another value, so a path
            # of the model (a stored counterexample, a recording) still names one step per line
            def other(b: Any, s: Any, t: str, p: Any) -> list:
                mine = a.observed(b, s)
                return comp.selectors(b, s) + [(f"the step computes another {k} than the event's {v}",
                                                mine[k] != v) for k, v in vals]

            step = StepDef(act.role.name, act.at, act.kind, act.per, lambda p: static,
                           lambda b, s, t, p: comp.guards(b, s), lambda b, s, t, p: comp.effect(b, s),
                           lambda b, s, t, p: comp.observed(b, s), act.source, other, act, lambda b, s: comp.checks(b, s))
            got = self._off[(a.index, vals)] = Action(a.index, a.thread, step, a.params)
        return got
