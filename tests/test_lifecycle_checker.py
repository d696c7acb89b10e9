"""Lifecycle traces: header + grammar, replay on LifecycleModel, findings, prover cex round trip."""
from __future__ import annotations

import io
import random
from functools import lru_cache

import pytest

from spmcheck.checker.check_cli import main as check_main
from spmcheck.checker.parse import TraceSyntaxError, grammar, lark_parse, parse_line
from spmcheck.checker.replay import check_stream
from spmcheck.spec.lifecycle.expected import VIOLATED, final_findings
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.checker.simulate import walk
from spmcheck.spec.events import Event, LifecycleHeader, render_event, render_header
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import FINDINGS, scenario
from spmcheck.spec.lifecycle.prove import prove_variant
from spmcheck.spec.lifecycle.trace import cex_trace, config_of, header_for, header_record
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.results import ProofResult

HEAD = header_for(LConfig(), "final", (("source", "test"),))


def check(text: str, findings_fail: bool = False) -> FileResult:
    return check_stream(io.BytesIO(text.encode()), "t.log", findings_fail=findings_fail)


def trace(*events: str, head: str = HEAD) -> str:
    return head + "\n" + "".join(f"{i + 1} {e}\n" for i, e in enumerate(events))


START0 = ("t0 context_register ctx=0", "t0 start_begin ctx=0 result=0", "t0 slot_publish ctx=0",
          "t0 spm_enable ctx=0 agents_mask=0", "t0 spm_set_enabled ctx=0", "t0 marker_release ctx=0")
STOP0 = ("t1 stop_begin ctx=0 result=0", "t1 spm_clear_enabled ctx=0 was=1", "t1 queue_sync ctx=0 drained=1",
         "t1 spm_disable ctx=0 agents_mask=0", "t1 slot_clear ctx=0", "t1 marker_release ctx=0")
DISPATCH0 = ("d0 dispatch_write agent=0 id=0 batch=0 instrumented=1 serialize=1 spm=1",
             "d0 dispatch_submit id=0 serialized=1", "h0 completion_exit id=0 prescan=1 delivered=1",
             "h0 completion_signal id=0")


# ---- header and grammar --------------------------------------------------------------------------
def test_header_round_trip_and_config() -> None:
    cfg = LConfig(agents=3, contexts=2, tools=3, dispatches=5, max_ids=2, timeouts=False, deactivate=True)
    text = header_for(cfg, "set-agents-race", (("seed", "4"), ("date", "2026-01-01T00:00:00Z")))
    assert text == ("spmcheck-trace v1 model=lifecycle variant=set-agents-race agents=3 contexts=2 tools=3 "
                    "dispatches=5 max_ids=2 timeouts=0 deactivate=1 destroy=0 seed=4 date=2026-01-01T00:00:00Z")
    h = parse_line(text)
    assert isinstance(h, LifecycleHeader) and h == header_record(cfg, "set-agents-race", h.meta)
    assert render_header(h) == text and lark_parse(text) == h
    assert config_of(h) == cfg


def test_core_header_unchanged() -> None:
    h = parse_line("spmcheck-trace v1 variant=final agents=2 updaters=2 lookups=2 seed=1")
    assert h is not None and h.model == "core" and not isinstance(h, LifecycleHeader)


def _walk_lines(variant: str, seed: int, cfg: LConfig) -> list[str]:
    return [render_event(e) for e in walk(LifecycleModel(cfg, variant), 120, seed)]


@lru_cache(maxsize=1)
def _sample() -> tuple[str, ...]:
    cfg = LConfig(dispatches=4, deactivate=True, destroy=True)
    out = [HEAD, header_for(cfg, "final")]
    # the walks rarely get through a whole start/stop (set_agents has many more actions), so every
    # kind also appears in hand-written lines
    out += [f"{i + 1} {e}" for i, e in enumerate(START0 + DISPATCH0 + STOP0 + (
        "t1 start_scan ctx=1 result=2", "t1 deactivate ctx=1 result=1", "t0 profile_destroy ctx=0",
        "t0 set_agents_check ctx=1 agents=0,1 result=0", "t0 set_agents_write ctx=1", "t1 add_callback id=1"))]
    for i, v in enumerate(LVARIANTS):
        out += _walk_lines(v, i, cfg)
    return tuple(out)


def test_every_lifecycle_kind_parses_and_round_trips() -> None:
    lines = _sample()
    kinds = set()
    for line in lines[2:]:
        ev = parse_line(line)
        assert isinstance(ev, Event) and render_event(ev) == line and lark_parse(line) == ev
        kinds.add(ev.kind)
    # every lifecycle step kind shows up in the walks, so every grammar rule is exercised
    assert kinds == {a.kind for v in LVARIANTS for a in LifecycleModel(LConfig(dispatches=1, deactivate=True,
                                                                              destroy=True), v).actions}


def _mutate(rng: random.Random, line: str) -> str:
    i = rng.randrange(len(line) + 1)
    op = rng.randrange(4)
    ch = rng.choice(" \t=_.,:-#019acdeilmnorstx\x00")
    if op == 0:
        return line[:i]
    if op == 1:
        return line[:i] + ch + line[i + 1:]
    if op == 2:
        return line[:i] + ch + line[i:]
    return line[:i] + line[i + 1:]


def test_fast_path_equals_lark_on_fuzzed_lifecycle_lines() -> None:
    rng = random.Random(11)
    lines = _sample()
    ok = err = 0
    for _ in range(3000):
        line = _mutate(rng, rng.choice(lines))
        try:
            want: object = ("ok", lark_parse(line))
        except TraceSyntaxError:
            want = ("err",)
        assert (grammar().fast.regex.fullmatch(line) is not None) == (want[0] == "ok"), repr(line)
        if want[0] == "ok":
            ok += 1
            assert parse_line(line) == want[1]  # type: ignore[index]
        else:
            err += 1
    assert ok > 200 and err > 300


# ---- replay ----------------------------------------------------------------------------------------
def test_start_dispatch_stop_accepted() -> None:
    r = check(trace(*START0, *DISPATCH0, *STOP0))
    assert r.verdict is Verdict.ACCEPTED and r.events == 16 and not r.findings, r


@pytest.mark.parametrize("variant", list(LVARIANTS))
def test_model_walks_never_diverge(variant: str) -> None:
    """The replay accepts as *enabled* every step the model itself takes (differential check of
    replay against the model: a divergence would be a checker bug)."""
    cfg = LConfig(dispatches=4, deactivate=True, destroy=True)
    for seed in range(2):
        r = check(header_for(cfg, variant) + "\n" + "\n".join(_walk_lines(variant, seed, cfg)) + "\n")
        assert r.verdict not in (Verdict.DIVERGED, Verdict.MALFORMED), (r.code, r.message)


@pytest.mark.parametrize("events,code,line", [
    (("t0 context_register ctx=0", "t0 add_callback id=2"), "CHK202", 3),  # first id is 1
    (("t0 context_register ctx=0", "t0 start_begin ctx=0 result=1"), "CHK202", 3),
    ((*START0, "d0 dispatch_write agent=1 id=0 batch=1 instrumented=1 serialize=1 spm=1"), "CHK202", 8),
    (("t0 slot_publish ctx=0",), "CHK203", 2),  # t0 is idle, not at 'publish'
    (("d0 dispatch_write agent=0 id=1 batch=1 instrumented=0 serialize=0 spm=0",), "CHK203", 2),  # id 0 is next
    (("t0 start_begin ctx=0 result=0",), "CHK201", 2),  # context 0 not registered
    (("t0 start_scan ctx=0 result=0",), "CHK204", 2),  # only in conflict-scan-unlocked
    (("t0 lookup_begin agent=0",), "CHK204", 2),  # a core event in a lifecycle trace
])
def test_divergence_codes(events: tuple[str, ...], code: str, line: int) -> None:
    r = check(trace(*events))
    assert (r.verdict, r.code, r.line) == (Verdict.DIVERGED, code, line), r


# ---- the gate at WriteInterceptor's entry, the enter hook's snapshot later (DIVERGENCES.md L1) ----
GATE0 = "d0 dispatch_gate agent=0 id=0 batch=0"  # context 0 (all agents) is active: not batched
LATE_WRITE0 = ("d0 dispatch_write agent=0 id=0 batch=0 instrumented=0 serialize=0 spm=0",  # no active context
               "d0 dispatch_submit id=0 serialized=0")


def test_stop_between_gate_and_write_is_accepted() -> None:
    """WriteInterceptor decided at entry not to batch (context 0 active), a whole stop of context 0
    ran, then the enter hook's snapshot found no active context: the code's order, accepted. The
    same run logged without the gate event reads as gate-and-write at the snapshot (the shorthand
    of older logs), where the decision can only be batch=1: the divergence L1 was."""
    assert check(trace(*START0, GATE0, *STOP0, *LATE_WRITE0)).verdict is Verdict.ACCEPTED
    r = check(trace(*START0, *STOP0, *LATE_WRITE0))
    assert (r.verdict, r.code, r.line) == (Verdict.DIVERGED, "CHK202", len(START0) + len(STOP0) + 2), r
    assert "observed batch=0 but the model gives batch=1" in (r.message or "")


def test_start_between_gate_and_write_is_accepted() -> None:
    """No context at the gate (batched), context 0 started before the snapshot: the batched write
    is instrumented and serialized by it."""
    events = ("d0 dispatch_gate agent=0 id=0 batch=1", *START0,
              "d0 dispatch_write agent=0 id=0 batch=1 instrumented=1 serialize=1 spm=1", *DISPATCH0[1:])
    assert check(trace(*events)).verdict is Verdict.ACCEPTED


@pytest.mark.parametrize("write,code", [
    ("d0 dispatch_write agent=1 id=0 batch=0 instrumented=1 serialize=1 spm=1", "CHK203"),  # another agent
    ("d0 dispatch_write agent=0 id=1 batch=0 instrumented=1 serialize=1 spm=1", "CHK203"),  # another id
    (GATE0, "CHK203"),  # a second gate before the write
    ("d0 dispatch_write agent=0 id=0 batch=1 instrumented=1 serialize=1 spm=1", "CHK202"),  # not the gate's batch
])
def test_the_write_follows_its_own_gate(write: str, code: str) -> None:
    r = check(trace(*START0, GATE0, write))
    assert (r.verdict, r.code, r.line) == (Verdict.DIVERGED, code, len(START0) + 3), r


def test_a_wrong_gate_decision_is_the_gate_claims() -> None:
    """Context 0 collects on agent 1 only; a write on agent 0 decides at its gate not to batch.
    process-wide-batching's gate (is_any_active) decides so: rejected by unrelated-queues-batched at
    the gate's line. final's (is_active_on_agent) cannot: the observed decision diverges."""
    start = ("t0 context_register ctx=0", "t0 set_agents_check ctx=0 agents=1 result=0", "t0 set_agents_write ctx=0",
             *START0[1:3], "t0 spm_enable ctx=0 agents_mask=2", *START0[4:])
    events = (*start, GATE0, *LATE_WRITE0)
    r = check(trace(*events, head=header_for(LConfig(), "process-wide-batching")))
    assert (r.verdict, r.code, r.prop, r.line) == (Verdict.VIOLATED, "CHK101", "unrelated-queues-batched",
                                                   len(start) + 2), r
    r = check(trace(*events))
    assert (r.verdict, r.code, r.line) == (Verdict.DIVERGED, "CHK202", len(start) + 2), r
    assert "observed batch=0 but the model gives batch=1" in (r.message or "")


def test_queue_sync_picks_the_action_whose_guard_holds() -> None:
    # in flight while stopping: drained=0 is the timeout action; drained=1 is a wrong observation
    flight = (*START0, DISPATCH0[0], DISPATCH0[1], *STOP0[:2])
    assert check(trace(*flight, "t1 queue_sync ctx=0 drained=0", *STOP0[3:], *DISPATCH0[2:])).verdict \
        is Verdict.ACCEPTED
    r = check(trace(*flight, "t1 queue_sync ctx=0 drained=1"))
    assert (r.verdict, r.code, r.line) == (Verdict.DIVERGED, "CHK201", 12)
    idle = (*START0, *STOP0[:2])
    r = check(trace(*idle, "t1 queue_sync ctx=0 drained=0"))  # queues idle: the sync cannot time out
    assert (r.verdict, r.code) == (Verdict.DIVERGED, "CHK202")
    no_timeouts = header_for(LConfig(timeouts=False), "final")
    r = check(trace(*flight, "t1 queue_sync ctx=0 drained=0", head=no_timeouts))
    assert (r.verdict, r.code) == (Verdict.DIVERGED, "CHK201")


def test_queue_sync_judges_each_queue_over_the_whole_drain() -> None:
    """queue_controller_sync() syncs the queues one after another (digest §2.9): queue 0 was idle
    when the drain began, takes a dispatch after its own sync returned, while queue 1 is still
    draining; drained=1 is correct code behaviour (cpp/DIVERGENCES.md L3, CHK201 before)."""
    # ctx 0 collects on agent 1 only, so the late dispatch on agent 0 leaves its map alone
    start = ("t0 context_register ctx=0", "t0 set_agents_check ctx=0 agents=1 result=0", "t0 set_agents_write ctx=0",
             *START0[1:3], "t0 spm_enable ctx=0 agents_mask=2", *START0[4:])
    busy1 = ("d0 dispatch_write agent=1 id=0 batch=0 instrumented=1 serialize=1 spm=1",
             "d0 dispatch_submit id=0 serialized=1")
    late0 = ("d0 dispatch_write agent=0 id=1 batch=1 instrumented=0 serialize=0 spm=0",
             "d0 dispatch_submit id=1 serialized=0")
    done1 = ("h0 completion_exit id=0 prescan=1 delivered=1", "h0 completion_signal id=0")
    stop = (*STOP0[:2], *late0, *done1, "t1 queue_sync ctx=0 drained=1", "t1 spm_disable ctx=0 agents_mask=2",
            *STOP0[4:], "h0 completion_exit id=1 prescan=0 delivered=0", "h0 completion_signal id=1")
    r = check(trace(*start, *busy1, *stop))
    assert r.verdict is Verdict.ACCEPTED, r
    # queue 1 never idle during the drain (its dispatch completes only after the sync): drained=1
    # is rejected, drained=0 (a timeout) is the model's step
    never = (*start, *busy1, *STOP0[:2], *late0)
    r = check(trace(*never, "t1 queue_sync ctx=0 drained=1"))
    assert (r.verdict, r.code, r.line) == (Verdict.DIVERGED, "CHK201", len(never) + 2), r  # line 1: the header
    assert "was 0 at some instant of the drain" in (r.message or "")
    assert check(trace(*never, "t1 queue_sync ctx=0 drained=0", "t1 spm_disable ctx=0 agents_mask=2", *STOP0[4:],
                       *done1, *stop[-2:])).verdict is Verdict.ACCEPTED
    # a queue idle when the drain began and busy only before it: no sync could time out
    r = check(trace(*start, *busy1, *done1, *STOP0[:2], "t1 queue_sync ctx=0 drained=0"))
    assert (r.verdict, r.code) == (Verdict.DIVERGED, "CHK202"), r
    # a queue idle at both ends of the drain but busy in between: its sync may have timed out
    # (written after `enabled` was cleared: the fallback packet, no delivery)
    between = ("d0 dispatch_write agent=1 id=0 batch=0 instrumented=1 serialize=1 spm=0",
               "d0 dispatch_submit id=0 serialized=1", "h0 completion_exit id=0 prescan=1 delivered=0",
               "h0 completion_signal id=0")
    r = check(trace(*start, *STOP0[:2], *between, "t1 queue_sync ctx=0 drained=0",
                    "t1 spm_disable ctx=0 agents_mask=2", *STOP0[4:]))
    assert r.verdict is Verdict.ACCEPTED, r


def test_queue_sync_leaves_a_late_dispatch_of_a_synced_queue_in_the_map() -> None:
    """The finding the sequential drain brings out (map-empty-after-drain, P4 corollary, expected
    violated for final): queue 0's sync returned, then a dispatch on agent 0, which the stopping
    context still instruments (its slot is published until phase 3; `enabled` is cleared, so
    pre_kernel_call inserts the EmptyAQLPacket fallback, digest §2.5), is submitted before queue
    1's sync returns: the drain succeeds with that dispatch's packet in the context's map."""
    busy1 = ("d0 dispatch_write agent=1 id=0 batch=0 instrumented=1 serialize=1 spm=1",
             "d0 dispatch_submit id=0 serialized=1")
    late0 = ("d0 dispatch_write agent=0 id=1 batch=0 instrumented=1 serialize=1 spm=0",
             "d0 dispatch_submit id=1 serialized=1")
    events = (*START0, *busy1, *STOP0[:2], *late0, "h0 completion_exit id=0 prescan=1 delivered=1",
              "h0 completion_signal id=0", "t1 queue_sync ctx=0 drained=1")
    # a property of the code (final violates it, expected.final_findings): a finding at the
    # drain's line, the run accepted; --findings-fail makes it the verdict
    # (the run then ends: the stop finishes, the late dispatch completes with its fallback packet)
    run = (*events, *STOP0[3:], "h0 completion_exit id=1 prescan=1 delivered=0", "h0 completion_signal id=1")
    r = check(trace(*run))
    assert r.verdict is Verdict.ACCEPTED, r
    assert ("map-empty-after-drain", len(events) + 1) in [(f.prop, f.line) for f in r.findings], r.findings
    r = check(trace(*run), findings_fail=True)
    assert r.verdict is Verdict.VIOLATED and r.line == len(events) + 1, r
    # exit-over-active violates it through its own bug (expected.VIOLATED): there it is the verdict
    from spmcheck.checker.replay import lifecycle_props

    fatal = {v: {p.name for p in (*lifecycle_props(LConfig(), v).state, *lifecycle_props(LConfig(), v).step)}
             for v in ("final", "pr-758072b", "exit-over-active")}
    assert "map-empty-after-drain" not in fatal["final"] | fatal["pr-758072b"]
    assert "map-empty-after-drain" in fatal["exit-over-active"], fatal


def test_inconclusive_mid_operation_but_in_flight_dispatch_is_fine() -> None:
    r = check(trace(*START0[:3]))
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "CHK301") and "t0 at 'spm_enable'" in r.message
    r = check(trace(*START0, DISPATCH0[0]))
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "CHK301") and "d0 at 'hooked'" in r.message
    r = check(trace(*START0, GATE0))
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "CHK301") and "d0 at 'gated'" in r.message
    r = check(trace(*START0, *DISPATCH0[:3]))
    assert (r.verdict, r.code) == (Verdict.INCONCLUSIVE, "CHK301") and "h0 at 'exited'" in r.message
    assert check(trace(*START0, *DISPATCH0[:2])).verdict is Verdict.ACCEPTED  # submitted, in flight


@pytest.mark.parametrize("text,code,line,col", [
    (trace("t0 context_register ctx=x"), "TRC005", 2, 22),
    (trace("t0 context_register"), "TRC005", 2, 22),
    (trace("t0 start_bgin ctx=0 result=0"), "TRC009", 2, 5),
    (trace("t0 context_register ctx=0", "d0 dispatch_write agent=0 id=0 batch=1"), "TRC005", 3, 41),
    (trace("t2 context_register ctx=0"), "TRC010", 2, 3),  # tools=2: t0, t1
    (trace("u0 context_register ctx=0"), "TRC010", 2, 3),
    (HEAD.replace("model=lifecycle", "model=core") + "\n", "TRC015", 1, 1),
    (HEAD.replace("variant=final", "variant=finale") + "\n", "TRC015", 1, 1),
    (HEAD.replace("timeouts=1", "timeouts=2") + "\n", "TRC015", 1, 1),
    (HEAD.replace("agents=2", "agents=0") + "\n", "TRC015", 1, 1),
    (HEAD.replace(" tools=2", "") + "\n", "TRC005", 1, 68),
])
def test_malformed_lifecycle_lines(text: str, code: str, line: int, col: int) -> None:
    r = check(text)
    assert r.verdict is Verdict.MALFORMED and r.problems, r
    p = r.problems[0]
    assert (p.code, p.line, p.col) == (code, line, col), p


def test_malformed_report_has_file_line_col() -> None:
    from spmcheck.checker.report import text_lines

    lines = text_lines(check(trace("t0 start_bgin ctx=0 result=0")))
    assert any(ln.startswith("t.log:2:5: [TRC009]") for ln in lines), lines


# ---- prover counterexamples replayed by the checker --------------------------------------------
# every known-bad (variant, property) pair spmcheck prove reports; the ones that are the final
# design's own property (expected.final_findings) are notes in a trace, checked below
BAD_PAIRS = sorted(k for k in VIOLATED if k[1] not in final_findings(k[0]))
CODE_PAIRS = sorted(k for k in VIOLATED if k[1] in final_findings(k[0]))
FINDING_CASES = ["stop-returns-after-delivery", "deactivate-releases-references",
                 "no-unserialized-submit-while-enabled", "drain-covers-hooked-dispatches"]


@lru_cache(maxsize=None)
def _cex(variant: str, prop: str) -> tuple[ProofResult, str]:
    (res,) = prove_variant(variant, [prop], LConfig(), timeout=60)
    assert res.verdict == "violated", (res.verdict, res.reason)
    return res, cex_trace(res, LConfig())


def _last_line(text: str) -> int:
    return len(text.rstrip("\n").split("\n"))


@pytest.mark.parametrize("variant,prop", BAD_PAIRS)
def test_cex_round_trip_violated_at_last_line(variant: str, prop: str) -> None:
    res, text = _cex(variant, prop)
    assert text.splitlines()[0] == header_for(scenario(LConfig(), prop), variant,
                                              (("source", "spmcheck-cex"), ("property", prop), ("verdict", "violated")))
    assert _last_line(text) == len(res.counterexample or ()) + 1
    r = check_stream(io.BytesIO(text.encode()), "t.log", only=prop)
    assert (r.verdict, r.code, r.prop, r.line) == (Verdict.VIOLATED, "CHK101", prop, _last_line(text)), r
    full = check(text)  # with every property: rejected no later than the counterexample's last step
    assert full.verdict is Verdict.VIOLATED and full.line <= _last_line(text), full


@pytest.mark.parametrize("prop", FINDING_CASES)
def test_finding_cex_is_a_note_unless_findings_fail(prop: str) -> None:
    assert prop in FINDINGS
    _, text = _cex("final", prop)
    last = _last_line(text)
    r = check(text)
    assert r.verdict in (Verdict.ACCEPTED, Verdict.INCONCLUSIVE), r  # never a violation by default
    assert (prop, last) in {(f.prop, f.line) for f in r.findings}, r.findings
    ends_idle = r.code != "CHK301"
    if prop in ("stop-returns-after-delivery", "deactivate-releases-references"):
        assert ends_idle and r.verdict is Verdict.ACCEPTED  # those counterexamples end with every thread idle
    strict = check(text, findings_fail=True)
    # the path may cross another finding first (the search returns some shortest path, not one
    # that avoids the others); with every finding fatal the run stops no later than its last line,
    # and checked for this finding alone exactly there
    assert strict.verdict is Verdict.VIOLATED and strict.code == "CHK101" and strict.line <= last, strict
    assert strict.prop == prop or (strict.prop in FINDINGS and (strict.prop, strict.line) in
                                   {(f.prop, f.line) for f in r.findings}), strict
    alone = check_stream(io.BytesIO(text.encode()), "t.log", only=prop, findings_fail=True)
    assert (alone.verdict, alone.code, alone.prop, alone.line) == (Verdict.VIOLATED, "CHK101", prop, last), alone


@pytest.mark.parametrize("variant,prop", CODE_PAIRS)
def test_code_property_cex_is_a_note_unless_findings_fail(variant: str, prop: str) -> None:
    """A property the final design violates (map-empty-after-drain) is reported at the
    counterexample's last line as a finding, not as the verdict; alone it is the verdict there."""
    assert CODE_PAIRS and ("final", "map-empty-after-drain") in CODE_PAIRS
    _, text = _cex(variant, prop)
    last = _last_line(text)
    r = check(text)
    assert r.verdict in (Verdict.ACCEPTED, Verdict.INCONCLUSIVE) and (prop, last) in {(f.prop, f.line) for f in r.findings}, r
    alone = check_stream(io.BytesIO(text.encode()), "t.log", only=prop)
    assert (alone.verdict, alone.code, alone.prop, alone.line) == (Verdict.VIOLATED, "CHK101", prop, last), alone
    strict = check(text, findings_fail=True)
    assert strict.verdict is Verdict.VIOLATED and strict.line <= last, strict


@pytest.mark.parametrize("timeouts", [False, True])
def test_deactivate_renames_refcount_balanced_to_its_finding(timeouts: bool) -> None:
    """With deactivate=1 the refcount predicate is the finding deactivate-releases-references
    (whatever the other switches), and stays fatal without deactivate."""
    cfg = LConfig(deactivate=True, timeouts=timeouts)
    text = trace(*START0, "t1 deactivate ctx=0 result=0", head=header_for(cfg, "final"))
    r = check(text)
    assert r.verdict is Verdict.ACCEPTED and [(f.prop, f.line) for f in r.findings] == \
        [("deactivate-releases-references", 8)]
    # the same imbalance without deactivate (a stop that skips spm_disable) is a violation
    r = check(trace(*START0, "t1 stop_begin ctx=0 result=0", "t1 spm_clear_enabled ctx=0 was=1",
                    "t1 queue_sync ctx=0 drained=1", "t1 slot_clear ctx=0"))
    assert r.verdict is Verdict.DIVERGED  # the model has no such path: spm_disable comes first


def test_cli_findings_fail(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    import pathlib

    p = pathlib.Path(str(tmp_path)) / "f.log"
    p.write_text(trace(*START0, "t1 deactivate ctx=0 result=0",
                       head=header_for(scenario(LConfig(), "deactivate-releases-references"), "final")))
    assert check_main([str(p)]) == 0
    assert "finding deactivate-releases-references" in capsys.readouterr().out
    assert check_main([str(p), "--findings-fail"]) == 1
    assert "violated deactivate-releases-references at line 8" in capsys.readouterr().out


def test_core_property_outside_its_scenario_is_a_note() -> None:
    """deactivate=1 is outside the core proofs: P3 failing after a deactivate is a note, not fatal."""
    events = (*START0, "t1 deactivate ctx=0 result=0",
              "d0 dispatch_write agent=0 id=0 batch=1 instrumented=0 serialize=0 spm=0",
              "d0 dispatch_submit id=0 serialized=0")
    r = check(trace(*events, head=header_for(LConfig(deactivate=True), "final")))
    assert r.verdict is Verdict.ACCEPTED
    assert ("no-unserialized-dispatch-while-enabled", 9) in {(f.prop, f.line) for f in r.findings}
    # with --findings-fail the first note is the verdict: the deactivate finding, one line earlier
    r = check(trace(*events, head=header_for(LConfig(deactivate=True), "final")), findings_fail=True)
    assert (r.verdict, r.prop, r.line) == (Verdict.VIOLATED, "deactivate-releases-references", 8)
