"""Candidate invariant conjuncts for the fixed-size proofs, written against the Backend.

The families below describe *why* the final design is safe (lock ownership follows the program
counter; the refcount write lock is exclusive; a lookup holding the refcount read lock sees a
stable count; outside the narrow windows where a thread is mid-transition every entry mirrors the
refcount). They are candidates, not axioms: `spec.induction` keeps only the largest subset that
is inductive (Houdini), and a proof is claimed only if that subset implies the property.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .backend import Backend, Term
from .model import Model
from .programs import LABELS, pc_of, role_of
from .vocabulary import State, enabled, lock_modes, lv

CandFn = Callable[[Backend, State], Term]


@dataclass(frozen=True)
class Candidate:
    name: str
    fn: CandFn


def _at(s: State, t: str, label: str) -> Term:
    return s[f"pc.{t}"] == pc_of(role_of(t), label)


def mirror(b: Backend, s: State, a: int) -> Term:
    return b.Implies(s[f"ser.ex.{a}"], s[f"ser.en.{a}"] == enabled(b, s, a))


def candidates(m: Model) -> list[Candidate]:
    cfg = m.cfg
    A = range(cfg.agents)
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(name: str, fn: CandFn) -> None:
        # Houdini and the stored .inv files key candidates by name: two under one name would
        # share one assumption literal and one post-state term (a silent "no progress")
        if name in seen:
            raise ValueError(f"two invariant candidates named {name!r}")
        seen.add(name)
        out.append(Candidate(name, fn))

    # ---- lock ownership follows the program counter; mutual exclusion ----
    for t in cfg.threads():
        labels = LABELS[role_of(t)]
        for lock in cfg.lock_instances():
            for mode in lock_modes(lock):
                var = lv(lock, mode, t)
                for p in labels:
                    add(f"{t}@{p} -> {var}", lambda b, s, t=t, p=p, var=var: b.Implies(_at(s, t, p), s[var]))
                    add(f"{t}@{p} -> !{var}", lambda b, s, t=t, p=p, var=var: b.Implies(_at(s, t, p), b.Not(s[var])))
        for a in A:
            ser = lv(f"serializer.{a}", "exclusive", t)
            if role_of(t) == "updater":
                add(f"{ser} -> pend.{t}.{a}", lambda b, s, t=t, a=a, ser=ser: b.Implies(s[ser], s[f"pend.{t}.{a}"]))
                for x in range(a):
                    add(f"{ser} -> !pend.{t}.{x}", lambda b, s, t=t, x=x, ser=ser: b.Implies(s[ser], b.Not(s[f"pend.{t}.{x}"])))
            else:
                add(f"{ser} -> ag.{t}=={a}", lambda b, s, t=t, a=a, ser=ser: b.Implies(s[ser], s[f"ag.{t}"] == a))
        if role_of(t) == "updater":
            # the apply loop takes one agent's serializer at a time, in any agent order
            for a in A:
                for x in A:
                    if x < a:
                        add(f"{t} holds serializer.{a} and .{x}: never",
                            lambda b, s, t=t, a=a, x=x: b.Not(b.And(s[lv(f"serializer.{a}", "exclusive", t)],
                                                                    s[lv(f"serializer.{x}", "exclusive", t)])))
        for p in labels:
            add(f"{t}@{p} -> holds some serializer lock",
                lambda b, s, t=t, p=p: b.Implies(_at(s, t, p), b.Or(*[s[lv(f'serializer.{a}', 'exclusive', t)] for a in A])))
        if role_of(t) == "lookup":
            for p in labels:
                add(f"{t}@{p} -> ag in range", lambda b, s, t=t, p=p: b.Implies(_at(s, t, p), b.Or(*[s[f"ag.{t}"] == a for a in A])))
    threads = cfg.threads()
    for lock in cfg.lock_instances():
        modes = lock_modes(lock)
        for i, t in enumerate(threads):
            for u in threads:
                if u == t:
                    continue
                if "exclusive" in modes:
                    w_t = lv(lock, "exclusive", t)
                    for mode in modes:
                        o = lv(lock, mode, u)
                        add(f"excl {w_t} !{o}", lambda b, s, w_t=w_t, o=o: b.Not(b.And(s[w_t], s[o])))

    # ---- refcount bounds (the proof is at a fixed size; counts stay within the holders) ----
    for name in ["rc.all"] + [f"rc.{a}" for a in A]:
        add(f"{name} >= 0", lambda b, s, name=name: s[name] >= 0)
        add(f"{name} <= #holders", lambda b, s, name=name: s[name] <= cfg.n_holders)
    for t in cfg.updater_ids():
        labels = LABELS["updater"]
        add(f"pc.{t} in range", lambda b, s, t=t: b.And(s[f"pc.{t}"] >= 0, s[f"pc.{t}"] < len(labels)))
        for a in A:
            add(f"all.{t} -> !in.{t}.{a}", lambda b, s, t=t, a=a: b.Implies(s[f"all.{t}"], b.Not(s[f"in.{t}.{a}"])))
    for t in cfg.lookup_ids():
        add(f"pc.{t} in range", lambda b, s, t=t: b.And(s[f"pc.{t}"] >= 0, s[f"pc.{t}"] < len(LABELS["lookup"])))
    # every holder's reference is counted exactly once (holders: spec.programs Core.held/hall/hin)
    H = cfg.holder_ids()
    for a in A:
        def counted(b: Backend, s: State, a: int = a) -> Term:
            return s[f"rc.{a}"] <= b.Sum([b.And(s[f"held.{h}"], s[f"hin.{h}.{a}"]) for h in H])
        add(f"rc.{a} <= holders", counted)
    add("rc.all <= holders", lambda b, s: s["rc.all"] <= b.Sum([b.And(s[f"held.{h}"], s[f"hall.{h}"]) for h in H]))
    for h in H:
        add(f"hall.{h} -> held.{h}", lambda b, s, h=h: b.Implies(s[f"hall.{h}"], s[f"held.{h}"]))
        add(f"held.{h} -> scope nonempty", lambda b, s, h=h: b.Implies(
            s[f"held.{h}"], b.Or(s[f"hall.{h}"], *[s[f"hin.{h}.{a}"] for a in A])))
        for a in A:
            add(f"hin.{h}.{a} -> held.{h} and not hall", lambda b, s, h=h, a=a: b.Implies(
                s[f"hin.{h}.{a}"], b.And(s[f"held.{h}"], b.Not(s[f"hall.{h}"]))))

    # ---- per-thread data facts, per program counter ----
    for t in cfg.updater_ids():
        for p in LABELS["updater"]:
            at = (lambda s, t=t, p=p: _at(s, t, p))
            for a in A:
                ex = (lambda s, a=a: s[f"ser.ex.{a}"])
                en = (lambda s, a=a: s[f"ser.en.{a}"])
                wh = (lambda s, t=t, a=a: s[f"wh.{t}.{a}"])
                was = (lambda s, t=t, a=a: s[f"was.{t}.{a}"])
                pend = (lambda s, t=t, a=a: s[f"pend.{t}.{a}"])
                lk = (lambda s, t=t, a=a: s[lv(f"serializer.{a}", "exclusive", t)])
                scope = (lambda b, s, t=t, a=a: b.Or(s[f"all.{t}"], s[f"in.{t}.{a}"]))
                E = (lambda b, s, a=a: enabled(b, s, a))
                en_arg = (lambda s, t=t: s[f"enable.{t}"])
                facts: dict[str, CandFn] = {
                    "wh==ex": lambda b, s, wh=wh, ex=ex: wh(s) == ex(s),
                    "wh -> was==en": lambda b, s, wh=wh, was=was, en=en: b.Implies(wh(s), was(s) == en(s)),
                    "wh -> was==E": lambda b, s, wh=wh, was=was, E=E: b.Implies(wh(s), was(s) == E(b, s)),
                    "ex -> en==E": lambda b, s, ex=ex, en=en, E=E: b.Implies(ex(s), en(s) == E(b, s)),
                    "pend -> en==was": lambda b, s, pend=pend, en=en, was=was, lk=lk: b.Implies(b.And(pend(s), b.Not(lk(s))), en(s) == was(s)),
                    "pend -> was!=E": lambda b, s, pend=pend, was=was, E=E: b.Implies(pend(s), was(s) != E(b, s)),
                    "pend -> wh": lambda b, s, pend=pend, wh=wh: b.Implies(pend(s), wh(s)),
                    "pend -> ex": lambda b, s, pend=pend, ex=ex: b.Implies(pend(s), ex(s)),
                    "!pend&ex -> en==E": lambda b, s, pend=pend, ex=ex, en=en, E=E, lk=lk: b.Implies(b.And(b.Not(pend(s)), b.Not(lk(s)), ex(s)), en(s) == E(b, s)),
                    "lk -> en==E": lambda b, s, lk=lk, en=en, E=E: b.Implies(lk(s), en(s) == E(b, s)),
                    "lk -> en==was": lambda b, s, lk=lk, en=en, was=was: b.Implies(lk(s), en(s) == was(s)),
                    "!pend": lambda b, s, pend=pend: b.Not(pend(s)),
                    "!scope&wh -> was==E": lambda b, s, scope=scope, wh=wh, was=was, E=E: b.Implies(b.And(b.Not(scope(b, s)), wh(s)), was(s) == E(b, s)),
                    "!scope -> !pend": lambda b, s, scope=scope, pend=pend: b.Implies(b.Not(scope(b, s)), b.Not(pend(s))),
                    "enable&was -> E": lambda b, s, en_arg=en_arg, was=was, E=E: b.Implies(b.And(en_arg(s), was(s)), E(b, s)),
                    "!enable&!was -> !E": lambda b, s, en_arg=en_arg, was=was, E=E: b.Implies(b.And(b.Not(en_arg(s)), b.Not(was(s))), b.Not(E(b, s))),
                    "pend -> E==enable": lambda b, s, pend=pend, en_arg=en_arg, E=E: b.Implies(pend(s), E(b, s) == en_arg(s)),
                    "mirror": lambda b, s, a=a: mirror(b, s, a),
                    # agents are counted in any order (audit U3): while counting, an agent already
                    # counted keeps its old state until applied, one not yet counted still mirrors
                    "pend -> was==E": lambda b, s, pend=pend, was=was, E=E: b.Implies(pend(s), was(s) == E(b, s)),
                    "scope&wh&!pend -> en==was": lambda b, s, scope=scope, wh=wh, pend=pend, en=en, was=was:
                        b.Implies(b.And(scope(b, s), wh(s), b.Not(pend(s))), en(s) == was(s)),
                    "!scope&ex -> en==E": lambda b, s, scope=scope, ex=ex, en=en, E=E:
                        b.Implies(b.And(b.Not(scope(b, s)), ex(s)), en(s) == E(b, s)),
                }
                for fname, f in facts.items():
                    add(f"{t}@{p}: {fname} [{a}]", lambda b, s, at=at, f=f: b.Implies(at(s), f(b, s)))
            for k in ("enable", "all"):
                add(f"{t}@{p} -> {k}", lambda b, s, t=t, p=p, k=k: b.Implies(_at(s, t, p), s[f"{k}.{t}"]))
                add(f"{t}@{p} -> !{k}", lambda b, s, t=t, p=p, k=k: b.Implies(_at(s, t, p), b.Not(s[f"{k}.{t}"])))
            add(f"{t}@{p} -> all or some pending", lambda b, s, t=t, p=p: b.Implies(_at(s, t, p), b.Or(s[f"all.{t}"], *[s[f"pend.{t}.{a}"] for a in A])))
            add(f"{t}@{p} -> all or some in scope", lambda b, s, t=t, p=p: b.Implies(_at(s, t, p), b.Or(s[f"all.{t}"], *[s[f"in.{t}.{a}"] for a in A])))
            add(f"{t}@{p} -> some pending", lambda b, s, t=t, p=p: b.Implies(_at(s, t, p), b.Or(*[s[f"pend.{t}.{a}"] for a in A])))
    for t in cfg.lookup_ids():
        for p in LABELS["lookup"]:
            for a in A:
                sel = (lambda b, s, t=t, a=a, p=p: b.And(_at(s, t, p), s[f"ag.{t}"] == a))
                lfacts: dict[str, CandFn] = {
                    "sh==E": lambda b, s, t=t, a=a: s[f"sh.{t}"] == enabled(b, s, a),
                    "sh==flag": lambda b, s, t=t: s[f"sh.{t}"] == s["flag"],
                    "sh": lambda b, s, t=t: s[f"sh.{t}"],
                    "ex": lambda b, s, a=a: s[f"ser.ex.{a}"],
                    "!en": lambda b, s, a=a: b.Not(s[f"ser.en.{a}"]),
                    "en": lambda b, s, a=a: s[f"ser.en.{a}"],
                    "mirror": lambda b, s, a=a: mirror(b, s, a),
                }
                for fname, f in lfacts.items():
                    add(f"{t}@{p}[{a}]: {fname}", lambda b, s, sel=sel, f=f: b.Implies(sel(b, s), f(b, s)))

    # ---- outside the transition windows every entry mirrors the refcount ----
    def window(b: Backend, s: State, a: int) -> Term:
        return b.Or(*[b.And(s[f"ag.{l}"] == a, b.Or(_at(s, l, "acq_serializer"), _at(s, l, "enable")))
                      for l in cfg.lookup_ids()])

    for a in A:
        add(f"no rc writer & no lookup window -> mirror({a})",
            lambda b, s, a=a: b.Implies(
                b.And(*[b.Not(s[lv("refcount", "exclusive", u)]) for u in cfg.threads()], b.Not(window(b, s, a))),
                mirror(b, s, a)))
    add("flag == any enabled", lambda b, s: s["flag"] == b.Or(s["rc.all"] > 0, *[s[f"rc.{x}"] > 0 for x in A]))
    return out
