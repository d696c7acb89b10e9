"""Where a property or variant is defined, as (repository-relative path, line), for SARIF
locations and annotations. Found by the quoted name in the defining module's text, so it follows
the definitions wherever they move inside those files."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

# where a property's claim is written: the definition first (claims), then the Python properties
_PROPERTY_FILES = {"core": ("spec/programs.py", "spec/lang/discipline.py", "spec/properties.py"),
                   "lifecycle": ("spec/lifecycle/definition.py", "spec/lifecycle/properties.py")}
_VARIANT_FILES = {"core": "spec/variants.py", "lifecycle": "spec/lifecycle/variants.py"}


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
