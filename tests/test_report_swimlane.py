"""The swim lane of a counterexample highlights the state that went stale (issue 13): for every
known-bad core variant's counterexample, the lock-discipline mutant's, and a lifecycle one, the
SVG (parsed as XML) has a band of the right kind over the right steps, with a legend entry. The
expected steps are computed here, independently, from the raw steps (CexStep changes folded over
the model's initial state), not with checker.render.cex's helpers."""
from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from typing import Iterator

import pytest

from spmcheck.checker.render import cex as cexr
from spmcheck.checker.render import svg_swimlane
from spmcheck.checker.render.legend import HIGHLIGHTS
from spmcheck.spec.expected import expected
from spmcheck.spec.model import Model
from spmcheck.spec.properties import PROPERTIES
from spmcheck.spec.results import CexStep, ProofResult
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config

SVG = "{http://www.w3.org/2000/svg}"
CFG = Config(2, 2, 2)
P1, P2, LD, P5 = "serializer-mirrors-refcount", "creation-consistent", "lock-discipline", "lock-order-acyclic"
BAD = sorted((v, p) for v in VARIANTS for p in PROPERTIES if expected(v, p)[0] == "violated")
LD_MUTANT = "weaken-lock:lookup:acq_map:lock_acquire:0"  # serializer() emplaces under R(smap)


@pytest.fixture(scope="module")
def core() -> dict[tuple[str, str], ProofResult]:
    from spmcheck.spec.prove import prove_variant

    out = {}
    for v in dict.fromkeys(v for v, _ in BAD):
        for r in prove_variant(v, [p for w, p in BAD if w == v], CFG, 120):
            assert r.verdict == "violated" and r.counterexample, (v, r.property, r.verdict, r.reason)
            out[(v, r.property)] = r
    return out


@pytest.fixture(scope="module")
def mutant() -> Iterator[ProofResult]:
    from spmcheck.spec.prove import counterexample

    v = dataclasses.replace(VARIANTS["final"], name=f"final~{LD_MUTANT}", mutation=LD_MUTANT, known_bad=True)
    VARIANTS[v.name] = v
    try:
        r = counterexample(v.name, LD, CFG, 120)
        assert r is not None and r.counterexample
        # rendered while the mutant is registered (the highlight reads its definition)
        yield r
    finally:
        del VARIANTS[v.name]


# ---- the expectation, from the raw steps --------------------------------------------------------
def _final(steps: tuple[CexStep, ...], init: dict[str, object]) -> dict[str, int]:
    s = {k: int(v) for k, v in init.items() if isinstance(v, (bool, int))}
    for st in steps:
        for n, _, after in st.changes:
            s[n] = int(after in ("1", "True", "true")) if after in ("True", "False", "true", "false") else int(after)
    return s


def _last_change(steps: tuple[CexStep, ...], names: set[str], before: int | None = None) -> int:
    got = [st.index for st in steps if (before is None or st.index < before) and names & {n for n, _, _ in st.changes}]
    return got[-1] if got else 0


def _open_locks(steps: tuple[CexStep, ...]) -> dict[str, list[tuple[int, str]]]:
    """Per thread, (acquire step, lock) of every lock acquired by an event and not released."""
    held: dict[str, list[tuple[int, str]]] = {}
    for st in steps:
        a = dict(st.args)
        if st.action == "lock_acquire":
            held.setdefault(st.thread, []).append((st.index, a["lock"]))
        elif st.action == "lock_release":
            held[st.thread] = [h for h in held.get(st.thread, []) if h[1] != a["lock"]]
    return {t: h for t, h in held.items() if h}


def expected_bands(r: ProofResult, init: dict[str, object]) -> list[tuple[str, int, int, str]]:
    """(kind, first step, last step, lane thread or '') the picture must highlight."""
    steps = r.counterexample or ()
    f = steps[-1]
    s = _final(steps, init)
    if r.property == P1:
        out = []
        for a in sorted({n.split(".")[2] for n in s if n.startswith("ser.ex.")}):
            n = s["rc.all"] + s[f"rc.{a}"]
            if s[f"ser.ex.{a}"] and bool(s[f"ser.en.{a}"]) != (n > 0):
                out.append(("stale-state", _last_change(steps, {"rc.all", f"rc.{a}"}), f.index, ""))
        return out
    if r.property == P2:
        a = dict(f.args)["agent"]
        reads = [st.index for st in steps if st.thread == f.thread and st.action == "refcount_read"
                 and dict(st.args)["agent"] == a]
        if reads:
            return [("stale-read", reads[-1], f.index, f.thread)]
        return [("stale-read", _last_change(steps, {"flag"}, f.index), f.index, "")]
    if r.property == LD:
        # the lock of the map the insert writes, held (only shared) since its last acquire
        acq = [st.index for st in steps if st.thread == f.thread and st.action == "lock_acquire"
               and dict(st.args)["lock"] == "serializer_map"]
        return [("unprotected", acq[-1], f.index, f.thread)]
    if r.property == P5:
        return [("stuck", min(i for i, _ in h), f.index, t) for t, h in sorted(_open_locks(steps).items())]
    if r.property == "refcount-balanced":
        out = []
        for n in sorted(k for k in s if re.match(r"hd\.\d+\.(all|\d+)\Z", k) and s[k] > 0):
            out.append(("stale-state", _last_change(steps, {n}), f.index, ""))
        return out
    raise AssertionError(r.property)


# ---- reading the SVG --------------------------------------------------------------------------
def _svg(r: ProofResult, model: str) -> ET.Element:
    v = cexr.view(r, model)
    return ET.fromstring(svg_swimlane.render(svg_swimlane.from_cex(v, "t"), "cex-t"))


def _bands(root: ET.Element) -> list[dict[str, str]]:
    return [e.attrib for e in root.iter(f"{SVG}rect") if "stale" in e.get("class", "").split()]


def _boxes(root: ET.Element) -> dict[int, tuple[float, float]]:
    """step number -> (top, bottom) of its box."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        if "step" not in g.get("class", "").split():
            continue
        idx = next(t.text for t in g.iter(f"{SVG}text") if t.get("class") == "idx")
        rect = g.find(f"{SVG}rect")
        if idx and rect is not None:
            y, h = float(rect.get("y", 0)), float(rect.get("height", 0))
            out[int(idx)] = (y, y + h)
    return out


def _lane_x(root: ET.Element) -> dict[str, float]:
    heads = [t for t in root.iter(f"{SVG}text") if t.get("class") == "lanehead"]
    return {t.text or "": float(t.get("x", 0)) for t in heads}


def check_picture(r: ProofResult, model: str, init: dict[str, object]) -> list[dict[str, str]]:
    want = expected_bands(r, init)
    assert want, (r.variant, r.property, "the expectation found nothing stale")
    root = _svg(r, model)
    bands = _bands(root)
    got = sorted((b["data-kind"], int(b["data-first"]), int(b["data-last"]), b["data-thread"]) for b in bands)
    assert got == sorted(want), (r.variant, r.property, got, want)
    boxes, lanes = _boxes(root), _lane_x(root)
    for b in bands:
        first, last = int(b["data-first"]), int(b["data-last"])
        y0, y1 = float(b["y"]), float(b["y"]) + float(b["height"])
        # the band covers the boxes of its first and last steps (steps hidden in setup: the setup row)
        top = boxes.get(first, min(boxes.values()))[0]
        assert y0 <= top and y1 >= boxes[last][1], (b, boxes.get(first), boxes[last])
        if b["data-thread"]:  # in that thread's lane only
            x = lanes[b["data-thread"]]
            assert x - 10 <= float(b["x"]) <= x and float(b["width"]) < svg_swimlane.LANE
        else:  # shared state: across every lane
            assert float(b["x"]) <= min(lanes.values()) and float(b["x"]) + float(b["width"]) >= max(lanes.values())
    legend = {g.get("data-kind") for g in root.iter(f"{SVG}g") if "highlight-legend" in g.get("class", "")}
    assert legend == {b["data-kind"] for b in bands} and legend <= set(HIGHLIGHTS)
    notes = ["".join(t.text or "" for t in g.iter(f"{SVG}text")) for g in root.iter(f"{SVG}g")
             if g.get("class") == "stalenote"]
    assert len(notes) == len(bands) and all(notes)
    return bands


def _words(r: ProofResult, model: str) -> str:
    return " ".join(h.text for h in cexr.highlights(cexr.view(r, model)))


def test_the_known_bad_variants_are_all_here(core: dict) -> None:
    assert {p for _, p in BAD} >= {P1, P2, P5} and len(BAD) >= 6


@pytest.mark.parametrize("pair", BAD, ids=[f"{v}/{p}" for v, p in BAD])
def test_each_known_bad_counterexample_highlights_its_stale_state(core: dict, pair: tuple[str, str]) -> None:
    r = core[pair]
    check_picture(r, "core", Model(CFG, r.variant).init_state())
    words = _words(r, "core")
    f = r.counterexample[-1]
    if r.property == P1:
        n = re.search(r"serializer\.(\d+) (enabled|disabled) while refcount\(\1\)=(\d+), steps (\d+)–(\d+)", words)
        assert n and int(n[5]) == f.index, words
    elif r.property == P2:
        assert f"the insert at step {f.index}" in words, words
        root = _svg(r, "core")
        links = [(int(p.get("data-from")), int(p.get("data-to"))) for p in root.iter(f"{SVG}path") if p.get("class") == "link"]
        (kind, first, last, _), = expected_bands(r, Model(CFG, r.variant).init_state())
        assert links == [(first, last)]  # the stale read (or flag store) is linked to the insert
    elif r.property == P5:
        # each stuck thread names what it holds and the lock it wants, which the other one holds
        held = _open_locks(r.counterexample)
        for t, hs in held.items():
            others = {lk for u, h in held.items() if u != t for _, lk in h}
            assert re.search(rf"{t} holds .*wants ({'|'.join(others)}) \(held by ", words), words


def test_lock_discipline_highlights_the_unprotected_access(mutant: ProofResult) -> None:
    (band,) = check_picture(mutant, "core", Model(CFG, "final").init_state())
    f = mutant.counterexample[-1]
    words = _words(mutant, "core")
    assert f"{f.thread} writes ser.ex.0 at step {f.index} holding" in words and "serializer_map(r)" in words
    assert "needs serializer_map exclusive" in words  # the protecting lock, read from the definition


def test_a_lifecycle_counterexample_highlights_the_reference_left_behind() -> None:
    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.prove import prove_pairs
    from spmcheck.spec.lifecycle.vocabulary import LConfig

    (r,) = prove_pairs([("pr-758072b", "refcount-balanced")], LConfig(), 120)
    assert r.verdict == "violated" and r.counterexample
    check_picture(r, "lifecycle", LifecycleModel(LConfig(), "pr-758072b").init_state())
    assert "still holds 1 reference" in _words(r, "lifecycle")


def test_any_other_property_gets_the_failing_steps_change(core: dict) -> None:
    """A property with no rule of its own: the variables the failing step changes, each from the
    step that gave it its previous value."""
    r = dataclasses.replace(core[("stale-lookup", P2)], property="some-other-property")
    (h,) = cexr.highlights(cexr.view(r, "core"))
    f = r.counterexample[-1]
    (name, before, after), = [c for c in f.changes if not c[0].startswith(("pc.", "lk."))]
    assert h.kind == "changed" and h.last == f.index
    assert h.first == _last_change(r.counterexample, {name}, f.index)
    assert f"{name} was {before}" in h.text and f"sets it to {after}" in h.text


def test_unchanged_variables_read_their_initial_value_from_the_definition() -> None:
    init = Model(CFG, "final").init_state()
    for n, val in init.items():
        if not n.startswith(("pc.", "lk.")):
            assert cexr.initial_value(n, "core") == str(int(val)), n


def test_lifecycle_variables_read_their_initial_value_from_the_definition() -> None:
    from spmcheck.spec.lifecycle.model import LifecycleModel
    from spmcheck.spec.lifecycle.vocabulary import LConfig

    init = LifecycleModel(LConfig(), "final").init_state()
    assert any(v is True for v in init.values())  # not all zero: the profile starts alive
    for n, val in init.items():
        if not n.startswith(("pc.", "lk.")):
            assert cexr.initial_value(n, "lifecycle") == str(int(val)), n
