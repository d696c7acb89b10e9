"""Replay a trace through the protocol definition (spec/) on concrete values.

Every event is matched to exactly one `Action` of the model (same name on both sides), its guard
conjuncts and observed values are checked, its effect applied, and the properties evaluated.
Speed comes from memoising, not from a second model: the concrete evaluation is a pure function of
(state, event), so the outcome of each distinct (state, event text) pair is computed once by the
generic model code and then reused (states are interned as tuples). The memo is bounded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO, Callable

from spec.backend import CONCRETE
from spec.events import Event, Header, render_event, value_text
from spec.model import Action, Model
from spec.programs import LABELS, role_of
from spec.properties import PROPERTIES, no_stuck_threads
from spec.variants import VARIANTS
from spec.vocabulary import Config, lock_modes, lv

from .lockgraph import LockGraph, lock_class
from .parse import (CODES, FORMAT_VERSION, LineError, TraceSyntaxError, grammar, parse_line,
                    read_lines)
from .results import Evidence, FileResult, Problem, Verdict

MAX_PROBLEMS = 20
MAX_EVIDENCE = 10
MEMO_LIMIT = 1_000_000  # transitions kept before the memo is dropped (bounded memory)
MAX_SIZE = 6  # agents/updaters/lookups accepted from a header (the model is exponential in agents)
DEADLOCK = "lock-order-acyclic"


class _Reads(dict):  # type: ignore[type-arg]
    """A state that records which variables an evaluation read: those are the ones to explain."""

    def __init__(self, s: dict) -> None:  # type: ignore[type-arg]
        super().__init__(s)
        self.read: list[str] = []

    def __getitem__(self, k: str) -> object:
        self.read.append(k)
        return dict.__getitem__(self, k)


@dataclass(frozen=True, slots=True)
class Step:
    """Memoised outcome of one event in one state."""

    nxt: int  # next state id (unused when fail is set)
    written: tuple[int, ...]  # indices of the variables the action wrote
    edges: tuple[tuple[str, str], ...]  # lock-order edges (held class -> acquired class)
    fail: "Failure | None" = None


@dataclass(frozen=True, slots=True)
class Failure:
    verdict: Verdict
    code: str
    message: str
    prop: str = ""
    reads: tuple[str, ...] = ()  # variables whose last writers are the evidence


class Engine:
    """Model + memo for one (variant, config); reused across files in one process."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.names = model.var_names
        self.index = {n: i for i, n in enumerate(self.names)}
        self.threads = frozenset(model.cfg.threads())
        self.by_thread: dict[str, list[Action]] = {}
        for a in model.actions:
            self.by_thread.setdefault(a.thread, []).append(a)
        self.state_props = [p for p in PROPERTIES.values() if p.state is not None and p.name != DEADLOCK]
        self.step_props = [p for p in PROPERTIES.values() if p.watches is not None and p.step is not None]
        self.locks = [(lock, m) for lock in model.cfg.lock_instances() for m in lock_modes(lock)]
        self.reset()

    def reset(self) -> None:
        self.states: list[tuple[object, ...]] = []
        self.sid_of: dict[tuple[object, ...], int] = {}
        self.memo: dict[tuple[int, str], Step] = {}
        self.state_fail: dict[int, Failure | None] = {}

    def intern(self, tup: tuple[object, ...]) -> int:
        sid = self.sid_of.get(tup)
        if sid is None:
            sid = len(self.states)
            self.states.append(tup)
            self.sid_of[tup] = sid
        return sid

    def state(self, sid: int) -> dict[str, object]:
        return dict(zip(self.names, self.states[sid]))

    def init_sid(self) -> int:
        s = self.model.init_state()
        return self.intern(tuple(s[n] for n in self.names))

    def trim(self, sid: int) -> int:
        """Drop the memo when it grows too big; returns the current state's new id."""
        tup = self.states[sid]
        self.reset()
        return self.intern(tup)

    def check_state(self, sid: int) -> Failure | None:
        if sid in self.state_fail:
            return self.state_fail[sid]
        out = None
        s = self.state(sid)
        for p in self.state_props:
            rec = _Reads(s)
            if not p.state(CONCRETE, rec, self.model):  # type: ignore[misc]
                out = Failure(Verdict.VIOLATED, "CHK101", f"property {p.name} fails: {p.summary}",
                              p.name, tuple(rec.read))
                break
        self.state_fail[sid] = out
        return out

    def options(self, s: dict[str, object], t: str) -> str:
        """What thread t could do in state s (for divergence messages)."""
        out = []
        for a in self.by_thread.get(t, []):
            if all(v for _, v in a.selectors(CONCRETE, s)):
                bad = [d for d, v in a.guards(CONCRETE, s) if not v]
                out.append(a.describe() + (f" (blocked: {bad[0]})" if bad else ""))
        return "; ".join(out[:6]) + (" ..." if len(out) > 6 else "") if out else "nothing"

    def compute(self, sid: int, ev: Event) -> Step:
        s = self.state(sid)
        t, kind = ev.thread, ev.kind
        fail = self._match(s, ev)
        if isinstance(fail, Failure):
            return Step(sid, (), (), fail)
        act = fail
        obs = act.observed(CONCRETE, s)
        rec = _Reads(s)
        for p in self.step_props:
            if p.watches(act) and not p.step(CONCRETE, rec, self.model, act):  # type: ignore[misc]
                return Step(sid, (), (), Failure(Verdict.VIOLATED, "CHK101",
                                                 f"property {p.name} fails at this step: {p.summary}",
                                                 p.name, tuple(rec.read)))
        del obs
        eff = act.effect(CONCRETE, s)
        post = dict(s)
        post.update(eff)
        nxt = self.intern(tuple(post[n] for n in self.names))
        edges: tuple[tuple[str, str], ...] = ()
        if kind == "lock_acquire":
            new = lock_class(ev.arg("lock") or "")
            edges = tuple(dict.fromkeys((lock_class(lock), new) for lock, m in self.locks if s[lv(lock, m, t)]))
        return Step(nxt, tuple(self.index[k] for k in eff), edges, self.check_state(nxt))

    def _match(self, s: dict[str, object], ev: Event) -> Action | Failure:
        t, kind, m = ev.thread, ev.kind, self.model
        if t not in self.threads:
            return Failure(Verdict.MALFORMED, "TRC010",
                           f"unknown thread {t!r}: the header declares {', '.join(sorted(self.threads))}")
        statics = m.static_keys.get(kind)
        if statics is None:
            return Failure(Verdict.DIVERGED, "CHK204",
                           f"variant {m.variant.name} has no '{kind}' step; {t} could do: {self.options(s, t)}")
        static = tuple((k, v) for k, v in ev.args if k in statics)
        cands = m.actions_by_key.get((t, kind, static))
        if not cands:
            args = " ".join(f"{k}={v}" for k, v in static)
            return Failure(Verdict.DIVERGED, "CHK204",
                           f"the model has no action '{t} {kind} {args}'; {t} could do: {self.options(s, t)}")
        chosen = [a for a in cands if all(v for _, v in a.selectors(CONCRETE, s))]
        if not chosen:
            pc = int(s[f"pc.{t}"])  # type: ignore[call-overload]
            label = LABELS[role_of(t)][pc]
            why = [d for a in cands for d, v in a.selectors(CONCRETE, s) if not v]
            return Failure(Verdict.DIVERGED, "CHK203",
                           f"{t} is at '{label}' and cannot do '{kind}' here ({why[0] if why else ''} "
                           f"is false); it could do: {self.options(s, t)}", reads=(f"pc.{t}",))
        act = chosen[0]
        rec = _Reads(s)
        for desc, ok in act.guards(CONCRETE, rec):
            if not ok:
                return Failure(Verdict.DIVERGED, "CHK201", f"guard failed: {desc}", reads=tuple(rec.read))
        rec = _Reads(s)
        for k, v in act.observed(CONCRETE, rec).items():
            got = ev.arg(k)
            if got != value_text(v):
                return Failure(Verdict.DIVERGED, "CHK202",
                               f"observed {k}={got} but the model gives {k}={value_text(v)}",
                               reads=tuple(rec.read))
        return act


_ENGINES: dict[tuple[str, int, int, int], Engine] = {}


def engine_for(h: Header) -> Engine:
    key = (h.variant, h.agents, h.updaters, h.lookups)
    e = _ENGINES.get(key)
    if e is None:
        e = _ENGINES[key] = Engine(Model(Config(h.agents, h.updaters, h.lookups), h.variant))
    return e


def _header_problem(h: Header) -> tuple[str, str] | None:
    if h.version != FORMAT_VERSION:
        return "TRC004", f"format version v{h.version} is not supported (this checker reads v{FORMAT_VERSION})"
    if h.variant not in VARIANTS:
        return "TRC015", f"unknown variant {h.variant!r}; known: {', '.join(VARIANTS)}"
    if not (1 <= h.agents <= MAX_SIZE and 0 <= h.updaters <= MAX_SIZE and 0 <= h.lookups <= MAX_SIZE
            and h.updaters + h.lookups > 0):
        return "TRC015", (f"config agents={h.agents} updaters={h.updaters} lookups={h.lookups} out of range "
                          f"(1..{MAX_SIZE} agents, 0..{MAX_SIZE} threads of each role)")
    return None


class _Run:
    """Mutable state of checking one file; produces one frozen FileResult."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[Problem] = []
        self.n_problems = 0
        self.stop: tuple[int, Failure, tuple[Evidence, ...]] | None = None  # first replay failure
        self.gap: tuple[int, str] | None = None

    def problem(self, code: str, line: int, col: int, msg: str) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(code, line, col, msg))


def check_stream(stream: BinaryIO, name: str, on_edges: Callable[[list], None] | None = None) -> FileResult:
    """Check one trace; never raises on bad input (I/O errors are the caller's)."""
    g = grammar()
    fullmatch = g.fast.regex.fullmatch
    seq_g = g.seq_group
    event_markers = g.event_slots
    run = _Run(name)
    header: Header | None = None
    eng: Engine | None = None
    sid = 0
    expect = -1  # next sequence number; -1 before the first event
    last_seq = -1
    replaying = False
    events = 0
    lastw: list[int] = []
    lastt: list[str] = []
    graph = LockGraph()
    edge_seen: set[tuple[str, str]] = set()
    seen_any = False

    for n, text, err, nl in read_lines(stream):
        if err is not None:
            run.problem(err.code, err.line, err.col, err.message)
            replaying = False
            continue
        assert text is not None
        m = fullmatch(text)
        if m is not None and replaying and m.lastgroup in event_markers:
            seq = int(m.group(seq_g))
            if seq == expect:
                expect = seq + 1
                last_seq = seq
                key = (sid, text[m.end(seq_g):])
                st = eng.memo.get(key)  # type: ignore[union-attr]
                if st is None:
                    ev = parse_line(text)
                    assert isinstance(ev, Event)
                    if len(eng.memo) >= MEMO_LIMIT:  # type: ignore[union-attr]
                        sid = eng.trim(sid)  # type: ignore[union-attr]
                        key = (sid, key[1])
                    st = eng.compute(sid, ev)  # type: ignore[union-attr]
                    eng.memo[key] = st  # type: ignore[union-attr]
                events += 1
                if st.fail is not None:
                    run.stop = (n, st.fail, _evidence(st.fail.reads, eng, lastw, lastt, n, text))  # type: ignore[arg-type]
                    if st.fail.verdict is Verdict.MALFORMED:
                        run.problem(st.fail.code, n, m.start(g.thread_group) + 2, st.fail.message)
                    replaying = False
                    continue
                sid = st.nxt
                for i in st.written:
                    lastw[i] = n
                    lastt[i] = text
                for e in st.edges:
                    if e not in edge_seen:
                        edge_seen.add(e)
                        cyc = graph.add(e[0], e[1], n, name)
                        if cyc:
                            ev_lines = tuple(Evidence(ln, f"{a} -> {b}", "first acquisition in this order")
                                             for a, b, ln in cyc)
                            run.stop = (n, Failure(Verdict.VIOLATED, "CHK102",
                                                   "lock-order cycle (potential deadlock): "
                                                   + " -> ".join([c[0] for c in cyc] + [cyc[0][0]]),
                                                   DEADLOCK), ev_lines)
                            replaying = False
                continue
        # slow path: comments, header, errors, sequence problems, lines after the replay stopped
        try:
            rec = parse_line(text, last=not nl)
        except TraceSyntaxError as e:
            run.problem(e.code, n, e.col, e.message)
            replaying = False
            if header is None and not seen_any:
                seen_any = True
            continue
        if rec is None:
            continue
        if isinstance(rec, Header):
            if header is not None or seen_any:
                run.problem("TRC014" if header is not None else "TRC003", n, 1,
                            "repeated header" if header is not None else "header after the first event")
                replaying = False
                continue
            seen_any = True
            header = rec
            bad = _header_problem(rec)
            if bad:
                run.problem(bad[0], n, 1, bad[1])
                continue
            eng = engine_for(rec)
            sid = eng.init_sid()
            lastw = [0] * len(eng.names)
            lastt = [""] * len(eng.names)
            replaying = not run.problems
            if replaying:
                f0 = eng.check_state(sid)
                if f0 is not None:
                    run.stop = (n, f0, ())
                    replaying = False
            continue
        # an event on the slow path
        ev = rec
        if header is None:
            if not seen_any:
                run.problem("TRC003", n, 1, "missing header: the first line must be "
                            "'spmcheck-trace v1 variant=... agents=... updaters=... lookups=...'")
                seen_any = True
            continue
        if last_seq >= 0 and ev.seq == last_seq:
            run.problem("TRC011", n, 1, f"repeated sequence number {ev.seq}")
            replaying = False
            continue
        if last_seq >= 0 and ev.seq < last_seq:
            run.problem("TRC012", n, 1, f"sequence number {ev.seq} after {last_seq}")
            replaying = False
            last_seq = ev.seq
            continue
        if expect == -1 and ev.seq in (0, 1):
            expect = ev.seq
        if ev.seq != expect:
            first = 1 if expect == -1 else expect
            if run.gap is None and replaying:
                run.gap = (n, f"gap in sequence numbers: {first}..{ev.seq - 1} missing before this line")
            replaying = False
        last_seq = ev.seq
        expect = ev.seq + 1
        if not replaying:
            continue
        # a valid event the regex did not take (cannot happen for grammar-derived regex, but Lark
        # is the definition): replay it through the same path
        st = eng.compute(sid, ev)  # type: ignore[union-attr]
        events += 1
        if st.fail is not None:
            run.stop = (n, st.fail, _evidence(st.fail.reads, eng, lastw, lastt, n, text))  # type: ignore[arg-type]
            replaying = False
            continue
        sid = st.nxt
        for i in st.written:
            lastw[i] = n
            lastt[i] = text

    if on_edges is not None:
        on_edges([(a, b, int(d["line"])) for a, b, d in graph.g.edges(data=True)])
    edges = tuple((a, b, int(d["line"])) for a, b, d in graph.g.edges(data=True))
    return _finish(run, header, eng, sid, events, lastw, lastt, edges, seen_any, replaying)


def _evidence(reads: tuple[str, ...], eng: Engine, lastw: list[int], lastt: list[str], n: int,
              text: str) -> tuple[Evidence, ...]:
    """The lines that last wrote the variables the failing check read, plus the line itself."""
    def pick(skip: tuple[str, ...]) -> dict[int, tuple[str, str]]:
        out: dict[int, tuple[str, str]] = {}
        for v in dict.fromkeys(reads):
            i = eng.index.get(v)
            if i is None or lastw[i] == 0 or v.startswith(skip):
                continue
            out.setdefault(lastw[i], (lastt[i], v))
        return out

    lines = pick(("pc.", "lk.")) or pick(())
    ev = [Evidence(ln, t, f"last wrote {v}") for ln, (t, v) in sorted(lines.items())][-MAX_EVIDENCE:]
    return tuple(ev) + (Evidence(n, text, "this event"),)


def _finish(run: _Run, header: Header | None, eng: Engine | None, sid: int, events: int,
            lastw: list[int], lastt: list[str], edges: tuple[tuple[str, str, int], ...],
            seen_any: bool, replaying: bool) -> FileResult:
    name = run.name
    if header is None and not run.problems:
        run.problem("TRC002", 1, 1, "empty file: no header line")
    probs = tuple(run.problems)
    more = max(run.n_problems - len(probs), 0)
    partial = ""
    if run.stop is not None:
        ln, f, _ = run.stop
        partial = f"replay up to line {ln}: {f.verdict.value} ({f.code})"
    elif run.gap is not None:
        partial = f"replay stopped at line {run.gap[0]}: inconclusive (gap)"
    elif events:
        partial = f"{events} events replayed without a violation"
    if probs:
        p = probs[0]
        return FileResult(name, Verdict.MALFORMED, events, p.line, p.col, "", p.code, p.message, (),
                          probs, more, partial, edges)
    if run.stop is not None:
        ln, f, evid = run.stop
        return FileResult(name, f.verdict, events, ln, 1, f.prop, f.code, f.message, evid, (), 0, "", edges)
    if run.gap is not None:
        return FileResult(name, Verdict.INCONCLUSIVE, events, run.gap[0], 1, "", "TRC013", run.gap[1],
                          (), (), 0, "", edges)
    assert eng is not None
    s = eng.state(sid)
    inside = [t for t in eng.model.cfg.threads()
              if s[f"pc.{t}"] != 0]  # label 0 is 'idle' for both roles
    if inside:
        if not no_stuck_threads(CONCRETE, s, eng.model):
            held = tuple(v for v in eng.names if v.startswith("lk.") and s[v])
            ev = tuple(e for e in _evidence(held, eng, lastw, lastt, 0, "")[:-1])
            return FileResult(name, Verdict.VIOLATED, events, max(lastw, default=0), 1, DEADLOCK, "CHK103",
                              "deadlock: every thread inside an operation is blocked ("
                              + ", ".join(f"{t} at '{LABELS[role_of(t)][int(s[f'pc.{t}'])]}'" for t in inside)
                              + ")", ev, (), 0, "", edges)
        where = ", ".join(f"{t} at '{LABELS[role_of(t)][int(s[f'pc.{t}'])]}'" for t in inside)  # type: ignore[call-overload]
        return FileResult(name, Verdict.INCONCLUSIVE, events, max(lastw, default=0), 1, "", "CHK301",
                          f"log ends while threads are inside an operation: {where}", (), (), 0, "", edges)
    return FileResult(name, Verdict.ACCEPTED, events, 0, 1, "", "", "", (), (), 0, "", edges)


def check_path(path: str, on_edges: Callable[[list], None] | None = None) -> FileResult:
    """Check a file by path, or stdin for '-'; unreadable paths are malformed (TRC001)."""
    import sys

    if path == "-":
        return check_stream(sys.stdin.buffer, "<stdin>", on_edges)
    try:
        with open(path, "rb") as f:
            return check_stream(f, path, on_edges)
    except OSError as e:
        msg = f"cannot read {path}: {e.strerror or e}"
        return FileResult(path, Verdict.MALFORMED, 0, 0, 0, "", "TRC001", msg, (),
                          (Problem("TRC001", 0, 0, msg),))
