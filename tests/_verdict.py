"""Verdict of a recorded trace for the runtime tests, from the real checker (checker.replay)."""
from __future__ import annotations

import io

from spmcheck.checker.replay import check_stream


def verdict(text: str) -> tuple[str, str | None]:
    """("ok", None) if accepted, else (verdict name, property or problem code)."""
    r = check_stream(io.BytesIO(text.encode()), "<recorded>")
    if r.verdict.value == "accepted":
        return "ok", None
    return r.verdict.value, (r.prop or f"{r.code}: {r.message}")
