"""Expected lifecycle verdicts per (variant, property), each with the reason it rests on.

Default: every property is proved for every variant; the rows below list the violations each
variant's bug is expected to produce, and the findings expected in the final design."""
from __future__ import annotations

_PROVED = ("proved", "the variant leaves this part of the protocol as in the final design")

VIOLATED: dict[tuple[str, str], str] = {}

FINDING_REASON: dict[str, str] = {}


def expected(variant: str, prop: str) -> tuple[str, str]:
    if (variant, prop) in VIOLATED:
        return "violated", VIOLATED[(variant, prop)]
    if prop in FINDING_REASON:
        return "violated", FINDING_REASON[prop]
    return _PROVED
