"""Candidate invariants for the fixed-size lifecycle proofs.

Atoms are the elementary facts of the state (a boolean variable, an int variable equal to one of
its values, "thread t is at label p working on context c"). Candidates are implications between
two atoms (A -> B, A -> !B, !A -> B), kept only if no sampled reachable state refutes them
(bitsets over the samples make that cheap), plus the counting facts the protocol rests on. Houdini
(spec.induction) then keeps the largest inductive subset; a proof is claimed only if it implies
the property. Candidates are hypotheses, never axioms.
"""
from __future__ import annotations

import random
from typing import Callable

from ..backend import CONCRETE, Backend, Term
from ..induction import Candidate
from ..model import Model, apply
from ..programs import LABELS, pc_of
from .vocabulary import D_EXITED, D_FLIGHT, P_SPM, LConfig, State, count

AtomFn = Callable[[Backend, State], Term]


def atoms(m: Model) -> list[tuple[str, AtomFn]]:
    cfg: LConfig = m.cfg  # type: ignore[assignment]
    out: list[tuple[str, AtomFn]] = []
    skip_ints = {"pc.", "cx.", "hk", "dn", "gk.", "ga."}
    # the drain ghosts (ds: phases when a drain began, ze: a completion emptied its queue) only
    # enable queue_sync; no claim reads them, and their atoms tripled the rounds Houdini needs
    # (7054 candidates, budget exhausted) -- an invariant over the rest holds whatever they are.
    # The gate's decision (gb) is reported by the write and read by no claim either (the gate's
    # claim is judged where it is decided)
    ghosts = ("ds.", "ze.", "gb.")
    for d in m.vars:
        if d.name.startswith(ghosts):
            continue
        if d.kind == "bool":
            out.append((d.name, lambda b, s, n=d.name: s[n]))
        elif not any(d.name.startswith(p) for p in skip_ints) and d.hi - d.lo <= 5:
            for val in range(d.lo, d.hi + 1):
                out.append((f"{d.name}=={val}", lambda b, s, n=d.name, val=val: s[n] == val))
    for t in cfg.tool_ids():
        for lab in LABELS["tool"]:
            pc = pc_of("tool", lab)
            if lab == "idle":
                out.append((f"{t}@idle", lambda b, s, t=t, pc=pc: s[f"pc.{t}"] == pc))
                continue
            for c in range(cfg.contexts):
                out.append((f"{t}@{lab}#{c}",
                            lambda b, s, t=t, pc=pc, c=c: b.And(s[f"pc.{t}"] == pc, s[f"cx.{t}"] == c)))
    hooked, gated, exited = pc_of("dispatch", "hooked"), pc_of("dispatch", "gated"), pc_of("complete", "exited")
    for k in range(cfg.dispatches):
        out.append((f"d0@hooked#{k}", lambda b, s, k=k: b.And(s["pc.d0"] == hooked, s["dn"] == k)))
        out.append((f"d0@gated#{k}", lambda b, s, k=k: b.And(s["pc.d0"] == gated, s["dn"] == k)))
        out.append((f"h0@exited#{k}", lambda b, s, k=k: b.And(s["pc.h0"] == exited, s["hk"] == k)))
        out.append((f"dn>{k}", lambda b, s, k=k: s["dn"] > k))
    return out


def counting(m: Model) -> list[Candidate]:
    """Counting facts and the property-shaped conjuncts (each state property of the lifecycle, and
    the state form of P3: an enabled agent is covered by a published context collecting on it)."""
    from ..lang.finite import compile_closed
    from ..lang.syntax import Exists, Implies, Lit, Var
    from .definition import language
    from .properties import LPROPERTIES, META

    cfg: LConfig = m.cfg  # type: ignore[assignment]
    C, K, A = range(cfg.contexts), range(cfg.dispatches), range(cfg.agents)
    out = []
    for d in m.vars:
        if d.kind == "int":  # the Int encoding of induction knows no declared ranges by itself
            out.append(Candidate(f"range {d.name}", lambda b, s, d=d: b.And(s[d.name] >= d.lo, s[d.name] <= d.hi)))
    for name, p in LPROPERTIES.items():
        if p.state is not None and name not in META:
            out.append(Candidate(f"prop:{name}", lambda b, s, f=p.state: f(b, s, m)))
    lang = language(m.variant, cfg)  # type: ignore[arg-type]
    c = Var("c", lang.context)
    for a in A:
        # the enter hook's own condition, compiled from the definition at this size
        covered = compile_closed(m.universe, Implies(lang.ser_on(Lit(a)), Exists(
            c, lang.instruments(m.variant, c, Lit(a)))), f"covered {a}")  # type: ignore[arg-type]
        out.append(Candidate(f"covered {a}", lambda b, s, f=covered: f(b, s)))
    for x in ["all"] + [str(a) for a in A]:
        out.append(Candidate(f"rc.{x} == sum hd.*.{x}",
                             lambda b, s, x=x: s[f"rc.{x}"] == b.Sum([s[f"hd.{c}.{x}"] for c in C])))
    for a in A:
        out.append(Candidate(f"inf.{a} == #in-flight on {a}", lambda b, s, a=a: s[f"inf.{a}"] == b.Sum(
            [b.And(s[f"da.{k}"] == a, s[f"st.{k}"] >= D_FLIGHT, s[f"st.{k}"] <= D_EXITED) for k in K])))
        out.append(Candidate(f"mirror {a}", lambda b, s, a=a: b.Implies(s[f"ser.ex.{a}"],
                                                                         s[f"ser.en.{a}"] == (count(b, s, a) > 0))))
    marker_labels = ["publish", "spm_enable", "spm_set_enabled", "start_release", "spm_clear_enabled", "drain",
                     "spm_disable", "slot_clear", "stop_release"]
    tools = cfg.tool_ids()

    def busy(b: Backend, s: State, t: str, c: int) -> Term:
        return b.And(s[f"cx.{t}"] == c, b.Or(*[s[f"pc.{t}"] == pc_of("tool", lab) for lab in marker_labels]))

    for c in C:
        out.append(Candidate(f"mk.{c} -> some tool busy on {c}", lambda b, s, c=c: b.Implies(
            s[f"mk.{c}"], b.Or(*[busy(b, s, t, c) for t in tools]))))
        out.append(Candidate(f"slot.{c} reserved -> some tool at publish#{c}", lambda b, s, c=c: b.Implies(
            s[f"slot.{c}"] == 1, b.Or(*[b.And(s[f"pc.{t}"] == pc_of("tool", "publish"), s[f"cx.{t}"] == c)
                                       for t in tools]))))
        for i, t1 in enumerate(tools):
            for t2 in tools[i + 1:]:
                out.append(Candidate(f"!({t1},{t2} both busy on {c})", lambda b, s, c=c, t1=t1, t2=t2: b.Not(
                    b.And(busy(b, s, t1, c), busy(b, s, t2, c)))))
        out.append(Candidate(f"holds {c} -> published", lambda b, s, c=c: b.Implies(
            b.Or(s[f"hd.{c}.all"] > 0, *[s[f"hd.{c}.{a}"] > 0 for a in A]), s[f"slot.{c}"] == 2)))
        out.append(Candidate(f"hd.{c}.all -> all agents", lambda b, s, c=c: b.Implies(
            s[f"hd.{c}.all"] > 0, b.Not(b.Or(*[s[f"ag.{c}.{a}"] for a in A])))))
        for a in A:
            out.append(Candidate(f"hd.{c}.{a} -> ag.{c}.{a}", lambda b, s, c=c, a=a: b.Implies(
                s[f"hd.{c}.{a}"] > 0, s[f"ag.{c}.{a}"])))
        for c2 in C:
            if c2 > c:
                out.append(Candidate(f"!(mk.{c} & mk.{c2})", lambda b, s, c=c, c2=c2: b.Not(
                    b.And(s[f"mk.{c}"], s[f"mk.{c2}"]))))
    def holds_scope(b: Backend, s: State, c: int) -> Term:
        empty = b.Not(b.Or(*[s[f"ag.{c}.{a}"] for a in A]))
        return b.And(b.If(empty, s[f"hd.{c}.all"] == 1, s[f"hd.{c}.all"] == 0),
                     *[s[f"hd.{c}.{a}"] == b.If(b.And(b.Not(empty), s[f"ag.{c}.{a}"]), 1, 0) for a in A])

    for c in C:
        # an active context outside any start/stop is enabled and holds exactly its scope
        # (digest §4 P9); a free one outside any start/stop holds nothing
        out.append(Candidate(f"steady published {c}", lambda b, s, c=c: b.Implies(
            b.And(s[f"slot.{c}"] == 2, b.Not(s[f"mk.{c}"])), b.And(s[f"en.{c}"], holds_scope(b, s, c)))))
        out.append(Candidate(f"steady free {c}", lambda b, s, c=c: b.Implies(
            b.And(s[f"slot.{c}"] == 0, b.Not(s[f"mk.{c}"])), b.And(b.Not(s[f"en.{c}"]), *[
                s[f"hd.{c}.{x}"] == 0 for x in ["all"] + [str(a) for a in A]]))))
        for t in tools:
            for lab in ("spm_set_enabled", "start_release", "spm_clear_enabled", "drain", "spm_disable"):
                out.append(Candidate(f"{t}@{lab}#{c} -> holds scope", lambda b, s, t=t, c=c, lab=lab: b.Implies(
                    b.And(s[f"pc.{t}"] == pc_of("tool", lab), s[f"cx.{t}"] == c), holds_scope(b, s, c))))
    out.append(Candidate("d0 hooked -> dn < N", lambda b, s: b.Implies(
        s["pc.d0"] == pc_of("dispatch", "hooked"), s["dn"] < cfg.dispatches)))
    # the gate took the next dispatch: its write can follow (P5's no-stuck-threads needs it)
    out.append(Candidate("d0 gated -> gk.d0 == dn < N", lambda b, s: b.Implies(
        s["pc.d0"] == pc_of("dispatch", "gated"), b.And(s["gk.d0"] == s["dn"], s["dn"] < cfg.dispatches))))
    for t in tools:
        out.append(Candidate(f"{t} holds mutex iff at sa_write", lambda b, s, t=t: (s["mtx"] == int(t[1:]) + 1) == (
            s[f"pc.{t}"] == pc_of("tool", "sa_write"))))
    for k in K:
        out.append(Candidate(f"ks.{k} <= #spm", lambda b, s, k=k: s[f"ks.{k}"] <= b.Sum(
            [s[f"pk.{k}.{c}"] == P_SPM for c in C])))
        out.append(Candidate(f"ks.{k} == #spm - #mapped", lambda b, s, k=k: s[f"ks.{k}"] + b.Sum(
            [b.And(s[f"mp.{k}.{c}"], s[f"pk.{k}.{c}"] == P_SPM) for c in C]) == b.Sum(
            [s[f"pk.{k}.{c}"] == P_SPM for c in C])))
    return out


def sample_states(m: Model, steps: int = 30000, depth: int = 80, seed: int = 11) -> list[dict]:
    """Random walks that pick a thread, then an event kind, then an instance, uniformly: a walk
    picking among all enabled instances would mostly run set_agents (8 instances per tool)."""
    rng = random.Random(seed)
    out: list[dict] = []
    s = m.init_state()
    for i in range(steps):
        if i % depth == 0:
            s = m.init_state()
        en = [a for a in m.actions if a.enabled(CONCRETE, s)]
        if not en:
            s = m.init_state()
            continue
        thread = rng.choice(sorted({a.thread for a in en}))
        mine = [a for a in en if a.thread == thread]
        kind = rng.choice(sorted({a.kind for a in mine}))
        s = apply(m, CONCRETE, s, rng.choice([a for a in mine if a.kind == kind]))
        out.append(s)
    return out


def candidates(m: Model, samples: list[dict]) -> list[Candidate]:
    """Pairwise implications between atoms that no sample refutes, plus the counting facts."""
    ats = atoms(m)
    init = m.init_state()
    states = [init] + samples
    bits: list[int] = []
    full = (1 << len(states)) - 1
    for _, fn in ats:
        v = 0
        for i, s in enumerate(states):
            if fn(CONCRETE, s):
                v |= 1 << i
        bits.append(v)
    out: list[Candidate] = []
    n = len(ats)
    for i in range(n):
        ni, fi, bi = ats[i][0], ats[i][1], bits[i]
        if bi == 0 or bi == full:
            if bi == 0:
                out.append(Candidate(f"!{ni}", lambda b, s, fi=fi: b.Not(fi(b, s))))
            continue
        for j in range(n):
            if i == j:
                continue
            nj, fj, bj = ats[j][0], ats[j][1], bits[j]
            if bj == 0 or bj == full:
                continue
            if bi & ~bj & full == 0:
                out.append(Candidate(f"{ni} -> {nj}", lambda b, s, fi=fi, fj=fj: b.Implies(fi(b, s), fj(b, s))))
            if bi & bj == 0 and i < j:
                out.append(Candidate(f"{ni} -> !{nj}",
                                     lambda b, s, fi=fi, fj=fj: b.Implies(fi(b, s), b.Not(fj(b, s)))))
            if (bi | bj) == full and i < j:
                out.append(Candidate(f"{ni} | {nj}", lambda b, s, fi=fi, fj=fj: b.Or(fi(b, s), fj(b, s))))
    for c in counting(m):
        if all(c.fn(CONCRETE, s) for s in states):
            out.append(c)
    return out


def by_name(m: Model) -> dict[str, Candidate]:
    """Every candidate the generator can produce, by name (to re-read a stored invariant)."""
    ats = dict(atoms(m))
    out = {c.name: c for c in counting(m)}

    def atom(name: str) -> AtomFn:
        return ats[name]

    class _Lazy(dict):  # type: ignore[type-arg]
        def __missing__(self, key: str) -> Candidate:
            if key.startswith("!"):
                fi = atom(key[1:])
                return Candidate(key, lambda b, s: b.Not(fi(b, s)))
            if " | " in key:
                a, c = key.split(" | ")
                fa, fc = atom(a), atom(c)
                return Candidate(key, lambda b, s: b.Or(fa(b, s), fc(b, s)))
            a, c = key.split(" -> ")
            fa = atom(a)
            if c.startswith("!"):
                fc = atom(c[1:])
                return Candidate(key, lambda b, s: b.Implies(fa(b, s), b.Not(fc(b, s))))
            fc = atom(c)
            return Candidate(key, lambda b, s: b.Implies(fa(b, s), fc(b, s)))

    return _Lazy(out)
