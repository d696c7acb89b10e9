"""A counterexample (spec.results.CexStep records) as something a reviewer reads: the start
state, one column per thread (lockdep style), lock holdings, the failing step with its values
before/after, and a legend for every state name shown. Derived from the records only: the
verdict and the path come from the prover, nothing is re-executed here."""
from __future__ import annotations

import re
from dataclasses import dataclass

from spec.results import CexStep, ProofResult

from .legend import legend

_LOCK_VAR = re.compile(r"lk\.(?P<lock>[a-z_]+(?:\.\d+)?)\.(?P<mode>[wr])\.(?P<thread>\w+)\Z")
_START_CAP = 14  # start-state variables shown in text (the report shows all)


@dataclass(frozen=True)
class Holding:
    thread: str
    lock: str
    mode: str  # "exclusive" | "shared"
    first: int  # index of the step that acquired it (0: held at the start)
    last: int  # index of the step that released it (0: still held at the end)


@dataclass(frozen=True)
class CexView:
    model: str  # "core" | "lifecycle"
    variant: str
    property: str
    reason: str
    steps: tuple[CexStep, ...]
    threads: tuple[str, ...]
    setup: int  # leading setup steps
    start: tuple[tuple[str, str], ...]  # (variable, value) at the start state worth showing
    states: tuple[tuple[tuple[str, str], ...], ...]  # after each step: every variable the path touches
    holdings: tuple[Holding, ...]

    @property
    def failing(self) -> CexStep:
        return self.steps[-1]

    def names(self) -> list[str]:
        """Every state name the rendering shows (for the legend)."""
        out = [n for n, _ in self.start]
        for s in self.steps:
            out += [n for n, _, _ in s.changes if not _hidden(n)]
        return out


def _hidden(name: str) -> bool:
    # program counters and lock bits are drawn as columns and bars, not listed as changes
    return name.startswith(("pc.", "lk."))


def _thread_key(t: str) -> tuple[int, str, int]:
    order = {"u": 0, "t": 0, "l": 1, "d": 1, "h": 2}
    m = re.match(r"([a-z]+)(\d+)\Z", t)
    return (order.get(t[:1], 3), m.group(1) if m else t, int(m.group(2)) if m else 0)


def view(r: ProofResult, model: str) -> CexView:
    if r.counterexample is None:
        raise ValueError(f"{r.variant} / {r.property}: no counterexample")
    steps = r.counterexample
    # setup-only threads get no column: their calls are summarised as the start state
    active = {s.thread for s in steps if not s.setup} or {s.thread for s in steps}
    threads = tuple(sorted(active, key=_thread_key))
    initial: dict[str, str] = {}
    for s in steps:
        for n, before, _ in s.changes:
            initial.setdefault(n, before)
    cur = dict(initial)
    states = []
    holdings: list[Holding] = []
    open_: dict[tuple[str, str, str], int] = {}
    setup = sum(1 for s in steps if s.setup)
    for s in steps:
        for n, before, after in s.changes:
            cur[n] = after
            m = _LOCK_VAR.match(n)
            if m:
                key = (m["thread"], m["lock"], "exclusive" if m["mode"] == "w" else "shared")
                if after not in ("0", "false", "False") and key not in open_:
                    open_[key] = s.index
                elif after in ("0", "false", "False") and key in open_:
                    holdings.append(Holding(*key, open_.pop(key), s.index))
            elif n == "mtx" and model == "lifecycle":
                _mutex(holdings, open_, (before, after), s.index)
        states.append(tuple(sorted(cur.items())))
    holdings += [Holding(*k, i, 0) for k, i in open_.items()]
    if setup:
        # after setup: what the setup established (values that differ from the initial state)
        start = {k: v for k, v in dict(states[setup - 1]).items() if v != initial[k] and not _hidden(k)}
    else:
        start = {k: v for k, v in initial.items() if not _hidden(k)}
    return CexView(model, r.variant, r.property, r.reason, steps, threads, setup,
                   tuple(sorted(start.items())), tuple(states),
                   tuple(sorted(holdings, key=lambda h: (h.first, h.thread, h.lock))))


def _mutex(holdings: list[Holding], open_: dict[tuple[str, str, str], int],
           before_after: tuple[str, str], at: int) -> None:
    """The lifecycle's contexts mutex is one variable: 0 free, i+1 held by tool thread t<i>."""
    before, after = before_after
    if before not in ("0", "") and before.isdigit():
        key = (f"t{int(before) - 1}", "contexts", "exclusive")
        if key in open_:
            holdings.append(Holding(*key, open_.pop(key), at))
    if after.isdigit() and after != "0":
        open_[(f"t{int(after) - 1}", "contexts", "exclusive")] = at


def action_text(s: CexStep) -> str:
    """Short text of one step for a thread's column."""
    args = dict(s.args)
    if s.action in ("lock_acquire", "lock_release") and "lock" in args:
        mode = {"shared": "r", "exclusive": "w"}.get(args.get("mode", ""), args.get("mode", ""))
        verb = "acquire" if s.action == "lock_acquire" else "release"
        return f"{verb} {args['lock']}({mode})"
    a = " ".join(f"{k}={v}" for k, v in s.args)
    return f"{s.action} {a}".rstrip()


def failing_reason(v: CexView) -> str:
    """The failing step's values before/after; for a step that changes only control state (a
    thread leaving a call, so the property's condition starts to apply), the state after it."""
    f = v.failing
    ch = "; ".join(f"{n} {o} -> {w}" for n, o, w in f.changes if not _hidden(n))
    if ch:
        return ch
    after = ", ".join(f"{n}={val}" for n, val in v.states[-1] if not _hidden(n))
    return (f"no data changes: {f.thread} moves on (control state only), so the property's condition now "
            f"applies to the state after it: {after}")


def change_text(s: CexStep) -> str:
    return ", ".join(f"{n}: {o}->{w}" for n, o, w in s.changes if not _hidden(n))


def text(v: CexView, prop_label: str = "", cap_width: int = 34) -> list[str]:
    """Counterexample as text lines: start state, thread columns, failing step, legend."""
    out = []
    if v.setup:
        out.append(f"  start state, reached by {v.setup} setup steps (calls run one at a time, not shown):")
    else:
        out.append("  start state: the initial state; the variables this path changes start at:")
    shown = [f"{n}={val}" for n, val in v.start]
    if len(shown) > _START_CAP:
        shown = shown[:_START_CAP] + [f"... {len(shown) - _START_CAP} more"]
    out.append("    " + (", ".join(shown) if shown else "(nothing differs from the initial state)"))
    width = {t: max([len(t)] + [min(len(action_text(s)), cap_width) for s in v.steps if s.thread == t and not s.setup])
             for t in v.threads}
    head = "  step  " + "  ".join(t.ljust(width[t]) for t in v.threads)
    out.append(head.rstrip())
    last = v.failing.index
    starts = {}
    col = 8
    for t in v.threads:
        starts[t] = col
        col += width[t] + 2
    for s in v.steps:
        if s.setup:
            continue
        cells = []
        for t in v.threads:
            txt = action_text(s) if s.thread == t else ""
            if len(txt) > cap_width:
                txt = txt[:cap_width - 1] + "~"
            cells.append(txt.ljust(width[t]))
        mark = ">>" if s.index == last else "  "
        out.append((f"{mark}{s.index:>4}  " + "  ".join(cells)).rstrip())
        ch = change_text(s)
        if ch:
            # the state change goes under the thread's own column, so the columns stay readable
            out.append(" " * (starts[s.thread] + 2) + ch)
    f = v.failing
    what = prop_label or v.property
    before_after = failing_reason(v)
    out.append(f"  >> step {f.index} ({f.thread} {action_text(f)}) violates {what}: {before_after}")
    if v.holdings:
        held = [f"{h.thread} {h.lock}({'w' if h.mode == 'exclusive' else 'r'}) {h.first or 'start'}-{h.last or 'end'}"
                for h in v.holdings if h.last == 0 or h.last > v.setup]
        if held:
            out.append("  locks held (thread lock(mode) from-to step): " + ", ".join(held))
    names = [n for n in v.names()]
    if names:
        out.append("  legend:")
        out += [f"    {n:12} {m}" for n, m in legend(names, v.model)]
    return out
