"""Variant knobs: each historical revision of the protocol is the same definition with knobs set.

Every variant names the code or review text it models (digest = ../shared/reference/protocol-digest.md).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    name: str
    summary: str
    source: str
    # serializer(): hold the refcount read lock across lookup+insert (post-fix) or release it
    # right after reading (pre-fix "stale lookup").
    lookup_holds_refcount: bool = True
    # update_serialization(): apply transitions inside the refcount write lock (post-fix) or
    # compute them under it and apply after releasing it (pre-fix).
    apply_inside_refcount: bool = True
    # which value decides enable vs disable when a transition is applied: the post-update
    # count (post-fix) or the caller's `enable` flag (intermediate revision / pre-fix).
    action_from_count: bool = True
    # the pre-refcount era: one global `_serialized_enabled` switch, no counting.
    global_flag: bool = False
    # hypothetical lock inversion the PR comment warns against: serializer() takes the
    # serializer map before the refcount. Not a historical revision; it exists to show the
    # lock-order check has teeth.
    lookup_map_before_refcount: bool = False
    known_bad: bool = False
    # a mutation of the definition (spec.lang.mutate), for the cross-reading mutation test
    mutation: str = ""


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "final",
            "PR head: refcount R held across lookup+insert; transitions applied inside refcount W, "
            "action from the post-update count",
            "digest §2.1 post-fix, §2.2 post-fix [SRC amd-vkale@5d4ce3a9 hsa/queue_controller.cpp]; "
            "seed commit 'Two races in QueueController' (cherry-pick 6b5b59e)",
        ),
        Variant(
            "caller-flag",
            "intermediate revision: transitions applied inside refcount W but from the caller's "
            "`enable` flag",
            "digest §2.2 'Intermediate' [SRC ROCm@00327028 update_serialization: if(enable)]",
            action_from_count=False,
        ),
        Variant(
            "stale-lookup",
            "pre-fix serializer(): refcount read, release, then lookup/insert",
            "digest §2.1 pre-fix [PR #11870: 'serializer() read the per-agent refcount, released it, "
            "then looked up or inserted the serializer entry']; review of #8887 @ queue_controller.cpp:401",
            lookup_holds_refcount=False,
            known_bad=True,
        ),
        Variant(
            "apply-after-unlock",
            "pre-fix update_serialization(): crossings computed under refcount W, applied after "
            "releasing it (from the caller's flag)",
            "digest §2.2 pre-fix [PR #11869/#11870: 'applied the resulting enable/disable calls after "
            "releasing it']; diff fragment on #9932 @ queue_controller.cpp:514",
            apply_inside_refcount=False,
            action_from_count=False,
            known_bad=True,
        ),
        Variant(
            "pre-fix",
            "the code before PR #11869/#11870: both historical bugs together (serializer() releases "
            "the refcount before the lookup/insert, update_serialization() applies after releasing it)",
            "digest §2.1 + §2.2 pre-fix [PR #11869/#11870 reconstruction; reviews of #8887 @ "
            "queue_controller.cpp:401 and #9932 @ :514]; cpp/ variant pre-fix (DIVERGENCES D6)",
            lookup_holds_refcount=False,
            apply_inside_refcount=False,
            action_from_count=False,
            known_bad=True,
        ),
        Variant(
            "global-flag",
            "pre-refcount era: one global `_serialized_enabled` switch; the first stop disables "
            "serialization under another holder",
            "digest §2.1 G0, §2.2 G0 [SRC mirror develop queue_controller.cpp L283-365]; counter test "
            "serialization_is_reference_counted_across_subsystems ('a pre-existing bug')",
            global_flag=True,
            action_from_count=False,
            known_bad=True,
        ),
        Variant(
            "reversed-lookup-order",
            "hypothetical: serializer() takes the serializer map before the refcount (lock inversion)",
            "digest §4 P5 [PR #8887 diff comment @ queue_controller.cpp:401: 'reversing it here would "
            "deadlock']",
            lookup_map_before_refcount=True,
            known_bad=True,
        ),
    )
}


def variant(name: str) -> Variant:
    return VARIANTS[name]
