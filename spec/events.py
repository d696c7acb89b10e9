"""The protocol alphabet as data: one Event per trace line (format v1, see traces/FORMAT.md).

Shared by the prover (counterexamples are rendered as Events) and the checker (the parser yields
Events). Argument values are kept as their text (`"all"`, `"0,1"`, `"serializer.0"`, `"3"`), and
compared with the model's values through `value_text`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True, slots=True)
class Header:
    """Header of a core trace (threads u*/l*): `spmcheck-trace v1 variant=V agents=N updaters=N ...`."""

    version: int
    variant: str
    agents: int
    updaters: int
    lookups: int
    meta: tuple[tuple[str, str], ...] = ()
    file: str = ""
    line: int = 0

    @property
    def model(self) -> str:
        # a core header carries no `model=` key; the property lets callers dispatch on both types
        return "core"


@dataclass(frozen=True, slots=True)
class LifecycleHeader:
    """Header of a lifecycle trace (threads t*/d0/h0, spec.lifecycle):
    `spmcheck-trace v1 model=lifecycle variant=V agents=N contexts=N tools=N dispatches=N max_ids=N
    timeouts=B deactivate=B destroy=B key=value...`. A separate type (not new fields on Header) so
    every positional `Header(...)` call of the core keeps its meaning."""

    version: int
    variant: str
    agents: int
    contexts: int
    tools: int
    dispatches: int
    max_ids: int
    # scenario switches as written (0/1); kept as numbers so a bad value reaches the checker's
    # TRC015 instead of being coerced here
    timeouts: int
    deactivate: int
    destroy: int
    meta: tuple[tuple[str, str], ...] = ()
    file: str = ""
    line: int = 0
    model_name: str = "lifecycle"  # the `model=` value as written (validated by the checker)

    @property
    def model(self) -> str:
        return self.model_name


AnyHeader = Union[Header, LifecycleHeader]

# Complete-run marker (format v1 extension, traces/FORMAT.md): a writer that promises to end every
# finished run with `<seq> run_end` says so in its header with `end_marker=1`.
END_KIND = "run_end"
END_MARKER_KEY = "end_marker"


@dataclass(frozen=True, slots=True)
class RunEnd:
    """`<seq> run_end`: the writer finished the run; no event after it was lost."""

    seq: int
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)


def promises_end(h: "AnyHeader") -> bool:
    """Whether the header's writer ends every finished run with a run_end line."""
    return any(k == END_MARKER_KEY and v == "1" for k, v in h.meta)


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    thread: str
    kind: str
    args: tuple[tuple[str, str], ...]
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    def arg(self, key: str) -> str | None:
        for k, v in self.args:
            if k == key:
                return v
        return None


def value_text(v: object) -> str:
    """How a model value is written in a trace: bools as 0/1, ints in decimal, names as-is."""
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def render_header(h: AnyHeader) -> str:
    extra = "".join(f" {k}={v}" for k, v in h.meta)
    if isinstance(h, LifecycleHeader):
        return (f"spmcheck-trace v{h.version} model={h.model_name} variant={h.variant} agents={h.agents} "
                f"contexts={h.contexts} tools={h.tools} dispatches={h.dispatches} max_ids={h.max_ids} "
                f"timeouts={int(h.timeouts)} deactivate={int(h.deactivate)} destroy={int(h.destroy)}{extra}")
    return (f"spmcheck-trace v{h.version} variant={h.variant} agents={h.agents} "
            f"updaters={h.updaters} lookups={h.lookups}{extra}")


def render_event(e: Event) -> str:
    args = "".join(f" {k}={v}" for k, v in e.args)
    return f"{e.seq} {e.thread} {e.kind}{args}"
