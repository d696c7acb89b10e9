"""Expected lifecycle verdicts per (variant, property), each with the reason it rests on.

Only the pairs listed are run by default: every property for `final` (expected proved), the
properties each variant's bug is expected to break (expected violated, with a counterexample),
the reviewers' questions for `pr-758072b`, and the findings (residual risks) of `final`.
"""
from __future__ import annotations

P3, P4, P4M = "no-unserialized-dispatch-while-enabled", "in-flight-completion-delivered", "map-empty-after-drain"
P6, P7, P8, P9 = "tags-disjoint", "agent-scoping", "spm-contexts-disjoint", "refcount-balanced"
GATE = "unrelated-queues-batched"

_NO_MARKER_P8 = "digest §5.1 variant B: the scan skips the reserved-but-null slot of a concurrent start"
_NO_MARKER_P9 = ("digest §4 P9 (a): stop sees `enabled` still false (with the was_enabled guard) and releases "
                 "nothing; the start then acquires on a context whose slot is cleared")
_LEAK_P3 = "the leaked reference keeps the serializer ENABLED with no published context to request serialization"

# queue_controller_sync() syncs the queues one after another (digest §2.9): a queue whose sync
# returned takes a new dispatch, which the stopping context still instruments (its slot stays
# published until stop phase 3; `enabled` is cleared, so pre_kernel_call inserts the
# EmptyAQLPacket fallback, digest §2.5) and which async_started() counts, before a later queue's
# sync returns true. Found when the model stopped requiring every queue idle at one instant
# (cpp/DIVERGENCES.md L3, closed 2026-12-04); the one-instant model had made it unreachable.
_SEQUENTIAL_DRAIN = ("digest §2.9 [SRC 5d4ce3a9]: Queue::sync() runs queue after queue; a dispatch submitted on "
                     "a queue already synced holds the context's fallback packet when queue_controller_sync() "
                     "returns true")

VIOLATED: dict[tuple[str, str], str] = {
    ("final", P4M): _SEQUENTIAL_DRAIN,
    ("pr-758072b", P4M): _SEQUENTIAL_DRAIN,
    ("pr-758072b", GATE): "is_any_active() gate at 758072b (digest §5.2)",
    ("pr-758072b", P6): "[INF] tags 1..4 at that revision (digest §2.11 ROCm@9a49575c)",
    ("pr-758072b", P8): "[INF] no start marker at 758072b: " + _NO_MARKER_P8,
    ("pr-758072b", P9): "[INF] no start marker at 758072b: " + _NO_MARKER_P9,
    ("pr-758072b", P3): "[INF] no start marker at 758072b: " + _LEAK_P3,
    ("slot-cleared-first", P3): "bwelton #8887 issue 2: the enter hook goes blind before disable_serialization()",
    ("exit-over-active", P4): "bwelton #8887 issue 1: the in-flight completion finds no active context, no kfd_stop",
    ("exit-over-active", P4M): "the completion leaves the packet in the map, the drain still succeeds (digest §4 P4 step 4)",
    ("exit-over-active", P3): "that era also cleared the slot first (bwelton #8887 issue 2)",
    ("positive-tags", P6): "registry id 1 (first add_callback) equals COUNTERS_CLIENT_ID=1 (digest §4 P6)",
    ("unscoped-hooks", P7): "v1 hooks without collects_on instrument every GPU (digest §4 P7)",
    ("conflict-scan-unlocked", P8): "digest §5.1 variant A: both starts scan an empty active list",
    ("publish-after-unlock", P8): _NO_MARKER_P8,
    ("publish-after-unlock", P9): _NO_MARKER_P9,
    ("publish-after-unlock", P3): _LEAK_P3,
    ("unconditional-stop-disable", P8): "pre-marker era: " + _NO_MARKER_P8,
    ("unconditional-stop-disable", P9): "digest §4 P9 (a) mid version: the release runs before the acquire "
                                        "and is clamped at 0",
    ("unconditional-stop-disable", P3): _LEAK_P3,
    ("set-agents-race", P9): "digest §4 P7: start enables one set, set_agents rewrites it, stop disables the "
                             "other (source comment: 'never returns to zero')",
    ("set-agents-race", P3): "the reference taken for the old agent set serializes an agent no context collects on",
    ("set-agents-race", P8): "set_agents widens a context between its conflict scan and its publication",
    ("process-wide-batching", GATE): "digest §5.2: is_any_active() disables batching on every agent",
}

FINDING_REASON: dict[str, str] = {
    "drain-covers-hooked-dispatches": "residual: a dispatch between the enter hook and async_started() is not "
                                      "counted by _active_kernels, so the drain can succeed before it completes",
    "no-unserialized-submit-while-enabled": "residual (i) of digest §4 P3: the hook snapshot predates the start's "
                                            "publish, the serializer is enabled before submission",
    "stop-returns-after-delivery": "residual of digest §4 P4: Queue::sync times out and only warns",
    "deactivate-releases-references": "digest §4 P9 (b): deactivate clears the slot without spm::stop_context",
    "no-completion-after-profile-destroyed": "seed open question: destroying the profile after a stop whose drain "
                                             "timed out",
}

# the reviewers' questions and open findings (seed 'Questions to Answer'; digest §5)
QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("In-flight SPM dispatch still gets DISPATCH_END / kfd_stop after stop? packet_return_map empty?", (P4, P4M)),
    ("GPU-1-only SPM leaves GPU-0 alone?", (P7, GATE)),
    ("Open finding: SPM conflict check races with context activation", (P8,)),
    ("Open finding: Process-wide SPM batching disable affects unrelated GPU queues", (GATE,)),
)
QUESTION_VARIANTS = ("pr-758072b", "final")


def expected(variant: str, prop: str) -> tuple[str, str]:
    if (variant, prop) in VIOLATED:
        return "violated", VIOLATED[(variant, prop)]
    if prop in FINDING_REASON:
        return "violated", "finding: " + FINDING_REASON[prop]
    return "proved", "the variant leaves this part of the protocol as in the final design"


def final_findings(variant: str) -> frozenset[str]:
    """The core properties the final design itself violates (VIOLATED[("final", p)]: a property of
    the code, not of a variant) that `variant` violates for the same reason. A trace checker
    reports them as findings of the code (notes), as it does the FINDINGS, not as the run's
    verdict: a C++ run of `final` that hits map-empty-after-drain shows the code's sequential
    drain, not a bug of the run. A variant whose own bug breaks the property (a different reason,
    e.g. exit-over-active's completion over active contexts) keeps it as its verdict."""
    own = {p: r for (v, p), r in VIOLATED.items() if v == "final"}
    return frozenset(p for p, r in own.items() if VIOLATED.get((variant, p), r) == r)


def default_pairs() -> list[tuple[str, str]]:
    """(variant, property) pairs `spmcheck prove` runs for the lifecycle, in table order."""
    from .properties import CORE_LPROPS, FINDINGS

    pairs = [("final", p) for p in CORE_LPROPS]
    for q, props in QUESTIONS:
        pairs += [("pr-758072b", p) for p in props if ("pr-758072b", p) not in pairs]
    pairs += [k for k in VIOLATED if k not in pairs]
    pairs += [("final", f) for f in FINDINGS]
    return pairs
