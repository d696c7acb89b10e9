"""Static copy of `run()`'s any-size column, so `spmcheck prove` can show it without Z3.

STATUS: the core (spec.programs) pairs; LSTATUS: the lifecycle (spec.lifecycle) pairs of
`prove.lifecycle_pairs()`. tests/test_parametric.py and tests/test_parametric_lifecycle.py check
them against a fresh `run()`; regenerate with `python -m spec.parametric.status` after changing
the protocol or the invariants.
"""
from __future__ import annotations

STATUS: dict[tuple[str, str], str] = {
    ('final', 'serializer-mirrors-refcount'): 'any size',
    ('final', 'creation-consistent'): 'any size',
    ('final', 'lock-order-acyclic'): 'any size',
    ('caller-flag', 'serializer-mirrors-refcount'): 'any size',
    ('caller-flag', 'creation-consistent'): 'any size',
    ('caller-flag', 'lock-order-acyclic'): 'any size',
    ('stale-lookup', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.acq_refcount.lock_acquire; violation confirmed by a concrete trace',
    ('stale-lookup', 'creation-consistent'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
    ('stale-lookup', 'lock-order-acyclic'): 'any size',
    ('apply-after-unlock', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.acq_refcount.lock_acquire; violation confirmed by a concrete trace',
    ('apply-after-unlock', 'creation-consistent'): 'any size',
    ('apply-after-unlock', 'lock-order-acyclic'): 'any size',
    ('global-flag', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.global_store_flag.flag_store; violation confirmed by a concrete trace',
    ('global-flag', 'creation-consistent'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
    ('global-flag', 'lock-order-acyclic'): 'any size',
    ('reversed-lookup-order', 'serializer-mirrors-refcount'): 'any size',
    ('reversed-lookup-order', 'creation-consistent'): 'any size',
    ('reversed-lookup-order', 'lock-order-acyclic'): 'bounded only: parametric check fails: lock-graph; violation confirmed by a concrete trace',
}

LSTATUS: dict[tuple[str, str], str] = {}

if __name__ == "__main__":
    from .prove import run
    from .results import any_size_text

    results = run(lifecycle=True)
    for model, name in (("core", "STATUS"), ("lifecycle", "LSTATUS")):
        print(f"{name}: dict[tuple[str, str], str] = {{")
        for r in results:
            if r.model == model:
                print(f"    ({r.variant!r}, {r.property!r}): {any_size_text(r)!r},")
        print("}")
