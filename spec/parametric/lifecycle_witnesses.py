"""Non-vacuity and concrete evidence for the parametric lifecycle verdicts.

witnesses: the fixed-size witness scenarios of each lifecycle property (stages that must hold at
increasing steps) reached by seeded concrete walks on LifecycleModel (thread-, then kind-uniform
choices, as spec.lifecycle.invariants.sample_states). A concrete path at one size is a path of the
parametric system, so `reachable` is exact; a witness not met within the budget is `unknown`.

confirm: a `violated` verdict needs a concrete path from Init that violates the property on
LifecycleModel now. Paths are stored as lifecycle traces (`cex/lc-<variant>--<property>.trace`),
found once by the fixed-size lifecycle prover (spec.lifecycle.prove) and regenerated with
`python -m spmcheck.spec.parametric.lifecycle_witnesses`; a path that no longer replays gives `unknown`.
"""
from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from ..backend import CONCRETE
from ..model import Action, apply
from ..lifecycle.model import LifecycleModel
from ..lifecycle.properties import LPROPERTIES
from ..lifecycle.vocabulary import LConfig
from ..prove import _violates as violates
from .confirm import replay_events
from .results import WitnessRec

WALK_CFGS = (LConfig(2, 2, 2, 2), LConfig(2, 2, 1, 3))  # every witness names agents 0 and 1
WALKS, DEPTH, SEED = 200, 60, 7  # only when no stored path replays
CEX_DIR = Path(__file__).resolve().parent / "cex"


def _stage_hits(m: LifecycleModel, ws: dict, stage: dict[str, int], s: dict) -> list[str]:
    done = []
    for n, w in ws.items():
        while stage[n] < len(w.stages) and w.stages[stage[n]](CONCRETE, s, m):
            stage[n] += 1
        if stage[n] == len(w.stages):
            done.append(n)
    return done


def _walk(variant: str, names: tuple[str, ...]) -> dict[str, tuple[LConfig, list[Action], str]]:
    """Seeded concrete walks until every named witness is met: name -> (size, path, how)."""
    ws = {w.name: w for p in LPROPERTIES.values() for w in p.witnesses if w.name in names}
    found: dict[str, tuple[LConfig, list[Action], str]] = {}
    for cfg in WALK_CFGS:
        m = LifecycleModel(cfg, variant)
        by_thread: dict[str, list[Action]] = {}
        for a in m.actions:
            by_thread.setdefault(a.thread, []).append(a)
        rng = random.Random(SEED)
        for walk in range(WALKS):
            s = m.init_state()
            path: list[Action] = []
            stage = {n: 0 for n in ws}
            for step in range(DEPTH + 1):
                for n in _stage_hits(m, ws, stage, s):
                    if n not in found:
                        found[n] = (cfg, list(path), f"concrete walk {walk} (seed {SEED}) at {cfg.describe()}, step {step}")
                if len(found) == len(ws):
                    return found
                # a random thread that can move (only its own actions are evaluated), then a
                # random kind, then an instance: set_agents alone has 4 x 2^agents instances
                order = sorted(by_thread)
                rng.shuffle(order)
                mine: list[Action] = []
                for thread in order:
                    mine = [a for a in by_thread[thread] if a.enabled(CONCRETE, s)]
                    if mine:
                        break
                if not mine:
                    break
                kind = rng.choice(sorted({a.kind for a in mine}))
                act = rng.choice([a for a in mine if a.kind == kind])
                path.append(act)
                s = apply(m, CONCRETE, s, act)
    return found


def witness_file(variant: str, name: str) -> Path:
    return CEX_DIR / f"lc-witness-{variant}--{name}.trace"


def _path_text(cfg: LConfig, variant: str, acts: Sequence[Action], comment: str) -> str:
    from ..events import value_text
    from ..lifecycle.trace import header_for

    rows = [f"# {comment}", header_for(cfg, variant, (("source", "spec.parametric.lifecycle_witnesses"),))]
    for i, a in enumerate(acts):
        rows.append(f"{i + 1} {a.thread} {a.kind}" + "".join(f" {k}={value_text(v)}" for k, v in a.static_args().items()))
    return "\n".join(rows) + "\n"


@lru_cache(maxsize=None)
def _model(cfg: LConfig, variant: str) -> LifecycleModel:
    """One compiled model per size and variant (stored paths share a handful of sizes)."""
    return LifecycleModel(cfg, variant)


def _replay(variant: str, text: str,
            ok: Callable[[LifecycleModel, list[dict], list[Action]], bool] | None = None,
            ) -> tuple[LifecycleModel, list[dict], list[Action]] | None:
    """Replay a stored lifecycle path from Init on LifecycleModel (static args select the action)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        return None
    head = dict(kv.split("=", 1) for kv in lines[0].split()[2:] if "=" in kv)
    if head.get("variant") != variant or head.get("model") != "lifecycle":
        return None
    cfg = LConfig(int(head["agents"]), int(head["contexts"]), int(head["tools"]), int(head["dispatches"]),
                  int(head["max_ids"]), head["timeouts"] == "1", head["deactivate"] == "1", head["destroy"] == "1")
    m = _model(cfg, variant)
    got = replay_events(m, lines[1:], None if ok is None else lambda st, acts: ok(m, st, acts))
    if got is None:
        return None
    states, acts = got
    return m, states, acts


def _stored(variant: str, name: str) -> str:
    """How the stored path meets the witness, or "" if it is missing or no longer does."""
    path = witness_file(variant, name)
    if not path.exists():
        return ""
    got = _replay(variant, path.read_text())
    if got is None:
        return ""
    m, states, _ = got
    ws = {w.name: w for p in LPROPERTIES.values() for w in p.witnesses if w.name == name}
    if name not in ws:
        return ""
    stage = {name: 0}
    for i, s in enumerate(states):
        if _stage_hits(m, ws, stage, s):
            return f"stored concrete path {path.name} replayed at {m.cfg.describe()}, step {i}"  # type: ignore[attr-defined]
    return ""


@lru_cache(maxsize=None)
def _reach(variant: str, names: tuple[str, ...]) -> dict[str, str]:
    found = {n: how for n in names if (how := _stored(variant, n))}
    missing = tuple(n for n in names if n not in found)
    if missing:  # no stored path (or it no longer replays): walk now, slower but still exact
        found.update({n: how for n, (_, _, how) in _walk(variant, missing).items()})
    return found


def unreachable_at_any_size(variant: str, name: str) -> str:
    """A parametric refutation of a witness, for the witnesses that have a first-order form."""
    from .lifecycle_prove import witness_refuted

    return witness_refuted(variant, name)


def witnesses(variant: str, prop: str) -> tuple[WitnessRec, ...]:
    ws = LPROPERTIES[prop].witnesses
    out = []
    refuted = {w.name: unreachable_at_any_size(variant, w.name) for w in ws}
    found = _reach(variant, tuple(w.name for w in ws if not refuted[w.name]))
    for w in ws:
        if refuted[w.name]:
            out.append(WitnessRec(w.name, "unreachable", refuted[w.name]))
        else:
            out.append(WitnessRec(w.name, "reachable" if w.name in found else "unknown",
                                  found.get(w.name, f"not met in {WALKS} walks of {DEPTH} steps per size")))
    return tuple(out)


def store_witness_paths(variant: str = "final") -> list[Path]:
    """Walk once and store a path per witness of the variant's lifecycle properties."""
    from ..lifecycle.properties import CORE_LPROPS

    names = tuple(sorted({w.name for p in CORE_LPROPS for w in LPROPERTIES[p].witnesses
                          if not unreachable_at_any_size(variant, w.name)}))
    CEX_DIR.mkdir(exist_ok=True)
    out = []
    for n, (cfg, acts, how) in _walk(variant, names).items():
        p = witness_file(variant, n)
        p.write_text(_path_text(cfg, variant, acts, f"witness {n} for lifecycle {variant}: {how}"))
        out.append(p)
    return out


# ---- stored counterexamples ------------------------------------------------------------------
def cex_file(variant: str, prop: str) -> Path:
    return CEX_DIR / f"lc-{variant}--{prop}.trace"


def replay(variant: str, prop: str, text: str) -> tuple[str, ...]:
    """The trace lines if `text` replays from Init on LifecycleModel and ends in a violation."""
    got = _replay(variant, text, lambda m, st, acts: violates(m, LPROPERTIES[prop], st, acts))
    if got is None:
        return ()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return tuple(lines)


def confirm(variant: str, prop: str) -> tuple[str, ...]:
    path = cex_file(variant, prop)
    return replay(variant, prop, path.read_text()) if path.exists() else ()


def regenerate(pairs: Sequence[tuple[str, str]], cfg: LConfig = LConfig(2, 2, 2, 2), timeout: float = 120.0) -> list[Path]:
    """Find a counterexample per pair with the fixed-size lifecycle prover and store it."""
    from ..lifecycle.prove import prove_pairs
    from ..lifecycle.trace import cex_trace

    CEX_DIR.mkdir(exist_ok=True)
    out = []
    for r in prove_pairs(list(pairs), cfg, timeout):
        if r.counterexample is None:
            continue
        p = cex_file(r.variant, r.property)
        p.write_text(f"# counterexample for {r.property} in lifecycle {r.variant}, found by spec.lifecycle.prove\n"
                     + cex_trace(r, cfg))
        out.append(p)
    return out


if __name__ == "__main__":
    from .lifecycle_prove import BAD_PAIRS

    for path in store_witness_paths("final") + regenerate(BAD_PAIRS):
        print(path)
