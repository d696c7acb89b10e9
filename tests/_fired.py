"""Shared by the mutation tests: which action instance each event of a trace fired."""
from __future__ import annotations

from typing import Any

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.model import Action
from spmcheck.spec.model import apply as apply_step


def fired(model: Any, text: str) -> list[Action]:
    """The action instance of each event of a trace, replayed on `model` (core or lifecycle)."""
    s = model.init_state()
    out: list[Action] = []
    for line in text.splitlines():
        if not line or not line[0].isdigit():
            continue
        _, thread, kind, *kvs = line.split()
        args = dict(kv.split("=", 1) for kv in kvs)
        key = (thread, kind, tuple((k, args[k]) for k in model.static_keys[kind]))
        acts = [a for a in model.actions_by_key.get(key, []) if a.enabled(CONCRETE, s)]
        assert acts, line
        out.append(acts[0])
        s = apply_step(model, CONCRETE, s, acts[0])
    return out
