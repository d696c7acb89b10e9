"""A counterexample (spec.results.CexStep records) as something a reviewer reads: the start
state, one column per thread (lockdep style), lock holdings, the failing step with its values
before/after, and a legend for every state name shown. Derived from the records only: the
verdict and the path come from the prover, nothing is re-executed here."""
from __future__ import annotations

import re
from dataclasses import dataclass

from spmcheck.spec.results import CexStep, ProofResult

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


# ---- what went stale: the highlight of a counterexample's picture ------------------------------
# Derived from the view's records only (steps, their changes, the states after each step, the
# lock holdings) plus what the definition says about its state (initial values, protecting
# locks) and, for a deadlock, the variant's static lock graph. Never from step numbers.

@dataclass(frozen=True)
class Highlight:
    kind: str  # "stale-state" | "stale-read" | "unprotected" | "stuck" | "changed" (legend.HIGHLIGHTS)
    first: int  # step index where the band begins (0: the start state)
    last: int  # step index where it ends (the failing step)
    text: str  # what went stale, in plain words
    thread: str = ""  # "": the state is shared (the band crosses every lane); else that thread's lane
    marks: tuple[tuple[int, str], ...] = ()  # (step, role): a key of legend.MARKS
    link: tuple[int, int] | None = None  # (from step, to step): e.g. the stale read -> the insert


P1_NAME, P2_NAME, LD_NAME, P5_NAME, P9_NAME = ("serializer-mirrors-refcount", "creation-consistent",
                                               "lock-discipline", "lock-order-acyclic", "refcount-balanced")


def _true(v: str) -> bool:
    return v not in ("0", "false", "False", "")


def _int(v: str) -> int:
    if v in ("True", "true"):
        return 1
    try:
        return int(v)
    except ValueError:
        return 0


def _funcs(model: str) -> tuple[tuple[re.Pattern[str], object], ...]:
    """(key regex, Func) of the model's state functions, from its one definition in spec.lang."""
    got = _FUNCS.get(model)
    if got is None:
        if model == "core":
            from spmcheck.spec.programs import definition
            from spmcheck.spec.variants import VARIANTS

            funcs = definition(VARIANTS["final"]).funcs
        else:
            from spmcheck.spec.lifecycle.definition import definition as lc_definition
            from spmcheck.spec.lifecycle.variants import LVARIANTS
            from spmcheck.spec.lifecycle.vocabulary import LConfig

            funcs = lc_definition(LVARIANTS["final"], LConfig()).funcs
        out = []
        for f in funcs:
            rx = re.escape(f.key)
            for i in range(len(f.args)):
                rx = rx.replace(re.escape("{%d}" % i), r"(\w+)")
            out.append((re.compile(rx + r"\Z"), f))
        got = _FUNCS[model] = tuple(out)
    return got


_FUNCS: dict[str, tuple[tuple[re.Pattern[str], object], ...]] = {}


def _func(name: str, model: str) -> object | None:
    for rx, f in _funcs(model):
        if rx.match(name):
            return f
    return None


def initial_value(name: str, model: str) -> str:
    """The value of a variable the path never changes: its initial value in the definition."""
    f = _func(name, model)
    init = getattr(f, "init", 0) if f is not None else 0
    if isinstance(init, str):  # an enum: the concrete reading numbers its labels in order
        labels = getattr(getattr(f, "dom", None), "labels", ())
        return str(labels.index(init)) if init in labels else init
    return str(int(init)) if isinstance(init, bool) else str(init)


def value_at(v: CexView, i: int, name: str) -> str:
    """Variable `name` after step position i (-1: the start, before any step)."""
    if i >= 0:
        got = dict(v.states[i]).get(name)
        if got is not None:
            return got
    for s in v.steps:  # before its first change it has the value that change starts from
        for n, before, _ in s.changes:
            if n == name:
                return before
    return initial_value(name, v.model)


def _writes(v: CexView, names: tuple[str, ...], upto: int) -> list[CexStep]:
    return [s for s in v.steps if s.index <= upto and any(n in names for n, _, _ in s.changes)]


def _pos(v: CexView, index: int) -> int:
    return next(i for i, s in enumerate(v.steps) if s.index == index)


def _count(v: CexView, i: int, a: str) -> int:
    return _int(value_at(v, i, "rc.all")) + _int(value_at(v, i, f"rc.{a}"))


def _agents(v: CexView) -> list[str]:
    seen = {m.group(1) for s in v.steps for n, _, _ in s.changes for m in [re.match(r"ser\.e[xn]\.(\d+)\Z", n)] if m}
    return sorted(seen, key=int)


def _stale_p1(v: CexView) -> list[Highlight]:
    """P1: an existing entry whose enabled state disagrees with refcount(a) = rc.all + rc.a; the
    band runs from the step that last changed that refcount to the failing step."""
    f, end = v.failing, len(v.steps) - 1
    out = []
    for a in _agents(v):
        if not _true(value_at(v, end, f"ser.ex.{a}")):
            continue
        en, n = _true(value_at(v, end, f"ser.en.{a}")), _count(v, end, a)
        if en == (n > 0):
            continue
        rc = _writes(v, ("rc.all", f"rc.{a}"), f.index)
        entry = _writes(v, (f"ser.ex.{a}", f"ser.en.{a}"), f.index)
        first = rc[-1].index if rc else entry[-1].index if entry else 0
        marks = ([(rc[-1].index, "change")] if rc else []) + ([(entry[-1].index, "write")] if entry else [])
        text = (f"serializer.{a} {'enabled' if en else 'disabled'} while refcount({a})={n}, "
                f"steps {first}–{f.index}")
        if entry and rc and entry[-1].index > rc[-1].index:
            e = entry[-1]
            text += f" ({e.thread}'s {e.action} at step {e.index} set it from a stale decision)"
        out.append(Highlight("stale-state", first, f.index, text, "", tuple(marks)))
    return out


def _stale_p2(v: CexView) -> list[Highlight]:
    """P2: the value the insert was made from (the inserting thread's refcount_read in this call,
    or, where the lookup reads the process-wide flag, the flag's last store) and the step that
    overtook it (another thread changing that refcount or taking the refcount lock to do so)."""
    f = v.failing
    if f.action != "serializer_insert" or "agent" not in dict(f.args):
        return []
    a, t, end = dict(f.args)["agent"], f.thread, len(v.steps) - 1
    mine = [s for s in v.steps if s.thread == t and s.index < f.index]
    begin = max((s.index for s in mine if s.action == "lookup_begin"), default=0)
    reads = [s for s in mine if s.index >= begin and s.action == "refcount_read" and dict(s.args).get("agent") == a]
    now = _count(v, end, a)
    if reads:
        r = reads[-1]
        c = dict(r.args).get("count", value_at(v, _pos(v, r.index) - 1, "rc.all"))
        over = next((s for s in v.steps if r.index < s.index < f.index and s.thread != t and (
            any(n in ("rc.all", f"rc.{a}") for n, _, _ in s.changes)
            or (s.action == "lock_acquire" and dict(s.args).get("lock") == "refcount"
                and dict(s.args).get("mode") == "exclusive"))), None)
        text = f"{t} read refcount({a})={c} at step {r.index}"
        if over is None:
            text += f"; the insert at step {f.index} was made from it (refcount({a}) is {now} now)"
        elif over.action == "lock_acquire":
            text += (f"; {over.thread} took the refcount lock to change it at step {over.index}; the insert at "
                     f"step {f.index} went ahead on the stale {c}")
        else:
            text += (f"; {over.thread} changed it at step {over.index}; the insert at step {f.index} used the "
                     f"stale {c} (refcount({a}) is {now} now)")
        marks = ((r.index, "read"),) + (((over.index, "overtake"),) if over else ())
        return [Highlight("stale-read", r.index, f.index, text, t, marks, (r.index, f.index))]
    flag = _writes(v, ("flag",), f.index - 1)
    if flag:
        w = flag[-1]
        val = value_at(v, _pos(v, w.index), "flag")
        text = (f"the insert at step {f.index} used flag={val} ({w.thread} stored it at step {w.index}) while "
                f"refcount({a})={now}")
        return [Highlight("stale-read", w.index, f.index, text, "", ((w.index, "write"),), (w.index, f.index))]
    return []


def _held_at(v: CexView, t: str, index: int) -> list[Holding]:
    return [h for h in v.holdings if h.thread == t and h.first <= index and (h.last == 0 or h.last >= index)]


def _mode(h: Holding) -> str:
    return "w" if h.mode == "exclusive" else "r"


def _unprotected(v: CexView) -> list[Highlight]:
    """lock discipline: the failing step's access, the locks its thread holds there, and the lock
    the definition says protects what it touches (`guarded`)."""
    f = v.failing
    held = _held_at(v, f.thread, f.index)
    data = [n for n, _, _ in f.changes if not _hidden(n)]
    guards: list[str] = []
    for n in data:
        for g in getattr(_func(n, v.model), "guarded", ()):
            if g not in guards:
                guards.append(g)
    holds = ", ".join(f"{h.lock}({_mode(h)}) since step {h.first}" for h in held) or "no lock"
    what = (f"writes {', '.join(data)}" if data else f"runs {action_text(f)}")
    text = f"{f.thread} {what} at step {f.index} holding {holds}"
    if guards:
        text += f"; {'a write' if data else 'this access'} needs {' or '.join(guards)} " + (
            "exclusive" if data else "held")
    relevant = [h for h in held if h.lock.split(".")[0] in guards] or held
    first = min((h.first for h in relevant), default=f.index) or f.index
    return [Highlight("unprotected", first, f.index, text, f.thread, ((f.index, "access"),))]


def _cycle_edges(v: CexView) -> set[tuple[str, str]]:
    """Edges on a cycle of the variant's static lock graph (core), else none."""
    if v.model != "core":
        return set()
    try:
        from spmcheck.spec.lockgraph import explore_edges

        g = explore_edges(v.variant)
    except Exception:  # noqa: BLE001 - no graph: the highlight names the held locks only
        return set()
    return {(c[i], c[(i + 1) % len(c)]) for c in g.cycles for i in range(len(c))}


def _stuck(v: CexView) -> list[Highlight]:
    """P5: each thread still holding locks at the end, what it holds and, from the cycle of the
    static lock graph, the lock it waits for (held by another stuck thread)."""
    f = v.failing
    open_ = [h for h in v.holdings if h.last == 0]
    threads = [t for t in v.threads if any(h.thread == t for h in open_)]
    cyc = _cycle_edges(v)
    holder = {h.lock.split(".")[0]: h.thread for h in open_}
    out = []
    for t in threads:
        mine = [h for h in open_ if h.thread == t]
        classes = {h.lock.split(".")[0] for h in mine}
        wants = sorted({b for a, b in cyc if a in classes and holder.get(b, t) != t})
        text = f"{t} holds " + ", ".join(f"{h.lock}({_mode(h)})" for h in mine)
        text += (f", wants {' and '.join(f'{w} (held by {holder[w]})' for w in wants)}" if wants
                 else ", blocked")
        text += f": stuck from step {min(h.first for h in mine)}"
        first = min(h.first for h in mine) or f.index
        out.append(Highlight("stuck", first, f.index, text, t, tuple((h.first, "acquire") for h in mine if h.first)))
    return out


def _refs(v: CexView) -> list[Highlight]:
    """Lifecycle P9: a refcount that differs from the references the contexts hold, else a
    reference a context still holds when the failing step ends its start or stop."""
    f, end = v.failing, len(v.steps) - 1
    names = sorted({n for s in v.steps for n, _, _ in s.changes if re.match(r"(rc|hd\.\d+)\.(all|\d+)\Z", n)})
    scopes = sorted({n.rsplit(".", 1)[1] for n in names})
    out = []
    for x in scopes:
        hd = [n for n in names if n.startswith("hd.") and n.endswith(f".{x}")]
        rc, held = _int(value_at(v, end, f"rc.{x}")), sum(_int(value_at(v, end, n)) for n in hd)
        w = _writes(v, tuple(hd) + (f"rc.{x}",), f.index)
        first = w[-1].index if w else 0
        scope = "the 'all' scope" if x == "all" else f"agent {x}"
        if rc != held:
            out.append(Highlight("stale-state", first, f.index, f"refcount({x})={rc} but the contexts hold {held} "
                                 f"reference(s) on {scope}, steps {first}–{f.index}", "", ((first, "change"),)))
            continue
        for n in hd:
            k = _int(value_at(v, end, n))
            if k > 0:
                ws = _writes(v, (n,), f.index)
                first = ws[-1].index if ws else 0
                c = n.split(".")[1]
                out.append(Highlight("stale-state", first, f.index,
                                     f"context {c} still holds {k} reference(s) on {scope} (refcount({x})={rc}) "
                                     f"when {f.thread}'s {f.action} runs at step {f.index}, since step {first}",
                                     "", ((first, "change"),)))
    return out


def _changed(v: CexView) -> list[Highlight]:
    """Any other property: each variable the failing step changes, from the step that gave it its
    previous value; a failing step that changes no data: the state after it."""
    f = v.failing
    out = []
    for n, before, after in f.changes:
        if _hidden(n):
            continue
        w = _writes(v, (n,), f.index - 1)
        first = w[-1].index if w else 0
        since = f"step {first}" if first else "the start"
        out.append(Highlight("changed", first, f.index, f"{n} was {before} from {since}; step {f.index} "
                             f"({f.thread} {action_text(f)}) sets it to {after}", "",
                             ((first, "write"),) if first else ()))
    if not out:
        out.append(Highlight("changed", f.index, f.index, failing_reason(v), f.thread))
    return out


def highlights(v: CexView) -> tuple[Highlight, ...]:
    """What the picture highlights as stale or inconsistent at the failing step (never empty)."""
    rule = {P1_NAME: _stale_p1, P2_NAME: _stale_p2, LD_NAME: _unprotected, P5_NAME: _stuck,
            P9_NAME: _refs}.get(v.property)
    got = rule(v) if rule else []
    return tuple(got or _changed(v))
