"""Static copy of `run()`'s any-size column, so `spmcheck prove` can show it without Z3.

STATUS: the core (spec.programs) pairs; LSTATUS: the lifecycle (spec.lifecycle) pairs of
`prove.lifecycle_pairs()`. tests/test_parametric.py and tests/test_parametric_lifecycle.py check
them against a fresh `run()`; regenerate with `python -m spmcheck.spec.parametric.status` after changing
the protocol or the invariants.
"""
from __future__ import annotations

STATUS: dict[tuple[str, str], str] = {
    ('final', 'serializer-mirrors-refcount'): 'any size',
    ('final', 'creation-consistent'): 'any size',
    ('final', 'lock-discipline'): 'any size',
    ('final', 'lock-order-acyclic'): 'any size',
    ('caller-flag', 'serializer-mirrors-refcount'): 'any size',
    ('caller-flag', 'creation-consistent'): 'any size',
    ('caller-flag', 'lock-discipline'): 'any size',
    ('caller-flag', 'lock-order-acyclic'): 'any size',
    ('stale-lookup', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.acq_refcount.lock_acquire; violation confirmed by a concrete trace',
    ('stale-lookup', 'creation-consistent'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
    ('stale-lookup', 'lock-discipline'): 'any size',
    ('stale-lookup', 'lock-order-acyclic'): 'any size',
    ('apply-after-unlock', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.acq_refcount.lock_acquire; violation confirmed by a concrete trace',
    ('apply-after-unlock', 'creation-consistent'): 'any size',
    ('apply-after-unlock', 'lock-discipline'): 'any size',
    ('apply-after-unlock', 'lock-order-acyclic'): 'any size',
    ('pre-fix', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.acq_refcount.lock_acquire; violation confirmed by a concrete trace',
    ('pre-fix', 'creation-consistent'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
    ('pre-fix', 'lock-discipline'): 'any size',
    ('pre-fix', 'lock-order-acyclic'): 'any size',
    ('global-flag', 'serializer-mirrors-refcount'): 'bounded only: parametric check fails: consecution:u.global_store_flag.flag_store; violation confirmed by a concrete trace',
    ('global-flag', 'creation-consistent'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
    ('global-flag', 'lock-discipline'): 'any size',
    ('global-flag', 'lock-order-acyclic'): 'any size',
    ('reversed-lookup-order', 'serializer-mirrors-refcount'): 'any size',
    ('reversed-lookup-order', 'creation-consistent'): 'any size',
    ('reversed-lookup-order', 'lock-discipline'): 'any size',
    ('reversed-lookup-order', 'lock-order-acyclic'): 'bounded only: parametric check fails: lock-graph; violation confirmed by a concrete trace',
}
LSTATUS: dict[tuple[str, str], str] = {
    ('final', 'serializer-mirrors-refcount'): 'any size',
    ('final', 'lock-order-acyclic'): 'any size',
    ('final', 'no-unserialized-dispatch-while-enabled'): 'any size',
    ('final', 'in-flight-completion-delivered'): 'any size',
    ('final', 'map-empty-after-drain'): 'bounded only: parametric check fails: implies-property:t.drain.queue_sync[ok]; violation confirmed by a concrete trace',
    ('final', 'tags-disjoint'): 'any size',
    ('final', 'agent-scoping'): 'any size',
    ('final', 'spm-contexts-disjoint'): 'any size',
    ('final', 'refcount-balanced'): 'any size',
    ('final', 'unrelated-queues-batched'): 'any size',
    ('exit-over-active', 'in-flight-completion-delivered'): 'bounded only: parametric check fails: consecution:c.idle.completion_exit; violation confirmed by a concrete trace',
    ('exit-over-active', 'map-empty-after-drain'): 'bounded only: parametric check fails: consecution:c.idle.completion_exit; violation confirmed by a concrete trace',
    ('conflict-scan-unlocked', 'spm-contexts-disjoint'): 'bounded only: parametric check fails: consecution:t.scan_done.start_begin; violation confirmed by a concrete trace',
    ('unscoped-hooks', 'agent-scoping'): 'bounded only: parametric check fails: implies-property:t.spm_enable.spm_enable; violation confirmed by a concrete trace',
    ('positive-tags', 'tags-disjoint'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
    ('process-wide-batching', 'unrelated-queues-batched'): 'bounded only: parametric check fails: implies-property:d.idle.dispatch_gate; violation confirmed by a concrete trace',
    ('publish-after-unlock', 'spm-contexts-disjoint'): 'bounded only: parametric check fails: consecution:t.idle.start_begin; violation confirmed by a concrete trace',
    ('slot-cleared-first', 'no-unserialized-dispatch-while-enabled'): 'bounded only: parametric check fails: consecution:t.idle.stop_begin; violation confirmed by a concrete trace',
    ('unconditional-stop-disable', 'spm-contexts-disjoint'): 'bounded only: parametric check fails: consecution:t.idle.start_begin; violation confirmed by a concrete trace',
    ('set-agents-race', 'spm-contexts-disjoint'): 'bounded only: parametric check fails: consecution:t.idle.set_agents_check; violation confirmed by a concrete trace',
    ('pr-758072b', 'spm-contexts-disjoint'): 'bounded only: parametric check fails: consecution:t.idle.start_begin; violation confirmed by a concrete trace',
    ('pr-758072b', 'unrelated-queues-batched'): 'bounded only: parametric check fails: implies-property:d.idle.dispatch_gate; violation confirmed by a concrete trace',
    ('pr-758072b', 'tags-disjoint'): 'bounded only: parametric check fails: implies-property; violation confirmed by a concrete trace',
}


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
