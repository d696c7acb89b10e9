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
    for t in cfg.updater_ids():
        if not target[f"hold.{t}"]:
            continue
        if target[f"all.{t}"]:
            name = "all"
        else:
            name = ",".join(str(a) for a in range(cfg.agents) if target[f"in.{t}.{a}"])
        begins = [x for x in model.actions if x.thread == t and x.kind == "update_begin"
                  and x.params["scope_name"] == name and x.params["enable"]]
        if len(begins) != 1:
            raise SetupError(f"{t} holds scope '{name}', which this variant cannot start")
        begin = begins[0]
        steps, state = run_alone(model, state, t, begin)
        out += steps
    diff = {k: (state[k], target[k]) for k in state
            if not dead(k, target) and int(state[k]) != int(target[k])}  # type: ignore[arg-type]
    if diff:
        raise SetupError(f"setup prefix does not reproduce the settled state: {diff}")
    return out


def dead(name: str, s: Mapping[str, object]) -> bool:
    """Locals of an idle thread that its next begin overwrites before reading (scratch of the last
    call, or the scope of an updater that holds nothing)."""
    parts = name.split(".")
    if parts[0] in ("was", "wh", "pend", "sh", "ag", "any"):
        return True
    if parts[0] in ("all", "in", "enable"):
        return not s[f"hold.{parts[1]}"]
    return False
