"""TEST-ONLY stand-in for the real checker: replay a recorded trace against spec.model.Model.

Used to debug the runtime until checker/replay.py exists; delete it once the real checker lands.
Returns ("ok", None) / ("violated", property) / ("mismatch", reason).
"""
from __future__ import annotations

from spec.backend import CONCRETE
from spec.model import Model, apply
from spec.properties import PROPERTIES
from spec.vocabulary import Config


def replay(text: str) -> tuple[str, str | None]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    head = dict(kv.split("=", 1) for kv in lines[0].split()[2:])
    cfg = Config(int(head["agents"]), int(head["updaters"]), int(head["lookups"]))
    m = Model(cfg, head["variant"])
    keys = m.static_keys
    s = m.init_state()
    for ln in lines[1:]:
        parts = ln.split()
        seq, t, kind = parts[0], parts[1], parts[2]
        args = dict(kv.split("=", 1) for kv in parts[3:])
        static = tuple((k, args[k]) for k in keys[kind])
        cands = [a for a in m.actions_by_key.get((t, kind, static), [])
                 if all(g for _, g in a.selectors(CONCRETE, s))]
        if len(cands) != 1:
            return "mismatch", f"seq {seq}: {len(cands)} candidates for {ln}"
        act = cands[0]
        bad = [d for d, g in act.guards(CONCRETE, s) if not g]
        if bad:
            return "mismatch", f"seq {seq}: guard {bad} fails for {ln}"
        for k, val in act.observed(CONCRETE, s).items():
            want = "1" if val is True else "0" if val is False else str(val)
            if args.get(k) != want:
                return "mismatch", f"seq {seq}: {k}={args.get(k)} but model says {want}: {ln}"
        for p in PROPERTIES.values():
            if p.watches and p.step and p.watches(act) and not p.step(CONCRETE, s, m, act):
                return "violated", p.name
        s = apply(m, CONCRETE, s, act)
        for p in PROPERTIES.values():
            if p.state and p.name != "lock-order-acyclic" and not p.state(CONCRETE, s, m):
                return "violated", p.name
    return "ok", None
