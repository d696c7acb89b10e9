"""Differential test: the compiled engine (spec/lang/owcompile.py + checker/owfast.py) against the
interpreter (spec/lang/openworld.py, `--engine interp`), the reference.

Both check the same bytes and must return the same FileResult, field for field (verdict, line,
column, property, code, message, evidence, problems, lock edges, note), on: the corpus (v2 files
and every core v1 file rewritten as v2), random runs of the definition (checker/simulate_v2.py)
for the final design, the known-bad core variants and mutants of the final design
(spec/lang/mutate.py, the ones tests/test_mutation.py uses, but the livelock: its random run
never ends) checked against their own model and
against `final`, and those runs damaged at random (a wrong value, a dropped, repeated or swapped
line, a foreign key, another thread or agent, odd blanks, CRLF, bad UTF-8, a cut last line). The
compiled engine must also never disagree with the interpreter about a step (owfast.DISAGREEMENTS:
it said "fails" and the interpreter replayed the step).
"""
from __future__ import annotations

import dataclasses
import io
import json
import random
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from spmcheck.checker import openworld_check, owfast
from spmcheck.checker.convert import v1_to_v2
from spmcheck.checker.replay import check_stream
from spmcheck.checker.results import FileResult, Verdict
from spmcheck.checker.simulate_v2 import generate
from spmcheck.spec.lang.owcompile import Program
from spmcheck.spec.programs import definition
from spmcheck.spec.variants import VARIANTS

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "traces"
MANIFEST = json.loads((TRACES / "manifest.json").read_text())["files"]
CORE_V1 = sorted(n for n in MANIFEST if not n.startswith("lc-")
                 and (TRACES / n).open().readline().startswith("spmcheck-trace v1"))
MUTANTS = [  # a sample of tests/test_mutation.py's mutants: locks, guards, updates, skipped steps
    "drop-lock:lookup:acq_refcount:lock_acquire:0", "drop-guard:updater:set_state:serializer_enable:1",
    "drop-update:updater:snapshot:lock_acquire:1", "drop-update:updater:acq_map:lock_acquire:0",
    "skip-step:lookup:find:serializer_lookup:0", "skip-step:lookup:read:refcount_read:0",
    "weaken-lock:lookup:acq_map:lock_acquire:0", "drop-lock:updater:acq_refcount:lock_acquire:0",
    "skip-step:updater:acq_map:lock_acquire:0", "drop-guard:updater:idle:update_begin:0",
]


@contextmanager
def engine(name: str) -> Iterator[None]:
    old = openworld_check.ENGINE
    openworld_check.ENGINE = name
    try:
        yield
    finally:
        openworld_check.ENGINE = old


def both(data: bytes) -> FileResult:
    """The interpreter's result, after checking that the compiled engine's is the same."""
    before = owfast.DISAGREEMENTS
    with engine("interp"):
        ref = check_stream(io.BytesIO(data), "t.log")
    with engine("compiled"):
        got = check_stream(io.BytesIO(data), "t.log")
    assert got == ref, (data[:2000], ref, got)
    assert owfast.DISAGREEMENTS == before
    return ref


@contextmanager
def mutant(name: str) -> Iterator[str]:
    v = dataclasses.replace(VARIANTS["final"], name=f"final~{name}", mutation=name, known_bad=True)
    VARIANTS[v.name] = v
    try:
        yield v.name
    finally:
        del VARIANTS[v.name]


def damaged(lines: list[str], rng: random.Random) -> bytes:
    """One random damage of a v2 trace (header kept)."""
    out = list(lines)
    i = rng.randrange(1, max(len(out) - 1, 2))
    w = out[i].split(" ")
    how = rng.randrange(14)
    if how == 0 and len(w) > 3:  # a wrong value
        j = rng.randrange(3, len(w))
        k, _, v = w[j].partition("=")
        w[j] = f"{k}={rng.choice(['0', '1', '2', '-1', '007', 'all', 'gpu9', v + 'x', 'none'])}"
        out[i] = " ".join(w)
    elif how == 1:
        del out[i]  # a gap
    elif how == 2:
        out.insert(i, out[i])  # a repeated number
    elif how == 3 and i + 1 < len(out) - 1:  # two events swapped, numbers kept
        a, b = out[i].split(" ", 1), out[i + 1].split(" ", 1)
        if len(a) == 2 and len(b) == 2:
            out[i], out[i + 1] = f"{a[0]} {b[1]}", f"{b[0]} {a[1]}"
    elif how == 4 and len(w) >= 3:
        out[i] = " ".join(w + ["colour=red"])  # a key the kind does not report
    elif how == 5 and len(w) >= 3:
        w[1] = rng.choice(["42", w[1] + "0", "run_end"])  # another thread
        out[i] = " ".join(w)
    elif how == 6:
        out[i] = out[i].replace(" ", "\t", 1) if rng.random() < 0.5 else out[i].replace(" ", "  ", 2)
    elif how == 7:
        out[i] = out[i] + " "
    elif how == 8:
        out.insert(i, rng.choice(["# a comment", "", "   ", "garbage line", "1x y z"]))
    elif how == 9:
        return "\r\n".join(out).encode()  # CRLF endings, and no newline at the end
    elif how == 10:
        return ("\n".join(out[:i]) + "\n" + out[i][: max(1, len(out[i]) // 2)]).encode()  # cut last line
    elif how == 11 and len(w) > 3:  # another agent, in every later event of that thread
        old = next((x.split("=", 1)[1] for x in w[3:] if x.startswith("agent=")), None)
        if old is not None and old != "all":
            out[i] = out[i].replace(f"agent={old}", "agent=gpu7")
    elif how == 12:
        return ("\n".join(out[:i]) + "\n").encode() + b"\xff\xfe bad bytes\n" + ("\n".join(out[i:]) + "\n").encode()
    elif how == 13:
        out[i] = out[i].replace("lock_acquire", "lock_release").replace("update_end", "lookup_end")
    return ("\n".join(out) + "\n").encode()


def test_the_core_definitions_compile() -> None:
    for name in VARIANTS:
        Program(definition(VARIANTS[name]))


V2 = sorted(n for n in MANIFEST if (TRACES / n).open().readline().startswith("spmcheck-trace v2"))


@pytest.mark.parametrize("name", V2)
def test_corpus(name: str) -> None:
    both((TRACES / name).read_bytes())


@pytest.mark.parametrize("name", CORE_V1)
def test_v1_corpus_rewritten_as_v2(name: str) -> None:
    both(v1_to_v2((TRACES / name).read_text(), seed=len(name)).encode())


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_random_runs_of_every_core_variant(variant: str) -> None:
    verdicts = set()
    for seed, (a, u, l, n) in enumerate([(2, 2, 2, 600), (3, 2, 4, 600), (8, 6, 10, 800)]):
        lines = list(generate(variant, a, u, l, n, seed=seed))
        verdicts.add(both(("\n".join(lines) + "\n").encode()).verdict)
        # the same run against the final design: a bad variant's run diverges or violates there
        lines[0] = lines[0].replace(f"variant={variant}", "variant=final")
        verdicts.add(both(("\n".join(lines) + "\n").encode()).verdict)
    assert verdicts  # the point is the equality inside both()


@pytest.mark.parametrize("name", MUTANTS)
def test_random_runs_of_mutants_against_final(name: str) -> None:
    seen = set()
    with mutant(name) as v:
        for seed in range(3):
            lines = list(generate(v, 2, 2, 3, 500, seed=seed))
            lines[0] = lines[0].replace(f"variant={v}", "variant=final")
            seen.add(both(("\n".join(lines) + "\n").encode()).verdict)
    assert seen


def test_damaged_runs() -> None:
    rng = random.Random(11)
    base = {v: list(generate(v, 3, 2, 3, 300, seed=3)) for v in ("final", "stale-lookup", "apply-after-unlock")}
    verdicts: set[Verdict] = set()
    for k in range(150):
        v = list(base)[k % len(base)]
        text = damaged(base[v], rng)
        verdicts.add(both(text).verdict)
    # the damage reaches every kind of outcome (the comparison is the test; this checks its reach)
    assert {Verdict.MALFORMED, Verdict.DIVERGED, Verdict.INCONCLUSIVE} <= verdicts, verdicts


TAIL_DAMAGE = [  # line -> damaged line(s), each one the general path words or takes differently
    lambda w: [" ".join(w + [w[-1]])] if len(w) > 3 else [" ".join(w)],  # a key given twice
    lambda w: [" ".join(["0" + w[0], *w[1:]])],  # the number with a leading zero
    lambda w: [],  # a gap
    lambda w: [" ".join(w)] * 2,  # a repeated number
    lambda w: [" ".join(w) + " "], lambda w: [" " + " ".join(w)],  # a space at either end
    lambda w: ["\t".join(w)], lambda w: ["  ".join(w)],  # other separators
    lambda w: ["# a comment", "", " ".join(w)],
    lambda w: [f"{w[0]} run_end"],  # an end marker, then more events
    lambda w: [" ".join(w + ["k=caf\u00e9"])], lambda w: [" ".join(w + ["\u00e9t\u00e9=1"])],  # non-ASCII
    lambda w: [" ".join(w + ["=1"])], lambda w: [" ".join(w + ["k="])], lambda w: [" ".join(w + ["k"])],
    lambda w: [" ".join(w + ["1k=2"])], lambda w: [" ".join(w + ["k=a=b"])],  # keys parse_fast refuses / takes
    lambda w: [" ".join(w[:2])],  # too few words
    lambda w: [" ".join(["\u0661", *w[1:]])],  # a digit that is not ASCII
]


def test_damage_after_the_verdict() -> None:
    """The lines after a rejected run's failing line take owfast._tail (no keys or values built);
    every kind of damage there must give what the interpreter's general path gives."""
    rng = random.Random(5)
    base = [list(generate("stale-lookup", 3, 2, 3, 600, seed=s)) for s in range(3)]
    seen: set[str] = set()
    for k in range(3 * len(TAIL_DAMAGE)):
        lines = list(base[k % 3])
        i = rng.randrange(60, len(lines) - 1)  # past the failing line (about line 30)
        lines[i:i + 1] = TAIL_DAMAGE[k % len(TAIL_DAMAGE)](lines[i].split(" "))
        res = both(("\n".join(lines) + "\n").encode())
        seen.update(p.code for p in res.problems)
    # the damage reaches the tail's problems (the comparison is the test; this checks its reach)
    assert {"TRC005", "TRC011", "TRC020"} <= seen, seen


def test_large_blocks_and_long_lines() -> None:
    lines = list(generate("final", 8, 8, 24, 6000, seed=2))
    text = "\n".join(lines) + "\n"
    both(text.encode())  # several read blocks
    cut = text.index("\n", len(text) // 2) + 1
    both((text[:cut] + "# " + "x" * (70 * 1024) + "\n" + text[cut:]).encode())  # an over-long line


def test_data_path_counterexamples() -> None:
    """The data path's exported counterexamples (v2, model=datapath) of the drain/progress row H4,
    which write two cells of one row in one step (`disp(q, 0)`, `disp(q, 1)`), in every revision."""
    from spmcheck.spec.datapath.certs import DatapathCerts
    from spmcheck.spec.datapath.variants import DVARIANTS
    from spmcheck.spec.datapath.verdicts import ROWS, Runner

    run = Runner(certs=DatapathCerts("use"))
    seen = 0
    for row in (r for r in ROWS if r.id == "H4"):
        for v in DVARIANTS:
            d = run.verdict(row, DVARIANTS[v])
            if d.verdict == "violated":
                seen += 1
                both(d.trace().encode())
    assert seen >= 4


def test_auto_interprets_a_short_file_and_compiles_a_long_one() -> None:
    """`--engine auto` (the default): a file of under AUTO_BYTES whose reading this process has not
    compiled is interpreted (nothing is compiled); a longer one, or any file once its reading is
    compiled, takes the compiled engine; `compiled` always compiles. The result is the same."""
    big = (TRACES / "final-v2-cpp-a8-t64.log").read_bytes()
    assert len(big) > 4 * openworld_check.AUTO_BYTES
    small = b"".join(big.splitlines(keepends=True)[:60])
    assert len(small) < openworld_check.AUTO_BYTES
    key = ("core", "final", "")

    def fresh() -> None:
        owfast._PROGRAMS.clear()

    with engine("interp"):
        ref_small = check_stream(io.BytesIO(small), "t.log")
    fresh()
    with engine("auto"):
        assert check_stream(io.BytesIO(small), "t.log") == ref_small
        assert not owfast.built(*key)  # read by the interpreter
        check_stream(io.BytesIO(big), "t.log")
        assert owfast.built(*key)  # long enough to compile
    fresh()
    with engine("compiled"):
        assert check_stream(io.BytesIO(small), "t.log") == ref_small
        assert owfast.built(*key)
