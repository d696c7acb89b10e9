"""Certificates: stored answers are re-checked, never trusted; stale or broken ones mean search."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import z3

from spmcheck.checker.cli import main as cli_main
from spmcheck.spec.budget import Budget
from spmcheck.spec.certs import CERTS_DIR, CertError, CertStore, cert_name, checkout_certs_dir, definition_hash, replay
from spmcheck.spec.lifecycle.model import LifecycleModel
from spmcheck.spec.lifecycle.vocabulary import LConfig
from spmcheck.spec.model import Model
from spmcheck.spec.properties import PROPERTIES
from spmcheck.spec.prove import CERT_METHOD, _violates, prove_variant
from spmcheck.spec.vocabulary import Config

CFG = Config(2, 2, 2)
PAIR = ("stale-lookup", "creation-consistent")


def _mutated(variant: str, kind: str) -> Model:
    """The same model with one action's guard strengthened: a different definition."""
    m = Model(CFG, variant)
    acts = list(m.actions)
    i = next(i for i, a in enumerate(acts) if a.kind == kind)
    old = acts[i].step.guard

    def guard(b, s, t, p, old=old):  # type: ignore[no-untyped-def]
        return list(old(b, s, t, p)) + [("extra", s["rc.all"] == 0)]

    acts[i] = replace(acts[i], step=replace(acts[i].step, guard=guard))
    m.__dict__["actions"] = acts  # Model.actions is a cached property: this instance only
    return m


def test_definition_hash_tracks_guards_not_identity() -> None:
    a, b = Model(CFG, "final"), Model(CFG, "final")
    assert definition_hash(a) == definition_hash(b)
    assert definition_hash(a) != definition_hash(Model(CFG, "stale-lookup"))
    assert definition_hash(a) != definition_hash(_mutated("final", "lookup_begin"))
    lc = LifecycleModel(LConfig(), "final")
    assert definition_hash(lc) != definition_hash(LifecycleModel(LConfig(), "positive-tags"))


def test_every_stored_certificate_is_current() -> None:
    """Each file under spec/certs/ was made from today's definition (else run `spmcheck prove
    --update`); a stale one would only cost search time, this test says so early."""
    from spmcheck.spec.lifecycle.properties import LPROPERTIES, scenario
    from spmcheck.spec.lifecycle.variants import LVARIANTS
    from spmcheck.spec.variants import VARIANTS

    files = sorted(CERTS_DIR.glob("*.json"))
    assert files
    stale = []
    for f in files:
        doc = json.loads(f.read_text())
        if doc["model"] == "core":
            cands = [Model(CFG, v) for v in VARIANTS]
        else:
            cands = [LifecycleModel(c, v) for v in LVARIANTS
                     for c in {scenario(LConfig(), p) for p in LPROPERTIES}]
        m = next((m for m in cands if cert_name(m) == f.name), None)
        if m is None or definition_hash(m) != doc["definition"]:
            stale.append(f.name)
    assert not stale, f"stale certificates (run `spmcheck prove --update`): {stale}"


def _copy_cert(tmp_path: Path, model: Model) -> Path:
    src = CERTS_DIR / cert_name(model)
    dst = tmp_path / src.name
    dst.write_text(src.read_text())
    return dst


def test_stored_violation_replays_and_breaks_the_property_at_its_last_step(tmp_path: Path) -> None:
    v, p = PAIR
    (r,) = prove_variant(v, [p], CFG, 60, certs=CertStore("use"))
    assert r.verdict == "violated" and r.method == CERT_METHOD
    m = Model(CFG, v)
    doc = json.loads((CERTS_DIR / cert_name(m)).read_text())
    entry = doc["violations"][p]
    acts, states = replay(m, entry["setup"] + entry["path"])  # type: ignore[misc]
    assert _violates(m, PROPERTIES[p], states, acts)
    assert not _violates(m, PROPERTIES[p], states[:-1], acts[:-1])


@pytest.mark.parametrize("damage", ["swap", "truncate", "hash"])
def test_a_damaged_or_stale_certificate_falls_back_to_search(tmp_path: Path, damage: str) -> None:
    v, p = PAIR
    m = Model(CFG, v)
    f = _copy_cert(tmp_path, m)
    doc = json.loads(f.read_text())
    path = doc["violations"][p]["path"]
    if damage == "swap":  # an order the concrete reading cannot execute
        path[0], path[-1] = path[-1], path[0]
    elif damage == "truncate":  # executes, but no longer breaks the property at its end
        doc["violations"][p]["path"] = path[:-1]
    else:
        doc["definition"] = "0" * 64
    f.write_text(json.dumps(doc))
    store = CertStore("use", tmp_path)
    (r,) = prove_variant(v, [p], CFG, 60, certs=store)
    assert store.used == []
    assert r.verdict == "violated" and r.method != CERT_METHOD and r.counterexample


def test_a_changed_model_ignores_the_certificate() -> None:
    v, p = PAIR
    ok_for = lambda m: (lambda st, acts: _violates(m, PROPERTIES[p], st, acts))  # noqa: E731
    store = CertStore("use")
    m = Model(CFG, v)
    assert store.violation(m, p, ok_for(m)) is not None
    changed = _mutated(v, "lookup_begin")
    assert store.violation(changed, p, ok_for(changed)) is None


def test_update_writes_what_the_search_found_and_fresh_ignores_it(tmp_path: Path) -> None:
    v, p = PAIR
    up = CertStore("update", tmp_path)
    (r,) = prove_variant(v, [p], CFG, 60, certs=up)
    assert r.method != CERT_METHOD
    (written,) = up.flush()
    use = CertStore("use", tmp_path)
    (r2,) = prove_variant(v, [p], CFG, 60, certs=use)
    assert r2.method == CERT_METHOD and use.used
    assert [s.text() for s in r2.counterexample or ()] == [s.text() for s in r.counterexample or ()]
    fresh = CertStore("fresh", tmp_path)
    (r3,) = prove_variant(v, [p], CFG, 60, certs=fresh)
    assert r3.method != CERT_METHOD and not fresh.used
    assert written.name == cert_name(Model(CFG, v))


def test_update_refuses_an_installed_copy(tmp_path: Path, capsys) -> None:
    pkg = tmp_path / "lib" / "site-packages" / "spec"
    pkg.mkdir(parents=True)
    with pytest.raises(CertError, match="installed copy"):
        checkout_certs_dir(pkg)
    assert checkout_certs_dir() == CERTS_DIR  # the test suite runs from the checkout


def test_rlimit_budget_gives_unknown_whatever_the_clock() -> None:
    x, y = z3.Ints("x y")
    s = z3.Solver()
    s.add(x * x + y * y == 2 ** 31 - 1, x > 0, y > 0)
    b = Budget(100_000, deadline=float("inf"))
    r, why = b.check(s)
    assert r == z3.unknown and "rlimit" in why and b.left() == 0
    assert b.check(z3.Solver())[1].startswith("resource budget exhausted")


def test_stored_witnesses_replay_for_final() -> None:
    (r,) = prove_variant("final", ["creation-consistent"], CFG, 60)
    assert r.verdict == "proved"
    assert r.witnesses and all("certificate" in w.detail for w in r.witnesses)
