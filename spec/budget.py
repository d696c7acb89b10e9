"""Solver budgets that do not depend on machine load.

A verdict-determining Z3 query is bounded by a resource limit (Z3's `rlimit`: a count of solver
operations, the same on an idle and on a busy machine), so the same run gives the same verdicts
whatever else the machine is doing. `--timeout T` buys `T * RLIMIT_PER_SECOND` units per
(variant, property) pair; the wall clock is kept only as a safety net (`WALL_FACTOR * T`), and a
query stopped by it is `unknown`, never a verdict.

Z3's `rlimit` counter is one cumulative counter per context; the solver parameter is relative to
the count at the start of each check, so a query's consumption is the counter's difference.
"""
from __future__ import annotations

import time

import z3

# Calibrated on the project machine (2 vCPU EPYC, z3 5.4.1): the checks of this project run at
# roughly 5-15 M units per CPU second, so 60 s of budget is ~6e8 units, several times what the
# largest stored-invariant check (~5e7) or a deep BMC query needs.
RLIMIT_PER_SECOND = 10_000_000
WALL_FACTOR = 4.0
# explicit-state search is charged to the same budget: one state visited costs about as much CPU as
# this many solver units (BFS visits ~20 k states per CPU second here), so a tiny --timeout also
# bounds it, deterministically
UNITS_PER_STATE = 500


class Budget:
    """Resource units left for one job (a pair, a ladder rung); children charge their parents."""

    def __init__(self, units: int, deadline: float, parent: "Budget | None" = None) -> None:
        self.units = max(0, int(units))
        self.deadline = deadline
        self.parent = parent
        self.used = 0

    @classmethod
    def seconds(cls, timeout: float) -> "Budget":
        return cls(int(timeout * RLIMIT_PER_SECOND), time.monotonic() + WALL_FACTOR * timeout)

    def left(self) -> int:
        return max(0, self.units - self.used)

    def part(self, divisor: float) -> "Budget":
        """A share of what is left (the caller's remaining work gets the rest)."""
        return Budget(int(self.left() / divisor), self.deadline, self)

    def charge(self, n: int) -> None:
        b: Budget | None = self
        while b is not None:
            b.used += n
            b = b.parent

    def exhausted(self) -> str:
        """Why no further query can run ('' if one can)."""
        if self.left() <= 0:
            return "resource budget exhausted (rlimit)"
        if time.monotonic() >= self.deadline:
            return "wall-clock safety net reached"
        return ""

    def check(self, solver: z3.Solver, *assumptions: z3.ExprRef) -> tuple[z3.CheckSatResult, str]:
        """solver.check under this budget: (result, reason for unknown)."""
        why = self.exhausted()
        if why:
            return z3.unknown, why
        left = self.left()
        solver.set("rlimit", left)
        solver.set("timeout", max(1, int(min(self.deadline - time.monotonic(), 2e6) * 1000)))
        before = _count(solver)
        r = solver.check(*assumptions)
        used = _count(solver) - before
        self.charge(used)
        if r != z3.unknown:
            return r, ""
        if used >= left:
            return r, "resource budget exhausted (rlimit)"
        if time.monotonic() >= self.deadline:
            return r, "wall-clock safety net reached"
        return r, solver.reason_unknown() or "unknown"


def _count(solver: z3.Solver) -> int:
    got = _rlimit(solver.statistics())
    if got is None:
        # a tactic solver (BMC's bit-blasting one) reports no counters before its first check;
        # the counter is the context's, which a plain solver of the same context reads
        st = z3.Solver(ctx=solver.ctx).statistics()
        got = _rlimit(st)
        if got is None:
            return int(st.get_key_value("rlimit count"))  # raises: no counter at all
    return got


def _rlimit(st: z3.Statistics) -> int | None:
    """The `rlimit count` statistic, None if absent. Statistics.keys() and get_key_value scan every
    key from the front through the C API (~60 calls each, and this runs twice per check: a check
    per action made it a tenth of the stored-invariant re-check); the counter sits near the end
    of the list, so it is looked for from the end."""
    ref, stats = st.ctx.ref(), st.stats
    for i in range(len(st) - 1, -1, -1):
        if z3.Z3_stats_get_key(ref, stats, i) == "rlimit count":
            if z3.Z3_stats_is_uint(ref, stats, i):
                return int(z3.Z3_stats_get_uint_value(ref, stats, i))
            return int(z3.Z3_stats_get_double_value(ref, stats, i))
    return None


def as_budget(x: "float | Budget") -> Budget:
    return x if isinstance(x, Budget) else Budget.seconds(float(x))
