"""Swim-lane diagrams as inline SVG: one lane per thread (time runs down), a box per step, lock
holdings as bars beside the lane, the failing step highlighted (and the steps that last wrote
what it read, for a rejected trace), the state after each step on hover (<title>)."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence

from .cex import CexView, action_text, change_text

ROW, LANE, TOP, LEFT, BAR = 24, 250, 44, 54, 7


@dataclass(frozen=True)
class Row:
    index: int  # step number (counterexample) or trace line
    thread: str
    label: str
    detail: str = ""  # state change, drawn under the label
    hover: str = ""  # full text on hover
    mark: str = ""  # "" | "fail" | "evidence" | "setup"


@dataclass(frozen=True)
class Bar:
    thread: str
    lock: str
    first: int  # row position (0-based) where the lock is taken
    last: int  # row position where it is released (inclusive)


@dataclass(frozen=True)
class Lanes:
    title: str
    threads: tuple[str, ...]
    rows: tuple[Row, ...]
    bars: tuple[Bar, ...] = ()


def from_cex(v: CexView, title: str) -> Lanes:
    rows: list[Row] = []
    pos: dict[int, int] = {}
    if v.setup:
        start = ", ".join(f"{n}={val}" for n, val in v.start) or "the initial state"
        rows.append(Row(0, v.threads[0], f"{v.setup} setup steps", "start state: " + start,
                        "calls run one at a time to reach the start state:\n" + start, "setup"))
    for i, s in enumerate(v.steps):
        if s.setup:
            continue
        pos[s.index] = len(rows)
        state = "\n".join(f"{n} = {val}" for n, val in v.states[i] if not n.startswith(("pc.", "lk.")))
        hover = f"step {s.index}: {s.thread} {action_text(s)}\n" + (f"changes: {change_text(s)}\n" if s.changes else "") \
            + "state after this step:\n" + state
        rows.append(Row(s.index, s.thread, action_text(s), change_text(s), hover,
                        "fail" if s.index == v.failing.index else ""))
    bars = []
    first_row, last_row = (min(pos.values()), max(pos.values())) if pos else (0, 0)
    for h in v.holdings:
        if (h.last and h.last <= v.setup) or h.thread not in v.threads:
            continue  # taken and released during setup, or by a thread that only ran setup calls
        a = pos.get(h.first, first_row) if h.first > v.setup else first_row
        b = pos.get(h.last, last_row) if h.last else last_row
        bars.append(Bar(h.thread, f"{h.lock}({'w' if h.mode == 'exclusive' else 'r'})", a, b))
    return Lanes(title, v.threads, tuple(rows), tuple(bars))


def from_trace(events: Sequence[object], fail_line: int, evidence: Sequence[int], title: str,
               why: str = "") -> Lanes:
    """A rejected trace's last events up to the failing line (Event records from checker.parse)."""
    from .cex import _thread_key

    evs = list(events)
    threads = tuple(sorted({e.thread for e in evs}, key=_thread_key))  # type: ignore[attr-defined]
    rows, bars, open_ = [], [], {}
    for e in evs:
        args = " ".join(f"{k}={v}" for k, v in e.args)  # type: ignore[attr-defined]
        kind = e.kind  # type: ignore[attr-defined]
        d = dict(e.args)  # type: ignore[attr-defined]
        label = f"{kind} {args}".strip()
        if kind in ("lock_acquire", "lock_release") and "lock" in d:
            mode = {"shared": "r", "exclusive": "w"}.get(d.get("mode", ""), "")
            label = f"{'acquire' if kind == 'lock_acquire' else 'release'} {d['lock']}({mode})"
            key = (e.thread, d["lock"], mode)  # type: ignore[attr-defined]
            if kind == "lock_acquire":
                open_[key] = len(rows)
            elif key in open_:
                bars.append(Bar(key[0], f"{key[1]}({mode})", open_.pop(key), len(rows)))
        mark = "fail" if e.line == fail_line else "evidence" if e.line in evidence else ""  # type: ignore[attr-defined]
        hover = f"line {e.line}: {e.seq} {e.thread} {kind} {args}" + (  # type: ignore[attr-defined]
            f"\n{why}" if mark == "fail" and why else "")
        rows.append(Row(e.line, e.thread, label, "", hover, mark))  # type: ignore[attr-defined]
    bars += [Bar(k[0], f"{k[1]}({k[2]})", i, max(len(rows) - 1, i)) for k, i in open_.items()]
    return Lanes(title, threads, tuple(rows), tuple(bars))


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def render(l: Lanes, ident: str) -> str:
    lane_x = {t: LEFT + i * LANE for i, t in enumerate(l.threads)}
    width = LEFT + LANE * len(l.threads) + 10
    ys, y = [], TOP
    for r in l.rows:
        ys.append(y)
        y += ROW + (ROW // 2 if r.detail else 0)
    height = y + 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="swimlane" id="{escape(ident)}" role="img" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" data-steps="{len(l.rows)}">',
           f"<title>{escape(l.title)}</title>"]
    for t, x in lane_x.items():
        out.append(f'<rect class="lane" x="{x}" y="{TOP - 8}" width="{LANE - 12}" height="{height - TOP}" />')
        out.append(f'<text class="lanehead" x="{x + 6}" y="{TOP - 16}">{escape(t)}</text>')
    slots: dict[str, int] = {}
    for b in l.bars:
        k = slots.get(b.thread, 0)
        slots[b.thread] = k + 1
        x = lane_x.get(b.thread, LEFT) + LANE - 13 - (k % 2 + 1) * (BAR + 2)
        y0 = ys[b.first] - 4 if b.first < len(ys) else TOP
        y1 = (ys[b.last] + ROW - 6) if b.last < len(ys) else height - 16
        out.append(f'<rect class="lock" x="{x}" y="{y0}" width="{BAR}" height="{max(y1 - y0, 6)}">'
                   f"<title>{escape(b.thread)} holds {escape(b.lock)}</title></rect>")
    for r, y in zip(l.rows, ys):
        x = lane_x.get(r.thread, LEFT)
        cls = f"step {r.mark}".strip()
        out.append(f'<g class="{cls}"><title>{escape(r.hover or r.label)}</title>')
        out.append(f'<text class="idx" x="{LEFT - 8}" y="{y + 12}" text-anchor="end">{r.index or ""}</text>')
        out.append(f'<rect x="{x + 2}" y="{y - 4}" width="{LANE - 34}" height="{ROW - 4 + (ROW // 2 if r.detail else 0)}" rx="3" />')
        out.append(f'<text x="{x + 6}" y="{y + 11}">{escape(_clip(r.label, 32))}</text>')
        if r.detail:
            out.append(f'<text class="detail" x="{x + 6}" y="{y + 11 + ROW // 2 + 1}">{escape(_clip(r.detail, 34))}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)
