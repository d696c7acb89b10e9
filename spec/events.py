"""The protocol alphabet as data: one Event per trace line (format v1, see traces/FORMAT.md).

Shared by the prover (counterexamples are rendered as Events) and the checker (the parser yields
Events). Argument values are kept as their text (`"all"`, `"0,1"`, `"serializer.0"`, `"3"`), and
compared with the model's values through `value_text`.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Header:
    version: int
    variant: str
    agents: int
    updaters: int
    lookups: int
    meta: tuple[tuple[str, str], ...] = ()
    file: str = ""
    line: int = 0


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


def render_header(h: Header) -> str:
    extra = "".join(f" {k}={v}" for k, v in h.meta)
    return (f"spmcheck-trace v{h.version} variant={h.variant} agents={h.agents} "
            f"updaters={h.updaters} lookups={h.lookups}{extra}")


def render_event(e: Event) -> str:
    args = "".join(f" {k}={v}" for k, v in e.args)
    return f"{e.seq} {e.thread} {e.kind}{args}"
