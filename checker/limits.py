"""The model sizes a trace may declare: one table read by `spmcheck record` (what it may write)
and `spmcheck check` (what it accepts from a header), so a recorded log is never refused.

Core: the model has one action per agent subset, so it grows as 2^agents; lifecycle:
set_agents_check has 2^agents actions per context, and every state property walks all dispatches.
The bounds keep a replay instant. (The prover's own, smaller limits live in checker/cli.py: they
are about solver time, not about what a trace may say.)
"""
from __future__ import annotations

CORE: dict[str, tuple[int, int]] = {"agents": (1, 6), "updaters": (0, 6), "lookups": (0, 6)}
LIFECYCLE: dict[str, tuple[int, int]] = {
    "agents": (1, 4), "contexts": (1, 4), "tools": (1, 8), "dispatches": (1, 256),
    "max_ids": (0, 64), "timeouts": (0, 1), "deactivate": (0, 1), "destroy": (0, 1)}


def core_problem(agents: int, updaters: int, lookups: int) -> str | None:
    """Why a core size is out of range, or None."""
    for k, v in (("agents", agents), ("updaters", updaters), ("lookups", lookups)):
        lo, hi = CORE[k]
        if not lo <= v <= hi:
            return f"{k}={v} out of range ({lo}..{hi})"
    if updaters + lookups < 1:
        return "need at least one thread (updaters + lookups >= 1)"
    return None


def lifecycle_problem(values: dict[str, int]) -> str | None:
    """Why a lifecycle size is out of range, or None (keys of LIFECYCLE; missing keys are skipped)."""
    for k, (lo, hi) in LIFECYCLE.items():
        if k in values and not lo <= values[k] <= hi:
            return f"{k}={values[k]} out of range ({lo}..{hi})"
    return None
