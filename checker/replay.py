"""Replay a trace through the protocol definition (spec/) on concrete values.

Every event is matched to exactly one `Action` of the model (same name on both sides), its guard
conjuncts and observed values are checked, its effect applied, and the properties evaluated.
Speed comes from memoising, not from a second model: the concrete evaluation is a pure function of
(state, event), so the outcome of each distinct (state, event text) pair is computed once by the
generic model code and then reused (states are interned as tuples). The memo is bounded.
A core file is first tried through the compiled engine (checker/v1fast.py, `--engine compiled`),
whose only verdict is `accepted`; any other outcome is this replay's, from the first line.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import BinaryIO, Callable

from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.events import (END_MARKER_KEY, AnyHeader, Event, Header, LifecycleHeader, RunEnd,
                         promises_end, value_text)
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.expected import final_findings
from spmcheck.spec.lifecycle.properties import CORE_LPROPS, FINDINGS, LPROPERTIES
from spmcheck.spec.lifecycle.properties import meta as lmeta
from spmcheck.spec.lifecycle.trace import MODEL as LIFECYCLE, config_of
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Action, Model
from spmcheck.spec.programs import LABELS, role_of
from spmcheck.spec.properties import PROPERTIES, Property, can_move, claim_of, no_stuck_threads
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config, lock_modes, lv

from . import limits
from .lockgraph import LockGraph, lock_class
from .parse import (FORMAT_VERSION, MAX_BAD_LINES, TraceSyntaxError, grammar,
                    parse_line, read_lines)
from .results import Evidence, FileResult, Finding, Problem, Verdict
from .sequence import Sequence, reordered

MAX_PROBLEMS = 20
MAX_EVIDENCE = 10
MEMO_LIMIT = 1_000_000  # transitions kept before the memo is dropped (bounded memory)
GETTERS_LIMIT = 4096  # distinct read lists whose projection is kept (Engine._getter)
DEADLOCK = "lock-order-acyclic"
MAX_FINDINGS = 20
NO_END_NOTE = (f"no run_end marker (a v1 writer without {END_MARKER_KEY}=1): whether the run finished is "
               "not known")


# The definition's claims are evaluated by their recording variant (Model.claim_recording: the
# same reads, noted inline); False evaluates them on `_Reads` like any other property (the tests
# compare the two).
INLINE_READS = True


class _Reads(dict):  # type: ignore[type-arg]
    """A state that records which variables an evaluation read: those are the ones to explain.
    `read`: the list to record into (shared with claims that record their reads inline)."""

    def __init__(self, s: dict, read: list[str] | None = None) -> None:  # type: ignore[type-arg]
        super().__init__(s)
        self.read: list[str] = [] if read is None else read

    def __getitem__(self, k: str) -> object:
        self.read.append(k)
        return dict.__getitem__(self, k)


@dataclass(frozen=True, slots=True)
class Step:
    """Memoised outcome of one event, valid in every state that agrees on the variables it read."""

    delta: tuple[tuple[int, object], ...]  # (variable index, new value) the action wrote
    edges: tuple[tuple[str, str], ...]  # lock-order edges (held class -> acquired class)
    fail: "Failure | None" = None
    findings: tuple[str, ...] = ()  # finding step properties that failed at this event


@dataclass(frozen=True, slots=True)
class Failure:
    verdict: Verdict
    code: str
    message: str
    prop: str = ""
    reads: tuple[str, ...] = ()  # variables whose last writers are the evidence


# outcome of the state properties: the fatal failure, if any, and the findings failing now
Outcome = tuple["Failure | None", tuple[str, ...]]
_CLEAN: Outcome = (None, ())


@dataclass(frozen=True)
class PropSet:
    """Which properties a replay checks: fatal ones fail the verdict, findings are notes."""

    state: tuple[Property, ...]
    step: tuple[Property, ...]
    finding_state: tuple[Property, ...] = ()
    finding_step: tuple[Property, ...] = ()
    # fatal property -> the finding that reports it instead in this configuration (see lifecycle_props)
    renamed: tuple[tuple[str, str], ...] = ()


def core_props() -> PropSet:
    from spmcheck.spec.properties import CORE_FINDINGS

    return PropSet(tuple(p for p in PROPERTIES.values() if p.state is not None and p.name != DEADLOCK),
                   tuple(p for p in PROPERTIES.values() if p.watches is not None and p.step is not None),
                   tuple(p for p in CORE_FINDINGS.values() if p.state is not None))


def _same_check(a: Property, b: Property) -> bool:
    return (a.state is not None and a.state is b.state) or \
        (a.step is not None and a.step is b.step and a.watches is b.watches)


def _extensions(name: str) -> dict[str, bool]:
    """The behaviours a finding's scenario switches on beyond the main proof scenario (LConfig())."""
    base = LConfig()
    return {k: v for k, v in lmeta(name).scenario.items() if v is True and getattr(base, k) is False}


# Scenario switches that add behaviour the core lifecycle proofs (at LConfig()) do not cover.
# `destroy` is not one: profile_destroy writes only prof.*, which only start guards read, so it can
# only remove behaviours and every core property proved without it still holds with it.
OUTSIDE_SWITCHES = ("deactivate",)


def lifecycle_props(cfg: LConfig, variant: str = "final") -> PropSet:
    """CORE_LPROPS are fatal, FINDINGS are notes, and so are the core properties the final design
    itself violates when the variant violates them for the same reason (expected.final_findings:
    map-empty-after-drain, the code's sequential drain). When the trace switches on a behaviour outside the
    core properties' proof scenario (deactivate=1), they are notes too: a core property checked by
    the very same predicate as a finding whose scenario has that switch is reported under the
    finding's name (refcount-balanced is deactivate-releases-references), the others under their own
    name (the model shows final failing P3 after a deactivate: the leaked reference keeps the
    serializer enabled with no context left to request serialization)."""
    findings = [LPROPERTIES[n] for n in FINDINGS]
    renamed = {}
    for n in CORE_LPROPS:
        for f in findings:
            ext = _extensions(f.name)
            if ext and all(getattr(cfg, k) for k in ext) and _same_check(LPROPERTIES[n], f):
                renamed[n] = f.name
    outside = any(getattr(cfg, k) for k in OUTSIDE_SWITCHES)
    known = final_findings(variant)
    core = [LPROPERTIES[n] for n in CORE_LPROPS if n not in renamed and n != DEADLOCK and n not in known]
    fatal = [] if outside else core
    notes = findings + [LPROPERTIES[n] for n in CORE_LPROPS if n in known] + (core if outside else [])
    return PropSet(tuple(p for p in fatal if p.state is not None),
                   tuple(p for p in fatal if p.watches is not None and p.step is not None),
                   tuple(p for p in notes if p.state is not None),
                   tuple(p for p in notes if p.watches is not None and p.step is not None),
                   tuple(renamed.items()))


class Engine:
    """Model + memo for one (variant, config); reused across files in one process.

    Memo keys are the values of the variables an evaluation actually *read* (recorded by
    `_Reads`; the state properties that are claims of the definition append the same reads
    themselves, Model.claim_recording, at a fraction of a Python `__getitem__` per read). The concrete evaluation is deterministic, so any state that agrees with an earlier
    one on those variables takes the same path, reads the same variables and gets the same result:
    the memo is exact, and far smaller than a memo on whole states (a random walk of 1M events
    visits hundreds of thousands of distinct states but only a few thousand distinct projections).
    """

    def __init__(self, model: Model, props: PropSet | None = None, only: str | None = None) -> None:
        self.model = model
        self.only = only  # checking a single property (`--property`): no lock-cycle/deadlock checks
        self.props = props if props is not None else core_props()
        self.names = model.var_names
        self.index = {n: i for i, n in enumerate(self.names)}
        self.threads = frozenset(model.cfg.threads())
        self.by_thread: dict[str, list[Action]] = {}
        for a in model.actions:
            self.by_thread.setdefault(a.thread, []).append(a)
        self.state_props = list(self.props.state)
        self.step_props = list(self.props.step)
        self.finding_state = list(self.props.finding_state)
        # each state property with its claim's recording variant, if it is a claim (compiled on
        # first use: a core file the compiled engine accepts only ever checks the initial state)
        self._inline = INLINE_READS
        self._state_eval = [(p, claim_of(p.state)) for p in self.state_props]
        self._finding_eval = [(p, claim_of(p.state)) for p in self.finding_state]
        self.finding_step = list(self.props.finding_step)
        self.locks = [(lock, m) for lock in model.cfg.lock_instances() for m in lock_modes(lock)]
        self.reset()

    def reset(self) -> None:
        # event text (after the sequence number) -> [(projection, {projected values: Step}, indices)]
        self.memo: dict[str, list[tuple[Callable[[list[object]], object], dict[object, Step], tuple[int, ...]]]] = {}
        self.prop_memo: list[tuple[Callable[[list[object]], object], dict[object, object], tuple[int, ...]]] = []
        self.size = 0
        self.getters: dict[tuple[str, ...], tuple[tuple[int, ...], Callable[[list[object]], object]]] = {}

    def init_state(self) -> list[object]:
        s = self.model.init_state()
        return [s[n] for n in self.names]

    def _getter(self, reads: list[str]) -> tuple[tuple[int, ...], Callable[[list[object]], object]]:
        # a read list recurs (the state properties read the same keys after nearly every event,
        # ~700 of them over 40 dispatches): its projection is looked up, not rebuilt from a set
        key = tuple(reads)
        got = self.getters.get(key)
        if got is not None:
            return got
        idx = tuple(sorted({self.index[v] for v in reads}))
        if not idx:
            got = idx, lambda st: ()
        elif len(idx) == 1:
            i = idx[0]
            got = idx, lambda st: (st[i],)
        else:
            got = idx, itemgetter(*idx)
        if len(self.getters) >= GETTERS_LIMIT:
            self.getters.clear()
        self.getters[key] = got
        return got

    def _store(self, table_list: list, reads: list[str], st: list[object], value: object) -> None:  # type: ignore[type-arg]
        if self.size >= MEMO_LIMIT:
            self.reset()
            return
        idx, get = self._getter(reads)
        for g, table, known in table_list:
            if known == idx:
                get = g
                break
        else:
            table = {}
            table_list.append((get, table, idx))
        table[get(st)] = value
        self.size += 1

    def lookup(self, st: list[object], body: str) -> Step | None:
        entry = self.memo.get(body)
        if entry:
            for get, table, _ in entry:
                out = table.get(get(st))
                if out is not None:
                    return out
        return None

    def check_state(self, st: list[object]) -> Outcome:
        for get, table, _ in self.prop_memo:
            out = table.get(get(st))
            if out is not None:
                return out  # type: ignore[no-any-return]
        read: list[str] = []  # every key the properties read, in order: the memo key and the evidence
        rec: _Reads | None = None  # made for the first property that is not a claim (none, usually)

        def holds(p: Property, claim: str | None) -> object:
            nonlocal rec
            if claim is not None and self._inline:
                # the claim over the state list, appending the reads `rec` would see
                return self.model.claim_recording(claim)(CONCRETE, st, read)
            if rec is None:
                rec = _Reads(dict(zip(self.names, st)), read)
            return p.state(CONCRETE, rec, self.model)  # type: ignore[misc]

        res: Outcome = _CLEAN
        for p, claim in self._state_eval:
            mark = len(read)
            if not holds(p, claim):
                res = (Failure(Verdict.VIOLATED, "CHK101", f"property {p.name} fails: {p.summary}",
                               p.name, tuple(read[mark:])), ())
                break
        else:
            bad = tuple(p.name for p, claim in self._finding_eval if not holds(p, claim))
            if bad:
                res = (None, bad)
        self._store(self.prop_memo, read, st, res)
        return res

    def options(self, s: dict[str, object], t: str) -> str:
        """What thread t could do in state s (for divergence messages)."""
        out = []
        for a in self.by_thread.get(t, []):
            if all(v for _, v in a.selectors(CONCRETE, s)):
                bad = [d for d, v in a.guards(CONCRETE, s) if not v]
                out.append(a.describe() + (f" (blocked: {bad[0]})" if bad else ""))
        return "; ".join(out[:6]) + (" ..." if len(out) > 6 else "") if out else "nothing"

    def compute(self, st: list[object], ev: Event, body: str | None) -> Step:
        """Evaluate one event with the generic model code; memoise it under `body` if given."""
        rec = _Reads(dict(zip(self.names, st)))
        step = self._compute(rec, ev)
        if body is not None:
            self._store(self.memo.setdefault(body, []), rec.read, st, step)
        return step

    def _compute(self, rec: "_Reads", ev: Event) -> Step:
        t, kind = ev.thread, ev.kind
        act = self._match(rec, ev)
        if isinstance(act, Failure):
            return Step((), (), act)
        for p in self.step_props:
            if p.watches(act):
                mark = len(rec.read)
                if not p.step(CONCRETE, rec, self.model, act):  # type: ignore[misc]
                    return Step((), (), Failure(Verdict.VIOLATED, "CHK101",
                                                f"property {p.name} fails at this step: {p.summary}",
                                                p.name, tuple(rec.read[mark:])))
        found = tuple(p.name for p in self.finding_step
                      if p.watches(act) and not p.step(CONCRETE, rec, self.model, act))  # type: ignore[misc,operator]
        eff = act.effect(CONCRETE, rec)
        edges: tuple[tuple[str, str], ...] = ()
        if kind == "lock_acquire":
            new = lock_class(ev.arg("lock") or "")
            edges = tuple(dict.fromkeys((lock_class(lock), new) for lock, m in self.locks if rec[lv(lock, m, t)]))
        return Step(tuple((self.index[k], v) for k, v in eff.items()), edges, None, found)

    def _match(self, s: "_Reads", ev: Event) -> Action | Failure:
        t, kind, m = ev.thread, ev.kind, self.model
        if t not in self.threads:
            return Failure(Verdict.MALFORMED, "TRC010",
                           f"unknown thread {t!r}: the header declares {', '.join(sorted(self.threads))}")
        statics = m.static_keys.get(kind)
        if statics is None:
            return Failure(Verdict.DIVERGED, "CHK204",
                           f"variant {m.variant.name} has no '{kind}' step; {t} could do: {self.options(s, t)}")
        static = tuple((k, v) for k, v in ev.args if k in statics)
        cands = m.select(t, kind, dict(ev.args))  # fills in the keys an event may omit (holder)
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
        # Several actions can share a thread, kind and static keys and differ only in their guard
        # and observed values (lifecycle queue_sync: drained=1 when the queues are idle, drained=0
        # on a timeout). The event is the one whose guard holds and whose observations match; if
        # none does, the first candidate's first mismatch is the diagnosis (reads of every
        # candidate stay recorded, so the memo remains exact).
        first: Failure | None = None
        for act in chosen:
            bad = self._check_action(s, ev, act)
            if bad is None:
                return act
            if first is None:
                first = bad
        assert first is not None
        return first

    def _check_action(self, s: "_Reads", ev: Event, act: Action) -> Failure | None:
        mark = len(s.read)
        for desc, ok in act.guards(CONCRETE, s):
            if not ok:
                return Failure(Verdict.DIVERGED, "CHK201", f"guard failed: {desc}", reads=tuple(s.read[mark:]))
        mark = len(s.read)
        for k, v in act.observed(CONCRETE, s).items():
            got = ev.arg(k)
            if got != value_text(v):
                return Failure(Verdict.DIVERGED, "CHK202",
                               f"observed {k}={got} but the model gives {k}={value_text(v)}",
                               reads=tuple(s.read[mark:]))
        return None


_ENGINES: dict[tuple[object, ...], Engine] = {}


def only_props(name: str, lifecycle: bool) -> PropSet:
    """Check just one property (fatal, also a finding): confirms that an exported counterexample
    fails the property it was exported for at its last step, even if its path also happens to
    break another property earlier (`spmcheck check --property`)."""
    p = (LPROPERTIES if lifecycle else PROPERTIES)[name]
    return PropSet((p,) if p.state is not None and name != DEADLOCK else (),
                   (p,) if p.watches is not None and p.step is not None else ())


def engine_for(h: AnyHeader, only: str | None = None) -> Engine:
    if isinstance(h, LifecycleHeader):
        cfg = config_of(h)
        key: tuple[object, ...] = (LIFECYCLE, h.variant, cfg, only)
        e = _ENGINES.get(key)
        if e is None:
            props = only_props(only, True) if only else lifecycle_props(cfg, h.variant)
            e = _ENGINES[key] = Engine(LifecycleModel(cfg, h.variant), props, only)
        return e
    key = (h.variant, h.agents, h.updaters, h.lookups, only)
    e = _ENGINES.get(key)
    if e is None:
        e = _ENGINES[key] = Engine(Model(Config(h.agents, h.updaters, h.lookups), h.variant),
                                   only_props(only, False) if only else None, only)
    return e


def _lc_header_problem(h: LifecycleHeader) -> tuple[str, str] | None:
    if h.model_name != LIFECYCLE:
        return "TRC015", (f"unknown model {h.model_name!r}: a header with contexts=/tools=/dispatches= is "
                          f"model={LIFECYCLE}; core traces have no model= key")
    if h.variant not in LVARIANTS:
        return "TRC015", f"unknown lifecycle variant {h.variant!r}; known: {', '.join(LVARIANTS)}"
    bad = limits.lifecycle_problem({k: getattr(h, k) for k in limits.LIFECYCLE})
    return ("TRC015", bad) if bad else None


def _header_problem(h: AnyHeader) -> tuple[str, str] | None:
    if h.version != FORMAT_VERSION:
        return "TRC004", f"format version v{h.version} is not supported (this checker reads v{FORMAT_VERSION})"
    if isinstance(h, LifecycleHeader):
        return _lc_header_problem(h)
    if h.variant not in VARIANTS:
        return "TRC015", f"unknown variant {h.variant!r}; known: {', '.join(VARIANTS)}"
    bad = limits.core_problem(h.agents, h.updaters, h.lookups)
    return ("TRC015", f"config agents={h.agents} updaters={h.updaters} lookups={h.lookups}: {bad}") if bad else None


def finding_summary(pname: str) -> str:
    """What a noted finding (lifecycle or core) says, after its name."""
    from spmcheck.spec.properties import CORE_FINDINGS

    summary = (LPROPERTIES.get(pname) or CORE_FINDINGS[pname]).summary.removeprefix("finding: ")
    if pname not in FINDINGS and pname not in CORE_FINDINGS:
        summary = "(outside its proved scenario: deactivate=1) " + summary
    return summary


def finding_note(pname: str, at_step: bool) -> str:
    """The message of a finding noted at a line (a state finding where it starts to fail)."""
    return ("fails at this step: " if at_step else "fails: ") + finding_summary(pname)


class _Run:
    """Mutable state of checking one file; produces one frozen FileResult."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[Problem] = []
        self.n_problems = 0
        self.stop: tuple[int, Failure, tuple[Evidence, ...]] | None = None  # first replay failure
        self.gap: tuple[int, str] | None = None
        self.findings: list[Finding] = []
        self.n_findings = 0
        self.failing: tuple[str, ...] = ()  # state findings failing after the previous event
        self.ended = 0  # line of the run_end marker (0: none seen)
        self.last_line = 0  # line of the last event or marker read

    def finding(self, prop: str, line: int, message: str) -> None:
        self.n_findings += 1
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append(Finding(prop, line, message))

    def with_findings(self, res: FileResult) -> FileResult:
        """`res` with the findings noted (if any)."""
        if not self.findings:
            return res
        return replace(res, findings=tuple(self.findings), more_findings=self.n_findings - len(self.findings))

    def stopped(self, line: int) -> None:
        """Reading ends at `line`: listed even past the cap, since it says why the rest was not read."""
        self.problems.append(Problem("TRC019", line, 1, f"reading stopped after {MAX_BAD_LINES} bad lines "
                                     "(junk input?); the rest was not read"))

    def problem(self, code: str, line: int, col: int, msg: str) -> None:
        self.n_problems += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(code, line, col, msg))


def check_stream(stream: BinaryIO, name: str, on_edges: Callable[[list], None] | None = None,
                 findings_fail: bool = False, only: str | None = None, reorder_window: int = 0) -> FileResult:
    """Check one trace; never raises on bad input (I/O errors are the caller's). With
    `findings_fail`, the first finding (lifecycle FINDINGS) stops the replay as a violation;
    `reorder_window` N: lines up to N out of sequence order are restored (checker/sequence.py)."""
    run = _Run(name)
    header: AnyHeader | None = None
    eng: Engine | None = None
    state: list[object] = []
    expect = -1  # next sequence number; -1 before the first event
    last_seq = -1
    replaying = False
    events = 0
    lastw: list[int] = []
    lastt: list[str] = []
    graph = LockGraph()
    edge_seen: set[tuple[str, str]] = set()
    seen_any = False

    def note(props: tuple[str, ...], n: int, text: str, at_step: bool) -> Failure | None:
        """Record findings at line n; with --findings-fail the first one is the verdict."""
        for pname in props:
            if findings_fail:
                return Failure(Verdict.VIOLATED, "CHK101", f"finding {pname} fails"
                               + (" at this step: " if at_step else ": ") + finding_summary(pname), pname)
            run.finding(pname, n, finding_note(pname, at_step))
        return None

    def advance(stp: Step, n: int, text: str, col: int, last: bool = False) -> bool:
        """Apply one matched step to `state`; False when the replay has to stop here. `last`: the
        line is the file's last and lacks its newline; if it does not replay it was most likely cut
        inside a token (`mode=sha`), which is a truncation (TRC008), not a protocol verdict."""
        f = stp.fail
        if f is None and stp.findings:
            f = note(stp.findings, n, text, True)
        if f is None:
            for i, v in stp.delta:
                state[i] = v
                lastw[i] = n
                lastt[i] = text
            f, failing = eng.check_state(state)  # type: ignore[union-attr]
            if f is None and failing != run.failing:
                # a state finding is reported where it starts to fail, not on every later line
                f = note(tuple(x for x in failing if x not in run.failing), n, text, False)
                run.failing = failing
        if f is not None:
            run.stop = (n, f, _evidence(f.reads, eng, lastw, lastt, n, text))  # type: ignore[arg-type]
            if f.verdict is Verdict.MALFORMED:
                run.problem(f.code, n, col, f.message)
            elif last:
                run.problem("TRC008", n, col, f"truncated last line (no newline) that does not replay "
                            f"as written: {f.verdict.value} ({f.code}: {f.message})")
            return False
        for e in stp.edges if only in (None, DEADLOCK) else ():
            if e not in edge_seen:
                edge_seen.add(e)
                cyc = graph.add(e[0], e[1], n, name)
                if cyc:
                    ev_lines = tuple(Evidence(ln, f"{a} -> {b}", "first acquisition in this order")
                                     for a, b, ln in cyc)
                    run.stop = (n, Failure(Verdict.VIOLATED, "CHK102", "lock-order cycle (potential deadlock): "
                                           + " -> ".join([c[0] for c in cyc] + [cyc[0][0]]), DEADLOCK), ev_lines)
                    return False
        return True

    last_line = 0  # line of the last event or marker (a local: the fast path stays lean)
    sq = Sequence()
    if only is None and reorder_window == 0:
        fast = _accelerated(stream, name, findings_fail)
        if fast is not None:
            if on_edges is not None:
                on_edges(list(fast.lock_edges))
            return fast
    lines = reordered(read_lines(stream), reorder_window)
    ahead: list[tuple[int, str | None, object, bool]] = []
    for item in lines:  # the first line that is not blank or a comment says which format
        ahead.append(item)
        if item[2] is None and item[1] is not None and item[1].strip() and not item[1].lstrip().startswith("#"):
            if item[1].split()[:2] == ["spmcheck-trace", "v2"]:
                from .openworld_check import check_lines

                # the rest, read in blocks; with a reorder window line by line, through the window
                res = check_lines(lines, name, (item[0], item[1]), None if reorder_window > 0 else stream)
                if on_edges is not None:
                    on_edges(list(res.lock_edges))
                return res
            break
    # the v1 grammar is built here, after the v2 dispatch: a v2 file never needs it
    g = grammar()
    fullmatch = g.fast.regex.fullmatch
    seq_g = g.seq_group
    event_markers = g.event_slots
    for n, text, err, nl in itertools.chain(ahead, lines):  # type: ignore[assignment]
        if err is not None:
            if run.n_problems >= MAX_BAD_LINES:
                run.stopped(n)
                break
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
                body = text[m.end(seq_g):]
                stp = eng.lookup(state, body)  # type: ignore[union-attr]
                if stp is None:
                    ev = parse_line(text)
                    assert isinstance(ev, Event)
                    stp = eng.compute(state, ev, body)  # type: ignore[union-attr]
                events += 1
                last_line = n
                if not advance(stp, n, text, m.start(g.thread_group) + 2, not nl):
                    replaying = False
                continue
        # slow path: comments, header, errors, sequence problems, lines after the replay stopped
        if run.n_problems >= MAX_BAD_LINES:  # problems are only recorded here and on bad reads
            run.stopped(n)
            break
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
        if isinstance(rec, (Header, LifecycleHeader)):
            if header is not None or seen_any:
                run.problem("TRC014" if header is not None else "TRC003", n, 1,
                            "repeated header" if header is not None else "header after the first event")
                replaying = False
                continue
            seen_any = True
            header = replace(rec, file=name, line=n)
            bad = _header_problem(rec)
            if bad:
                run.problem(bad[0], n, 1, bad[1])
                continue
            eng = engine_for(rec, only)
            state = eng.init_state()
            lastw = [0] * len(eng.names)
            lastt = [""] * len(eng.names)
            replaying = not run.problems
            if replaying:
                f0, failing0 = eng.check_state(state)
                if f0 is None and failing0:
                    f0 = note(failing0, n, text, False)
                    run.failing = failing0
                if f0 is not None:
                    run.stop = (n, f0, ())
                    replaying = False
            continue
        # an event or the end marker on the slow path
        ev = rec
        if run.ended:
            what = "a second run_end" if isinstance(ev, RunEnd) else "an event"
            run.problem("TRC020", n, 1, f"{what} after the run_end marker of line {run.ended}")
            replaying = False
            continue
        if header is None:
            if not seen_any:
                run.problem("TRC003", n, 1, "missing header: the first line must be "
                            "'spmcheck-trace v1 variant=... agents=... updaters=... lookups=...' "
                            "(or 'spmcheck-trace v1 model=lifecycle variant=... agents=... contexts=... ...')")
                seen_any = True
            continue
        sq.last, sq.expect = last_seq, expect  # the fast path keeps them in locals
        code, msg = sq.step(ev.seq)
        last_seq, expect = sq.last, sq.expect
        if code in ("TRC011", "TRC012"):
            run.problem(code, n, 1, msg)
            replaying = False
            continue
        if code == "gap":
            if run.gap is None and replaying:
                run.gap = (n, msg)
            replaying = False
        last_line = n
        if isinstance(ev, RunEnd):
            run.ended = n
            replaying = False  # every later event line must take the slow path (TRC020)
            continue
        if not replaying:
            continue
        # a valid event the regex did not take (cannot happen for the grammar-derived regex, but
        # Lark is the definition): replay it through the same path, unmemoised
        events += 1
        col = m.start(g.thread_group) + 2 if m is not None else 1  # the thread's column, as on the fast path
        if not advance(eng.compute(state, ev, None), n, text, col, not nl):  # type: ignore[union-attr]
            replaying = False

    if on_edges is not None:
        on_edges(graph.edges())
    edges = tuple(graph.edges())
    run.last_line = last_line
    return _finish(run, header, eng, state, events, lastw, lastt, edges, seen_any, replaying)


def _accelerated(stream: BinaryIO, name: str, findings_fail: bool = False) -> FileResult | None:
    """A core v1 log through the compiled engine (checker/v1fast.py): its verdict when that run
    ends accepted (findings noted as the v1 replay notes them), else None with `stream` back where
    it was (the v1 replay then reads it all)."""
    from . import openworld_check

    if openworld_check.ENGINE == "interp":
        return None
    try:
        if not stream.seekable():
            return None
        start = stream.tell()
    except (OSError, ValueError):
        return None
    res = _accelerate(stream, name, findings_fail)
    if res is None:
        stream.seek(start)
    return res


def _accelerate(stream: BinaryIO, name: str, findings_fail: bool) -> FileResult | None:
    for n, text, err, _ in read_lines(stream):
        if err is not None or text is None:
            return None
        if not text.strip() or text.startswith("#"):
            continue
        if text.split()[:2] == ["spmcheck-trace", "v2"]:
            return None  # v2 has its own engine (as parse_line would say, without building v1's grammar)
        from .v1fast import Fallback, check_v1

        try:
            h = parse_line(text)
        except TraceSyntaxError:
            return None
        if not isinstance(h, Header) or _header_problem(h) is not None:
            return None  # v2 (it has its own engine), the lifecycle, a bad header
        eng = engine_for(h)
        f0, failing0 = eng.check_state(eng.init_state())
        if f0 is not None or failing0:
            return None
        try:
            return check_v1(stream, name, replace(h, file=name, line=n), n, eng, findings_fail)
        except Fallback:
            return None
    return None


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


def _finish(run: _Run, header: AnyHeader | None, eng: Engine | None, state: list[object], events: int,
            lastw: list[int], lastt: list[str], edges: tuple[tuple[str, str, int], ...],
            seen_any: bool, replaying: bool) -> FileResult:
    return run.with_findings(_verdict(run, header, eng, state, events, lastw, lastt, edges))


def _verdict(run: _Run, header: AnyHeader | None, eng: Engine | None, state: list[object], events: int,
             lastw: list[int], lastt: list[str], edges: tuple[tuple[str, str, int], ...]) -> FileResult:
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
    assert eng is not None and header is not None
    # Violations and divergences above hold for any continuation (they are about a prefix); what
    # follows judges the end of the log, which is only the end of the run if nothing was cut off.
    if not run.ended and promises_end(header):
        return FileResult(name, Verdict.INCONCLUSIVE, events, run.last_line or header.line, 1, "", "CHK302",
                          f"run did not finish: no run_end line, though the header ({END_MARKER_KEY}=1) "
                          "promises one (the writer was interrupted or killed, or the file was cut)",
                          (), (), 0, "", edges)
    if events == 0:
        return FileResult(name, Verdict.INCONCLUSIVE, 0, header.line, 1, "", "CHK303",
                          "no events: the trace is a header alone, which is almost always a broken capture",
                          (), (), 0, "", edges)
    note = "" if run.ended else NO_END_NOTE
    return replace(_end_state(name, eng, state, events, lastw, lastt, edges), note=note)


def _end_state(name: str, eng: Engine, state: list[object], events: int, lastw: list[int], lastt: list[str],
               edges: tuple[tuple[str, str, int], ...]) -> FileResult:
    """The verdict on the state the log ends in: deadlock, a thread inside an operation, or accepted."""
    s = dict(zip(eng.names, state))
    inside = [t for t in eng.model.cfg.threads()
              if s[f"pc.{t}"] != 0]  # label 0 is 'idle' for both roles
    if inside:
        if eng.only in (None, DEADLOCK) and not no_stuck_threads(CONCRETE, s, eng.model):
            held = tuple(v for v in eng.names if v.startswith("lk.") and s[v])
            if not held:
                # no lock variables (lifecycle): the evidence is what the blocked threads' steps
                # read (contexts mutex, markers, in-flight counts, slots)
                rec = _Reads(s)
                for t in inside:
                    can_move(CONCRETE, rec, eng.model, t)
                held = tuple(v for v in dict.fromkeys(rec.read) if not v.startswith("pc."))
            ev = tuple(e for e in _evidence(held, eng, lastw, lastt, 0, "")[:-1])
            return FileResult(name, Verdict.VIOLATED, events, max(lastw, default=0), 1, DEADLOCK, "CHK103",
                              "deadlock: every thread inside an operation is blocked ("
                              + ", ".join(f"{t} at '{LABELS[role_of(t)][int(s[f'pc.{t}'])]}'" for t in inside)
                              + ")", ev, (), 0, "", edges)
        where = ", ".join(f"{t} at '{LABELS[role_of(t)][int(s[f'pc.{t}'])]}'" for t in inside)  # type: ignore[call-overload]
        return FileResult(name, Verdict.INCONCLUSIVE, events, max(lastw, default=0), 1, "", "CHK301",
                          f"log ends while threads are inside an operation: {where}", (), (), 0, "", edges)
    return FileResult(name, Verdict.ACCEPTED, events, 0, 1, "", "", "", (), (), 0, "", edges)


def check_path(path: str, on_edges: Callable[[list], None] | None = None,
               findings_fail: bool = False, only: str | None = None, reorder_window: int = 0) -> FileResult:
    """Check a file by path, or stdin for '-'. A path that cannot be read is `unreadable` (TRC001);
    anything but a regular file (FIFO, character device such as /dev/zero, socket) is refused
    before a byte is read (TRC018): it may never end, or never start (a FIFO without a writer).
    The path is opened non-blocking and then inspected (fstat on the open descriptor), so opening a
    FIFO without a writer cannot block, and nothing can be swapped in between check and read."""
    import os
    import stat
    import sys

    if path == "-":
        return check_stream(sys.stdin.buffer, "<stdin>", on_edges, findings_fail, only, reorder_window)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        return unreadable(path, "TRC001", f"cannot read {path}: {e.strerror or e}")
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            os.close(fd)
            return unreadable(path, "TRC001", f"cannot read {path}: is a directory")
        if not stat.S_ISREG(mode):
            os.close(fd)
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode) \
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "special"
            return unreadable(path, "TRC018", f"{path} is {kind}, not a regular file: it may never end "
                              f"(or never start); to check a stream, pipe it to stdin: spmcheck check - < {path}")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as f:
            res = check_stream(f, path, on_edges, findings_fail, only, reorder_window)
        if res.verdict is not Verdict.VIOLATED:
            return res  # race_lines (imported only when needed: start-up) cites a violation's race
        from .race_lines import attach

        return attach(res, path, reorder_window)  # a core P1/P2 violation: the race's lines
    except OSError as e:
        return unreadable(path, "TRC001", f"cannot read {path}: {e.strerror or e}")


def unreadable(path: str, code: str, msg: str) -> FileResult:
    """The verdict for a path that was not read: no line, no column (nothing of it was seen)."""
    return FileResult(path, Verdict.UNREADABLE, 0, 0, 0, "", code, msg)
