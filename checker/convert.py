"""Rewrite a core v1 trace as v2: the same run, written the way a real program would write it.

Thread names (`u0`, `l1`) become opaque OS-style thread ids, agents get names (`gpu0`), and agent
sets are written in a shuffled order; sequence numbers, event kinds and values are kept. Used by
the tests (every verdict of the v1 corpus must survive the rewrite: ids carry no meaning) and as a
migration aid for logs written by an older emitter.
"""
from __future__ import annotations

import random


def opaque_tid(tids: dict[str, str], t: str, rng: random.Random) -> str:
    """The OS-tid-like token standing for v1 thread name `t` (drawn once, distinct per thread)."""
    if t not in tids:
        tid = str(rng.randrange(1_000, 4_000_000))
        while tid in tids.values():
            tid = str(rng.randrange(1_000, 4_000_000))
        tids[t] = tid
    return tids[t]


def v1_to_v2(text: str, seed: int = 1, agent_prefix: str = "gpu") -> str:
    rng = random.Random(seed)
    tids: dict[str, str] = {}
    out: list[str] = []
    for ln in text.splitlines():
        w = ln.split()
        if not w or ln.lstrip().startswith("#"):
            out.append(ln)
            continue
        if w[0] == "spmcheck-trace":
            meta = [x for x in w[2:] if x.split("=", 1)[0] not in ("agents", "updaters", "lookups")]
            variant = [x for x in meta if x.startswith("variant=")]
            rest = [x for x in meta if not x.startswith("variant=")]
            out.append(" ".join(["spmcheck-trace", "v2", "model=core", *variant, *rest]))
            continue
        if len(w) == 2:  # `<seq> run_end`
            out.append(ln)
            continue
        seq, t, kind, *kvs = w
        tid = opaque_tid(tids, t, rng)
        new = []
        for kv in kvs:
            k, _, v = kv.partition("=")
            if k == "agents" and v != "all":
                parts = v.split(",")
                rng.shuffle(parts)
                v = ",".join(agent_prefix + p for p in parts)
            elif k == "agent" and v != "all":
                v = agent_prefix + v
            elif k == "lock" and v.startswith("serializer."):
                v = "serializer." + agent_prefix + v.split(".", 1)[1]
            new.append(f"{k}={v}")
        out.append(" ".join([seq, tid, kind, *new]))
    return "\n".join(out) + "\n"
