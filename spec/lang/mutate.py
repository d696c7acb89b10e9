"""Mutation operators on a protocol definition (not on files).

Each operator makes one small change to one action of a definition — the kinds of slip a code
change makes: a guard conjunct dropped, an update dropped, a step skipped, a lock taken in the
weaker mode, a lock step dropped (acquire and its releases turned into no-ops). Every reading
derived from the definition (fixed-size prover, any-size prover, checker) sees the mutated
definition, which is what the cross-reading mutation test relies on.

A mutation is named by a stable string `op:role:at:kind:index` so a `Variant` can carry it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .syntax import Action, App, Forall, Func, Lit, Not, Op, Protocol, Quant, Var

OPS = ("drop-guard", "drop-update", "skip-step", "weaken-lock", "drop-lock")


@dataclass(frozen=True)
class Mutation:
    op: str
    role: str
    at: str
    kind: str
    index: int = 0
    nth: int = 0  # which of the actions sharing (role, label, kind), in definition order

    @property
    def name(self) -> str:
        kind = self.kind + (f"#{self.nth}" if self.nth else "")
        return f"{self.op}:{self.role}:{self.at}:{kind}:{self.index}"

    @staticmethod
    def parse(text: str) -> "Mutation":
        op, role, at, kind, index = text.split(":")
        if op not in OPS:
            raise ValueError(f"unknown mutation operator {op!r}; known: {', '.join(OPS)}")
        kind, _, nth = kind.partition("#")
        return Mutation(op, role, at, kind, int(index), int(nth or 0))


def _same(a: Action, role: str, at: str, kind: str) -> bool:
    return a.role.name == role and a.at == at and a.kind == kind


def _nth(p: Protocol, a: Action) -> int:
    return [b for b in p.actions if _same(b, a.role.name, a.at, a.kind)].index(a)


def _lock_update(a: Action) -> tuple[int, App] | None:
    for i, up in enumerate(a.updates):
        if isinstance(up, tuple) and up[0].func.lock is not None:
            return i, up[0]
    return None


def candidates(p: Protocol) -> list[Mutation]:
    """Every single mutation the operators can make to `p` (in definition order)."""
    out: list[Mutation] = []
    for a in p.actions:
        base = (a.role.name, a.at, a.kind)
        n = _nth(p, a)
        out += [Mutation("drop-guard", *base, i, n) for i in range(len(a.guard))]
        lock = _lock_update(a)
        out += [Mutation("drop-update", *base, i, n) for i, _ in enumerate(a.updates)
                if lock is None or i != lock[0]]
        if a.goto is not None and _skippable(p, a):
            out.append(Mutation("skip-step", *base, 0, n))
        if lock is not None and a.kind == "lock_acquire":
            if lock[1].func.lock[1] == "exclusive" and _shared_twin(p, lock[1].func) is not None:  # type: ignore[index]
                out.append(Mutation("weaken-lock", *base, 0, n))
            out.append(Mutation("drop-lock", *base, 0, n))
    return out


def _skippable(p: Protocol, a: Action) -> bool:
    """The next step's goto must make sense where `a` is: no parameter `a` does not bind."""
    try:
        nxt = _target(a.goto)
    except ValueError:
        return False
    follow = [b for b in p.actions if b.role.name == a.role.name and b.at == nxt and b.goto is not None]
    if not follow:
        return False
    bound = {x.name for x in a.params if isinstance(x, Var)}
    need = {x.name for x in follow[0].params if isinstance(x, Var)}
    return not (need - bound) or not _mentions(follow[0].goto, need - bound)


def _mentions(e: object, names: set[str]) -> bool:
    if isinstance(e, Var):
        return e.name in names
    if isinstance(e, Op):
        return any(_mentions(x, names) for x in e.args)
    if isinstance(e, App):
        return any(_mentions(x, names) for x in e.args)
    if isinstance(e, Quant):
        return _mentions(e.body, names)
    return False


def _shared_twin(p: Protocol, f: Func) -> Func | None:
    assert f.lock is not None
    for g in p.funcs:
        if g.lock == (f.lock[0], "shared"):
            return g
    return None


def apply(p: Protocol, m: Mutation) -> Protocol:
    """`p` with mutation `m` applied; raises if `m` names no action of `p`."""
    same = [i for i, a in enumerate(p.actions) if _same(a, m.role, m.at, m.kind)]
    if m.nth >= len(same):
        raise ValueError(f"mutation {m.name}: no such action")
    hits = [same[m.nth]]
    acts = list(p.actions)
    if m.op in ("weaken-lock", "drop-lock"):
        acts = _relock(p, acts, hits, m)
    else:
        for i in hits:
            acts[i] = _one(acts[i], m, p)
    return dataclasses.replace(p, name=f"{p.name}~{m.name}", actions=acts)


def _one(a: Action, m: Mutation, p: Protocol) -> Action:
    if m.op == "drop-guard":
        if m.index >= len(a.guard):
            raise ValueError(f"mutation {m.name}: the action has {len(a.guard)} guard conjuncts")
        return dataclasses.replace(a, guard=a.guard[:m.index] + a.guard[m.index + 1:])
    if m.op == "drop-update":
        if m.index >= len(a.updates):
            raise ValueError(f"mutation {m.name}: the action has {len(a.updates)} updates")
        return dataclasses.replace(a, updates=a.updates[:m.index] + a.updates[m.index + 1:])
    if m.op == "skip-step":
        # go where the next step would have gone: the first literal target's own goto
        nxt = _target(a.goto)
        follow = [b for b in p.actions if b.role.name == a.role.name and b.at == nxt and b.goto is not None]
        if not follow:
            raise ValueError(f"mutation {m.name}: no step after '{nxt}' to skip to")
        return dataclasses.replace(a, goto=follow[0].goto)
    raise ValueError(f"mutation operator {m.op!r} is not a one-action operator")


def _target(e: object) -> str:
    if isinstance(e, Lit) and isinstance(e.value, str):
        return e.value
    if isinstance(e, Op) and e.op == "ite":
        return _target(e.args[1])
    raise ValueError("a step whose goto is not a label cannot be skipped")


def _relock(p: Protocol, acts: list[Action], hits: list[int], m: Mutation) -> list[Action]:
    """The acquire at `m.at` and every release of the same lock by the same role: take the lock
    in shared mode (weaken-lock) or not at all (drop-lock). The releases that pair with it are
    those of the same (lock class, mode) by the same role."""
    out = list(acts)
    for i in hits:
        lock = _lock_update(acts[i])
        if lock is None:
            raise ValueError(f"mutation {m.name}: not a lock step")
        f = lock[1].func
        twin = _shared_twin(p, f) if m.op == "weaken-lock" else None
        if m.op == "weaken-lock" and twin is None:
            raise ValueError(f"mutation {m.name}: {f.lock} has no shared mode")
        for j, b in enumerate(acts):
            lk = _lock_update(b)
            if b.role.name != m.role or lk is None or lk[1].func.name != f.name:
                continue
            if b.kind == "lock_acquire" and j != i:
                continue
            out[j] = _retarget(b, lk, twin, f, acquire=b.kind == "lock_acquire")
    return out


def _retarget(b: Action, lk: tuple[int, App], twin: Func | None, exclusive: Func, acquire: bool) -> Action:
    idx, app = lk
    ups = list(b.updates)
    guard = list(b.guard)
    # the lock step's own condition is its last guard (availability, or "holds")
    if twin is None:
        del ups[idx]
        guard = guard[:-1]
        return dataclasses.replace(b, updates=tuple(ups), guard=tuple(guard))
    new_app = App(twin, app.args)
    ups[idx] = (new_app, ups[idx][1])  # type: ignore[index]
    if acquire:
        # a shared acquire waits only for exclusive holders
        u = Var("u", twin.args[0])
        extra = tuple(app.args[1:])
        label = guard[-1][0].replace("exclusive", "shared")
        guard[-1] = (label, Forall(u, Not(App(exclusive, (u, *extra)))))
    else:
        guard[-1] = (guard[-1][0].replace("exclusive", "shared"), new_app)
    # the event reports the mode the mutated code takes (a recorder logs what it does)
    static = tuple((k, "shared" if k == "mode" and v == "exclusive" else v) for k, v in b.static)
    return dataclasses.replace(b, updates=tuple(ups), guard=tuple(guard), static=static)


__all__ = ["Mutation", "OPS", "candidates", "apply"]


def changed(p: Protocol, m: Mutation) -> set[tuple[str, str, str]]:
    """(role, label, event kind) of every action `m` changes in `p`."""
    q = apply(p, m)
    return {(a.role.name, a.at, a.kind) for a, b in zip(p.actions, q.actions) if a is not b}
