"""Static copy of `run()`'s any-size column, so `spmcheck prove` can show it without Z3.

tests/test_parametric.py checks it against a fresh `run()`; regenerate with
`python -m spec.parametric.status` after changing the protocol or the invariants.
"""
from __future__ import annotations

STATUS: dict[tuple[str, str], str] = {}

if __name__ == "__main__":
    from .prove import run
    from .results import any_size_text

    print("STATUS: dict[tuple[str, str], str] = {")
    for r in run():
        print(f"    ({r.variant!r}, {r.property!r}): {any_size_text(r)!r},")
    print("}")
