"""Rebuild the sequential calls that lead from Init to a settled state (see properties.settled).

Counterexamples found from a settled state are prefixed with these calls, so each one is a
complete path from Init that the checker replays from the empty header state.
"""
from __future__ import annotations

from typing import Mapping

from .backend import CONCRETE
from .model import Action, Model, apply


class SetupError(RuntimeError):
    pass


def run_alone(model: Model, state: dict, thread: str, first: Action) -> tuple[list[Action], dict]:
    """Fire `first`, then whichever single action of `thread` is enabled, until it is idle again."""
    from .properties import idle

    steps: list[Action] = []
    act = first
    while True:
        if not act.enabled(CONCRETE, state):
            raise SetupError(f"setup step not enabled: {act.describe()}")
        state = apply(model, CONCRETE, state, act)
        steps.append(act)
        if idle(state, thread):
            return steps, state
        nxt = [a for a in model.actions if a.thread == thread and a.enabled(CONCRETE, state)]
        if len(nxt) != 1:
            raise SetupError(f"{thread} has {len(nxt)} enabled actions while running alone")
        act = nxt[0]


def prefix_for(model: Model, target: Mapping[str, object]) -> list[Action]:
    """Sequential calls from Init to `target` (a settled state); raises if it is not reproduced."""
    cfg = model.cfg
    state = model.init_state()
    out: list[Action] = []
    looker = cfg.lookup_ids()[0] if cfg.lookups else None
    for a in range(cfg.agents):
        if target[f"ser.ex.{a}"]:
            if looker is None:
                raise SetupError("an entry exists but the model has no lookup thread")
            (begin,) = [x for x in model.actions if x.thread == looker and x.kind == "lookup_begin"
                        and x.params["agent"] == a]
            steps, state = run_alone(model, state, looker, begin)
            out += steps
    starter = cfg.updater_ids()[0] if cfg.updaters else None
    for h in cfg.holder_ids():
        if not target[f"held.{h}"]:
            continue
        if starter is None:
            raise SetupError("a holder holds a reference but the model has no updater thread")
        if target[f"hall.{h}"]:
            name = "all"
        else:
            name = ",".join(str(a) for a in range(cfg.agents) if target[f"hin.{h}.{a}"])
        begins = [x for x in model.actions if x.thread == starter and x.kind == "update_begin"
                  and x.params["scope_name"] == name and x.params["enable"] and x.params["holder"] == h]
        if len(begins) != 1:
            raise SetupError(f"{h} holds scope '{name}', which this variant cannot start")
        steps, state = run_alone(model, state, starter, begins[0])
        out += steps
    diff = {k: (state[k], target[k]) for k in state
            if not dead(k, target) and int(state[k]) != int(target[k])}  # type: ignore[arg-type]
    if diff:
        raise SetupError(f"setup prefix does not reproduce the settled state: {diff}")
    return out


def dead(name: str, s: Mapping[str, object]) -> bool:
    """Locals of an idle thread that its next begin overwrites before reading: the scratch and the
    arguments of its last call."""
    return name.split(".")[0] in ("was", "wh", "pend", "sh", "ag", "any", "all", "in", "enable")
