"""Swim-lane diagrams as inline SVG: one lane per thread (time runs down), a box per step, lock
holdings as bars beside the lane, the failing step highlighted (and the steps that last wrote
what it read, for a rejected trace), the state after each step on hover (<title>).

A counterexample's lanes also show what went stale (checker.render.cex.highlights): a band over
the steps from where the state went stale to the failing step (across every lane for shared
state, in one lane for a thread's read, access or held locks), the steps it singles out marked,
a stale read linked to where it is used, the band's words beside it and a legend entry below.
Bands carry `data-kind`, `data-first` and `data-last` (step numbers) for tools and tests."""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence

from .cex import CexView, Highlight, action_text, change_text, highlights
from .legend import MARKS, highlight_meaning

ROW, LANE, TOP, LEFT, BAR = 24, 250, 44, 54, 7
# gutter for the bands' words, characters per line, legend row, marks' margin
NOTE, NOTE_CHARS, LEG, MARGIN = 330, 48, 18, 62
# band colours per highlight kind (attributes, so the picture reads the same outside report.html)
COLOUR = {"stale-state": "#e67e22", "stale-read": "#8e44ad", "unprotected": "#c0392b", "stuck": "#d35400",
          "changed": "#b7950b"}


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
class Band:
    """A highlight placed on the rows: row positions (0-based), like Bar."""
    h: Highlight
    first: int
    last: int
    marks: tuple[tuple[int, str], ...] = ()  # (row, role)
    link: tuple[int, int] | None = None  # (row, row)


@dataclass(frozen=True)
class Lanes:
    title: str
    threads: tuple[str, ...]
    rows: tuple[Row, ...]
    bars: tuple[Bar, ...] = ()
    bands: tuple[Band, ...] = ()


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

    def row_of(index: int) -> int:
        # a step run during setup (or the start state, 0) is drawn as the setup row / first row
        return pos.get(index, 0 if v.setup and index <= v.setup else first_row)

    bands = []
    for hl in highlights(v):
        if hl.thread and hl.thread not in v.threads:
            hl = Highlight(hl.kind, hl.first, hl.last, hl.text, "", hl.marks, hl.link)
        marks = tuple((pos[i], role) for i, role in hl.marks if i in pos)
        link = (row_of(hl.link[0]), row_of(hl.link[1])) if hl.link else None
        bands.append(Band(hl, row_of(hl.first), row_of(hl.last), marks, link))
    return Lanes(title, v.threads, tuple(rows), tuple(bars), tuple(bands))


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


def _wrap(text: str, n: int) -> list[str]:
    lines, cur = [], ""
    for w in text.split():
        if cur and len(cur) + 1 + len(w) > n:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return lines + ([cur] if cur else [])


def _row_box(ys: list[int], rows: tuple[Row, ...], i: int) -> tuple[int, int]:
    """(top, bottom) y of the step box at row i."""
    return ys[i] - 4, ys[i] - 4 + ROW - 4 + (ROW // 2 if rows[i].detail else 0)


def _bands(l: Lanes, ident: str, ys: list[int], lane_x: dict[str, int],
           lanes_end: int, left: int) -> tuple[list[str], list[str], int]:
    """SVG of the bands (drawn behind the steps), of their marks, links and words (in front), and
    the y where the last words end."""
    back, front = [], []
    note_y = 0
    for k, b in enumerate(l.bands):
        if not ys:
            break
        c = COLOUR.get(b.h.kind, "#e67e22")
        y0, y1 = _row_box(ys, l.rows, b.first)[0] - 3, _row_box(ys, l.rows, b.last)[1] + 3
        x0, x1 = (lane_x[b.h.thread] - 2, lane_x[b.h.thread] + LANE - 10) if b.h.thread in lane_x else (left - 4, lanes_end)
        tip = escape(f"{highlight_meaning(b.h.kind)}\n{b.h.text}")
        back.append(f'<rect class="stale {escape(b.h.kind)}" data-kind="{escape(b.h.kind)}" data-first="{b.h.first}" '
                    f'data-last="{b.h.last}" data-thread="{escape(b.h.thread)}" x="{x0}" y="{y0}" width="{x1 - x0}" '
                    f'height="{y1 - y0}" fill="{c}" fill-opacity="0.16" stroke="{c}" stroke-width="1.5" '
                    f'stroke-dasharray="5 3" rx="4"><title>{tip}</title></rect>')
        # the words, in the gutter right of the lanes, with a bracket over the band's rows
        gx = lanes_end + 14
        lines = _wrap(b.h.text, NOTE_CHARS)
        ty = max(y0 + 12, note_y)
        note_y = ty + 13 * len(lines) + 8
        front.append(f'<g class="stalenote" data-band="{k}"><title>{tip}</title>'
                     f'<path d="M{lanes_end + 2},{y0} h6 V{y1} h-6" fill="none" stroke="{c}" stroke-width="2" />'
                     + "".join(f'<text x="{gx}" y="{ty + 13 * j}" fill="{c}">{escape(t)}</text>' for j, t in enumerate(lines))
                     + "</g>")
        for row, role in b.marks:
            r = l.rows[row]
            mx = lane_x.get(r.thread, left)
            top, bot = _row_box(ys, l.rows, row)
            front.append(f'<g class="mark {escape(role)}" data-step="{r.index}"><title>{escape(MARKS.get(role, role))}: '
                         f'step {r.index}</title><rect x="{mx}" y="{top - 2}" width="{LANE - 30}" '
                         f'height="{bot - top + 4}" rx="4" fill="none" stroke="{c}" stroke-width="2.5" />'
                         f'<text x="4" y="{top + 12}" fill="{c}" font-size="9">{escape(MARKS.get(role, role))}</text></g>')
        if b.link and b.link[0] != b.link[1]:
            (ra, rb) = b.link
            xa, xb = lane_x.get(l.rows[ra].thread, left) + 2, lane_x.get(l.rows[rb].thread, left) + 2
            ya, yb = sum(_row_box(ys, l.rows, ra)) // 2, sum(_row_box(ys, l.rows, rb)) // 2
            bend = min(xa, xb) - 26 if xa == xb else (xa + xb) // 2
            front.append(f'<path class="link" data-from="{l.rows[ra].index}" data-to="{l.rows[rb].index}" '
                         f'd="M{xa},{ya} C{bend},{ya} {bend},{yb} {xb},{yb}" fill="none" stroke="{c}" stroke-width="2" '
                         f'marker-end="url(#{escape(ident)}-arrow-{k})" />')
            front.append(f'<defs><marker id="{escape(ident)}-arrow-{k}" viewBox="0 0 10 10" refX="9" refY="5" '
                         f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
                         f'<path d="M0,0 L10,5 L0,10 z" fill="{c}" /></marker></defs>')
    return back, front, note_y


def render(l: Lanes, ident: str) -> str:
    # a counterexample with highlights gets a wider left margin, for the marks' words
    left = LEFT + (MARGIN if l.bands else 0)
    lane_x = {t: left + i * LANE for i, t in enumerate(l.threads)}
    lanes_end = left + LANE * len(l.threads) - 8
    width = left + LANE * len(l.threads) + 10 + (NOTE if l.bands else 0)
    ys, y = [], TOP
    for r in l.rows:
        ys.append(y)
        y += ROW + (ROW // 2 if r.detail else 0)
    lanes_bottom = y + 16
    back, front, notes_end = _bands(l, ident, ys, lane_x, lanes_end, left)
    # one legend entry per highlight kind shown, under the lanes and the bands' words
    per_line = max(40, (width - left - 30) * 10 // 66)
    legend = [(kind, _wrap(highlight_meaning(kind), per_line)) for kind in dict.fromkeys(b.h.kind for b in l.bands)]
    legend_top = max(lanes_bottom, notes_end) + 4
    height = legend_top + sum(LEG + 12 * (len(ls) - 1) for _, ls in legend) + (8 if legend else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="swimlane" id="{escape(ident)}" role="img" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" data-steps="{len(l.rows)}">',
           f"<title>{escape(l.title)}</title>"]
    for t, x in lane_x.items():
        out.append(f'<rect class="lane" x="{x}" y="{TOP - 8}" width="{LANE - 12}" height="{lanes_bottom - TOP}" />')
        out.append(f'<text class="lanehead" x="{x + 6}" y="{TOP - 16}">{escape(t)}</text>')
    out += back
    slots: dict[str, int] = {}
    for b in l.bars:
        k = slots.get(b.thread, 0)
        slots[b.thread] = k + 1
        x = lane_x.get(b.thread, left) + LANE - 13 - (k % 2 + 1) * (BAR + 2)
        y0 = ys[b.first] - 4 if b.first < len(ys) else TOP
        y1 = (ys[b.last] + ROW - 6) if b.last < len(ys) else lanes_bottom - 16
        out.append(f'<rect class="lock" x="{x}" y="{y0}" width="{BAR}" height="{max(y1 - y0, 6)}">'
                   f"<title>{escape(b.thread)} holds {escape(b.lock)}</title></rect>")
    for r, y in zip(l.rows, ys):
        x = lane_x.get(r.thread, left)
        cls = f"step {r.mark}".strip()
        out.append(f'<g class="{cls}"><title>{escape(r.hover or r.label)}</title>')
        out.append(f'<text class="idx" x="{left - 8}" y="{y + 12}" text-anchor="end">{r.index or ""}</text>')
        out.append(f'<rect x="{x + 2}" y="{y - 4}" width="{LANE - 34}" height="{ROW - 4 + (ROW // 2 if r.detail else 0)}" rx="3" />')
        out.append(f'<text x="{x + 6}" y="{y + 11}">{escape(_clip(r.label, 32))}</text>')
        if r.detail:
            out.append(f'<text class="detail" x="{x + 6}" y="{y + 11 + ROW // 2 + 1}">{escape(_clip(r.detail, 34))}</text>')
        out.append("</g>")
    out += front
    ly = legend_top
    for kind, lines in legend:
        c = COLOUR.get(kind, "#e67e22")
        out.append(f'<g class="highlight-legend" data-kind="{escape(kind)}"><rect x="{left - 4}" y="{ly}" width="22" '
                   f'height="12" rx="3" fill="{c}" fill-opacity="0.16" stroke="{c}" stroke-dasharray="5 3" />'
                   + "".join(f'<text x="{left + 24}" y="{ly + 10 + 12 * j}">{escape(t)}</text>' for j, t in enumerate(lines))
                   + "</g>")
        ly += LEG + 12 * (len(lines) - 1)
    out.append("</svg>")
    return "\n".join(out)
