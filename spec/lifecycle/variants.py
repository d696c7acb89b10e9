"""Lifecycle variant knobs: each historical revision or review finding is the final design with
knobs set. Sources cite ../shared/reference/protocol-digest.md ("digest") and the seed PR text."""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class LVariant:
    name: str
    summary: str
    source: str
    # context::stop_context: stop services while the slot is populated, then CAS it (post-fix),
    # or CAS the slot first and stop services afterwards (#8887 before the ordering fix).
    slot_cleared_first: bool = False
    # SPM exit hook iterates registered contexts (v2) or active contexts (v1 liveness routing).
    exit_over_active: bool = False
    # hook tags: negative constants (-1001..-1004) or the positive enum 1..4 (ROCm@9a49575c).
    positive_tags: bool = False
    # enter hook checks collects_on(agent) and spm start/stop enable only the context's agents.
    scoped: bool = True
    # the conflict scan runs under the contexts mutex (post-fix) or before taking it (baseline).
    scan_locked: bool = True
    # start inserts the in-progress marker before dropping the mutex (post-fix) or not.
    start_marker: bool = True
    # spm::stop_context releases its reference only if it saw `enabled` set (was_enabled guard).
    stop_disable_guarded: bool = True
    # set_dispatch_agents waits for in-progress start/stop markers before its activity check.
    set_agents_waits: bool = True
    # WriteInterceptor batching/interception gate: is_active_on_agent (per agent) or is_any_active.
    per_agent_gate: bool = True
    known_bad: bool = False
    # a spec.lang.mutate mutation name applied to the definition (the cross-reading mutation test)
    mutation: str = ""


FINAL = LVariant(
    "final",
    "PR head (#11968 with commit 4bbc5a8): enter over active, exit over registered, services "
    "stopped before the slot CAS, start marker, per-agent gate, negative tags",
    "digest §2.4-§2.11 post versions [SRC amd-vkale@504daf36, @5d4ce3a9, ROCm@03c67769]; seed "
    "Reviewer Guide; commit 4bbc5a8 (queue.cpp#L446-L450)",
)


def _v(name: str, summary: str, source: str, **knobs: bool) -> LVariant:
    return replace(FINAL, name=name, summary=summary, source=source, **knobs)


LVARIANTS: dict[str, LVariant] = {
    v.name: v
    for v in (
        FINAL,
        _v("pr-758072b", "the seed's pinned revision: process-wide SPM gate (is_any_active); "
           "[INF] positive tags and no start marker at that revision",
           "seed 'Permalinks pin to 758072b'; digest §2.4 SPM_GATE v1 (queue.cpp#L318-L322), §2.11 "
           "ROCm@9a49575c, §5.1 (finding open against this revision) [INF]",
           per_agent_gate=False, positive_tags=True, start_marker=False, known_bad=True),
        _v("slot-cleared-first", "context::stop_context CASes the slot to null before spm::stop_context",
           "digest §2.8 'SPM branch before the ordering fix'; bwelton review of #8887 issue 2 "
           "(context.cpp:371 before context.cpp:383)", slot_cleared_first=True, known_bad=True),
        _v("exit-over-active", "v1 exit hook iterates active contexts (liveness routing), with the "
           "stop order of that era (slot cleared first)",
           "digest §2.6 v1 [SRC id 59876318601] + §4 P4 pre-fix; bwelton review of #8887 issue 1",
           exit_over_active=True, slot_cleared_first=True, known_bad=True),
        _v("positive-tags", "hook tags 1..4 overlap the registry ids handed out by add_callback",
           "digest §2.11 ROCm@9a49575c; client_ids.hpp fix comment (upstream ref 69238053008)",
           positive_tags=True, known_bad=True),
        _v("unscoped-hooks", "enter hook without collects_on and unscoped enable/disable_serialization()",
           "digest §4 P7 pre-fix: v1 hooks (id 59876318601), mid spm::start_context ROCm@80e98e0c",
           scoped=False, known_bad=True),
        _v("conflict-scan-unlocked", "SPM conflict scan over active slots before taking the contexts mutex",
           "digest §5.1 variant A (mirror context.cpp L283-295); Copilot on #11832", scan_locked=False,
           known_bad=True),
        _v("publish-after-unlock", "start reserves under the mutex and publishes after unlocking, "
           "with no in-progress marker", "digest §5.1 variant B; §4 P9 (a) with the was_enabled guard",
           start_marker=False, known_bad=True),
        _v("unconditional-stop-disable", "mid spm::stop_context: disable_serialization() whether or "
           "not `enabled` was set, in the pre-marker era",
           "digest §2.7 mid version [SRC ROCm@80e98e0c]; §4 P9 (a) 'with the mid version'",
           stop_disable_guarded=False, start_marker=False, known_bad=True),
        _v("set-agents-race", "set_dispatch_agents checks activity without waiting for an "
           "in-progress start", "digest §4 P7 'Refcount-leak variant via set_dispatch_agents'; source "
           "comment in set_dispatch_agents [SRC 5d4ce3a9]", set_agents_waits=False, known_bad=True),
        _v("process-wide-batching", "batching/interception gate is spm::is_any_active() (process-wide)",
           "digest §5.2; finding 'Process-wide SPM batching disable affects unrelated GPU queues'",
           per_agent_gate=False, known_bad=True),
    )
}


def hook_tags(v: LVariant) -> dict[str, int]:
    """Producer tags of the queue hooks (digest §2.11)."""
    if v.positive_tags:
        return {"COUNTERS": 1, "THREAD_TRACE": 2, "PC_SAMPLING": 3, "SPM": 4}
    return {"COUNTERS": -1001, "THREAD_TRACE": -1002, "PC_SAMPLING": -1003, "SPM": -1004}
