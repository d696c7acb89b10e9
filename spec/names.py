"""Names a user types: P-number aliases (P1..P9, as the README and the review use them), the
short labels of the verdict matrix, and "did you mean" suggestions naming distinct candidates."""
from __future__ import annotations

import difflib
from typing import Sequence

# P-number -> property name (the same name in both models where both have it: P1, P5)
ALIASES: dict[str, str] = {
    "P1": "serializer-mirrors-refcount",
    "P2": "creation-consistent",
    "P3": "no-unserialized-dispatch-while-enabled",
    "P4": "in-flight-completion-delivered",
    "P4m": "map-empty-after-drain",
    "P5": "lock-order-acyclic",
    "LD": "lock-discipline",  # issue 15: every shared access under the lock that protects it
    "P6": "tags-disjoint",
    "P7": "agent-scoping",
    "P8": "spm-contexts-disjoint",
    "P9": "refcount-balanced",
    "gate": "unrelated-queues-batched",
}
LABELS: dict[str, str] = {v: k for k, v in ALIASES.items()}


def label(prop: str) -> str:
    """`P8` for spm-contexts-disjoint; the name itself for properties without a P-number."""
    return LABELS.get(prop, prop)


def resolve(name: str) -> str:
    """A P-number alias (case-insensitive: p8, P8, p4M) to its property name; other names unchanged."""
    for k, v in ALIASES.items():
        if name.lower() == k.lower():
            return v
    return name


def closest(name: str, valid: Sequence[str], what: str) -> str:
    """`unknown variant 'finl'; did you mean 'final'?` — each candidate named once."""
    pool = list(dict.fromkeys(valid))
    near = difflib.get_close_matches(name, pool, n=3, cutoff=0.4)
    if not near:
        # a prefix or substring is a better hint than nothing ('prov' -> 'prove')
        near = [v for v in pool if v.startswith(name) or (len(name) >= 3 and name in v)][:3]
    if near:
        quoted = [f"'{n}'" for n in near]
        hint = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
        return f"unknown {what} '{name}'; did you mean {hint}?"
    return f"unknown {what} '{name}'; valid: {', '.join(pool)}"
