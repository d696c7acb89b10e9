"""Trace format v2 and the open-world reading of the definition (spec.lang.openworld).

* Every core trace of the corpus, rewritten as v2 (opaque thread ids, named agents, agent sets
  shuffled, no sizes), gets the verdict, property and line it gets as v1: ids carry no meaning.
* A run of 8 agents and 64 threads (no size anywhere) is accepted for final; bad variants' runs
  are caught at scale; known-bad v2 lines are refused with their codes and columns.
* The incremental invariant monitor equals a full evaluation after every event of random runs,
  good and bad variants alike (it is exact, not a sample).
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from spmcheck.checker.convert import v1_to_v2
from spmcheck.checker.openworld_check import Replay, parse_fast, reading
from spmcheck.checker.replay import check_path, check_stream
from spmcheck.checker.results import Verdict
from spmcheck.checker.simulate_v2 import generate
from spmcheck.spec.lang.openworld import World

TRACES = Path(__file__).resolve().parent.parent / "traces"
CORE = sorted(n for n, e in json.loads((TRACES / "manifest.json").read_text())["files"].items()
              if not n.startswith("lc-") and (TRACES / n).open().readline().startswith("spmcheck-trace v1"))


def _check(text: str) -> object:
    return check_stream(io.BytesIO(text.encode()), "t.log")


@pytest.mark.parametrize("name", CORE)
def test_v1_corpus_keeps_its_verdicts_as_v2(name: str) -> None:
    v1 = check_path(str(TRACES / name))
    v2 = _check(v1_to_v2((TRACES / name).read_text(), seed=len(name)))
    assert (v2.verdict, v2.prop, v2.line) == (v1.verdict, v1.prop, v1.line), (name, v2.message, v1.message)


def test_eight_agents_sixty_four_threads_no_sizes() -> None:
    lines = list(generate("final", agents=8, updaters=16, lookups=48, events=20_000, seed=5))
    assert "agents=" not in lines[0] and "updaters=" not in lines[0]
    text = "\n".join(lines) + "\n"
    assert len({ln.split()[1] for ln in lines[1:-1]}) == 64
    assert len({w for ln in lines for w in ln.split() if w.startswith("agent=") and w != "agent=all"}) == 8
    r = _check(text)
    assert r.verdict == Verdict.ACCEPTED, r.message
    assert r.events >= 20_000


@pytest.mark.parametrize("variant,prop", [("stale-lookup", "creation-consistent"),
                                          ("global-flag", "creation-consistent"),
                                          ("reversed-lookup-order", "lock-order-acyclic")])
def test_bad_variants_are_caught_at_eight_agents(variant: str, prop: str) -> None:
    # half the steps are updates: with eight agents the entries are all created in the first few
    # hundred events, and a creation race needs updates interleaved with those creations
    caught = 0
    for seed in range(3):
        r = _check("\n".join(generate(variant, 8, 8, 8, 4000, seed=seed, lookup_share=0.5)) + "\n")
        caught += r.verdict == Verdict.VIOLATED and r.prop == prop
    assert caught == 3


def test_apply_after_unlock_is_caught_under_continuous_lookups() -> None:
    """P1 is judged per agent wherever no count change of it awaits its apply, so lookups that
    never stop (half the events here, from two threads) cannot hide the stale serializer."""
    caught = [_check("\n".join(generate("apply-after-unlock", 2, 3, 2, 20_000, seed=s, lookup_share=0.5)) + "\n")
              for s in range(3)]
    assert all(r.verdict == Verdict.VIOLATED and r.prop == "serializer-mirrors-refcount" for r in caught)


HEADER = "spmcheck-trace v2 model=core variant=final source=hand\n"


def test_agent_sets_in_any_order_and_opaque_ids() -> None:
    text = HEADER + "".join(f"{i + 1} {ln}\n" for i, ln in enumerate([
        "140213 update_begin agents=gpu7,gpu2 enable=1",
        "140213 lock_acquire lock=queues mode=shared",
        "140213 lock_acquire lock=refcount mode=exclusive",
        "140213 lock_acquire lock=serializer_map mode=shared",
        "140213 lock_release lock=serializer_map mode=shared",
        "140213 refcount_change agent=gpu2 old=0 new=1",
        "140213 refcount_change agent=gpu7 old=0 new=1",
    ]))
    r = _check(text)
    assert r.verdict == Verdict.INCONCLUSIVE and r.code == "CHK301", r.message  # still inside the call


def test_negative_value_is_a_divergence_naming_the_step() -> None:
    text = HEADER + "".join(f"{i + 1} {ln}\n" for i, ln in enumerate([
        "77 update_begin agents=gpu0 enable=0",
    ]))
    r = _check(text)
    assert r.verdict == Verdict.DIVERGED and r.code == "CHK201"  # a stop without a start
    text = HEADER + "".join(f"{i + 1} {ln}\n" for i, ln in enumerate([
        "77 lookup_begin agent=gpu0",
        "77 lock_acquire lock=refcount mode=shared",
        "77 refcount_read agent=gpu0 count=-1",
    ]))
    r = _check(text)
    assert r.verdict == Verdict.DIVERGED and r.code == "CHK202" and r.line == 4
    assert "count=-1" in r.message and "count=0" in r.message and "lookup step 'read'" in r.message


@pytest.mark.parametrize("line,code,col", [
    ("1 77 lookup_begin agent=gpu0 colour=red", "CHK205", 30),
    ("1 77 lookup_begin agent", "TRC005", 19),
    ("1 77 teleport agent=gpu0", "CHK204", 1),
    ("1 77 lock_acquire lock=refcount mode=shared", "CHK203", 1),
])
def test_bad_v2_lines(line: str, code: str, col: int) -> None:
    r = _check(HEADER + line + "\n")
    assert (r.code, r.line, r.col) == (code, 2, col), r.message


def test_unknown_variant_and_model_in_the_header() -> None:
    assert _check("spmcheck-trace v2 model=core variant=finl\n").code == "TRC015"
    assert _check("spmcheck-trace v2 model=gpu variant=final\n").code == "TRC015"


def test_run_end_marker_rules() -> None:
    head = "spmcheck-trace v2 model=core variant=final end_marker=1\n"
    body = "1 9 lookup_begin agent=a\n"
    assert _check(head + body).code == "CHK302"  # promised, missing
    assert _check(head + body + "2 run_end\n3 9 lookup_end agent=a\n").code == "TRC020"


@pytest.mark.parametrize("variant", ["final", "apply-after-unlock", "stale-lookup", "global-flag"])
def test_incremental_monitor_equals_full_evaluation(variant: str) -> None:
    ow = reading("core", variant)
    lines = list(generate(variant, 3, 3, 4, 3000, seed=11))
    rp = Replay(ow)
    full = [inv for _, _, inv in ow.invariants]
    for n, ln in enumerate(lines[1:-1], 2):
        ev = parse_fast(ln)
        assert ev is not None
        failed = rp.step(ev, n, ln, "t")
        want = all(inv(rp.w, {}) for inv in full)
        got = failed is None or failed[1] not in ("CHK101",) or failed[2] not in {nm for nm, _, _ in ow.invariants}
        assert got == want, (variant, n, ln, failed)
        if failed is not None:
            break


def test_world_tables_keep_only_what_differs() -> None:
    ow = reading("core", "final")
    w = World(ow.proto)
    t = w.t["pend"]
    t.set(("u", "a"), True)
    t.set(("u", "a"), False)
    assert t.rows == {}  # back to the initial value: nothing is stored
    t.set_row(("u",), True, {"a": False})
    assert t.get(("u", "zz")) is True and t.get(("u", "a")) is False and t.get(("v", "a")) is False


def test_a_thread_may_start_two_contexts_before_stopping_either() -> None:
    """References belong to holders (contexts), not threads (issue 11): a run where tool threads
    act for two contexts each is accepted, and it does contain a thread that starts its second
    context while the first is still started."""
    lines = list(generate("final", agents=8, updaters=4, lookups=8, events=20_000, seed=3, contexts=2))
    r = _check("\n".join(lines) + "\n")
    assert r.verdict == Verdict.ACCEPTED, r.message
    open_refs: dict[str, set[str]] = {}
    overlapped = False
    for ln in lines[1:-1]:
        f = ln.split()
        if f[2] != "update_begin":
            continue
        kv = dict(x.split("=", 1) for x in f[3:])
        holder = kv.get("holder", f[1])
        mine = open_refs.setdefault(f[1], set())
        if kv["enable"] == "1":
            overlapped |= bool(mine)
            mine.add(holder)
        else:
            mine.discard(holder)
    assert overlapped


def test_a_holder_that_stops_what_it_never_started_diverges() -> None:
    """The holder is what the stop is checked against: a stop for a context that holds nothing
    names it in the failed guard."""
    lines = list(generate("final", agents=2, updaters=1, lookups=1, events=50, seed=1))
    body = lines[1:-1]
    bad = [lines[0], *body, f"{len(body) + 1} 777 update_begin agents=all enable=0 holder=nobody"]
    r = _check("\n".join(bad) + "\n")
    assert r.verdict == Verdict.DIVERGED
    assert "nobody holds a reference" in r.message
