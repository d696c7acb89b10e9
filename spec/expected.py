"""Expected verdict per (variant, property), each row with the reason / source it rests on."""
from __future__ import annotations

EXPECTED: dict[tuple[str, str], tuple[str, str]] = {
    ("final", "serializer-mirrors-refcount"): ("proved", "seed 6b5b59e: apply inside refcount W; digest §4 P1 post-fix"),
    ("final", "creation-consistent"): ("proved", "seed 6b5b59e: R(rc) held across lookup+insert; digest §4 P2 post-fix"),
    ("final", "lock-order-acyclic"): ("proved", "seed: 'Lock order is refcount -> serializer map -> per-agent serializer in both paths'"),
    ("caller-flag", "serializer-mirrors-refcount"): ("proved", "digest §4 P1: intermediate @00327028 'equivalent under the lock'"),
    ("caller-flag", "creation-consistent"): ("proved", "serializer() is already post-fix in @00327028"),
    ("caller-flag", "lock-order-acyclic"): ("proved", "same lock scopes as final"),
    ("stale-lookup", "serializer-mirrors-refcount"): ("violated", "digest §4 P2 'stays DIS for the whole session' (stale false) / EN at refcount 0 (stale true)"),
    ("stale-lookup", "creation-consistent"): ("violated", "digest §4 P2 pre-fix creation race"),
    ("stale-lookup", "lock-order-acyclic"): ("proved", "pre-fix serializer() did not nest rc/smap: 'race, not deadlock' (digest §4 P5)"),
    ("apply-after-unlock", "serializer-mirrors-refcount"): ("violated", "digest §4 P1 transition-ordering race (two holders)"),
    ("apply-after-unlock", "creation-consistent"): ("proved", "serializer() is post-fix here; creation reads rc under R(rc)"),
    ("apply-after-unlock", "lock-order-acyclic"): ("proved", "no nesting change, only a wider gap"),
    ("pre-fix", "serializer-mirrors-refcount"): ("violated", "both pre-fix races: a stale insert (digest §4 P2) and the transition-ordering race (P1)"),
    ("pre-fix", "creation-consistent"): ("violated", "digest §4 P2 pre-fix creation race"),
    ("pre-fix", "lock-discipline"): ("proved", "the pre-fix races are between lock scopes, each access is under its lock"),
    ("pre-fix", "lock-order-acyclic"): ("proved", "pre-fix serializer() did not nest rc/smap: 'race, not deadlock' (digest §4 P5)"),
    ("global-flag", "serializer-mirrors-refcount"): ("violated", "digest §2.2 G0: 'whichever service stops first disables serialization under the others'"),
    ("global-flag", "creation-consistent"): ("violated", "G0 creation follows the global flag, not the holders"),
    ("global-flag", "lock-order-acyclic"): ("proved", "G0 nests queues -> serializer map -> serializer only"),
    ("reversed-lookup-order", "serializer-mirrors-refcount"): ("proved", "the inversion changes lock order, not the data protocol"),
    ("reversed-lookup-order", "creation-consistent"): ("proved", "creation still reads rc under R(rc)"),
    ("reversed-lookup-order", "lock-order-acyclic"): ("violated", "PR #8887 @ queue_controller.cpp:401: 'reversing it here would deadlock'"),
    ("final", "lock-discipline"): ("proved", "digest §1.3: refcount under W(rc)/R(rc), the map under its ulock, an entry under its wlock"),
    ("caller-flag", "lock-discipline"): ("proved", "same lock scopes as final"),
    ("stale-lookup", "lock-discipline"): ("proved", "the pre-fix race is between lock scopes, each access is under its lock"),
    ("apply-after-unlock", "lock-discipline"): ("proved", "the crossings are computed under W(rc); the late apply reads only the caller's flag"),
    ("global-flag", "lock-discipline"): ("proved", "G0 reads the atomic flag; the refcount is a ghost there (no lock protects it)"),
    ("reversed-lookup-order", "lock-discipline"): ("proved", "the inversion changes lock order, each access is still under its lock"),
    # findings (spec.properties CORE_FINDINGS), run against final only
    ("final", "stored-flag-mirrors-refcount"): ("violated", "fidelity-audit U2: two updaters store the `any_enabled` each computed under W(rc) in the opposite order after U(rc); the flag stays stale until the next update"),
}


def expected(variant: str, prop: str) -> tuple[str, str]:
    return EXPECTED.get((variant, prop), ("unknown", "no expectation recorded"))
