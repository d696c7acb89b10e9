"""The race behind a P1 / P2 violation of the core, cited by the trace lines it is made of.

The checker knows *that* a property failed and where; a reader of a real run wants the lines of
the race: for a stale lookup the refcount read, the update that changed the count after it and the
insert made from the stale value; for an apply-after-unlock the crossed updates (whose count
changes came in one order) and the late apply (their transitions in the other), with the agent
and the counts; in the pre-refcount era (G0, no count on the lines) the stop or start whose
apply disagrees with the contexts still holding. This module finds them in the events up to the failing line. It reads only what
every core trace states on its lines (refcount_change old/new, refcount_read count,
serializer_insert/enable/disable, update_begin/end, lookup_begin), so it serves v1 and v2 alike
and never re-derives the verdict: it is called after the replay has rejected the trace.
(checker/render/cex.py highlights the same two races on a counterexample, from its state-change
records; a trace has events, not state changes, hence this separate reading.)
"""
from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, replace
from typing import Iterable

from .render.cex import P1_NAME, P2_NAME
from .results import Evidence, FileResult, Race, Verdict

ALL = "all"
WINDOW = 100_000  # events of these kinds kept before the failing line (older ones only count)


@dataclass(frozen=True)
class _Ev:
    line: int
    text: str
    thread: str
    kind: str
    args: dict[str, str]


_KINDS = frozenset(("update_begin", "update_end", "lookup_begin", "lookup_end", "refcount_change", "refcount_read",
                    "serializer_insert", "serializer_enable", "serializer_disable", "flag_store",
                    "lock_acquire", "lock_release"))  # of the refcount lock only (see _event)


def _event(n: int, text: str) -> _Ev | None:
    parts = text.split()
    if len(parts) < 3 or not parts[0].isdigit() or parts[2] not in _KINDS:
        return None
    args = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
    if parts[2] in ("lock_acquire", "lock_release") and args.get("lock") != "refcount":
        return None
    return _Ev(n, text, parts[1], parts[2], args)


def _int(v: str | None) -> int:
    try:
        return int(v or 0)
    except ValueError:
        return 0


def _touches(e: _Ev, agent: str) -> bool:
    """A refcount_change that changes refcount(agent) = rc[all] + rc[agent]."""
    return e.kind == "refcount_change" and e.args.get("agent") in (agent, ALL)


def _covers(update_begin: _Ev, agent: str) -> bool:
    """An update_begin whose agent set (`all` or a list in any order) includes `agent`."""
    got = update_begin.args.get("agents", "")
    return got == ALL or agent in got.split(",")


def _delta(e: _Ev) -> int:
    return _int(e.args.get("new")) - _int(e.args.get("old"))


def _change(e: _Ev, agent: str, before: int) -> str:
    scope = f"refcount({agent})" if e.args.get("agent") != ALL else f"the 'all' count (refcount({agent}))"
    return f"{e.thread} changed {scope} {before}->{before + _delta(e)} at line {e.line}"


class _State:
    """Counters and entries as the events state them, replayed up to the failing line."""

    def __init__(self) -> None:
        self.rc: dict[str, int] = {}
        self.entry: dict[str, bool] = {}  # agent -> enabled (present: the entry exists)
        self.last_apply: dict[str, _Ev] = {}
        self.open_update: dict[str, _Ev] = {}  # thread -> its update_begin, while inside the call
        self.rc_writer: str | None = None  # the thread holding the refcount lock exclusively

    def count(self, agent: str) -> int:
        return self.rc.get(ALL, 0) + self.rc.get(agent, 0)

    def step(self, e: _Ev) -> None:
        a = e.args.get("agent", "")
        if e.kind == "refcount_change":
            self.rc[a] = _int(e.args.get("new"))
        elif e.kind == "serializer_insert" and e.args.get("created") == "1":
            self.entry[a] = False
        elif e.kind in ("serializer_enable", "serializer_disable"):
            self.entry[a] = e.kind == "serializer_enable"
            self.last_apply[a] = e
        elif e.kind == "update_begin":
            self.open_update[e.thread] = e
        elif e.kind == "update_end":
            self.open_update.pop(e.thread, None)
        elif e.kind == "lock_acquire" and e.args.get("mode") == "exclusive":
            self.rc_writer = e.thread
        elif e.kind == "lock_release" and e.args.get("mode") == "exclusive" and self.rc_writer == e.thread:
            self.rc_writer = None


def _ev(e: _Ev, why: str) -> Evidence:
    return Evidence(e.line, e.text, why)


def _stale_read(evs: list[_Ev], ins: _Ev, base: _State) -> Race | None:
    """P2 at `ins` (a serializer_insert): the read it was made from, the updates after the read."""
    t, a = ins.thread, ins.args.get("agent", "")
    mine = [e for e in evs if e.thread == t and e.line < ins.line]
    begin = max((i for i, e in enumerate(mine) if e.kind == "lookup_begin"), default=-1)
    reads = [e for e in mine[begin + 1:] if e.kind == "refcount_read" and e.args.get("agent") == a]
    lines: list[Evidence] = []
    if reads:
        r = reads[-1]
        c = _int(r.args.get("count"))
        lines.append(_ev(r, f"the read: {t} read refcount({a})={c}"))
        cur, parts = c, []
        for e in evs:
            if r.line < e.line < ins.line and e.thread != t and _touches(e, a):
                parts.append(_change(e, a, cur))
                lines.append(_ev(e, "the update: " + parts[-1].split(" at line")[0] + " after the read"))
                cur += _delta(e)
        st = copy.deepcopy(base)
        for e in evs:
            if e.line >= ins.line:
                break
            st.step(e)
        # in progress for agent a: an update of a, or any update inside W(refcount) (the pre-fix
        # update reads `was` for every supported agent under it, digest §2.2)
        busy = [u for th, u in st.open_update.items() if th != t and (_covers(u, a) or th == st.rc_writer)]
        for u in busy if not parts or cur == c else ():  # the changes after the read explain it otherwise
            ch = [e for e in evs if e.thread == u.thread and u.line < e.line < ins.line and _touches(e, a)]
            if ch and all(ch[-1].line != x.line for x in lines):
                lines.append(_ev(ch[-1], f"the update in progress: {u.thread}'s count change, not yet applied"))
            elif not ch:
                what = f"update of agent {a}" if _covers(u, a) else "update, inside W(refcount)"
                lines.append(_ev(u, f"the update in progress: {u.thread}'s {what}, begun"))
        made = "enabled" if c > 0 else "disabled"
        summary = f"stale lookup of agent {a}: {t} read refcount({a})={c} at line {r.line}"
        if parts:
            summary += "; " + "; ".join(parts)
        if busy and (not parts or cur == c):
            who = " and ".join(f"{u.thread}'s (begun at line {u.line})" for u in busy)
            summary += f"; {who} update{'s were' if len(busy) > 1 else ' was'} still in progress at the insert"
        summary += (f"; {t} inserted the entry at line {ins.line} from the stale {c} ({made}; refcount({a})={cur} "
                    f"at the insert)")
        lines.sort(key=lambda x: x.line)
        return Race("stale-read", a, summary, tuple(lines) + (_ev(ins, f"the insert, from the read of line {r.line}"),))
    flags = [e for e in evs if e.kind == "flag_store" and e.line < ins.line]
    if flags:
        w = flags[-1]
        v = w.args.get("value", "?")
        summary = (f"stale lookup of agent {a}: {t} inserted the entry at line {ins.line} from the process-wide "
                   f"flag={v} that {w.thread} stored at line {w.line}")
        return Race("stale-read", a, summary, (_ev(w, f"the flag store ({w.thread}, value={v})"),
                                               _ev(ins, "the insert, from that flag")))
    return None


def _late_apply(evs: list[_Ev], fail_line: int, base: _State) -> Race | None:
    """P1: the agent whose entry disagrees with its count, the apply that set the entry last, the
    count change it was decided from, and the other updates' changes that crossed it."""
    st = copy.deepcopy(base)
    for e in evs:
        st.step(e)
    bad = [a for a, en in st.entry.items() if en != (st.count(a) > 0) and a in st.last_apply]
    if not bad:
        return None
    a = max(bad, key=lambda x: st.last_apply[x].line)
    late = st.last_apply[a]
    t, on = late.thread, late.kind == "serializer_enable"
    now = st.count(a)
    state = "enabled" if on else "disabled"
    begins = [e for e in evs if e.thread == t and e.line < late.line and e.kind in ("update_begin", "lookup_begin")]
    call = begins[-1] if begins else None
    if call is not None and call.kind == "lookup_begin":  # a lookup's enable({}) on an existing entry
        reads = [e for e in evs if e.thread == t and call.line < e.line < late.line and e.kind == "refcount_read"]
        if reads:
            r, c = reads[-1], _int(reads[-1].args.get("count"))
            changes = [e for e in evs if r.line < e.line < late.line and e.thread != t and _touches(e, a)]
            cur, parts = c, []
            for e in changes:
                parts.append(_change(e, a, cur))
                cur += _delta(e)
            summary = (f"stale lookup of agent {a}: {t} read refcount({a})={c} at line {r.line}"
                       + ("; " + "; ".join(parts) if parts else "")
                       + f"; {t} enabled the existing entry at line {late.line} from it: serializer.{a} {state} "
                       f"while refcount({a})={now}")
            return Race("stale-read", a, summary, (_ev(r, f"the read: refcount({a})={c}"),)
                        + tuple(_ev(e, "the update after the read") for e in changes)
                        + (_ev(late, "the enable({}) on the existing entry, from the stale read"),))
    own = [e for e in evs if e.thread == t and call is not None and call.line < e.line < late.line and _touches(e, a)]
    lines: list[Evidence] = []
    before = None
    if own:
        o = own[-1]
        before = base.count(a) + sum(_delta(e) for e in evs if e.line < o.line and _touches(e, a))
        lines.append(_ev(o, f"{t}'s count change, that its apply was decided from"))
        start = o.line
    else:
        start = call.line if call is not None else 0
    crossing = [e for e in evs if start < e.line < late.line and e.thread != t and _touches(e, a)]
    applies = [e for e in evs if start < e.line < late.line and e.thread != t
               and e.kind in ("serializer_enable", "serializer_disable") and e.args.get("agent") == a]
    lines += [_ev(e, f"the crossing update: {e.thread}'s count change after {t}'s") for e in crossing]
    lines += [_ev(e, f"{e.thread}'s apply, overwritten by the late one") for e in applies]
    lines.sort(key=lambda x: x.line)
    lines.append(_ev(late, f"the late apply: {t} {'enables' if on else 'disables'} serializer.{a}"))
    if own and before is not None:
        o = own[-1]
        summary = f"apply after unlock on agent {a}: {_change(o, a, before)}"
        cur = before + _delta(o)
    else:
        summary, cur = f"serializer.{a} left {state} by {t}'s apply at line {late.line}", None
    if crossing and cur is not None:
        for e in crossing:
            summary += f"; then {_change(e, a, cur)}"
            cur += _delta(e)
        if applies:
            summary += f" (applied at line {', '.join(str(e.line) for e in applies)})"
        summary += (f"; {t}'s {'enable' if on else 'disable'} of serializer.{a} came after, at line {late.line}, "
                    f"from its own earlier change")
    elif own:
        summary += f"; {t} then {'enabled' if on else 'disabled'} serializer.{a} at line {late.line}"
    summary += f": serializer.{a} {state} while refcount({a})={now} (line {fail_line})"
    return Race("late-apply", a, summary, tuple(lines))


def _holder(e: _Ev) -> str:
    """Whose reference an update_begin moves: its context (`holder=`) or else its thread."""
    return e.args.get("holder") or e.thread


def _switch_apply(evs: list[_Ev], fail_line: int) -> Race | None:
    """P1 in the pre-refcount era (G0, `global-flag`): no count is kept, so no refcount_change is
    on the lines. The one process-wide switch follows the last start or stop: a stop disables every
    entry while another context still holds its start (or a start's enable lands after every
    holder stopped). Cited: the late apply, its call's begin and flag store, and the holders it
    disagrees with (their open starts, or the stops that ended them)."""
    last: dict[str, _Ev] = {}  # holder -> the update_begin of its latest stored start or stop
    open_: dict[str, _Ev] = {}  # thread -> its update_begin, until its flag store
    late_by_agent: dict[str, _Ev] = {}
    for e in evs:
        if e.kind == "update_begin":
            open_[e.thread] = e
        elif e.kind == "flag_store" and e.thread in open_:  # where the model moves the holder's reference
            b = open_.pop(e.thread)
            last[_holder(b)] = b
        elif e.kind in ("serializer_enable", "serializer_disable"):
            late_by_agent[e.args.get("agent", "")] = e
    bad = []
    for a, ap in late_by_agent.items():
        holding = [b for b in last.values() if _covers(b, a) and b.args.get("enable") == "1"]
        if (ap.kind == "serializer_enable") != bool(holding):
            bad.append((ap.line, a, ap, holding))
    if not bad:
        return None
    _, a, late, holding = max(bad, key=lambda x: x[0])
    t, on = late.thread, late.kind == "serializer_enable"
    begins = [e for e in evs if e.thread == t and e.line < late.line and e.kind == "update_begin"]
    call = begins[-1] if begins else None
    store = [e for e in evs if e.thread == t and e.kind == "flag_store" and call is not None
             and call.line < e.line < late.line]
    lines = ([_ev(call, f"{t}'s {'start' if on else 'stop'} (update_begin enable={call.args.get('enable')})")]
             if call is not None else [])
    lines += [_ev(w, f"the flag store: the one process-wide switch set to {w.args.get('value')}") for w in store[-1:]]
    if on:  # enabled with no holder: the stops that ended every holder of the agent
        stops = [b for b in last.values() if _covers(b, a) and b.args.get("enable") == "0" and b.thread != t]
        lines += [_ev(b, f"{_holder(b)}'s stop") for b in stops]
        why = ", ".join(f"{_holder(b)} stopped at line {b.line}" for b in sorted(stops, key=lambda b: b.line))
        summary = (f"global flag on agent {a}: {t}'s start enabled serializer.{a} at line {late.line} "
                   f"after {why or 'every holder stopped'}; no context holds agent {a} (line {fail_line})")
    else:
        lines += [_ev(b, f"{_holder(b)}'s start, still holding agent {a}") for b in holding]
        who = ", ".join(f"{_holder(b)} (started at line {b.line})" for b in sorted(holding, key=lambda b: b.line))
        at = f" stored the flag 0 at line {store[-1].line} and" if store else ""
        summary = (f"global flag on agent {a}: {t}'s stop{at} disabled serializer.{a} at line {late.line} while "
                   f"{who} still {'holds' if len(holding) == 1 else 'hold'} it: one switch for every context, "
                   f"no count (line {fail_line})")
    lines.sort(key=lambda x: x.line)
    lines.append(_ev(late, f"the apply: {t} {'enables' if on else 'disables'} serializer.{a}"))
    return Race("global-switch", a, summary, tuple(dict.fromkeys(lines)))


def cite(prop: str, lines: Iterable[tuple[int, str | None]], fail_line: int) -> Race | None:
    """The race of a P1/P2 violation at `fail_line`, from the trace's lines (number, text) in
    sequence order; None for any other property or when the lines do not show one."""
    if prop not in (P1_NAME, P2_NAME):
        return None
    evs: deque[_Ev] = deque()
    base = _State()  # the state the events before the window leave
    for n, text in lines:
        if n > fail_line:
            continue  # a reordered stream may still hold later lines; the race is before the failure
        e = _event(n, text) if text else None
        if e is not None:
            evs.append(e)
            if len(evs) > WINDOW:
                base.step(evs.popleft())
    if not evs:
        return None
    window = list(evs)
    last = window[-1] if window[-1].line == fail_line else None
    if prop == P2_NAME and last is not None and last.kind == "serializer_insert":
        return _stale_read(window, last, base)
    if not base.rc and not any(e.kind == "refcount_change" for e in window):
        return _switch_apply(window, fail_line)  # no count on the lines: the pre-refcount era (G0)
    return _late_apply(window, fail_line, base)


def attach(res: FileResult, path: str, reorder_window: int = 0) -> FileResult:
    """`res` with its race cited, reading `path` again up to the failing line (only for a core
    P1/P2 violation; the replay itself keeps no history). Standard input cannot be read twice:
    a trace checked from stdin gets no citation."""
    if res.verdict is not Verdict.VIOLATED or res.prop not in (P1_NAME, P2_NAME) or res.line <= 0:
        return res
    from .parse import read_lines
    from .sequence import reordered

    try:
        with open(path, "rb") as f:
            lines = ((n, text) for n, text, err, _ in reordered(read_lines(f), reorder_window) if err is None)
            race = cite(res.prop, lines, res.line)
    except OSError:
        return res
    if race is None:
        return res
    # the race's lines replace the generic evidence; the failing line stays last if it is not one of them
    tail = [e for e in res.evidence if e.line == res.line][-1:]
    if any(x.line == res.line for x in race.lines):
        tail = []
    return replace(res, race=race, evidence=race.lines + tuple(tail))
