"""Lifecycle traces (format v1, `model=lifecycle` header): header text for a configuration, the
configuration a header names, and a prover counterexample rendered as a trace the checker replays.

The counterexample's steps already carry their static keys and observed values in trace order
(spec.prove.render), so a trace line is just `<seq> <thread> <kind> key=value...`.
"""
from __future__ import annotations

from ..events import Event, LifecycleHeader, render_event, render_header
from ..results import ProofResult
from .properties import LPROPERTIES, scenario
from .vocabulary import LConfig

MODEL = "lifecycle"


def header_record(cfg: LConfig, variant: str, meta: tuple[tuple[str, str], ...] = ()) -> LifecycleHeader:
    return LifecycleHeader(1, variant, cfg.agents, cfg.contexts, cfg.tools, cfg.dispatches, cfg.max_ids,
                           int(cfg.timeouts), int(cfg.deactivate), int(cfg.destroy), meta, model_name=MODEL)


def header_for(cfg: LConfig, variant: str, meta: tuple[tuple[str, str], ...] = ()) -> str:
    """The header line (without newline); `meta` values must match `[A-Za-z0-9_.,:-]+`."""
    return render_header(header_record(cfg, variant, meta))


def config_of(h: LifecycleHeader) -> LConfig:
    """The model size a (validated) lifecycle header names."""
    return LConfig(h.agents, h.contexts, h.tools, h.dispatches, h.max_ids, bool(h.timeouts),
                   bool(h.deactivate), bool(h.destroy))


def cex_trace(result: ProofResult, cfg: LConfig) -> str:
    """A lifecycle counterexample as a trace. The header uses the property's scenario of `cfg`
    (the prover ran that configuration; replaying it at another size could change observed values),
    and names the property and variant as provenance. Raises ValueError without a counterexample."""
    if result.counterexample is None:
        raise ValueError(f"{result.variant} / {result.property}: verdict {result.verdict}, no counterexample")
    pcfg = scenario(cfg, result.property) if result.property in LPROPERTIES else cfg
    meta = (("source", "spmcheck-cex"), ("property", result.property), ("verdict", result.verdict))
    lines = [header_for(pcfg, result.variant, meta)]
    for i, st in enumerate(result.counterexample):
        lines.append(render_event(Event(i + 1, st.thread, st.action, st.args)))
    return "\n".join(lines) + "\n"
