"""Parametric ("any size") proofs of the core QueueController protocol.

Agents, updater threads and lookup threads are Z3 uninterpreted sorts, so an invariant checked
here holds for every number of each (mypyvy/Ivy style, style-anchors §1.1, peer-tools §9).

  encoding.py    sorts, state symbols, quantifier helpers (symbolic or over a finite universe)
  actions.py     one parametric transition per step of spec/programs.py, per variant knob
  finite.py      finite structures: pin a concrete fixed-size state, read one back (agreement, CTIs)
  invariants.py  inductive invariants for P1, P2 and the dynamic half of P5
  queries.py     Z3 queries with timeouts; small (bounded-universe) CTIs rendered as trace lines
  prove.py       initiation, consecution per action, implication / P5 checks; `run()` API
  results.py     typed records and the text table
  confirm.py     concrete counterexamples behind `violated` verdicts (cex/*.trace, replayed)
  witnesses.py   non-vacuity: the fixed-size witness scenarios reached by concrete walks
  status.py      static any-size column (checked against `run()` by the tests)

The lifecycle (spec/lifecycle) has its own files, same shape, sorts Agent/Ctx/Tool/Dispatch:

  lifecycle_transitions.py spec/lifecycle/definition.py read by spec.lang.symbolic: the symbols,
                           Init, one LAction per step (every LVariant knob, mutants too)
  lifecycle_encoding.py    derived notions (read off the definition) and the declared abstractions
                           (mutex as a relation, inf/ks through what they count, finite-only caps)
  lifecycle_finite.py      finite structures read off the definition (agreement, cross-checks, CTIs)
  lifecycle_invariants.py  inductive invariants of `final` per property (layers)
  lifecycle_prove.py       queries and verdicts; `prove.run(lifecycle=...)` calls it
  lifecycle_witnesses.py   stored witness paths / confirmed counterexamples (cex/lc-*.trace)
"""
