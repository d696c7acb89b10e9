"""Where a property or variant is defined, as (repository-relative path, line), for SARIF
locations and annotations. Found by the quoted name in the defining module's text, so it follows
the definitions wherever they move inside those files."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

# where a property's claim is written: the definition first (claims), then the Python properties
_PROPERTY_FILES = {"core": ("spec/programs.py", "spec/lang/discipline.py", "spec/properties.py"),
                   "lifecycle": ("spec/lifecycle/definition.py", "spec/lifecycle/properties.py"),
                   # the data path's claims are named by constants in its definition; the progress
                   # claims (barrier-can-clear, drain-ends) are written beside the rows
                   "datapath": ("spec/datapath/protocol.py", "spec/datapath/verdicts.py")}
_VARIANT_FILES = {"core": "spec/variants.py", "lifecycle": "spec/lifecycle/variants.py",
                  "datapath": "spec/datapath/variants.py"}


@lru_cache(maxsize=None)
def _lines(rel: str) -> tuple[str, ...]:
    try:
        return tuple((ROOT / rel).read_text(encoding="utf-8").splitlines())
    except OSError:
        return ()


def _find(rel: str, name: str) -> tuple[str, int]:
    needle = f'"{name}"'
    for i, ln in enumerate(_lines(rel), 1):
        if needle in ln:
            return rel, i
    return rel, 1


def property_location(prop: str, model: str) -> tuple[str, int]:
    files = _PROPERTY_FILES[model]
    for rel in files:
        found = _find(rel, prop)
        if f'"{prop}"' in (_lines(rel)[found[1] - 1] if _lines(rel) else ""):
            return found
    return files[-1], 1


def variant_location(variant: str, model: str) -> tuple[str, int]:
    return _find(_VARIANT_FILES[model], variant)


def pair_location(p: object) -> tuple[str, int]:
    """Where a pair's property is written: for the data path, the claim its row decides."""
    row = getattr(p, "row", None)
    r = getattr(p, "result")
    if row is None:
        return property_location(r.property, getattr(p, "model"))
    rel, line = property_location(row.claim, "datapath")
    # a claim of the definition is named by a constant (H1 = "batched-not-serialized"); the
    # builder call that writes it (b.invariant(H1, ...)) is the better place to point at
    m = re.match(r"\s*([A-Z][A-Z0-9_]*)\s*=", _lines(rel)[line - 1] if _lines(rel) else "")
    if m:
        for i, ln in enumerate(_lines(rel), 1):
            if re.search(rf"\.(invariant|step_claim)\({m.group(1)},", ln):
                return rel, i
    return rel, line
