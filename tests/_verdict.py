"""Verdict of a recorded trace for the runtime tests (temporary: test-only model replay)."""
from __future__ import annotations

from ._model_replay import replay


def verdict(text: str) -> tuple[str, str | None]:
    return replay(text)
