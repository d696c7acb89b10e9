"""The race's lines on a P1/P2 violation (checker/race_lines.py): for a stale lookup the read, the
update after it and the insert; for an apply-after-unlock the crossed count changes and the late
apply, with the agent and the counts. Checked against the events of the cited lines themselves
(kinds, threads, order, values), on both formats (the v2 rewrite of each trace must cite the same
lines). C++ runs: tests/test_cpp.py."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from spmcheck.checker import check_cli
from spmcheck.checker.convert import v1_to_v2
from spmcheck.checker.race_lines import cite
from spmcheck.checker.replay import check_path
from spmcheck.checker.results import FileResult, Race

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "traces"


def _words(text: str) -> tuple[str, str, dict[str, str]]:
    w = text.split()
    return w[1], w[2], dict(x.split("=", 1) for x in w[3:])


def count_before(text: str, agent: str, line: int) -> int:
    """refcount(agent) = rc[all] + rc[agent] just before `line`, summed from the file's changes."""
    n = 0
    for i, ln in enumerate(text.splitlines()[:line - 1], 1):
        w = ln.split()
        if len(w) > 2 and w[2] == "refcount_change":
            a = dict(x.split("=", 1) for x in w[3:])
            if a["agent"] in (agent, "all"):
                n += int(a["new"]) - int(a["old"])
    return n


def assert_change_cited(race: Race, text: str, ln: int, a: dict[str, str]) -> None:
    before = count_before(text, race.agent, ln)
    after = before + int(a["new"]) - int(a["old"])
    assert f"{before}->{after} at line {ln}" in race.summary, (ln, before, after, race.summary)


def assert_stale_read(r: FileResult, text: str) -> None:
    """The race of a P2 violation at a serializer_insert: a read by the inserting thread, at least
    one count change of that agent by another thread between read and insert, the insert last."""
    race = r.race
    assert isinstance(race, Race) and race.kind == "stale-read", r
    lines = text.splitlines()
    cited = [(e.line, *_words(lines[e.line - 1])) for e in race.lines]
    assert [ln for ln, *_ in cited] == sorted(ln for ln, *_ in cited)
    # cited in line order: an update still under way may have begun before the read
    (il, it, ik, ia) = cited[-1]
    reads = [c for c in cited[:-1] if c[2] == "refcount_read" and c[1] == it]
    assert len(reads) == 1 and (ik, il) == ("serializer_insert", r.line), cited
    (rl, rt, rk, ra) = reads[0]
    agent = ia["agent"]
    assert ra["agent"] == agent == race.agent
    updates = [c for c in cited[:-1] if c is not reads[0]]
    # the update: another thread's count change of that agent between read and insert, or (P2
    # also forbids an insert while an update is under way) an update of that agent begun before
    # the insert and not ended there
    changes = [u for u in updates if u[2] == "refcount_change"]
    begun = [u for u in updates if u[2] == "update_begin"]
    assert updates and len(changes) + len(begun) == len(updates), cited
    assert all(t != rt and a["agent"] in (agent, "all") and ln < il for ln, t, k, a in changes), cited
    def inside_rc(t: str, ln: int) -> bool:  # t holds W(refcount) at the insert (acquired, not released)
        held = False
        for w in (x.split() for x in lines[ln:il - 1]):
            if w[1:2] == [t] and w[2:4] in (["lock_acquire", "lock=refcount"], ["lock_release", "lock=refcount"]) \
                    and "mode=exclusive" in w:
                held = w[2] == "lock_acquire"
        return held

    assert all(t != rt and (a["agents"] == "all" or agent in a["agents"].split(",") or inside_rc(t, ln))
               and ln < il and not any(w[1:3] == [t, "update_end"] for w in (x.split() for x in lines[ln:il - 1]))
               for ln, t, k, a in begun), cited
    for ln, _, _, a in changes:
        if ln > rl:
            assert_change_cited(race, text, ln, a)
    assert f"refcount({agent})={ra['count']} at line {rl}" in race.summary
    assert f"at line {il} from the stale {ra['count']}" in race.summary
    assert f"refcount({agent})={count_before(text, agent, il)} at the insert" in race.summary


def assert_late_apply(r: FileResult, text: str) -> None:
    """The race of a P1 violation by apply-after-unlock: the late apply's own count change, another
    thread's change of the same agent after it, and the late apply after both."""
    race = r.race
    assert isinstance(race, Race) and race.kind == "late-apply", r
    lines = text.splitlines()
    cited = [(e.line, *_words(lines[e.line - 1])) for e in race.lines]
    late_line, late_t, late_k, late_a = cited[-1]
    assert late_k in ("serializer_enable", "serializer_disable") and late_a["agent"] == race.agent
    own = [c for c in cited if c[1] == late_t and c[2] == "refcount_change"]
    cross = [c for c in cited if c[1] != late_t and c[2] == "refcount_change"]
    assert len(own) == 1 and cross, cited
    assert own[0][0] < min(c[0] for c in cross) and max(c[0] for c in cross) < late_line
    agent = race.agent
    assert all(c[3]["agent"] in (agent, "all") for c in own + cross)
    # the counts named are refcount(agent) before -> after each cited change, and at the failure
    for ln, _, _, a in own + cross:
        assert_change_cited(race, text, ln, a)
    state = "enabled" if late_k == "serializer_enable" else "disabled"
    assert f"agent {agent}" in race.summary and f"at line {late_line}" in race.summary
    assert f"serializer.{agent} {state} while refcount({agent})={count_before(text, agent, r.line + 1)}" in race.summary


def assert_global_switch(r: FileResult, text: str) -> None:
    """The race of a P1 violation in the pre-refcount era (G0, one process-wide switch): a stop's
    disable of the agent's entry while another thread's start is still in force -- that thread's
    only flag store between its start and the disable is the start's own (its stop, if begun, has
    not taken effect)."""
    race = r.race
    assert isinstance(race, Race) and race.kind == "global-switch", r
    lines = text.splitlines()
    cited = [(e.line, *_words(lines[e.line - 1])) for e in race.lines]
    assert [ln for ln, *_ in cited] == sorted(ln for ln, *_ in cited)
    late_line, late_t, late_k, late_a = cited[-1]
    assert late_k == "serializer_disable" and late_a["agent"] == race.agent and late_line < r.line
    stop = [c for c in cited if c[1] == late_t and c[2] == "update_begin"]
    assert len(stop) == 1 and stop[0][3]["enable"] == "0" and stop[0][0] < late_line, cited
    starts = [c for c in cited if c[1] != late_t and c[2] == "update_begin"]
    assert starts, cited
    for ln, t, _, a in starts:
        assert a["enable"] == "1" and (a["agents"] == "all" or race.agent in a["agents"].split(","))
        stores = [i for i, w in enumerate(lines[ln:late_line - 1]) if w.split()[1:3] == [t, "flag_store"]]
        assert len(stores) == 1, (t, ln, stores)  # the start's own store; none of a later stop
        assert f"{t} (started at line {ln})" in race.summary
    assert f"disabled serializer.{race.agent} at line {late_line}" in race.summary


CASES = [("stale-lookup-violated.log", assert_stale_read), ("stale-lookup-a2-u2-l2.log", assert_stale_read),
         ("apply-after-unlock-a2-u2-l2.log", assert_late_apply), ("global-flag-a2-u2-l2.log", assert_global_switch)]


@pytest.mark.parametrize("name,check", CASES)
def test_corpus_race_is_cited_in_both_formats(name: str, check: object, tmp_path: Path) -> None:
    text = (TRACES / name).read_text()
    r1 = check_path(str(TRACES / name))
    check(r1, text)  # type: ignore[operator]
    v2 = v1_to_v2(text, seed=4)
    f = tmp_path / "v2.log"
    f.write_text(v2)
    r2 = check_path(str(f))
    check(r2, v2)  # type: ignore[operator]
    assert r1.race is not None and r2.race is not None
    assert [e.line for e in r2.race.lines] == [e.line for e in r1.race.lines]  # ids carry no meaning


def test_other_properties_get_no_race() -> None:
    assert check_path(str(TRACES / "reversed-lookup-order-a2-u2-l2.log")).race is None
    assert cite("lock-order-acyclic", [(1, "1 u0 update_begin agents=all enable=1")], 1) is None


def test_race_is_printed_and_in_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert check_cli.main([str(TRACES / "apply-after-unlock-a2-u2-l2.log"), "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert ": race: apply after unlock on agent 0:" in text
    doc = json.loads(out.read_text())
    race = doc["results"][0]["race"]
    assert race["kind"] == "late-apply" and race["lines"] and race["lines"][-1]["why"].startswith("the late apply")
    import jsonschema

    schema = json.loads((ROOT / "checker" / "render" / "envelope.schema.json").read_text())
    jsonschema.validate(doc, schema)


def test_stdin_has_no_race_but_the_same_verdict() -> None:
    from spmcheck.checker.replay import check_stream

    data = (TRACES / "stale-lookup-violated.log").read_bytes()
    r = check_stream(io.BytesIO(data), "<stdin>")
    assert r.prop == "creation-consistent" and r.race is None
