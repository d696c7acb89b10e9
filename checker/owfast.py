"""The compiled engine for format v2: block reading, a split-based fast path, compiled actions.

`spmcheck check` (default `--engine compiled`) replays a v2 log through `spec.lang.owcompile`'s
compiled reading of the definition. A well-formed event line `<seq> <thread> <rest>` (single
spaces, the expected sequence number, a known thread) costs one `str.split(" ", 2)` and two dict
look-ups: the thread's dispatch table for its current (role, label), then the compiled call for
the exact `<rest>` text (kind, keys and observed values resolved once, on the first occurrence,
by the interpreter's own binding rules; the table is bounded, so memory stays flat). Every other
line goes through `openworld_check.V2Check.line`, the rules both engines share.

A step that does not replay (a guard, an observation, a claim) leaves the compiled state as it
was before the event; the interpreter (`openworld_check.Replay`) then takes over from that exact
state and writes the verdict and the message, so both engines' messages are the same text. If the
interpreter does replay the step (a disagreement, which the differential test requires never to
happen), it simply carries on for the rest of the file.
"""
from __future__ import annotations

import functools
import io
import re
from itertools import count
from typing import Any, BinaryIO, Callable, Iterator

from spmcheck.spec.lang.openworld import World
from spmcheck.spec.lang.owcompile import NotCompilable, Program, expected

from .lockgraph import LockGraph
from spmcheck.spec.lang.syntax import Var

from .openworld_check import DEADLOCK, Replay, V2Check, _Line, _norm, parse_fast, reading
from .parse import MAX_LINE, LineError, read_lines
from .results import Verdict

BLOCK = 1 << 16
CACHE = 4096  # compiled calls kept per (role, label) table; cleared when full (memory stays flat)
DISAGREEMENTS = 0  # compiled engine said "fails", the interpreter replayed the step (must stay 0)


# (model, variant, scope) -> its compiled reading, None when it needs the interpreter; once per
# process. Also what `built` reads (`--engine auto` interprets a short file not compiled yet).
_PROGRAMS: dict[tuple[str, str, str], Program | None] = {}


def program(model: str, variant: str, scope: str = "") -> Program | None:
    """The compiled reading (once per process), or None when the definition needs the interpreter."""
    key = (model, variant, scope)
    if key not in _PROGRAMS:
        try:
            _PROGRAMS[key] = Program(reading(model, variant, scope).proto)
        except NotCompilable:
            _PROGRAMS[key] = None
    return _PROGRAMS[key]


def built(model: str, variant: str, scope: str = "") -> bool:
    """Whether this process has compiled (or tried to compile) that reading already."""
    return (model, variant, scope) in _PROGRAMS


class _Disp(dict):  # type: ignore[type-arg]
    """rest-of-line text -> compiled call, for one (role, label); `shapes`: the text with its
    element-valued keys' values left out (see FastRun.shape) -> a call taking those values."""

    __slots__ = ("role", "label", "shapes")

    def __init__(self) -> None:
        super().__init__()
        self.shapes: dict[str, Callable[[str, list[str]], Any]] = {}


class _Hole:
    """The value of an element-valued key, filled in per line (a shape's call)."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


class _Tables(dict):  # type: ignore[type-arg]
    def __missing__(self, key: tuple[str, str]) -> _Disp:
        d = self[key] = _Disp()
        d.role, d.label = key
        return d


class FastRun:
    """One run's compiled state, and the engine interface V2Check expects (`step`, `last`,
    `graph`, `inside`, `can_move`)."""

    def __init__(self, prog: Program, model: str, variant: str, scope: str) -> None:
        self.prog = prog
        self.ow = reading(model, variant, scope)
        self.role: dict[str, str] = {}
        self.where: dict[str, _Disp] = {}
        self.edges: set[tuple[str, str]] = set()
        self.pend: list[tuple[str, str]] = []
        self.disp = _Tables()
        self.once: set[str] = set()  # shaped texts seen once (_fast: a second sighting is cached whole)
        self.found: list[str] = []  # findings the last step made fail (a Program built with findings)
        ns = prog.new_run(self.role, self.where, self.edges, self.pend, self.disp, self.found)
        self.fns: list[Callable[..., Any]] = ns["actions"]
        self.export = ns["export"]
        self.named: dict[str, set[Any]] = ns["named"]
        self.failing: dict[str, bool] = ns["failing"]  # finding -> failing after the last step
        self.claims: dict[str, Callable[[], bool]] = ns["claims"]  # claim or finding -> its whole value now
        self.last: dict[str, tuple[int, str]] = {}
        self.graph = LockGraph()
        self.interp: Replay | None = None  # set after a disagreement: the interpreter goes on
        self.index = {id(a): i for i, a in enumerate(self.ow.actions)}
        self.init = {role: str(f.init) for role, f in self.ow.proto.pc.items()}
        # event kind -> keys that every action of that kind binds to an element parameter (a
        # dispatch id, a context): a line with a new id then reuses the call resolved for its shape
        holes: dict[str, set[str] | None] = {}
        for oa in self.ow.actions:
            ks = {k for k, v in oa.defn.static if isinstance(v, Var)}
            prev = holes.get(oa.kind, ks)
            holes[oa.kind] = None if prev is None else prev & ks
        self.holes = {k: frozenset(v) for k, v in holes.items() if v}

    def shape(self, rest: str) -> tuple[str, list[str]] | None:
        """`rest` with the values of its element-valued keys cut out, and those values."""
        words = rest.split(" ")
        hk = self.holes.get(words[0])
        if hk is None:
            return None
        vals = []
        for j in range(1, len(words)):
            k, eq, v = words[j].partition("=")
            if k in hk and eq:
                vals.append(_norm(v) if v[-1:].isdigit() else v)
                words[j] = k + "=\0"
        return (" ".join(words), vals) if vals else None

    # ---- resolving an event body once ----
    def resolve(self, role: str, label: str, kind: str, keys: dict[str, str]) -> Callable[[str], Any] | None:
        ow = self.ow
        if kind not in ow.kinds:
            return None
        cands = ow.by.get((role, label, kind))
        if not cands:
            return None
        known = ow.static_keys.get(kind, set()) | ow.observed_keys.get(kind, set())
        if any(k not in known for k in keys):
            return None
        calls = []
        marker = object()  # the thread is not known here: a key bound to it cannot be cached
        for oa in cands:
            env: dict[str, Any] = {oa.defn.thread.name: marker}
            if not ow.bind(oa, keys, env):
                continue
            if any(isinstance(v, _Hole) for v in env.values()):
                ca = self.prog.actions[self.index[id(oa)]]
                obs = [expected(kind_, keys[k]) for k, kind_ in ca.obs if k in keys]
                if len(obs) != len(ca.obs) or sum(v is marker for v in env.values()) > 1:
                    continue  # a missing observation (the interpreter reports it), or an implied key too
                for p in oa.defn.params:
                    v = env.get(p.name)
                    s = self.named.get(p.sort.name) if hasattr(p, "sort") else None
                    if s is not None and isinstance(v, frozenset):
                        s.update(v)
                    elif s is not None and isinstance(v, str):
                        s.add(v)
                args = [env[n] for n in ca.args]
                holes = tuple((i, a.i) for i, a in enumerate(args) if isinstance(a, _Hole))
                sorts = {p.name: p.sort.name for p in oa.defn.params if hasattr(p, "sort")}
                named = tuple(self.named.get(sorts.get(n, ""), set()) for i, n in enumerate(ca.args)
                              if isinstance(args[i], _Hole))
                calls.append(functools.partial(_with_holes, self.fns[ca.index], tuple(args), holes, tuple(obs), named))
                continue
            ca = self.prog.actions[self.index[id(oa)]]
            obs = []
            for k, kind_ in ca.obs:
                got = keys.get(k)
                if got is None:
                    break  # the interpreter reports the missing key (if no other step fires)
                obs.append(expected(kind_, got))
            else:
                for p in oa.defn.params:
                    v = env.get(p.name)
                    if v is None or v is marker:
                        continue
                    s = self.named.get(p.sort.name) if hasattr(p, "sort") else None
                    if s is not None:
                        if isinstance(v, frozenset):
                            s.update(v)
                        elif isinstance(v, str):
                            s.add(v)
                args = [env[n] for n in ca.args]
                mine = [i for i, a in enumerate(args) if a is marker]
                if mine:
                    # a parameter the event left to the thread (Action.implied: the holder a
                    # thread acts for): filled in per call, so the cached step serves every thread
                    sorts = {p.name: p.sort.name for p in oa.defn.params if hasattr(p, "sort")}
                    named = [self.named[sorts[n]] for i, n in enumerate(ca.args)
                             if i in mine and sorts.get(n) in self.named]
                    calls.append(functools.partial(_as_thread, self.fns[ca.index], tuple(args), tuple(mine),
                                                   tuple(obs), tuple(named)))
                    continue
                calls.append(functools.partial(self.fns[ca.index], *args, *obs))
        if not calls:
            return None
        if len(calls) == 1:
            return calls[0]
        cs = tuple(calls)

        def first(t: str, *vals: Any) -> Any:
            for c in cs:
                r = c(t, *vals)
                if r is not None:
                    return r
            return None

        return first

    # ---- the general path (any line the fast path did not take) ----
    def step(self, ev: _Line, n: int, text: str, name: str) -> tuple[Verdict, str, str, str, int] | None:
        if self.interp is not None:
            return self.interp.step(ev, n, text, name)
        t = ev.thread
        role = self.role.get(t)
        new = role is None
        if new:
            roles = self.ow.begins.get(ev.kind, [])
            if ev.kind not in self.ow.kinds or not roles:
                return self.delegate(ev, n, text, name)
            role = roles[0]
            self.role[t] = role
            self.where[t] = self.disp[(role, self.init[role])]
        d = self.where[t]
        words = text.split()
        key = text.split(" ", 2)[2] if " ".join(words) == text and len(words) >= 3 else None
        g = d.get(key) if key is not None else None
        sh = self.shape(key) if g is None and key is not None else None
        if sh is not None:
            g0 = d.shapes.get(sh[0])
            if g0 is None:
                ks = dict(ev.keys)
                for i, k in enumerate(k for k in ev.keys if ks[k] is not None and f" {k}=\0" in " " + sh[0]):
                    ks[k] = _Hole(i)  # type: ignore[assignment]
                g0 = self.resolve(role, d.label, ev.kind, ks)
                if g0 is not None:
                    if len(d.shapes) >= CACHE:
                        d.shapes.clear()
                    d.shapes[sh[0]] = g0
            if g0 is not None:
                g = functools.partial(_shaped, g0, sh[1])
        if g is None:
            g = self.resolve(role, d.label, ev.kind, ev.keys)
            if g is not None and key is not None:
                if len(d) >= CACHE:
                    d.clear()
                d[key] = g
        r = g(t) if g is not None else None
        if r is True:
            if new:
                self.named[role].add(t)
            self.last[t] = (n, text)
            return None
        if r == 2:
            if new:
                self.named[role].add(t)
            self.last[t] = (n, text)
            return self.new_edges(n, name)
        if new:
            del self.role[t], self.where[t]
        return self.delegate(ev, n, text, name)

    def new_edges(self, n: int, name: str) -> tuple[Verdict, str, str, str, int] | None:
        """Lock-order edges the last step found (held class -> acquired class), in the
        interpreter's order; the cycle the first of them closes, if any."""
        out = None
        for e in self.pend:
            if e not in self.edges:
                self.edges.add(e)
                cyc = self.graph.add(e[0], e[1], n, name)
                if cyc:
                    out = (Verdict.VIOLATED, "CHK102", DEADLOCK,
                           "lock-order cycle (potential deadlock): " + " -> ".join([c[0] for c in cyc] + [cyc[0][0]]), 1)
                    break
        self.pend.clear()
        return out

    def delegate(self, ev: _Line, n: int, text: str, name: str) -> tuple[Verdict, str, str, str, int] | None:
        """The interpreter replays this event from the compiled pre-state and words the verdict."""
        global DISAGREEMENTS
        self.pend.clear()
        rp = Replay(self.ow, self.world())
        rp.last, rp.graph, rp.edges = self.last, self.graph, self.edges
        f = rp.step(ev, n, text, name)
        if f is None:
            DISAGREEMENTS += 1
            self.interp = rp
        return f

    def world(self) -> World:
        """The compiled state as the interpreter's tables."""
        w = World(self.ow.proto)
        for fname, spec in self.export().items():
            tab = w.t[fname]
            if spec[0] == 0:
                tab.val = spec[1]
            elif spec[0] == 1:
                d, cells = spec[1], spec[2]
                if d != tab.init or cells:
                    tab.rows[()] = [d, dict(cells)]
                if tab.by_value is not None:
                    for k, v in cells.items():
                        tab.by_value.setdefault(v, set()).add(k)
            else:
                for p, (d, cells) in spec[1].items():
                    tab.rows[(p,) if spec[0] == 2 else p] = [d, dict(cells)]
        w.role = dict(self.role)
        return w

    def _final(self) -> Replay:
        if self.interp is not None:
            return self.interp
        rp = Replay(self.ow, self.world(), monitors=False)
        rp.last, rp.graph, rp.edges = self.last, self.graph, self.edges
        return rp

    def inside(self) -> list[tuple[str, str]]:
        return self._final().inside()

    def can_move(self, t: str) -> bool:
        return self._final().can_move(t)


# ---- reading: blocks of clean lines, read_lines' tuples for everything else ---------------------


class _Prefixed(io.RawIOBase):
    """`pending` bytes, then the rest of `stream` (read_lines only calls readline)."""

    def __init__(self, pending: bytes, stream: BinaryIO) -> None:
        self.buf = io.BytesIO(pending)
        self.stream = stream

    def readline(self, limit: int = -1) -> bytes:  # type: ignore[override]
        got = self.buf.readline(limit)
        if got.endswith(b"\n") or (limit >= 0 and len(got) >= limit):
            return got
        more = self.stream.readline(limit - len(got) if limit >= 0 else -1)
        return got + more


def _one(raw: bytes, n: int, nl: bool) -> tuple[int, str | None, Any, bool]:
    """read_lines' tuple for one line of at most MAX_LINE bytes (without its newline)."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    try:
        return n, raw.decode("utf-8"), None, nl
    except UnicodeDecodeError as e:
        return n, None, LineError("TRC006", n, e.start + 1, f"invalid UTF-8 byte 0x{raw[e.start]:02x}"), nl


def _shifted(stream: Any, n: int) -> Iterator[tuple[int, str | None, Any, bool]]:
    for m, text, err, nl in read_lines(stream):
        if err is not None:
            err = LineError(err.code, err.line + n, err.col, err.message)
        yield m + n, text, err, nl


def blocks(stream: BinaryIO, n: int) -> Iterator[tuple[int, list[str] | None, tuple[int, str | None, Any, bool] | None]]:
    """(line number before the block, clean lines, None) or (n, None, one read_lines tuple)."""
    read = stream.read
    carry = b""
    while True:
        buf = read(BLOCK)
        if not buf:
            if carry:
                yield n, None, _one(carry, n + 1, False)
            return
        if carry:
            buf = carry + buf
        cut = buf.rfind(b"\n")
        if cut < 0:
            if len(buf) > MAX_LINE:  # an over-long line: read_lines' rules from here on
                for item in _shifted(_Prefixed(buf, stream), n):
                    yield n, None, item
                return
            carry = buf
            continue
        body, carry = buf[:cut], buf[cut + 1:]
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        lines = text.split("\n") if text is not None else None
        raws = None
        # a line over MAX_LINE bytes: read_lines' rules from here on. The bytes are split and
        # measured only when some line could be that long: a UTF-8 character is at most 4 bytes,
        # so decoded lines all within MAX_LINE // 4 characters (measured in C) cannot be
        if len(body) > MAX_LINE and (lines is None or max(map(len, lines)) > MAX_LINE // 4):
            raws = body.split(b"\n")
            if any(len(r) > MAX_LINE for r in raws):
                for item in _shifted(_Prefixed(buf, stream), n):
                    yield n, None, item
                return
        if lines is None or "\r" in text:  # type: ignore[operator]
            for r in raws if raws is not None else body.split(b"\n"):
                n += 1
                yield n - 1, None, _one(r, n, True)
            continue
        yield n, lines, None
        n += len(lines)
        if len(carry) > MAX_LINE:
            for item in _shifted(_Prefixed(carry, stream), n):
                yield n, None, item
            return


def run_compiled(chk: V2Check, stream: BinaryIO, n0: int, eng: "FastRun | None" = None) -> bool:
    """Check the rest of `stream` with the compiled engine (`eng`, or one for the header's
    definition); False (nothing read) when the definition has no compiled reading."""
    h = chk.header
    assert h is not None
    if eng is None:
        scope = h.scope
        prog = program(h.model, h.variant, scope)
        if prog is None:
            return False
        eng = FastRun(prog, h.model, h.variant, scope)
    chk.rp = eng
    line = chk.line
    sq = chk.sq
    for n, lines, item in blocks(stream, n0):
        if lines is None:
            line(*item)  # type: ignore[misc]
            continue
        i, total = 0, len(lines)
        while i < total:
            if chk.replaying and not chk.ended and sq.last >= 0 and eng.interp is None:
                k = _fast(chk, eng, lines, i, n)
                n += k - i
                i = k
                if i >= total:
                    break
            elif not chk.replaying and not chk.ended and sq.last >= 0 and sq.expect == sq.last + 1:
                k = _tail(chk, lines, i, n)
                n += k - i
                i = k
                if i >= total:
                    break
            n += 1
            line(n, lines[i], None, True)
            i += 1
    return True


def _fast(chk: V2Check, eng: FastRun, lines: list[str], i: int, n: int) -> int:
    """Replay lines[i:] while they take the fast path; the index of the first one that does not
    (lines[i] is line n + 1). A step that does not simply succeed (a new lock-order edge, a
    failure) is taken here and ends the call: the caller reads the next line on the general path
    and comes back.

    Per line: one split, the expected sequence number compared as text, two dict look-ups and
    the call. The line number and the expected number's text come from C iterators (`count`,
    `map(str, ...)`) zipped with the lines, and the event count and last line are derived from how
    many lines were taken once at the end, not kept per line."""
    where, last, sq = eng.where, eng.last, chk.sq
    shape = eng.shape
    once = eng.once
    exp = sq.expect
    n0 = n
    for n, text, exp_s in zip(count(n0 + 1), lines if i == 0 else lines[i:], map(str, count(exp))):
        try:
            seq, t, rest = text.split(" ", 2)
        except ValueError:  # fewer than three words: the general path words it
            break
        if seq != exp_s:
            break
        d = where.get(t)
        if d is None:
            break
        g = d.get(rest)
        if g is None:
            sh = shape(rest)
            if sh is None:
                break
            g0 = d.shapes.get(sh[0])
            if g0 is None:
                break
            if rest in once:  # a text seen before (core: a few agent ids): the next is a dict hit
                if len(d) < CACHE:
                    d[rest] = _bound(g0, sh[1])
            else:  # a text seen once (a new dispatch id) is not kept in `d`, where it would crowd out
                if len(once) >= CACHE:  # the texts that do repeat
                    once.clear()
                once.add(rest)
            r = g0(t, sh[1])
        else:
            r = g(t)
        if r is True:
            last[t] = (n, text)
            continue
        # the step did not simply succeed: its outcome is taken here (the general path would
        # call it again), then the caller goes on
        took = n - n0
        sq.last, sq.expect = exp + took - 1, exp + took
        chk.events, chk.last_line = chk.events + took, n
        if r == 2:
            last[t] = (n, text)
            f = eng.new_edges(n, chk.name)
        else:
            ev = parse_fast(text)
            assert ev is not None
            f = eng.delegate(ev, n, text, chk.name)
        if f is not None:
            ev = parse_fast(text)
            assert ev is not None
            chk.failed(eng, ev, n, text, True, f)
        return i + took
    else:
        n += 1  # every line was taken: as if the next one broke the loop
    took = n - n0 - 1
    if took:
        sq.last, sq.expect = exp + took - 1, exp + took
        chk.events, chk.last_line = chk.events + took, n - 1
    return i + took


# A line the tail loop takes without the general path: ASCII, single spaces, no space at either
# end, `key=value` words with identifier keys (a subset of what parse_fast accepts: any line that
# matches is one parse_fast reads, with the number as written).
_PLAIN = re.compile(r"([0-9]+) [!-~]+ [!-~]+((?: [A-Za-z_][A-Za-z0-9_]*=[!-~]+)*)")
_KEY = re.compile(r" ([A-Za-z_][A-Za-z0-9_]*)=")


def _tail(chk: V2Check, lines: list[str], i: int, n: int) -> int:
    """Read lines[i:] after the replay has stopped (a verdict or a gap) while they are plainly
    well-formed events numbered in sequence; the index of the first one that is not (lines[i] is
    line n + 1). Such a line only advances the sequence and the last line read in V2Check.line
    (no problem, no event count once not replaying); the first other line goes there. A rejected
    run's rest is most of the lines of a rate test's runs: the general path builds each line's
    keys, columns and integer values (parse_fast), none of which a stopped replay reads."""
    sq = chk.sq
    exp = sq.expect
    plain, keys = _PLAIN.fullmatch, _KEY.findall
    n0 = n
    for n, text, exp_s in zip(count(n0 + 1), lines if i == 0 else lines[i:], map(str, count(exp))):
        m = plain(text)
        if m is None or m.group(1) != exp_s:
            break
        rest = m.group(2)
        if rest:
            ks = keys(rest)
            if len(ks) > 1 and len(set(ks)) != len(ks):  # a key given twice: the general path words it
                break
    else:
        n += 1  # every line was taken: as if the next one broke the loop
    took = n - n0 - 1
    if took:
        sq.last, sq.expect = exp + took - 1, exp + took
        chk.last_line = n - 1
    return i + took


def _with_holes(fn: Any, args: tuple, holes: tuple, obs: tuple, named: tuple, t: str, vals: list[str]) -> Any:
    """Call a compiled step whose element parameters at `holes` are this line's values."""
    full = list(args)
    for (i, h), s in zip(holes, named):
        v = vals[h]
        full[i] = v
        s.add(v)
    return fn(*full, *obs, t)


def _shaped(g0: Any, vals: list[str], t: str) -> Any:
    return g0(t, vals)


def _bound(g0: Any, vals: list[str]) -> Any:
    """A shape's call with this line's element values bound: the call for the whole text. The
    values are named here, once (`named` sets only grow, so naming them again per call is moot)."""
    if isinstance(g0, functools.partial) and g0.func is _with_holes and not g0.keywords:
        fn, args, holes, obs, named = g0.args
        full = list(args)
        for (i, h), s in zip(holes, named):
            full[i] = vals[h]
            s.add(vals[h])
        return functools.partial(fn, *full, *obs)
    return functools.partial(_shaped, g0, vals)


def _as_thread(fn: Any, args: tuple, mine: tuple, obs: tuple, named: tuple, t: str) -> Any:
    """Call a compiled step whose parameters at `mine` are the acting thread's own element."""
    full = list(args)
    for i in mine:
        full[i] = t
    for s in named:
        s.add(t)
    return fn(*full, *obs, t)
