"""Certificates: answers `spmcheck prove` already knows, re-checked instead of re-searched.

* proof — the stored inductive invariant (spec/proofs/*.inv), re-checked by Z3 on every run
  (spec.induction.verify_stored); nothing here changes that.
* violation — a stored counterexample path (one action description per step, as
  `Action.describe()` writes it), re-executed on the concrete reading and confirmed to break the
  property at its last step.
* witness — a stored path replayed on the concrete reading to a state where the witness's stages
  have all held in order.

Each file under spec/certs/ holds the violation and witness paths of one model instance
(model kind, variant, size) and the `definition_hash` of the model they were made from. A file
whose hash differs, or a path that does not replay or does not show its target, is ignored: the
prover searches as if there were no certificate. A certificate never decides a verdict by itself.
"""
from __future__ import annotations

import hashlib
import json
import os
import weakref
from dataclasses import fields
from pathlib import Path
from typing import Callable, Sequence

from .backend import CONCRETE
from .model import Action, Model, backtrack

CERTS_DIR = Path(__file__).resolve().parent / "certs"
FORMAT = 1

Ok = Callable[[list[dict], list[Action]], bool]

_HASHES: "weakref.WeakKeyDictionary[Model, str]" = weakref.WeakKeyDictionary()


class CertError(RuntimeError):
    """--update cannot write here (installed package, read-only checkout)."""


def definition_hash(model: Model) -> str:
    """Hash of the finite model a certificate was made from: the variables (sorted, with kind,
    initial value and range) and, per action in order, its description and its guard, update and
    observed values read symbolically (spec.textterm: the expression text of each term, as
    canonical as a Z3 sexpr and ~50x cheaper to build). It changes whenever a guard or an update
    changes, and not when comments or formatting do."""
    got = _HASHES.get(model)
    if got is not None:
        return got
    from .textterm import TEXT, P, lit

    S = {d.name: P(d.name) for d in model.vars}
    h = hashlib.sha256()
    h.update(f"{type(model).__name__}\n".encode())
    for d in sorted(model.vars, key=lambda d: d.name):
        h.update(f"var {d.name} {d.kind} {d.init!r} {getattr(d, 'lo', '')} {getattr(d, 'hi', '')}\n".encode())
    for a in model.actions:
        h.update(f"action {a.describe()}\nguard {lit(a.enabled(TEXT, S))}\n".encode())
        for k, v in sorted(a.effect(TEXT, S).items()):
            h.update(f"set {k} {lit(v)}\n".encode())
        for k, v in sorted(a.observed(TEXT, S).items()):
            h.update(f"obs {k} {lit(v)}\n".encode())
    digest = h.hexdigest()
    _HASHES[model] = digest
    return digest


def cert_name(model: Model) -> str:
    kind = getattr(model, "kind", "core")
    # a size field left at its default of 0 ("as many as ...", Config.holders) is not named, so
    # adding such a field keeps every stored name
    size = "-".join(f"{f.name}{int(v) if isinstance(v, bool) else v}"
                    for f in fields(model.cfg) for v in [getattr(model.cfg, f.name)]
                    if not (f.name == "holders" and v == 0))
    return f"{kind}-{model.variant.name}-{size}.json"


def replay(model: Model, lines: Sequence[str],
           ok: Callable[[list[dict], list[Action]], bool] | None = None) -> tuple[list[Action], list[dict]] | None:
    """Re-execute a stored path from Init: each line names one enabled action. A line may name
    several enabled actions that differ only in what they observe (lifecycle queue_sync:
    drained=1 and drained=0 when a queue was busy at some instant of the drain and idle at
    another, digest §2.9); the replay then tries each, and the path is the first whose states
    satisfy `ok` (the stored certificate's target)."""
    by_desc = _by_describe(model)
    return backtrack(model, len(lines), lambda i, s: [a for a in by_desc.get(lines[i], ()) if a.enabled(CONCRETE, s)], ok)


def _by_describe(model: Model) -> dict[str, list[Action]]:
    out: dict[str, list[Action]] = {}
    for a in model.actions:
        out.setdefault(a.describe(), []).append(a)
    return out


class CertStore:
    """Certificates for one run. mode: "use" (replay stored ones), "fresh" (ignore them),
    "update" (ignore them and record what the search finds; `flush` writes the files)."""

    def __init__(self, mode: str = "use", root: Path | None = None) -> None:
        if mode not in ("use", "fresh", "update"):
            raise ValueError(f"unknown certificate mode {mode!r}")
        self.mode = mode
        self.root = root or CERTS_DIR
        self._docs: dict[str, dict] = {}
        self._dirty: set[str] = set()
        self.used: list[str] = []  # "file: entry" for each certificate that replayed (reported by tests/bench)

    # ---- reading ------------------------------------------------------------------------------
    def _doc(self, model: Model) -> dict | None:
        name = cert_name(model)
        if name not in self._docs:
            path = self.root / name
            doc = None
            if path.is_file():
                try:
                    doc = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    doc = None  # unreadable: the same as no certificate
            self._docs[name] = doc or {}
        doc = self._docs[name]
        if doc.get("format") != FORMAT or doc.get("definition") != definition_hash(model):
            return None
        return doc

    def violation(self, model: Model, prop: str, ok: Ok) -> tuple[list[Action], list[Action], str] | None:
        """(setup, race, note) of a stored counterexample that replays and breaks `prop` at its
        last step, or None (search instead)."""
        if self.mode != "use":
            return None
        doc = self._doc(model)
        entry = (doc or {}).get("violations", {}).get(prop)
        if not entry:
            return None
        setup, race = list(entry.get("setup", [])), list(entry.get("path", []))
        if not race:
            return None
        n = len(setup)
        got = replay(model, setup + race, lambda st, acts: ok(st, acts[n:]))
        if got is None:
            return None
        acts, states = got
        self.used.append(f"{cert_name(model)}: violation {prop}")
        return acts[:len(setup)], acts[len(setup):], str(entry.get("note", ""))

    def witness(self, model: Model, name: str, ok: Ok) -> tuple[list[Action], str] | None:
        if self.mode != "use":
            return None
        doc = self._doc(model)
        entry = (doc or {}).get("witnesses", {}).get(name)
        if not entry:
            return None
        got = replay(model, list(entry.get("path", [])), ok)
        if got is None:
            return None
        acts, states = got
        self.used.append(f"{cert_name(model)}: witness {name}")
        return acts, str(entry.get("note", ""))

    # ---- recording ----------------------------------------------------------------------------
    def _entry_doc(self, model: Model) -> dict:
        name = cert_name(model)
        h = definition_hash(model)
        doc = self._docs.get(name)
        if doc is None:
            path = self.root / name
            try:
                doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
            except (OSError, ValueError):
                doc = {}
        if doc.get("definition") != h or doc.get("format") != FORMAT:
            # entries made from another definition are dropped, not carried over
            doc = {"format": FORMAT, "definition": h, "model": getattr(model, "kind", "core"),
                   "variant": model.variant.name, "config": model.cfg.describe(),
                   "violations": {}, "witnesses": {}}
        self._docs[name] = doc
        self._dirty.add(name)
        return doc

    def put_violation(self, model: Model, prop: str, setup: Sequence[Action], race: Sequence[Action],
                      note: str) -> None:
        if self.mode != "update":
            return
        self._entry_doc(model)["violations"][prop] = {
            "setup": [a.describe() for a in setup], "path": [a.describe() for a in race], "note": note}

    def put_witness(self, model: Model, name: str, path: Sequence[Action], note: str) -> None:
        if self.mode != "update":
            return
        self._entry_doc(model)["witnesses"][name] = {"path": [a.describe() for a in path], "note": note}

    def flush(self) -> list[Path]:
        """Write the files recorded in update mode (sorted keys: diffs stay small)."""
        if self.mode != "update":
            return []
        return write_docs(self.root, self._docs, self._dirty)


def as_store(certs: "CertStore | str | None") -> CertStore:
    if isinstance(certs, CertStore):
        return certs
    return CertStore(certs or "use")


def checkout_certs_dir(pkg: Path | None = None) -> Path:
    """spec/certs/ of the source checkout this package (or `pkg`, a spec/ directory) runs from,
    for `prove --update`; refuses an installed copy (site-packages) or a read-only tree."""
    pkg = pkg or Path(__file__).resolve().parent
    root = pkg.parent
    certs = pkg / "certs"
    if "site-packages" in pkg.parts or "dist-packages" in pkg.parts or not (root / "pyproject.toml").is_file():
        raise CertError(f"--update rewrites the certificates of a source checkout, but spec/ runs from {pkg}, "
                        "which is an installed copy; run it from a checkout (pip install -e .)")
    target = certs if certs.exists() else pkg
    if not os.access(target, os.W_OK):
        raise CertError(f"--update cannot write certificates: {target} is not writable")
    return certs


def write_docs(root: Path, docs: dict, dirty: set) -> list[Path]:
    """Write the certificate files named in `dirty` (sorted keys: diffs stay small) and clear it;
    shared by the core/lifecycle store and the data path's (spec/datapath/certs.py)."""
    out: list[Path] = []
    root.mkdir(parents=True, exist_ok=True)
    for name in sorted(dirty):
        doc = docs[name]
        for k in ("violations", "witnesses"):
            doc[k] = dict(sorted(doc[k].items()))
        path = root / name
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        out.append(path)
    dirty.clear()
    return out
