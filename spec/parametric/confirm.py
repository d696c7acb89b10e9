"""Concrete evidence behind a parametric `violated` verdict.

A failed parametric query only shows the invariant is not inductive (or does not imply the
property): its CTI need not be reachable. `violated` is therefore claimed only when a concrete
path from Init that violates the property replays on spec.model (CONCRETE) now.

The paths are stored as trace files (traces/FORMAT.md, static args only) in `cex/`, found once
by the fixed-size BMC (`spec.prove.find_path`, the same search `spmcheck prove` uses) and
regenerated with `python -m spmcheck.spec.parametric.confirm`. Finding them again on every run would cost
seconds per pair (the apply-after-unlock race is 26 steps deep); replaying costs milliseconds.
If the model changes so that a stored path no longer replays, the verdict drops to `unknown`
and says so — the same contract as the stored invariants in spec/proofs/.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from ..backend import CONCRETE
from ..events import value_text
from ..model import Action, Model, backtrack
from ..properties import PROPERTIES
from ..prove import _violates as violates
from ..vocabulary import Config

CEX_DIR = Path(__file__).resolve().parent / "cex"


def cex_file(variant: str, prop: str) -> Path:
    return CEX_DIR / f"{variant}--{prop}.trace"


def _blocked_everywhere(model: Model, s: dict) -> bool:
    """properties.no_stuck_threads fails: someone is inside and nobody inside can move."""
    return not PROPERTIES["lock-order-acyclic"].state(CONCRETE, s, model)  # type: ignore[misc]


def replay_events(model: Model, lines: Sequence[str],
                  ok: Callable[[list[dict], list[Action]], bool] | None = None) -> tuple[list[dict], list[Action]] | None:
    """Replay stored event lines (`<seq> <thread> <kind> key=value...`) from Init: the static
    arguments select the action, and the observed values a line reports pick among actions that
    share them (lifecycle queue_sync drained=1/0, which may both be enabled: a queue busy at some
    instant of the drain and idle at another may have timed out or not, digest §2.9). A line
    that still names several enabled actions tries each; the path is the first that replays to
    the end and satisfies `ok`. None if no path fits. Shared by the core and lifecycle stores
    (counterexamples and witness paths)."""
    parsed = []
    for ln in lines:
        _, thread, kind, *kvs = ln.split()
        parsed.append((thread, kind, dict(kv.split("=", 1) for kv in kvs)))

    def fits(a: Action, s: dict, args: dict[str, str]) -> bool:
        return a.enabled(CONCRETE, s) and all(
            value_text(v) == args[k] for k, v in a.observed(CONCRETE, s).items() if k in args)

    got = backtrack(model, len(parsed), lambda i, s: [a for a in model.select(*parsed[i]) if fits(a, s, parsed[i][2])],
                    ok)
    return None if got is None else (got[1], got[0])


def replay(variant: str, prop: str, text: str) -> tuple[str, ...]:
    """The trace lines if `text` replays from Init and ends in a violation of `prop`, else ()."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if not lines:
        return ()
    head = dict(kv.split("=", 1) for kv in lines[0].split()[2:] if "=" in kv)
    if head.get("variant") != variant:
        return ()
    model = Model(Config(int(head["agents"]), int(head["updaters"]), int(head["lookups"])), variant)
    got = replay_events(model, lines[1:], lambda st, acts: violates(model, PROPERTIES[prop], st, acts))
    return tuple(lines) if got is not None else ()


def confirm(variant: str, prop: str) -> tuple[str, ...]:
    path = cex_file(variant, prop)
    return replay(variant, prop, path.read_text()) if path.exists() else ()


def regenerate(pairs: Sequence[tuple[str, str]], cfg: Config = Config(1, 2, 1), timeout: float = 120.0) -> list[Path]:
    """Find and store a counterexample path per pair with the fixed-size BMC."""
    from ..bmc import violation_target
    from ..events import value_text
    from ..prove import find_path

    CEX_DIR.mkdir(exist_ok=True)
    out = []
    for variant, pname in pairs:
        model = Model(cfg, variant)
        prop = PROPERTIES[pname]
        got = find_path(model, lambda m, prop=prop: violation_target(m, prop),
                        lambda st, acts, prop=prop: violates(model, prop, st, acts), timeout)
        if not isinstance(got, tuple):
            continue
        setup, race, note = got
        rows = [f"# counterexample for {pname} in {variant}, found by spec.prove.find_path ({note})",
                f"spmcheck-trace v1 variant={variant} agents={cfg.agents} updaters={cfg.updaters} "
                f"lookups={cfg.lookups} source=spec.parametric.confirm"]
        for i, a in enumerate(setup + race):
            args = "".join(f" {k}={value_text(v)}" for k, v in a.static_args().items())
            rows.append(f"{i + 1} {a.thread} {a.kind}{args}")
        p = cex_file(variant, pname)
        p.write_text("\n".join(rows) + "\n")
        out.append(p)
    return out


if __name__ == "__main__":
    from ..expected import EXPECTED

    for p in regenerate([k for k, (e, _) in EXPECTED.items() if e == "violated"]):
        print(p)
