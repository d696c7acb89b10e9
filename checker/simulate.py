"""Realistic traces from the model itself: a seeded random walk over enabled actions, rendered as
events (static args + observed values). Used by tests, the bundled traces and the benchmark."""
from __future__ import annotations

import random
from typing import Iterator

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.events import Event, Header, render_event, render_header
from spmcheck.spec.model import Model, apply
from spmcheck.spec.vocabulary import Config


def to_event(seq: int, act: object, state: dict) -> Event:  # type: ignore[type-arg]
    a = act  # spec.model.Action
    args = {k: v for k, v in a.static_args().items()}  # type: ignore[attr-defined]
    args.update(a.observed(CONCRETE, state))  # type: ignore[attr-defined]
    return Event(seq, a.thread, a.kind, tuple((k, _text(v)) for k, v in args.items()))  # type: ignore[attr-defined]


def _text(v: object) -> str:
    from spmcheck.spec.events import value_text

    return value_text(v)


def walk(model: Model, steps: int, seed: int, finish: bool = True) -> Iterator[Event]:
    """Random walk; with `finish`, keep going (only threads inside an operation) until all are idle."""
    rng = random.Random(seed)
    s = model.init_state()
    by_thread: dict[str, list] = {}  # type: ignore[type-arg]
    for a in model.actions:
        by_thread.setdefault(a.thread, []).append(a)
    seq = 0
    memo: dict[tuple, list] = {}  # type: ignore[type-arg]
    names = model.var_names
    while True:
        busy = [t for t in model.cfg.threads() if s[f"pc.{t}"] != 0]
        if seq >= steps and (not finish or not busy):
            return
        key = tuple(s[n] for n in names)
        en = memo.get(key)
        if en is None:
            en = memo[key] = [a for a in model.actions if a.enabled(CONCRETE, s)]
            if len(memo) > 200_000:
                memo.clear()
        if seq >= steps:
            en = [a for a in en if a.thread in busy]
        if not en:
            return  # deadlock (possible in known-bad variants)
        a = rng.choice(en)
        seq += 1
        yield to_event(seq, a, s)
        s = apply(model, CONCRETE, s, a)


def trace_text(variant: str, cfg: Config, steps: int, seed: int, finish: bool = True) -> str:
    m = Model(cfg, variant)
    h = Header(1, variant, cfg.agents, cfg.updaters, cfg.lookups, (("seed", str(seed)), ("source", "simulate")))
    return "\n".join([render_header(h)] + [render_event(e) for e in walk(m, steps, seed, finish)]) + "\n"
