"""The lifecycle in the open world (format v2): its readings agree with the fixed-size v1 replay.

* the constructs the lifecycle uses (Count, Mask, owner(...), finite-only bounds) read the same
  in the interpreter and the compiled engine, on a small protocol written for the purpose;
* every lifecycle v1 trace of the corpus, rewritten as v2 (opaque ids, shuffled sets: checker/
  convert_lifecycle.py), gets the v1 verdict and first failing line from both engines, for every
  property that is a claim of the definition (`Protocol.claims`, `Action.checks`: read
  generically, so a property that becomes a claim is compared from then on);
* the same on seeded random walks of the fixed-size model, final and known-bad variants;
* the v2 simulator (checker/simulate_v2.py `generate_lifecycle`): runs of final are accepted by
  both engines, also at 8 agents / 16 contexts / 64 threads, and every known-bad variant whose
  expected violations include a claim of the definition is rejected in some of its runs.

Cost: the module's tests share one worker (an autouse module fixture: tests/conftest.py groups
them), so each fixed-size model, interpreter reading and compiled program is built once per
variant and reused by the corpus, the walks, the simulated runs and the counterexamples. The
million-dispatch figure at 8 agents / 16 contexts / 64 threads is bench/openworld.py --lifecycle's.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from spmcheck.checker import openworld_check, owfast, replay
from spmcheck.checker.convert_lifecycle import convert_text
from spmcheck.checker.replay import check_path
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.checker.simulate import walk
from spmcheck.checker.simulate_v2 import generate_lifecycle
from spmcheck.spec.events import render_event
from spmcheck.spec.lang.openworld import OpenWorld, open_definition
from spmcheck.spec.lang.syntax import BOOL, NOBODY, Builder, Count, EnumDom, IntDom, Ite, Mask, Var, owner, owner_dom
from spmcheck.spec.lifecycle.definition import definition
from spmcheck.spec.lifecycle.expected import VIOLATED
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.properties import LPROPERTIES
from spmcheck.spec.lifecycle.trace import config_of, header_for, header_record
from spmcheck.spec.lifecycle.variants import LVARIANTS
from spmcheck.spec.lifecycle.vocabulary import LConfig

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(n for n, v in json.loads((ROOT / "traces" / "manifest.json").read_text())["files"].items()
                if n.startswith("lc-"))


@lru_cache(maxsize=None)
def _claims(variant: str) -> frozenset[str]:
    """The properties the definition states as claims (invariants, and step claims of actions)."""
    p = definition(LVARIANTS[variant], LConfig())
    return frozenset(p.claims) | {name for a in p.actions for name, _, _ in a.checks}


def _v2(path: Path, engine: str) -> FileResult:
    old = openworld_check.ENGINE
    openworld_check.ENGINE = engine
    try:
        return check_path(str(path))
    finally:
        openworld_check.ENGINE = old


CLAIMS_ONLY = "#claims"  # a v1 replay whose properties are the definition's claims (below)


@pytest.fixture(autouse=True)
def _claims_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """`check_path(..., only=CLAIMS_ONLY)`: the v1 replay (same Engine, same model) checking just
    the properties that are claims of the definition, with its end-of-run deadlock check."""
    real = replay.engine_for

    def engine_for(h: Any, only: str | None = None) -> replay.Engine:
        if only != CLAIMS_ONLY:
            return real(h, only)
        cfg = config_of(h)
        key = (h.variant, cfg, CLAIMS_ONLY)
        if key not in _ENGINES:
            ps = [LPROPERTIES[c] for c in sorted(_claims(h.variant)) if c in LPROPERTIES]
            props = replay.PropSet(tuple(p for p in ps if p.state is not None),
                                   tuple(p for p in ps if p.watches is not None and p.step is not None))
            # the full replay's model (building one is most of a small trace's cost)
            _ENGINES[key] = replay.Engine(real(h).model, props)
        return _ENGINES[key]

    monkeypatch.setattr(replay, "engine_for", engine_for)


_ENGINES: dict[tuple[Any, ...], replay.Engine] = {}


@pytest.fixture(scope="module", autouse=True)
def _one_worker() -> None:
    """Module-scoped, so every test of the module runs on one xdist worker (tests/conftest.py):
    the per-variant models and readings above are then built once, not once per worker."""


def _expected(v1: Path, variant: str) -> tuple[str, int, str]:
    """v1's verdict, line and property with only the definition's claims as properties: the full
    replay's when it stops on a claim (or on no property), else a replay checking the claims."""
    r = check_path(str(v1))
    if r.verdict is Verdict.VIOLATED and r.prop not in _claims(variant):
        r = check_path(str(v1), only=CLAIMS_ONLY)
    return r.verdict.value, r.line, r.prop


def _both(v2: Path) -> tuple[tuple[str, int, str], tuple[str, int, str]]:
    got = [_v2(v2, e) for e in ("interp", "compiled")]
    return tuple((g.verdict.value, g.line, g.prop) for g in got)  # type: ignore[return-value]


# ---- the constructs, on a protocol written for the purpose -------------------------------------


def _mini() -> Any:
    """Workers turn agents on under one mutex; observations count and list the agents on."""
    b = Builder("mini")
    A = b.sort("agent")
    W = b.sort("worker", "w")
    cnt = b.state("cnt", (), IntDom(0, 2), 0, "cnt")
    on = b.state("on", (A,), BOOL, False, "on.{0}")
    mtx = b.state("mtx", (), owner_dom(W), NOBODY, "mtx")
    pc = b.state("pc", (W,), EnumDom("Pc", ("idle", "held")), "idle", "pc.{0}")
    b.p.pc = {"worker": pc}
    t, a, x = Var("t", W), Var("a", A), Var("x", A)
    b.action(W, "idle", "turn_on", t, params=(a,), static={"agent": a},
             guard=(("the mutex is free", mtx() == NOBODY),),
             updates=((on(a), True), (cnt(), Ite(b.bound(cnt() < 2), cnt() + 1, cnt())), (mtx(), owner(t))),
             goto="held", observe={"count": Count(x, on(x)), "on": Mask(x, on(x)), "cnt": cnt()})
    for at in ("held", "idle"):  # from idle: a worker unlocking a mutex it does not hold
        b.action(W, at, "release", t, guard=(("{t} holds the mutex", mtx() == owner(t)),),
                 updates=((mtx(), NOBODY),), goto="idle")
    return b.p


@lru_cache(maxsize=None)
def _mini_world() -> OpenWorld:
    """One reading of the mini protocol, so the compiled program cached for it is of that reading
    (the cache of the real models' programs is left alone)."""
    return OpenWorld(_mini())


@pytest.fixture
def mini(monkeypatch: pytest.MonkeyPatch) -> Any:
    ow = _mini_world()
    real = openworld_check.reading

    def reading(model: str, variant: str, scope: str = "") -> OpenWorld:
        return ow if model == "mini" else real(model, variant, scope)

    for mod in (openworld_check, owfast):
        monkeypatch.setattr(mod, "reading", reading)
    monkeypatch.setattr(openworld_check, "MODELS", openworld_check.MODELS + ("mini",))
    monkeypatch.setattr(openworld_check, "_variants", lambda m: ["v"] if m == "mini" else [])
    return ow


def _mini_trace(tmp_path: Path, body: list[str]) -> Path:
    p = tmp_path / "mini.log"
    p.write_text("\n".join(["spmcheck-trace v2 model=mini variant=v"] +
                           [f"{i + 1} {ln}" for i, ln in enumerate(body)]) + "\n")
    return p


OK_RUN = ["w1 turn_on agent=g1 count=0 on=none cnt=0", "w1 release",
          "w2 turn_on agent=g2 count=1 on=g1 cnt=1", "w2 release",
          # the finite domain caps cnt at 2; the open world has no cap (the bound reads as true)
          "w3 turn_on agent=g3 count=2 on=g2,g1 cnt=2", "w3 release",
          "w1 turn_on agent=g4 count=3 on=g3,g1,g2 cnt=3", "w1 release"]


def test_constructs_accepted(mini: Any, tmp_path: Path) -> None:
    assert not open_definition(mini.proto).bounds
    assert owfast.program("mini", "v") is not None  # compiled, not left to the interpreter
    p = _mini_trace(tmp_path, OK_RUN)
    assert _both(p) == (("accepted", 0, ""),) * 2


@pytest.mark.parametrize("i, line, want", [
    (6, "w1 turn_on agent=g4 count=2 on=g3,g1,g2 cnt=3", "count=2"),  # a count one short
    (6, "w1 turn_on agent=g4 count=3 on=g3,g1 cnt=3", "on=g3,g1"),  # a mask missing an agent
    (6, "w1 turn_on agent=g4 count=3 on=g3,g1,g2,g1 cnt=3", "on=g3"),  # an agent twice
    (6, "w1 turn_on agent=g4 count=3 on=g3,g1,g2 cnt=2", "cnt=2"),  # the saturated finite value
    (5, "w2 release", "w2 holds the mutex"),  # the owner is the element itself, not any worker
    (5, "w2 turn_on agent=g4 count=3 on=g3,g1,g2 cnt=3", "mutex is free"),
])
def test_constructs_rejected(mini: Any, tmp_path: Path, i: int, line: str, want: str) -> None:
    body = OK_RUN[:i] + [line]  # line i + 2 of the file (after the header)
    p = _mini_trace(tmp_path, body)
    got = [_v2(p, e) for e in ("interp", "compiled")]
    assert [(g.verdict, g.line) for g in got] == [(Verdict.DIVERGED, i + 2)] * 2
    assert got[0].message == got[1].message and want in got[0].message, got[0].message


# ---- the corpus and random walks against v1 ------------------------------------------------------


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_v1_v2(name: str, tmp_path: Path) -> None:
    v1 = ROOT / "traces" / name
    text = v1.read_text()
    variant = text.split("variant=", 1)[1].split()[0]
    v2 = tmp_path / name
    v2.write_text(convert_text(text))
    want = _expected(v1, variant)
    interp, compiled = _both(v2)
    assert interp == compiled == want, (name, want, interp, compiled)


# seeds whose v1 verdicts cover acceptance and a violation of each of four claims (in-flight
# delivery, SPM contexts disjoint, agent scoping, no unserialized dispatch)
WALKS = [("final", 1), ("final", 2), ("exit-over-active", 7), ("conflict-scan-unlocked", 7),
         ("unscoped-hooks", 3), ("slot-cleared-first", 6)]


@pytest.mark.parametrize("variant, seed", WALKS)
def test_random_walk_v1_v2(variant: str, seed: int, tmp_path: Path) -> None:
    cfg = LConfig(agents=2, contexts=2, tools=3, dispatches=12)
    m = replay.engine_for(header_record(cfg, variant)).model  # the model the v1 replay below uses
    lines = [header_for(cfg, variant, (("seed", str(seed)),))] + [render_event(e) for e in walk(m, 160, seed)]
    v1 = tmp_path / "v1.log"
    v1.write_text("\n".join(lines) + "\n")
    v2 = tmp_path / "v2.log"
    v2.write_text(convert_text(v1.read_text(), seed))
    want = _expected(v1, variant)
    interp, compiled = _both(v2)
    assert interp == compiled == want, (variant, seed, want, interp, compiled)


# ---- the v2 simulator ----------------------------------------------------------------------------


def _simulated(tmp_path: Path, variant: str, seed: int, **size: int) -> Path:
    p = tmp_path / f"{variant}-{seed}.log"
    p.write_text("\n".join(generate_lifecycle(variant, seed=seed, **size)) + "\n")
    return p


SMALL = dict(agents=2, contexts=2, tools=3, dispatchers=1, completers=1, dispatches=150, tool_share=0.3)


@pytest.mark.parametrize("seed", [1, 2])
def test_simulated_final_accepted(seed: int, tmp_path: Path) -> None:
    """Both engines accept a random run of final, or reject it at the same line for a claim final
    is expected to break (map-empty-after-drain: a random run may take that path of the model)."""
    p = _simulated(tmp_path, "final", seed, **SMALL)
    interp, compiled = _both(p)
    assert interp == compiled, (interp, compiled)
    verdict, _, prop = interp
    assert verdict == "accepted" or (verdict == "violated" and ("final", prop) in VIOLATED), interp


def test_simulated_final_at_scale(tmp_path: Path) -> None:
    """8 agents, 16 contexts, 64 threads (16 tool, 40 dispatch, 8 completion): ids and thread
    counts no v1 header can declare; the million-dispatch run is bench/openworld.py's."""
    p = _simulated(tmp_path, "final", 3, agents=8, contexts=16, tools=16, dispatchers=40, completers=8,
                   dispatches=3000, tool_share=0.1)
    text = p.read_text()
    threads = {ln.split()[1] for ln in text.splitlines()[1:-1]}
    assert len(threads) == 64 and "spm_enable" in text and "slot_clear" in text
    r = _v2(p, "compiled")
    assert (r.verdict, r.events) == (Verdict.ACCEPTED, len(text.splitlines()) - 2), r.message


BAD = sorted({v for v, prop in VIOLATED if prop in _claims(v) and LVARIANTS[v].known_bad})


@pytest.mark.parametrize("variant", BAD)
def test_simulated_known_bad_rejected(variant: str, tmp_path: Path) -> None:
    """Some seed of eight is rejected, for a claim the variant is expected to break."""
    want = {prop for v, prop in VIOLATED if v == variant} & _claims(variant)
    for seed in range(1, 9):
        r = _v2(_simulated(tmp_path, variant, seed, **SMALL), "compiled")
        if r.verdict is Verdict.VIOLATED:
            assert r.prop in _claims(variant), (seed, r.prop, r.message)
            return
    pytest.fail(f"{variant}: accepted in 8 of 8 runs (expected to break {sorted(want)})")


# one counterexample per claim the known-bad variants break, from the last variant in table order
# that breaks it: the single-bug variants come after pr-758072b, which breaks five claims (one
# variant for five claims, and its no-unserialized-dispatch search alone took 2.6 s)
CEX = sorted({prop: (v, prop) for v, prop in VIOLATED if prop in _claims(v)}.values())


@pytest.mark.parametrize("variant, prop", CEX)
def test_cex_v2_rejected_at_v1_step(variant: str, prop: str, tmp_path: Path) -> None:
    """`spmcheck cex --model lifecycle` (the stored counterexample) rewritten as v2 is rejected
    by both engines for the same property at the same line as the v1 trace."""
    from spmcheck.spec.lifecycle.prove import prove_variant
    from spmcheck.spec.lifecycle.trace import cex_trace

    (r,) = prove_variant(variant, [prop], LConfig(), 60, certs="use")
    v1 = tmp_path / "cex-v1.log"
    v1.write_text(cex_trace(r, LConfig()))
    got = check_path(str(v1), only=prop)
    assert got.verdict is Verdict.VIOLATED and got.prop == prop
    v2 = tmp_path / "cex-v2.log"
    v2.write_text(convert_text(v1.read_text()))
    assert _both(v2) == (("violated", got.line, prop),) * 2


# ---- the packet kinds the run reports (`Reported("spm", c)`) -------------------------------------

START = ("t0 context_register ctx=0", "t0 start_begin ctx=0 result=0", "t0 slot_publish ctx=0",
         "t0 spm_enable ctx=0 agents_mask=0", "t0 spm_set_enabled ctx=0", "t0 marker_release ctx=0")


@pytest.mark.parametrize("spm", [0, 1])
def test_reported_packet_kinds(spm: int, tmp_path: Path) -> None:
    """The context is enabled at the enter hook's snapshot, and the write reports whether it built
    an SPMPacket (`spm=`: a stop may clear `enabled` before `pre_kernel_call` reads it). The
    deliveries are judged against the reported kinds: a run is accepted exactly when it delivers
    once per reported SPMPacket, in v1 and in both v2 engines (where `spm=` is a set of ids)."""
    for delivered in (0, 1, 2):
        events = START + (f"d0 dispatch_write agent=0 id=0 batch=0 instrumented=1 serialize=1 spm={spm}",
                          "d0 dispatch_submit id=0 serialized=1",
                          f"h0 completion_exit id=0 prescan=1 delivered={delivered}", "h0 completion_signal id=0")
        v1 = tmp_path / f"spm{spm}-d{delivered}.log"
        v1.write_text("\n".join([header_for(LConfig(), "final")] +
                                [f"{i + 1} {e}" for i, e in enumerate(events)]) + "\n")
        want = _expected(v1, "final")
        assert (want[0] == "accepted") == (delivered == spm), (spm, delivered, want)
        v2 = tmp_path / f"spm{spm}-d{delivered}-v2.log"
        v2.write_text(convert_text(v1.read_text()))
        assert "spm=" in v2.read_text()
        assert _both(v2) == (want, want), (spm, delivered, want)


# ---- the gate at WriteInterceptor's entry (cpp/DIVERGENCES.md L1) ---------------------------------

STOP = ("t1 stop_begin ctx=0 result=0", "t1 spm_clear_enabled ctx=0 was=1", "t1 queue_sync ctx=0 drained=1",
        "t1 spm_disable ctx=0 agents_mask=0", "t1 slot_clear ctx=0", "t1 marker_release ctx=0")


@pytest.mark.parametrize("gated", [True, False])
def test_stop_between_gate_and_write(gated: bool, tmp_path: Path) -> None:
    """A stop between the gate (not batched: context 0 active) and the enter hook's snapshot (no
    context): accepted in v1 and in both v2 engines with the gate event; without it (an older
    log's one event, read as gate and write at once) every reading gives the same divergence."""
    gate = ("d0 dispatch_gate agent=0 id=0 batch=0",) if gated else ()
    events = START + gate + STOP + ("d0 dispatch_write agent=0 id=0 batch=0 instrumented=0 serialize=0 spm=0",
                                    "d0 dispatch_submit id=0 serialized=0")
    v1 = tmp_path / "v1.log"
    v1.write_text("\n".join([header_for(LConfig(), "final")] + [f"{i + 1} {e}" for i, e in enumerate(events)]) + "\n")
    want = _expected(v1, "final")
    assert want == (("accepted", 0, "") if gated else ("diverged", len(events), "")), want
    v2 = tmp_path / "v2.log"
    v2.write_text(convert_text(v1.read_text()))
    assert ("dispatch_gate" in v2.read_text()) is gated
    assert _both(v2) == (want, want)
