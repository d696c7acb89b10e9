"""Certificates of the data path's verdicts: answers `spmcheck prove` already knows, re-checked
on the concrete reading instead of searched again (the data path's counterpart of spec.certs).

One file per (variant, scope), spec/certs/datapath/<variant>-<scope>.json, holding

* per violated row, the counterexample path (one instance description per step, as
  `explore.Instance.describe()` writes it) and, where one exists, the path that breaks no other
  claim before its last step (what `spmcheck cex` exports);
* per row, the path to its non-vacuity witness;
* the `definition` hash they were made from (`definition_hash`).

How each is re-checked (spec.datapath.verdicts): a path must replay from the initial state, each
line naming exactly one enabled instance; a violation must then break its claim at the last state
(invariant), in the last step's pre-state (step claim), or end in a state where the progress
claim's goal is unreachable (an exploration from that state only, which is small: the run is
nearly over there); a witness must hold at the last state. A file whose hash differs, or an entry
that does not replay or does not show its target, is ignored and the row is searched as if there
were no certificate: a certificate never decides a verdict by itself.

A proof ("no reachable state breaks the claim at this scope") has no certificate: it is found by
exhaustive exploration on every run, which the explorer makes cheap enough (spec.datapath.fast:
one generated function per state's enabled set); an inductive certificate for it would be the
reachable set itself, whose check costs what the search does.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, fields, is_dataclass
from pathlib import Path
from typing import Any, Iterable

from ..certs import CERTS_DIR, write_docs
from ..lang.syntax import Expr, Func, Protocol, Sort

FORMAT = 1


def definition_hash(proto: Protocol, sizes: dict[str, int], extra: Iterable[str] = ()) -> str:
    """Hash of what the verdicts of one (variant, scope) are computed from: the definition's
    sorts, state functions (arguments, domain, initial value, key, lock, guard classes), actions
    and claims as their expression trees print (`_canon`: deterministic, names, never object ids),
    the sizes, and `extra` (the rows' witness and progress predicates, written outside the
    definition). It changes whenever a guard, update, claim or predicate changes."""
    h = hashlib.sha256()
    h.update(f"datapath {FORMAT}\n".encode())
    h.update(f"sizes {sorted(sizes.items())}\n".encode())
    for s in proto.leaf_sorts():
        h.update(f"sort {s.name} {s.prefix}\n".encode())
    for f in proto.funcs:
        h.update(f"func {f.name} {f.args} {f.dom!r} {f.init!r} {f.key} {f.lock} {f.guarded}\n".encode())
    for a in proto.actions:
        h.update(f"action {_canon(a)}\n".encode())
    for name, c in sorted(proto.claims.items()):
        h.update(f"claim {name} {_canon(c)}\n".encode())
    for x in extra:
        h.update(f"extra {x}\n".encode())
    return h.hexdigest()


def _canon(x: Any) -> str:
    """A definition's dataclass as `repr` prints it, except that fields holding their default
    are left out: a field the language gains later (with a default) does not change the text of
    a definition that does not use it, so certificates stay current across such additions."""
    plan = _plan(type(x))
    if plan is not None:
        parts = []
        for name, default, factory in plan:
            v = getattr(x, name)
            d = factory() if factory is not None else default
            if d is not MISSING and _same(v, d):
                continue
            parts.append(f"{name}={_canon(v)}")
        return f"{type(x).__name__}({', '.join(parts)})"
    if isinstance(x, tuple):
        return "(" + ", ".join(_canon(e) for e in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(_canon(e) for e in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{_canon(k)}: {_canon(v)}" for k, v in x.items()) + "}"
    return repr(x)


_PLANS: dict[type, tuple[tuple[str, Any, Any], ...] | None] = {}


def _plan(t: type) -> tuple[tuple[str, Any, Any], ...] | None:
    """Per class, once: (field name, default or MISSING, default factory or None) of a dataclass
    `_canon` spells field by field (not Sort or Func, whose repr is their name); None for any other
    type. `fields()` and `is_dataclass()` per node were 70 % of hashing the 40 data-path
    definitions of one `prove` (0.9 CPU s)."""
    if t not in _PLANS:
        _PLANS[t] = (tuple((f.name, f.default, f.default_factory if f.default_factory is not MISSING else None)
                           for f in fields(t))
                     if is_dataclass(t) and not issubclass(t, (Sort, Func)) else None)
    return _PLANS[t]


def _same(v: Any, d: Any) -> bool:
    """v is the default d (expressions overload ==, so only plain values are compared)."""
    if isinstance(v, Expr) or isinstance(d, Expr):
        return v is d
    if isinstance(v, (tuple, list, dict)) or isinstance(d, (tuple, list, dict)):
        return type(v) is type(d) and len(v) == 0 and len(d) == 0
    return type(v) is type(d) and v == d


def cert_name(variant: str, scope: str) -> str:
    return f"{variant}-{scope}.json"


class DatapathCerts:
    """Certificates for one run. mode: "use" (replay stored ones), "fresh" (ignore them),
    "update" (ignore them and record what the search finds; `flush` writes the files)."""

    def __init__(self, mode: str = "use", root: Path | None = None) -> None:
        if mode not in ("use", "fresh", "update"):
            raise ValueError(f"unknown certificate mode {mode!r}")
        self.mode = mode
        self.root = root or CERTS_DIR / "datapath"
        self._docs: dict[str, dict[str, Any]] = {}
        self._dirty: set[str] = set()
        self.used: list[str] = []  # "file: entry" per certificate that replayed (tests, bench)

    def _read(self, name: str) -> dict[str, Any]:
        if name not in self._docs:
            path = self.root / name
            doc: dict[str, Any] = {}
            if path.is_file():
                try:
                    doc = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    doc = {}  # unreadable: the same as no certificate
            self._docs[name] = doc if isinstance(doc, dict) else {}
        return self._docs[name]

    def entry(self, variant: str, scope: str, digest: str, kind: str, row: str) -> dict[str, Any] | None:
        """The stored entry (kind "violations" or "witnesses") of `row`, if the file was made
        from this definition; None otherwise (and always outside "use" mode)."""
        if self.mode != "use":
            return None
        doc = self._read(cert_name(variant, scope))
        if doc.get("format") != FORMAT or doc.get("definition") != digest:
            return None
        got = doc.get(kind, {}).get(row)
        return got if isinstance(got, dict) else None

    def note_used(self, variant: str, scope: str, what: str) -> None:
        self.used.append(f"{cert_name(variant, scope)}: {what}")

    def put(self, variant: str, scope: str, digest: str, kind: str, row: str, entry: dict[str, Any]) -> None:
        if self.mode != "update":
            return
        name = cert_name(variant, scope)
        doc = self._read(name)
        if doc.get("definition") != digest or doc.get("format") != FORMAT:
            # entries made from another definition are dropped, not carried over
            doc = {"format": FORMAT, "definition": digest, "model": "datapath", "variant": variant,
                   "scope": scope, "violations": {}, "witnesses": {}}
            self._docs[name] = doc
        doc[kind][row] = entry
        self._dirty.add(name)

    def flush(self) -> list[Path]:
        """Write the files recorded in update mode (sorted keys: diffs stay small)."""
        if self.mode != "update":
            return []
        return write_docs(self.root, self._docs, self._dirty)
