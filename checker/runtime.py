"""The QueueController serialization protocol executed by real OS threads with real locks.

This is the system under test, not a second model: it keeps the SDK's data (refcount, lazily
created per-agent serializer entries, `_serialized_enabled`) and takes the SDK's locks with the
scopes of each variant (digest §2.1, §2.2; step order as in spec/programs.py). It never decides a
verdict; every step just writes the event it performed (checker.recorder), and the bugs of the
historical variants appear only because their lock scopes let other threads in.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable

from spmcheck.spec.variants import Variant

from .recorder import Args, Recorder


class RWLock:
    """A std::shared_mutex: many shared holders or one exclusive holder.

    Writer-preferring (a waiting writer blocks new readers) so that a stream of lookups cannot
    starve the updaters; this only removes interleavings, it never adds one the SDK lacks.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    def acquire_shared(self) -> None:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1

    def release_shared(self) -> None:
        with self._cond:
            self._readers -= 1
            if self._readers == 0:
                self._cond.notify_all()

    def acquire_exclusive(self) -> None:
        with self._cond:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True

    def release_exclusive(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()


@dataclass
class Serializer:
    """One per-agent `Synchronized<profiler_serializer>`: its lock and its enabled status."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    enabled: bool = False


class Worker:
    """Per-thread handle: name, seeded RNG, jitter, and the lock/step helpers that record."""

    def __init__(self, name: str, ctl: "Controller", seed: int, jitter: float) -> None:
        self.name = name
        self.ctl = ctl
        self.rng = random.Random(f"{seed}:{name}")  # str seeds are hashed deterministically
        self.jitter = jitter

    def shuffled(self, xs: Iterable[int]) -> list[int]:
        """The SDK walks unordered containers: any order, drawn from this thread's RNG."""
        out = sorted(xs)
        self.rng.shuffle(out)
        return out

    def _maybe_yield(self) -> None:
        # Chaos-scheduler style: only at lock boundaries, so the windows widened are the ones
        # the lock scopes leave open.
        if self.jitter and self.rng.random() < self.jitter:
            if self.rng.random() < 0.5:
                time.sleep(0)
            else:
                time.sleep(self.rng.uniform(0, 0.0005))

    def acquire(self, lock: str, mode: str) -> None:
        self._maybe_yield()
        self.ctl.physical(lock, mode, acquire=True)
        # seq taken after the acquire: nobody conflicting can log an acquire until we log a release
        self.ctl.rec.event(self.name, "lock_acquire", (("lock", lock), ("mode", mode)))
        self._maybe_yield()

    def release(self, lock: str, mode: str) -> None:
        self._maybe_yield()
        # seq taken before the release: the next holder's acquire is necessarily logged later
        self.ctl.rec.event(self.name, "lock_release", (("lock", lock), ("mode", mode)))
        self.ctl.physical(lock, mode, acquire=False)
        self._maybe_yield()

    def step(self, kind: str, static: Args = (), effect=None) -> None:  # type: ignore[no-untyped-def]
        self.ctl.rec.step(self.name, kind, static, effect)


class Controller:
    """QueueController state plus `update_serialization` and `serializer` for one variant."""

    def __init__(self, variant: Variant, agents: int, rec: Recorder) -> None:
        self.v = variant
        self.agents = agents
        self.rec = rec
        self.rc_all = 0
        self.rc_agent = [0] * agents
        self.smap: dict[int, Serializer] = {}  # created lazily, never erased (digest §1.2)
        self.flag = False  # `_serialized_enabled`
        self.rw = {"queues": RWLock(), "refcount": RWLock(), "serializer_map": RWLock()}

    # ---- locks ------------------------------------------------------------------------------
    def physical(self, lock: str, mode: str, acquire: bool) -> None:
        if lock.startswith("serializer."):
            m = self.smap[int(lock.split(".", 1)[1])].lock
            m.acquire() if acquire else m.release()
            return
        rw = self.rw[lock]
        if mode == "shared":
            rw.acquire_shared() if acquire else rw.release_shared()
        else:
            rw.acquire_exclusive() if acquire else rw.release_exclusive()

    # ---- refcount helpers (callers hold the lock the variant says they hold, or not) ---------
    def count(self, a: int) -> int:
        return self.rc_all + self.rc_agent[a]

    def enabled(self, a: int) -> bool:
        return self.count(a) > 0

    def any_enabled(self) -> bool:
        return self.rc_all > 0 or any(c > 0 for c in self.rc_agent)

    # ---- update_serialization(agents | all, enable) — digest §2.2 ------------------------------
    def update_serialization(self, w: Worker, scope: tuple[int, ...] | None, enable: bool) -> None:
        v = self.v
        name = "all" if scope is None else ",".join(map(str, scope))
        w.step("update_begin", (("agents", name), ("enable", enable)))
        w.acquire("queues", "shared")
        if v.global_flag:
            self._store_flag(w, lambda: enable)  # G0: `_serialized_enabled.store(b)` first
            w.acquire("serializer_map", "exclusive")
            self._apply(w, sorted(self.smap), lambda a: enable)
            w.release("serializer_map", "exclusive")
        elif v.apply_inside_refcount:
            w.acquire("refcount", "exclusive")
            w.acquire("serializer_map", "shared")
            was = {a: self.enabled(a) for a in self.smap}  # only agents that have an entry
            w.release("serializer_map", "shared")
            self._count(w, scope, enable)
            w.acquire("serializer_map", "exclusive")
            crossed = [a for a in sorted(was) if was[a] != self.enabled(a)]
            if v.action_from_count:
                self._apply(w, crossed, self.enabled)  # post-update count, under refcount W
            else:
                self._apply(w, crossed, lambda a: enable)
            w.release("serializer_map", "exclusive")
            any_value = self.any_enabled()  # `any_enabled = state.any()`, the last thing under W(rc)
            w.release("refcount", "exclusive")
        else:
            w.acquire("refcount", "exclusive")
            was = [self.enabled(a) for a in range(self.agents)]
            self._count(w, scope, enable)
            crossed = [a for a in range(self.agents) if was[a] != self.enabled(a)]
            any_value = self.any_enabled()
            w.release("refcount", "exclusive")  # pre-fix: crossings applied after this release
            w.acquire("serializer_map", "exclusive")
            present = [a for a in crossed if a in self.smap]  # find(a) or continue
            self._apply(w, present, lambda a: enable)
            w.release("serializer_map", "exclusive")
        if not v.global_flag:
            # the SDK stores, after U(rc), the value it computed under W(rc): another update may
            # have changed the count since (audit U2), so the stored flag can be stale
            self._store_flag(w, lambda: any_value)
        w.release("queues", "shared")
        w.step("update_end")

    def _count(self, w: Worker, scope: tuple[int, ...] | None, enable: bool) -> None:
        def bump(old: int) -> int:
            return old + 1 if enable else max(old - 1, 0)  # clamped at 0

        if scope is None:
            def eff_all() -> Args:
                old = self.rc_all
                self.rc_all = bump(old)
                return (("old", old), ("new", self.rc_all))

            w.step("refcount_change", (("agent", "all"),), eff_all)
            return
        for a in w.shuffled(scope):  # unordered_set order in the SDK
            def eff(a: int = a) -> Args:
                old = self.rc_agent[a]
                self.rc_agent[a] = bump(old)
                return (("old", old), ("new", self.rc_agent[a]))

            w.step("refcount_change", (("agent", a),), eff)

    def _apply(self, w: Worker, agents: list[int], want) -> None:  # type: ignore[no-untyped-def]
        for a in w.shuffled(agents):  # unordered_map order in the SDK
            lock = f"serializer.{a}"
            w.acquire(lock, "exclusive")
            on = bool(want(a))
            ser = self.smap[a]

            def eff(on: bool = on, ser: Serializer = ser) -> Args:
                ser.enabled = on
                return ()

            w.step("serializer_enable" if on else "serializer_disable", (("agent", a),), eff)
            w.release(lock, "exclusive")

    def _store_flag(self, w: Worker, value) -> None:  # type: ignore[no-untyped-def]
        def eff() -> Args:
            self.flag = bool(value())
            return (("value", self.flag),)

        w.step("flag_store", (), eff)

    # ---- QueueController::serializer(queue) — digest §2.1 --------------------------------------
    def serializer(self, w: Worker, a: int) -> None:
        v = self.v
        holds_rc = v.lookup_holds_refcount and not v.global_flag
        should = [False]
        w.step("lookup_begin", (("agent", a),))

        def read() -> Args:
            c = self.count(a)
            should[0] = c > 0
            return (("count", c),)

        if v.lookup_map_before_refcount and not v.global_flag:
            # hypothetical inversion: W(smap) then R(rc) — can deadlock against an updater
            w.acquire("serializer_map", "exclusive")
            w.acquire("refcount", "shared")
            w.step("refcount_read", (("agent", a),), read)
            self._insert(w, a, should)
            w.release("serializer_map", "exclusive")
            w.release("refcount", "shared")
            w.step("lookup_end", (("agent", a),))
            return
        if not v.global_flag:
            w.acquire("refcount", "shared")
            w.step("refcount_read", (("agent", a),), read)
            if not holds_rc:
                w.release("refcount", "shared")  # pre-fix: the read goes stale from here on
        w.acquire("serializer_map", "shared")
        found = [False]

        def find() -> Args:
            found[0] = a in self.smap
            return (("found", found[0]),)

        w.step("serializer_lookup", (("agent", a),), find)
        w.release("serializer_map", "shared")  # ulock: not an upgrade
        if not found[0]:
            w.acquire("serializer_map", "exclusive")
            self._insert(w, a, should)
            w.release("serializer_map", "exclusive")
        if holds_rc:
            w.release("refcount", "shared")
        w.step("lookup_end", (("agent", a),))

    def _insert(self, w: Worker, a: int, should: list[bool]) -> None:
        created = [False]

        def ins() -> Args:
            created[0] = a not in self.smap
            if created[0]:
                self.smap[a] = Serializer()
            if self.v.global_flag:
                should[0] = self.flag  # G0: `_serialized_enabled.load()` under W(smap)
            return (("created", created[0]),)

        w.step("serializer_insert", (("agent", a),), ins)
        if should[0]:  # enable({}) on the entry emplace returns, new or a racer's (audit L2)
            lock = f"serializer.{a}"
            w.acquire(lock, "exclusive")
            ser = self.smap[a]

            def en() -> Args:
                ser.enabled = True
                return ()

            w.step("serializer_enable", (("agent", a),), en)
            w.release(lock, "exclusive")


def update_scopes(agents: int, global_flag: bool) -> list[tuple[int, ...] | None]:
    """`all` (None) and, in the per-agent era, every non-empty agent subset."""
    out: list[tuple[int, ...] | None] = [None]
    if not global_flag:
        for k in range(1, agents + 1):
            out += list(combinations(range(agents), k))
    return out
