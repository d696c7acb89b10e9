"""Revision knobs of the data path, each taken from a stored rocprofiler-sdk revision.

The fidelity audit (../shared/reference/fidelity-audit.md §0) found the stored `hsa/queue.cpp`
revisions disagreeing on two details, and the gate changing form between eras; a variant is one
combination of those details as one revision (family) has it. Every knob changes some verdict of
`spec.datapath.verdicts` (tests/test_datapath.py checks that).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DVariant:
    name: str
    summary: str
    source: str
    # `queue.async_started()` at the top of process_packet_batch, before the hooks, for every
    # batch (True), or after the hooks and only when a completion handler is registered (False)
    early_async: bool = False
    # AsyncSignalHandler: `kernel_completion_signal(queue, packet.is_serialized)` for every packet
    # (True) or `if(packet.is_serialized) kernel_completion_signal(queue)` (False)
    completion_two_arg: bool = True
    # the WriteInterceptor gate (raw fast path and batching): `spm::is_active_on_agent(agent)`
    # (True) or the process-wide `spm::is_any_active()` / `should_batch_packets()` (False)
    gate_per_agent: bool = True
    # hypothetical fix, not a stored revision: the enter hooks honour the gate the write computed
    # (a write cached as SPM-free is neither instrumented nor serialized)
    hook_reads_gate: bool = False
    hypothetical: bool = False


_EE = ("hsa/queue.cpp@ee045e38 (PR #11965 'SPM exit-hook fast path and gate caching'; same "
       "details in 03c67769, a027fa94): async_started() at the top of process_packet_batch, "
       "`if(packet.is_serialized) kernel_completion_signal(queue)`, process-wide gate "
       "(activation.cpp@a027fa94 should_batch_packets)")
_810 = ("hsa/queue.cpp@810df56a (all four services + range replay; also 4e5c7a53): async_started() "
        "before the hooks, 2-argument kernel_completion_signal for every packet, gate cached per "
        "write, process-wide")
_2A7 = ("hsa/queue.cpp@amd-vkale/2a7bb457 and later develop: async_started() after the hooks, only "
        "when a handler is registered; 2-argument completion; per-agent gate "
        "`spm::is_active_on_agent` (digest §2.4, commit 4bbc5a8; SPM Queue Hooks design doc)")

DVARIANTS: dict[str, DVariant] = {
    v.name: v
    for v in (
        DVariant("ee045e38", "early async_started, 1-argument completion, process-wide gate", _EE,
                 early_async=True, completion_two_arg=False, gate_per_agent=False),
        DVariant("810df56a", "early async_started, 2-argument completion, process-wide gate", _810,
                 early_async=True, completion_two_arg=True, gate_per_agent=False),
        DVariant("810df56a+agent-gate", "as 810df56a with the per-agent gate of the head design",
                 _810 + "; gate from commit 4bbc5a8 `is_active_on_agent` (digest §2.4)",
                 early_async=True, completion_two_arg=True, gate_per_agent=True),
        DVariant("2a7bb457", "late async_started, 2-argument completion, per-agent gate (latest)", _2A7,
                 early_async=False, completion_two_arg=True, gate_per_agent=True),
        DVariant("2a7bb457+gate-fix", "hypothetical: 2a7bb457 with hooks that honour the write's gate",
                 _2A7 + "; hypothetical fix of audit H1 (G1), not a stored revision",
                 early_async=False, completion_two_arg=True, gate_per_agent=True,
                 hook_reads_gate=True, hypothetical=True),
    )
}

LATEST = "2a7bb457"


def dvariant(name: str) -> DVariant:
    return DVARIANTS[name]
