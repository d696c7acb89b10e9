"""Lock nesting per lifecycle step kind (outer -> inner), read by the static half of P5
(spec/lifecycle/lockgraph.py, spec/parametric/lifecycle_prove.py). The lifecycle models its locks
as atomic steps, so which locks a step nests is metadata of the step kind, not state."""
from __future__ import annotations

UPDATE_CHAIN = ("queues", "refcount", "serializer_map", "serializer")
LOCK_CHAINS: dict[str, tuple[tuple[str, ...], ...]] = {
    "spm_enable": (UPDATE_CHAIN, ("enabled",)),
    "spm_disable": (UPDATE_CHAIN,),
    "spm_set_enabled": (("enabled",),),
    "spm_clear_enabled": (("enabled",),),
    "queue_sync": (("queues",),),
    "dispatch_write": (("queue_callbacks",), ("enabled",), ("packet_return_map",)),
    "dispatch_submit": (("refcount", "serializer_map", "serializer"), ("serializer",)),
    "completion_exit": (("packet_return_map",), ("packet_cache",)),
    "completion_signal": (("serializer",),),
    "start_begin": (("contexts_mutex",),), "stop_begin": (("contexts_mutex",),),
    "slot_clear": (("contexts_mutex",),), "marker_release": (("contexts_mutex",),),
    "set_agents_check": (("contexts_mutex",),), "deactivate": (("contexts_mutex",),),
    "add_callback": (("callback_cache", "queues", "queue_callbacks"),),
    "context_register": (("registry",),),
    # lock-free or holding only what an earlier step took: CAS publish, the write half of
    # set_dispatch_agents (mutex taken by set_agents_check), the scan of conflict-scan-unlocked,
    # the tool-side profile destroy, WriteInterceptor's gate (atomic slot loads, digest §2.10)
    "slot_publish": (), "set_agents_write": (), "start_scan": (), "profile_destroy": (), "dispatch_gate": (),
}


def lock_chains(kind: str, slot_cleared_first: bool) -> tuple[tuple[str, ...], ...]:
    chains = LOCK_CHAINS[kind]  # every step kind has an entry (tests/test_lifecycle_prover.py)
    if slot_cleared_first and kind in ("spm_clear_enabled", "queue_sync", "spm_disable"):
        # pre-fix stop held the contexts mutex across spm::stop_context (bgopesh [PR])
        chains = tuple(("contexts_mutex",) + ch for ch in chains)
    return chains


