"""Non-vacuity of the parametric proofs: the scenarios each property is about are reachable.

The scenarios are the fixed-size ones (spec.properties.PROPERTIES[p].witnesses: stages that must
hold at increasing steps). Each is reached by a concrete path: seeded random walks on spec.model at
1 agent / 2 updaters / 1 lookup with the CONCRETE reading, running one thread for a random burst
of steps before switching (short bursts alone rarely interleave whole calls). A concrete path at
one size is a path of the parametric system (that size is one of its instances), so `reachable`
here is exact; a witness not met within the walk budget is `unknown`, never `unreachable`.
"""
from __future__ import annotations

import random
from functools import lru_cache

from ..backend import CONCRETE
from ..model import Model, apply
from ..properties import PROPERTIES
from ..vocabulary import Config
from .results import WitnessRec

CFG = Config(1, 2, 1)
WALKS, DEPTH, SEED = 60, 200, 5


@lru_cache(maxsize=None)
def _reach(variant: str, names: tuple[str, ...]) -> dict[str, str]:
    m = Model(CFG, variant)
    ws = {w.name: w for p in PROPERTIES.values() for w in p.witnesses if w.name in names}
    found: dict[str, str] = {}
    by_thread: dict[str, list] = {}
    for a in m.actions:
        by_thread.setdefault(a.thread, []).append(a)
    rng = random.Random(SEED)
    for walk in range(WALKS):
        s = m.init_state()
        stage = {n: 0 for n in ws}
        # odd walks run whole calls one at a time (reaches "0 -> 2 -> 0" with everyone idle),
        # even walks switch threads after random bursts (reaches interleavings)
        whole = walk % 2 == 1
        burst = (lambda: 10**6) if whole else (lambda: rng.randint(1, 20))
        cur, left = rng.choice(CFG.threads()), burst()
        prev = 0
        for step in range(DEPTH + 1):
            for n, w in ws.items():
                while stage[n] < len(w.stages) and w.stages[stage[n]](CONCRETE, s, m):
                    stage[n] += 1
                if stage[n] == len(w.stages) and n not in found:
                    found[n] = f"concrete walk {walk} (seed {SEED}) at {CFG.describe()}, step {step}"
            if len(found) == len(ws) or step == DEPTH:
                break
            done = whole and step > 0 and s[f"pc.{cur}"] == 0 and prev != 0
            en = [a for a in by_thread[cur] if a.enabled(CONCRETE, s)] if left > 0 and not done else []
            if not en:
                movable = [t for t in CFG.threads() if any(a.enabled(CONCRETE, s) for a in by_thread[t])]
                if not movable:
                    break
                cur, left = rng.choice(movable), burst()
                en = [a for a in by_thread[cur] if a.enabled(CONCRETE, s)]
            prev = s[f"pc.{cur}"]
            s = apply(m, CONCRETE, s, rng.choice(en))
            left -= 1
        if len(found) == len(ws):
            break
    return found


def witnesses(variant: str, prop: str) -> tuple[WitnessRec, ...]:
    found = _reach(variant, tuple(w.name for w in PROPERTIES[prop].witnesses))
    return tuple(WitnessRec(w.name, "reachable" if w.name in found else "unknown",
                            found.get(w.name, f"not met in {WALKS} walks of {DEPTH} steps"))
                 for w in PROPERTIES[prop].witnesses)
