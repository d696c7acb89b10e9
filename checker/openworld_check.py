"""Trace format v2: replay a log with opaque ids through the open-world reading of the definition.

No sizes are declared: thread ids are any token (an OS tid), a thread's role follows from the
first call it makes, agents are the ids the events name, agent sets may be written in any order,
and any integer parses (an impossible value is a divergence naming the check it fails). The
event kinds and keys are the definition's (`spec.lang.openworld`), so a new action needs no
grammar rule. Sequence-number, header, marker and verdict rules are v1's (traces/FORMAT.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator

if TYPE_CHECKING:  # Lark is imported only to word a syntax error (a line the fast path rejects)
    from lark import Lark

from spmcheck.spec.lang.openworld import Incremental, OAction, OpenWorld, World, as_set, render
from spmcheck.spec.lang.owcompile import IMPOSSIBLE, expected
from spmcheck.spec.lang.syntax import SortDom, Var
from spmcheck.spec.programs import definition
from spmcheck.spec.variants import VARIANTS

from .lockgraph import LockGraph
from .results import Evidence, FileResult, Problem, Verdict
from .sequence import Sequence

MAX_PROBLEMS = 20
MAX_DIGITS = 20
DEADLOCK = "lock-order-acyclic"
MODELS = ("core", "datapath", "lifecycle")
# the lifecycle's scenario switches (spec.lifecycle.vocabulary.LConfig): which optional behaviours
# the definition has (drain timeouts, deactivate, profile destroy). Not sizes; v1's defaults.
LC_SWITCHES = (("timeouts", "1"), ("deactivate", "0"), ("destroy", "0"))
_INT = re.compile(r"-?[0-9]+\Z")


@lru_cache(maxsize=1)
def _lark() -> Lark:
    from lark import Lark

    # cached by Lark in the temp dir, keyed by the grammar text (see checker/parse.py grammar())
    return Lark((Path(__file__).with_name("trace_v2.lark")).read_text(), parser="lalr", cache=True)


@lru_cache(maxsize=None)
def reading(model: str, variant: str, scope: str = "") -> OpenWorld:
    """The open-world reading of one variant's definition (compiled once per process); the data
    path's definition also depends on the scenario scope its header names (spec.datapath)."""
    if model == "datapath":
        from spmcheck.spec.datapath.verdicts import trace_definition

        return OpenWorld(trace_definition(variant, scope))
    if model == "lifecycle":
        from spmcheck.spec.lifecycle.definition import definition as lc_definition
        from spmcheck.spec.lifecycle.variants import LVARIANTS
        from spmcheck.spec.lifecycle.vocabulary import LConfig

        # `scope` is the switches as digits (timeouts, deactivate, destroy: Header2.scope); the
        # sizes of LConfig only bound the finite model, which the open world drops
        # (spec.lang.openworld.open_definition)
        on = [c == "1" for c in (scope or "".join(v for _, v in LC_SWITCHES))]
        proto = lc_definition(LVARIANTS[variant], LConfig(timeouts=on[0], deactivate=on[1], destroy=on[2]))
        if on[1]:
            # deactivate=1 is outside the claims' proved scenario: v1 reports them as findings
            # there, never as the verdict; v2 (no findings yet) leaves them out
            import dataclasses

            proto = dataclasses.replace(proto, claims={}, actions=[dataclasses.replace(a, checks=())
                                                                   for a in proto.actions])
        return OpenWorld(proto)
    assert model == "core"
    return OpenWorld(definition(VARIANTS[variant]))


def _variants(model: str) -> list[str]:
    if model == "datapath":
        from spmcheck.spec.datapath.variants import DVARIANTS

        return list(DVARIANTS)
    if model == "lifecycle":
        from spmcheck.spec.lifecycle.variants import LVARIANTS

        return list(LVARIANTS)
    return list(VARIANTS)


@dataclass
class _Line:
    seq: int
    thread: str
    kind: str
    keys: dict[str, str]
    cols: dict[str, int]  # key -> column of its value (1-based)


class V2SyntaxError(Exception):
    def __init__(self, code: str, col: int, message: str) -> None:
        super().__init__(message)
        self.code, self.col, self.message = code, col, message


def _norm(v: str) -> str:
    """Integers compare by value (`-01` is `-1`); names as written."""
    if _INT.match(v) and len(v) <= 4000:
        return str(int(v))
    return v


def parse_fast(text: str) -> _Line | None:
    """`<seq> <thread> <kind> key=value ...` by str.split; None when the line needs the grammar."""
    parts = text.split()
    if len(parts) < 3 or not parts[0].isdigit() or len(parts[0]) > MAX_DIGITS:
        return None
    keys: dict[str, str] = {}
    cols: dict[str, int] = {}
    pos = text.find(parts[2]) + len(parts[2])
    for p in parts[3:]:
        k, eq, v = p.partition("=")
        if not eq or not k or not v or k in keys or not k.isidentifier():
            return None
        pos = text.find(p, pos)
        cols[k] = pos + 1  # the key's column; its value starts len(k) + 1 later
        pos += len(p)
        keys[k] = _norm(v)
    return _Line(int(parts[0]), parts[1], parts[2], keys, cols)


def syntax_error(text: str) -> V2SyntaxError:
    """Why the grammar rejects a line (only called for lines the fast path could not take)."""
    for i, ch in enumerate(text):
        if ord(ch) < 32 and ch != "\t":
            return V2SyntaxError("TRC016", i + 1, f"binary data: control character {ch!r}")
    m = re.match(r"[0-9]+", text)
    if m and len(m.group()) > MAX_DIGITS:
        return V2SyntaxError("TRC017", 1, f"sequence number of {len(m.group())} digits (at most {MAX_DIGITS})")
    from lark import UnexpectedInput

    try:
        _lark().parse(text)
    except UnexpectedInput as e:
        col = getattr(e, "column", 1) or 1
        exp = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
        return V2SyntaxError("TRC005", col, "syntax error" + (f"; expected {', '.join(exp)}" if exp else ""))
    words = text.split()
    if len(words) >= 3:
        seen: set[str] = set()
        for w in words[3:]:
            k = w.partition("=")[0]
            if k in seen:
                return V2SyntaxError("TRC005", text.find(w) + 1, f"key {k!r} given twice")
            seen.add(k)
    return V2SyntaxError("TRC005", 1, "syntax error")


@dataclass
class Header2:
    model: str
    variant: str
    meta: dict[str, str]
    line: int

    @property
    def scope(self) -> str:
        """What the definition depends on besides the variant: the data path's scenario scope,
        the lifecycle's switches as digits (`100`: timeouts on, deactivate and destroy off)."""
        if self.model == "lifecycle":
            return "".join(self.meta.get(k, d) for k, d in LC_SWITCHES)
        return self.meta.get("scope", "")


def parse_header(text: str, n: int) -> tuple[Header2 | None, Problem | None]:
    words = text.split()
    if words[:2] != ["spmcheck-trace", "v2"]:
        return None, Problem("TRC004", n, 1, "not a v2 header")
    meta: dict[str, str] = {}
    for w in words[2:]:
        k, eq, v = w.partition("=")
        if not eq or not k or not v:
            return None, Problem("TRC005", n, text.find(w) + 1, f"expected key=value, got {w!r}")
        meta[k] = v
    model = meta.get("model", "core")
    if model not in MODELS:
        return None, Problem("TRC015", n, text.find("model=") + 1,
                             f"model={model!r} is not readable as v2 yet (known: {', '.join(MODELS)})")
    variant = meta.get("variant")
    if variant is None:
        return None, Problem("TRC015", n, 1, "the v2 header needs variant=<name>")
    if variant not in _variants(model):
        return None, Problem("TRC015", n, text.find("variant=") + 9,
                             f"unknown variant {variant!r}; known: {', '.join(_variants(model))}")
    if model == "datapath":
        from spmcheck.spec.datapath.verdicts import SCOPES

        if meta.get("scope") not in SCOPES:
            return None, Problem("TRC015", n, (text.find("scope=") + 7) if "scope=" in text else 1,
                                 f"a datapath v2 header needs scope=<one of: {', '.join(SCOPES)}>")
    if model == "lifecycle":
        for k, _ in LC_SWITCHES:
            if meta.get(k, "0") not in ("0", "1"):
                return None, Problem("TRC015", n, text.find(f"{k}=") + len(k) + 2, f"{k} must be 0 or 1")
    return Header2(model, variant, meta, n), None


class Replay:
    """The open-world state of one run and the step function over events."""

    def __init__(self, ow: OpenWorld, world: World | None = None, monitors: bool = True) -> None:
        self.ow = ow
        self.w = world if world is not None else World(ow.proto)
        # invariant claims, re-evaluated only where an event's writes reach (spec.lang.openworld);
        # `world`: a state handed over by the compiled engine (checker/owfast.py), whose claims hold
        self.monitors = [(Incremental(ow.proto, name, cl.expr), cl.summary) for name, cl in ow.proto.claims.items()
                         if cl.kind == "invariant" and cl.expr is not None] if monitors else []
        self.initial = [(m.name, s, m.start(self.w)) for m, s in self.monitors]
        self.last: dict[str, tuple[int, str]] = {}  # thread -> (line, text) of its last event
        self.graph = LockGraph()
        self.edges: set[tuple[str, str]] = set()

    def step(self, ev: _Line, n: int, text: str, name: str) -> tuple[Verdict, str, str, str, int] | None:
        """Apply one event; on failure (verdict, code, property, message, column)."""
        ow, w = self.ow, self.w
        t = ev.thread
        role = w.role.get(t)
        if ev.kind not in ow.kinds:
            return (Verdict.DIVERGED, "CHK204", "", f"no action of the model has event kind {ev.kind!r}", 1)
        if role is None:
            roles = ow.begins.get(ev.kind, [])
            if not roles:
                return (Verdict.DIVERGED, "CHK203", "", f"{t} is a new thread, and '{ev.kind}' does not begin "
                        f"a call (a thread's first event is one of: {', '.join(sorted(ow.begins))})", 1)
            role = roles[0]
            w.role[t] = role
        pc = ow.pc_of(w, role, t)
        cands = ow.by.get((role, pc, ev.kind), [])
        if not cands:
            could = sorted({a.kind for a in ow.actions if a.role == role and a.at == pc})
            return (Verdict.DIVERGED, "CHK203", "", f"{t} is at '{pc}' and cannot do '{ev.kind}' here; "
                    f"it could do: {', '.join(could)}", 1)
        known = ow.static_keys.get(ev.kind, set()) | ow.observed_keys.get(ev.kind, set())
        for k in ev.keys:
            if k not in known:
                return (Verdict.DIVERGED, "CHK205", "", f"'{ev.kind}' reports no key {k!r} "
                        f"(its keys: {', '.join(sorted(known))})", ev.cols.get(k, 1))
        failure: tuple[Verdict, str, str, str, int] | None = None
        for a, env in self._instances(cands, ev, t):
            if not all(f(w, env) for _, f in a.select):
                continue
            for lab, g in a.guard:
                if not g(w, env):
                    failure = failure or (Verdict.DIVERGED, "CHK201", "", f"guard failed: {_fmt(lab, env)}", 1)
                    break
            else:
                bad = self._observed(a, ev, env)
                if bad is not None:
                    failure = failure or bad
                    continue
                if a.checks:
                    env["#post"] = ow.pending(w, a, env)
                for claim, why, chk in a.checks:
                    if not chk(w, env):
                        return (Verdict.VIOLATED, "CHK101", claim, f"{claim} fails at this step: {_fmt(why, env)}", 1)
                cyc = self._edges(a, env, t, n, name)
                w.log.clear()
                ow.fire(w, a, env, t)
                self.last[t] = (n, text)
                for m, summary in self.monitors:
                    x = m.after(w, w.log)
                    if x is not None:
                        at = f" (fails for {x})" if x is not True else ""
                        return (Verdict.VIOLATED, "CHK101", m.name, f"{m.name} fails{at}: {summary}", 1)
                if cyc:
                    return (Verdict.VIOLATED, "CHK102", DEADLOCK, f"lock-order cycle (potential deadlock): {cyc}", 1)
                return None
        if failure is None:
            want = sorted(k for k, _ in cands[0].static)
            got = " ".join(f"{k}={ev.keys[k]}" for k in want if k in ev.keys)
            failure = (Verdict.DIVERGED, "CHK203", "", f"{t} is at '{pc}': no '{ev.kind}' step takes "
                       f"{got or 'these keys'} here (keys that select it: {', '.join(want)})", 1)
        return failure

    def _instances(self, cands: list[OAction], ev: _Line, t: str) -> Iterator[tuple[OAction, dict[str, Any]]]:
        """Each candidate action with its parameters bound: from the event's static keys, and a
        parameter the keys do not name (the agent of a lookup's lock step) from the thread's own
        state: the elements its element-valued functions hold (`ag(t)`) and the rows kept for it
        (`lk_serializer_w(t, *)`); the selectors then pick the one the thread is working on."""
        for a in cands:
            env: dict[str, Any] = {a.defn.thread.name: t}
            if not self.ow.bind(a, ev.keys, env):
                continue
            free = [p for p in a.defn.params if isinstance(p, Var) and p.name not in env]
            if not free:
                yield a, env
                continue
            opts = self._held_elements(t)
            for x in opts:
                yield a, {**env, **{p.name: x for p in free}}

    def _held_elements(self, t: str) -> list[Any]:
        out: dict[Any, None] = {}
        for f in self.ow.proto.funcs:
            tab = self.w.t[f.name]
            if isinstance(f.dom, SortDom) and tab.arity == 1:
                v = tab.get((t,))
                if v is not None:
                    out[v] = None
            elif tab.arity == 2:
                r = tab.rows.get((t,))
                if r is not None:
                    out.update(dict.fromkeys(r[1]))
        return list(out)

    def _observed(self, a: OAction, ev: _Line, env: dict[str, Any]) -> tuple[Verdict, str, str, str, int] | None:
        rep = _reported(a)
        for k, f in a.observe:
            if k in rep and ev.keys.get(k) is not None:
                # the step reads the value the event reports (`Reported`): not compared, the
                # updates record it and the claims judge it (a second DISPATCH_END is P4's)
                got = expected(rep[k], ev.keys[k])
                if got is not IMPOSSIBLE:
                    env.setdefault("#rep", {})[k] = got
                    continue
            val = f(self.w, env)
            want = render(val)
            got = ev.keys.get(k)
            if got is None:
                return (Verdict.MALFORMED, "TRC005", "", f"'{ev.kind}' must report {k}=", 1)
            if got != want and not (isinstance(val, frozenset) and as_set(got) == val):
                return (Verdict.DIVERGED, "CHK202", "", f"observed {k}={got}, the model computes {k}={want} "
                        f"(an impossible value is a divergence: {_what(a, k)})", ev.cols.get(k, 0) + len(k) + 1)
        return None

    def _edges(self, a: OAction, env: dict[str, Any], t: str, n: int, name: str) -> str:
        """Lock-order edges: every lock class the thread holds -> the class this step acquires;
        the cycle an edge closes, if any."""
        if a.kind != "lock_acquire":
            return ""
        acquired = None
        for up in a.defn.updates:
            if isinstance(up, tuple) and up[0].func.lock is not None:
                acquired = up[0].func.lock[0]
        if acquired is None:
            return ""
        for f in self.ow.proto.funcs:
            if f.lock is None:
                continue
            tab = self.w.t[f.name]
            if tab.arity == 1:
                held = bool(tab.get((t,)))
            else:
                r = tab.rows.get((t,))
                held = r is not None and (bool(r[0]) or any(r[1].values()))
            if held:
                e = (f.lock[0], acquired)
                if e not in self.edges:
                    self.edges.add(e)
                    cyc = self.graph.add(e[0], e[1], n, name)
                    if cyc:
                        return " -> ".join([c[0] for c in cyc] + [cyc[0][0]])
        return ""

    def inside(self) -> list[tuple[str, str]]:
        """Threads not idle: (thread, label)."""
        return [(t, self.ow.pc_of(self.w, r, t)) for t, r in self.w.role.items()
                if self.ow.pc_of(self.w, r, t) != "idle"]

    def can_move(self, t: str) -> bool:
        """Some step of t's role at its label is enabled, for some agent among those named (or an
        unnamed one)."""
        ow, w = self.ow, self.w
        role = w.role[t]
        pc = ow.pc_of(w, role, t)
        agents = {k for tab in w.t.values() for args, _ in tab.items() for k in args} | {"<unnamed>"}
        for a in ow.actions:
            if a.role != role or a.at != pc:
                continue
            params = [p for p in a.defn.params if hasattr(p, "sort")]
            choices: list[dict[str, Any]] = [{}]
            for p in params:
                choices = [{**c, p.name: x} for c in choices for x in agents]
            for c in choices:
                env = {a.defn.thread.name: t, **dict(a.defn.consts), **c}
                try:
                    if all(f(w, env) for _, f in a.select) and all(g(w, env) for _, g in a.guard):
                        return True
                except (KeyError, TypeError):
                    continue
        return False


def _reported(a: OAction) -> dict[str, str]:
    """The observations the step reads as reported (`Reported`), with their value kinds."""
    got = _REPORTED.get(id(a))
    if got is None:
        from spmcheck.spec.lang.finite import reported_keys
        from spmcheck.spec.lang.owcompile import kind_of

        obs = dict(a.defn.observe)
        got = _REPORTED[id(a)] = {k: kind_of(obs[k]) for k in reported_keys(a.defn) if k in obs}
    return got


_REPORTED: dict[int, dict[str, str]] = {}


def _fmt(label: str, env: dict[str, Any]) -> str:
    try:
        return label.format(**{k: render(v) if not isinstance(v, frozenset) else ",".join(sorted(v))
                               for k, v in env.items()})
    except (KeyError, IndexError):
        return label


def _what(a: OAction, key: str) -> str:
    return f"{a.role} step '{a.at}' ({a.defn.source.split(';')[0]})"


ENGINES = ("auto", "compiled", "interp")
ENGINE = "auto"  # `spmcheck check --engine`; the interpreter stays the reference
# `auto`: below this many bytes after the header, a file whose reading this process has not
# compiled yet is interpreted. Compiling a reading costs 0.02-0.05 s (core, lifecycle) to 0.12-0.19
# s (a data-path scope); the interpreter replays ~16 k events/s (core v2, 2026-12-04), so a file of
# fewer than ~300 events (a counterexample, a data-path run: 15-50 lines) is read sooner than its
# engine compiles. Verdicts and messages are the same either way (tests/test_owcompile.py).
AUTO_BYTES = 16 << 10


def _compiled_pays(h: "Header2", stream: BinaryIO) -> bool:
    """Whether `--engine` (ENGINE) sends the rest of `stream` to the compiled engine."""
    if ENGINE == "compiled":
        return True
    from .owfast import built

    if built(h.model, h.variant, h.scope):
        return True
    try:
        pos = stream.tell()
        end = stream.seek(0, 2)
        stream.seek(pos)
    except (OSError, ValueError, AttributeError):
        return True  # a pipe: its length is unknown, and it may be long
    return end - pos >= AUTO_BYTES


def check_lines(lines: Iterator[tuple[int, str | None, Any, bool]], name: str,
                first: tuple[int, str], stream: BinaryIO | None = None) -> FileResult:
    """Check a v2 log whose header line is `first`; `lines` yields the rest (read_lines' tuples).
    With `stream` (positioned right after the header, as `lines` leaves it) and the compiled
    engine, the lines are read in blocks and well-formed events take the compiled fast path
    (checker/owfast.py); everything else goes through the same line rules below."""
    chk = V2Check(name, first)
    compiled = ENGINE != "interp" and chk.header is not None and stream is not None and \
        _compiled_pays(chk.header, stream)
    tee = None
    if chk.header is not None and chk.header.model == "datapath":
        from .datapath_check import Tee  # keeps the lines for the data path's finite replay

        tee = Tee(lines, stream, first[0])
        lines, stream = tee.lines(), tee.stream
    if compiled and stream is not None:
        from .owfast import run_compiled

        if run_compiled(chk, stream, first[0]):
            return _finish(chk, tee)
    for item in lines:
        chk.line(*item)
    return _finish(chk, tee)


def _finish(chk: "V2Check", tee: Any) -> FileResult:
    """The verdict; a data-path log's also judged at its end and for its header's property=
    (checker/datapath_check.py)."""
    if tee is None:
        return chk.result()
    from .datapath_check import finish

    return finish(chk.header, chk.result(), tee)


class V2Check:
    """The line rules of format v2 (sequence numbers, markers, problems, the verdict); the replay
    itself is an engine with `step(ev, n, text, name)`: the interpreter (`Replay`) or the compiled
    engine (checker/owfast.py), which share these rules so their verdicts cannot drift apart."""

    def __init__(self, name: str, first: tuple[int, str]) -> None:
        self.name = name
        self.problems: list[Problem] = []
        self.n_problems = 0
        h, bad = parse_header(first[1], first[0])
        if bad is not None:
            self.problem(bad)
        self.header = h
        self.rp: Any = Replay(reading(h.model, h.variant, h.scope)) if h is not None and \
            ENGINE == "interp" else None
        self.replaying = h is not None
        self.sq = Sequence()
        self.events, self.ended, self.last_line = 0, 0, first[0]
        self.stop: tuple[int, Verdict, str, str, str, int, tuple[Evidence, ...]] | None = None
        self.gap: tuple[int, str] | None = None

    def engine(self) -> Any:
        if self.rp is None and self.header is not None:
            h = self.header
            self.rp = Replay(reading(h.model, h.variant, h.scope))
        return self.rp

    def problem(self, p: Problem) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(p)

    def line(self, n: int, text: str | None, err: Any, nl: bool) -> None:
        problem = self.problem
        sq = self.sq
        if err is not None:
            problem(Problem(err.code, err.line, err.col, err.message))
            self.replaying = False
            return
        assert text is not None
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            return
        ev = parse_fast(text) if text == stripped else None
        if ev is None:
            words = text.split()
            if len(words) == 2 and words[1] == "run_end" and words[0].isdigit() and len(words[0]) <= MAX_DIGITS:
                seq = int(words[0])
                if self.ended:
                    problem(Problem("TRC020", n, 1, f"a second run_end after the run_end marker of line {self.ended}"))
                    return
                code, msg = sq.step(seq)  # the marker's number continues the events' (as v1)
                if code in ("TRC011", "TRC012"):
                    problem(Problem(code, n, 1, msg))
                    return
                if code == "gap" and self.gap is None and self.replaying:
                    self.gap = (n, msg)
                self.ended, self.last_line = n, n
                return
            if words and words[0] == "spmcheck-trace":
                problem(Problem("TRC014", n, 1, "repeated header"))
                return
            e = syntax_error(text)
            problem(Problem(e.code if nl or e.code != "TRC005" else "TRC008", n, e.col,
                            e.message if nl else f"truncated last line (no newline): {e.message}"))
            self.replaying = False
            return
        if self.ended:
            problem(Problem("TRC020", n, 1, f"an event after the run_end marker of line {self.ended}"))
            self.replaying = False
            return
        code, msg = sq.step(ev.seq)
        if code in ("TRC011", "TRC012"):
            problem(Problem(code, n, 1, msg))
            self.replaying = False
            return
        if code == "gap":
            if self.gap is None and self.replaying:
                self.gap = (n, msg)
            self.replaying = False
        self.last_line = n
        if not self.replaying or self.header is None:
            return
        self.events += 1
        rp = self.engine()
        f = rp.step(ev, n, text, self.name)
        if f is not None:
            self.failed(rp, ev, n, text, nl, f)

    def failed(self, rp: Any, ev: _Line, n: int, text: str, nl: bool,
               f: tuple[Verdict, str, str, str, int]) -> None:
        verdict, code, prop, msg, col = f
        if verdict is Verdict.MALFORMED:
            self.problem(Problem(code, n, col, msg))
        else:
            prev = rp.last.get(ev.thread)
            evid = ((Evidence(prev[0], prev[1], f"{ev.thread}'s previous event"),) if prev else ()) + \
                (Evidence(n, text, "this event"),)
            if not nl:
                self.problem(Problem("TRC008", n, col, f"truncated last line (no newline) that does not replay "
                                     f"as written: {verdict.value} ({code}: {msg})"))
            self.stop = (n, verdict, code, prop, msg, col, evid)
        self.replaying = False

    def result(self) -> FileResult:
        name, problems, h = self.name, self.problems, self.header
        events, last_line, stop, gap = self.events, self.last_line, self.stop, self.gap
        rp = self.engine() if h is not None else None
        edges = tuple(rp.graph.edges()) if rp else ()
        partial = f"{events} events replayed" if events else ""
        if problems:
            p = problems[0]
            return FileResult(name, Verdict.MALFORMED, events, p.line, p.col, "", p.code, p.message, (),
                              tuple(problems), self.n_problems - len(problems), partial, edges)
        if stop is not None:
            ln, verdict, code, prop, msg, col, evid = stop
            return FileResult(name, verdict, events, ln, col, prop, code, msg, evid, (), 0, "", edges)
        if gap is not None:
            return FileResult(name, Verdict.INCONCLUSIVE, events, gap[0], 1, "", "TRC013", gap[1], (), (), 0, "", edges)
        assert h is not None and rp is not None
        if not self.ended and h.meta.get("end_marker") == "1":
            return FileResult(name, Verdict.INCONCLUSIVE, events, last_line, 1, "", "CHK302",
                              "run did not finish: no run_end line, though the header (end_marker=1) promises one",
                              (), (), 0, "", edges)
        if events == 0:
            return FileResult(name, Verdict.INCONCLUSIVE, 0, h.line, 1, "", "CHK303",
                              "no events: the trace is a header alone, which is almost always a broken capture",
                              (), (), 0, "", edges)
        note = "" if self.ended else "no run_end marker (no end_marker=1 in the header): whether the run finished is not known"
        inside = rp.inside()
        if inside:
            where = ", ".join(f"{t} at '{pc}'" for t, pc in inside)
            if not any(rp.can_move(t) for t, _ in inside):
                return FileResult(name, Verdict.VIOLATED, events, last_line, 1, DEADLOCK, "CHK103",
                                  f"deadlock: every thread inside an operation is blocked ({where})", (), (), 0, "",
                                  edges, note=note)
            return FileResult(name, Verdict.INCONCLUSIVE, events, last_line, 1, "", "CHK301",
                              f"log ends while threads are inside an operation: {where}", (), (), 0, "", edges, note=note)
        return FileResult(name, Verdict.ACCEPTED, events, 0, 1, "", "", "", (), (), 0, "", edges, note=note)
