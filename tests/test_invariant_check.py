"""The stored-invariant check (spec.induction.verify_stored) against the query it replaces.

verify_stored re-checks a stored invariant one action at a time, re-checking only the conjuncts
the action can change, on terms built through the SMT-LIB text reading (spec.smtterm). Each of
those is a shortcut; here each is compared with the plain reading: the monolithic query
Init ⊨ Inv ∧ (Inv ∧ T ⊨ Inv') on z3py terms, over the stored invariant, over subsets of it that
are not inductive, and over a mutant of the definition the stored invariant no longer fits.
"""
from __future__ import annotations

import dataclasses
import random

import pytest
import z3

from spmcheck.spec import induction
from spmcheck.spec.backend import CONCRETE
from spmcheck.spec.induction import ALL, Inductive, implies_property, reader, verify_stored
from spmcheck.spec.invariants import Candidate, candidates
from spmcheck.spec.model import Model
from spmcheck.spec.properties import PROPERTIES
from spmcheck.spec.prove import inv_file, stored_names
from spmcheck.spec.variants import VARIANTS
from spmcheck.spec.vocabulary import Config
from spmcheck.spec.z3_encoding import Z3, Transition, _b

CFG = Config(2, 2, 2)


def _reference(model: Model, names: list[str]) -> bool:
    """Init ⊨ Inv and Inv ∧ T ⊨ Inv', asked as one query on z3py terms (the old check)."""
    by = {c.name: c for c in candidates(model)}
    chosen = [by[n] for n in names]
    if not all(c.fn(CONCRETE, model.init_state()) for c in chosen):
        return False
    tr = Transition(model, ints="int")
    tr.activate()
    pre = [_b(c.fn(Z3, tr.S)) for c in chosen]
    post = z3.substitute(z3.And(*pre), *[(tr.S[n], tr.S2[n]) for n in model.var_names])
    s = z3.Solver()
    s.add(tr.formula, *pre, z3.Not(post))
    r = s.check()
    assert r != z3.unknown
    return r == z3.unsat


@pytest.fixture(scope="module")
def final() -> tuple[Model, list[str]]:
    m = Model(CFG, "final")
    return m, stored_names(inv_file(m))


def test_text_terms_equal_z3py_terms(final: tuple[Model, list[str]]) -> None:
    model, names = final
    tr = Transition(model, ints="int")
    by = {c.name: c for c in candidates(model)}
    fns = [by[n].fn for n in names]
    fns += [lambda b, s, p=p: p.state(b, s, model) for p in PROPERTIES.values() if p.state is not None]
    rd = reader(tr)
    reads: list = []
    handles = rd.build(fns, reads)
    assert ALL not in set().union(*reads)  # every one of them went through the text reading
    tr.activate()
    ref = [_b(f(Z3, tr.S)) for f in fns]
    s = z3.Solver()
    s.add(z3.Or(*[rd.expr(h) != r for h, r in zip(handles, ref)]))
    assert s.check() == z3.unsat


def test_per_action_check_agrees_with_the_monolithic_query(final: tuple[Model, list[str]]) -> None:
    model, names = final
    rng = random.Random(14)
    trials = [names] + [rng.sample(names, k) for k in (len(names) - 3, len(names) // 2)]
    got = []
    for subset in trials:
        inv = verify_stored(model, Transition(model, ints="int"), subset, 60)
        want = _reference(model, subset)
        assert (inv.status == "inductive") == want, (len(subset), inv.reason)
        got.append(want)
    assert got[0] and not all(got)  # both outcomes were exercised


def test_a_mutant_the_stored_invariant_no_longer_fits_is_rejected(final: tuple[Model, list[str]]) -> None:
    _, names = final
    v = dataclasses.replace(VARIANTS["final"], name="final~drop-lock", known_bad=True,
                            mutation="drop-lock:updater:acq_refcount:lock_acquire:0")
    m = Model(CFG, v)
    by = {c.name: c for c in candidates(m)}
    kept = [n for n in names if n in by and by[n].fn(CONCRETE, m.init_state())]
    inv = verify_stored(m, Transition(m, ints="int"), kept, 60)
    assert inv.status == "unknown" and "not inductive" in inv.reason
    assert not _reference(m, kept)


def test_a_conjunct_that_walks_the_state_is_rechecked_after_every_action() -> None:
    model = Model(Config(1, 1, 1), "final")
    tr = Transition(model, ints="int")
    walks = Candidate("walks", lambda b, s: b.Or(*[s[k] == s[k] for k in list(s.keys())[:1]]))
    looks = Candidate("looks", lambda b, s: s["all.u0"] == s["all.u0"])
    reads: list = []
    reader(tr).build([walks.fn, looks.fn], reads)
    assert reads == [frozenset({ALL}), frozenset({"all.u0"})]


def test_implications_reuse_the_checked_solver_and_match_a_fresh_one(final: tuple[Model, list[str]]) -> None:
    model, names = final
    tr = Transition(model, ints="int")
    inv = verify_stored(model, tr, names, 60)
    assert inv.status == "inductive" and inv.solver is not None
    bare = Inductive("inductive", inv.kept)  # no solver, no terms: the queries rebuild everything
    for p in PROPERTIES.values():
        assert implies_property(model, tr, inv, p, 60) == implies_property(model, tr, bare, p, 60)


def test_z3py_reading_gives_the_same_verdict(final: tuple[Model, list[str]], monkeypatch) -> None:
    model, names = final
    monkeypatch.setattr(induction, "TEXT_TERMS", False)
    tr = Transition(model, ints="int")
    reads: list = []
    reader(tr).build([candidates(model)[0].fn], reads)
    assert reads == [frozenset({ALL})]  # no text reading: every conjunct is re-checked always
    assert verify_stored(model, tr, names, 60).status == "inductive"
