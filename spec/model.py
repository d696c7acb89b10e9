"""Instantiate a protocol definition at a fixed size: variables, initial state, action instances.

The core's definition (`spec.programs.definition`) is read by `spec.lang.finite`: each action
instance is compiled once into the guard/effect/observation functions `Action` calls, so the
Z3 encoding, BMC, induction, replay and the recorder all evaluate the one definition.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Mapping

from .backend import Backend, Term
from .lang.finite import RecordingFn, Universe, VarDecl, compile_instance, static_of
from .lang.syntax import Action as LAction
from .lang.syntax import Expr, ScopeParam, Var
from .programs import definition, role_of
from .variants import VARIANTS, Variant
from .vocabulary import Config, State

Params = dict[str, object]


@dataclass(frozen=True)
class StepDef:
    """One action instance's compiled reading, with the definition's metadata.

    `guard`/`effect`/`observed`/`selectors` take `(backend, state, thread, params)` so the
    lifecycle's hand-written steps (still closures, to be moved onto `spec.lang`) fit the same
    `Action`.
    """

    role: str
    at: str
    kind: str
    per: str
    static: Callable[[Params], dict[str, object]]
    guard: Callable[[Backend, State, str, Params], list[tuple[str, Term]]]
    effect: Callable[[Backend, State, str, Params], dict[str, Term]]
    observed: Callable[[Backend, State, str, Params], dict[str, Term]]
    source: str
    selectors: Callable[[Backend, State, str, Params], list[tuple[str, Term]]] = (
        lambda b, s, t, p: [])
    defn: LAction | None = None
    # step claims in the pre-state: [(claim, requirement, condition)] (spec.lang Action.checks)
    checks: Callable[[Backend, State], list[tuple[str, str, Term]]] = lambda b, s: []
    # the instance's spec.lang.finite.Compiled (its plain-Python text for the BFS code), if any
    instance: Any = None


@dataclass(frozen=True)
class Action:
    """One action instance: a step of one thread with its parameters bound."""

    index: int
    thread: str
    step: StepDef
    params: Params

    @property
    def kind(self) -> str:
        return self.step.kind

    @property
    def label(self) -> str:
        return self.step.at

    def static_args(self) -> dict[str, object]:
        return self.step.static(self.params)

    def selectors(self, b: Backend, s: State) -> list[tuple[str, Term]]:
        from .programs import pc_of

        role = role_of(self.thread)
        out = [(f"{self.thread} is at '{self.label}'", s[f"pc.{self.thread}"] == pc_of(role, self.label))]
        return out + self.step.selectors(b, s, self.thread, self.params)

    def guards(self, b: Backend, s: State) -> list[tuple[str, Term]]:
        return self.step.guard(b, s, self.thread, self.params)

    def enabled(self, b: Backend, s: State) -> Term:
        return b.And(*[g for _, g in self.selectors(b, s)], *[g for _, g in self.guards(b, s)])

    def effect(self, b: Backend, s: State) -> dict[str, Term]:
        return self.step.effect(b, s, self.thread, self.params)

    def observed(self, b: Backend, s: State) -> dict[str, Term]:
        return self.step.observed(b, s, self.thread, self.params)

    def checks(self, b: Backend, s: State, claim: str) -> list[tuple[str, Term]]:
        """The conditions this step must meet for `claim`, with what each requires."""
        return [(why, x) for c, why, x in self.step.checks(b, s) if c == claim]

    def claims(self) -> frozenset[str]:
        return frozenset(c for c, _, _ in self.step.defn.checks) if self.step.defn else frozenset()

    def describe(self) -> str:
        args = " ".join(f"{k}={v}" for k, v in self.static_args().items())
        return f"{self.thread} {self.kind} {args}".rstrip()


class Model:
    def __init__(self, cfg: Config, variant: Variant | str) -> None:
        self.cfg = cfg
        self.variant = VARIANTS[variant] if isinstance(variant, str) else variant
        self.protocol = definition(self.variant)
        self.universe = Universe(self.protocol, {"agent": cfg.agents, "updater": cfg.updaters,
                                                 "lookup": cfg.lookups, "holder": cfg.n_holders})
        self._claims: dict[str, Callable[[Backend, State], Term]] = {}
        self._claim_reads: dict[str, RecordingFn] = {}  # claim_recording's, by claim name

    @cached_property
    def vars(self) -> list[VarDecl]:
        return self.universe.declare()

    @cached_property
    def var_names(self) -> list[str]:
        return [d.name for d in self.vars]

    @cached_property
    def actions(self) -> list[Action]:
        return self._instances(self.protocol.actions, 0)

    @cached_property
    def shorthand_actions(self) -> list[Action]:
        """The definition's shorthands (spec.lang.shorthand) composed and instantiated like the
        actions, numbered after them: events of older logs only, never a step of the model (not
        among `actions`, so no prover, path or recorder takes one)."""
        from .lang.shorthand import composed

        return self._instances([composed(self.protocol, sh) for sh in self.protocol.shorthands], len(self.actions))

    def _instances(self, acts: list[LAction], start: int) -> list[Action]:
        out: list[Action] = []
        u = self.universe
        for t in self.cfg.threads():
            role = role_of(t)
            pc = self.protocol.pc[role]
            for act in acts:
                if act.role.name == role:
                    for env in u.bindings(act):
                        out.append(Action(start + len(out), t, _step(u, act, t, env, pc), legacy_params(act, env)))
        return out

    @cached_property
    def actions_by_key(self) -> dict[tuple[str, str, tuple[tuple[str, str], ...]], list[Action]]:
        """(thread, kind, static args as strings) -> candidate actions (the shorthands' after the
        model's own: a shorthand is selected where its thread is at its label); used by replay."""
        idx: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[Action]] = {}
        for a in self.actions + self.shorthand_actions:
            key = (a.thread, a.kind, tuple((k, str(v)) for k, v in a.static_args().items()))
            idx.setdefault(key, []).append(a)
        return idx

    @cached_property
    def static_keys(self) -> dict[str, tuple[str, ...]]:
        """Event kind -> names of its static (selecting) arguments; the rest are observed values."""
        out: dict[str, tuple[str, ...]] = {}
        for a in self.actions:
            out.setdefault(a.kind, tuple(a.static_args()))
        return out

    @cached_property
    def implied(self) -> dict[tuple[str, str], tuple[tuple[str, str], ...]]:
        """(thread, kind) -> the keys its event may leave out, each with the value it then has:
        the thread's own element of the parameter's sort (the one with the same index; see
        spec.lang.syntax.Action.implied). A thread with no such element has no default."""
        u, out = self.universe, {}
        for act in self.protocol.actions:
            if not act.implied:
                continue
            mine = [str(x) for x in u.elems(act.role)]
            sorts = {p.name: p.sort for p in act.params if isinstance(p, Var)}
            for i, t in enumerate(mine):
                vals = []
                for k in act.implied:
                    elems = u.elems(sorts[dict(act.static)[k].name])
                    if i < len(elems):
                        vals.append((k, str(elems[i])))
                out[(t, act.kind)] = tuple(vals)
        return out

    def select(self, thread: str, kind: str, args: Mapping[str, str]) -> list[Action]:
        """The actions an event (thread, kind, key=value) can be: its static keys, with the ones
        it may leave out (`implied`) filled in, select them. Shared by replay, the stored-path
        replays and the certificates, so an event names the same actions everywhere."""
        statics = self.static_keys.get(kind, ())
        given = dict(args)
        for k, v in self.implied.get((thread, kind), ()):
            given.setdefault(k, v)
        return self.actions_by_key.get((thread, kind, tuple((k, given[k]) for k in statics if k in given)), [])

    def claim(self, name: str) -> Callable[[Backend, State], Term]:
        """An invariant claim (or finding) of the definition compiled at this size."""
        if name not in self._claims:
            from .lang.finite import compile_closed

            self._claims[name] = compile_closed(self.universe, self._claim_expr(name), name)
        return self._claims[name]

    def claim_recording(self, name: str) -> RecordingFn:
        """`claim(name)` over a state list in `var_names` order, appending the keys it reads to the
        list it is given (spec.lang.finite.compile_closed_recording: the same folding, the same
        reads a recording mapping would see; the checker's replay)."""
        fn = self._claim_reads.get(name)
        if fn is None:
            from .lang.finite import compile_closed_recording

            index = {n: i for i, n in enumerate(self.var_names)}
            fn = self._claim_reads[name] = compile_closed_recording(self.universe, self._claim_expr(name), index, name)
        return fn

    def _claim_expr(self, name: str) -> Expr:
        """The expression of the definition's invariant claim (or finding) `name`."""
        c = self.protocol.claims.get(name) or self.protocol.findings[name]
        assert c.kind == "invariant" and c.expr is not None, name
        return c.expr

    def init_state(self) -> dict[str, int | bool]:
        return {d.name: d.init for d in self.vars}

    def writes(self) -> dict[str, list[Action]]:
        """Which actions may write each variable (computed on a concrete probe of every action)."""
        from .backend import CONCRETE

        probe = self.init_state()
        out: dict[str, list[Action]] = {n: [] for n in self.var_names}
        for a in self.actions:
            for name in a.effect(CONCRETE, probe):
                out[name].append(a)
        return out


def apply(model: Model, b: Backend, s: Mapping[str, Term], act: Action) -> dict[str, Term]:
    """Post-state of `act` from `s` (the caller checks enabledness)."""
    nxt = dict(s)
    nxt.update(act.effect(b, s))
    return nxt


def legacy_params(act: LAction, env: dict[str, Any]) -> Params:
    """The parameter names the rest of spec/ uses: `agent`, `scope_name`/`scope`, `enable`."""
    out: Params = {}
    for p in act.params:
        if isinstance(p, ScopeParam):
            members = env[p.name]
            out["scope_name"] = "all" if members is None else ",".join(map(str, members))
            out["scope"] = () if members is None else tuple(members)
        elif isinstance(p, Var):
            out[p.name] = env[p.name]
    out.update(dict(act.consts))
    return out


def _step(u: Universe, act: LAction, thread: str, env: dict[str, Any], pc: Any) -> StepDef:
    comp = compile_instance(u, act, thread, env, pc)
    made: list[dict[str, object]] = []  # the event keys, rendered on first use (a search never asks)

    def static(p: Params) -> dict[str, object]:
        if not made:
            made.append(static_of(act, env))
        return made[0]

    return StepDef(act.role.name, act.at, act.kind, act.per, static,
                   lambda b, s, t, p: comp.guards(b, s), lambda b, s, t, p: comp.effect(b, s),
                   lambda b, s, t, p: comp.observed(b, s), act.source,
                   lambda b, s, t, p: comp.selectors(b, s), act, lambda b, s: comp.checks(b, s), comp)


class ReadRecorder:
    """A state map that records which variables a function reads while it runs (an action's
    re-check skips the conjuncts it cannot change, spec/induction.py; the refinement check reads a
    step's accesses, spec/refinement.py). It offers only
    look-ups by name (no iteration, no copy), so every variable a term contains was looked up
    here; a function that needs more fails on it and is built again without the record."""

    __slots__ = ("_base", "seen")

    def __init__(self, base: dict) -> None:
        self._base = base
        self.seen: set[str] = set()

    def __getitem__(self, k: str) -> object:
        self.seen.add(k)
        return self._base[k]

    def get(self, k: str, default: object = None) -> object:
        self.seen.add(k)
        return self._base.get(k, default)

    def __contains__(self, k: object) -> bool:
        return k in self._base


def backtrack(model: "Model", n: int, candidates: "Callable[[int, dict], list[Action]]",
              ok: "Callable[[list[dict], list[Action]], bool] | None" = None
              ) -> "tuple[list[Action], list[dict]] | None":
    """Replay n stored steps from Init on the concrete reading: `candidates(i, s)` are the enabled
    actions step i may name in state s. Usually one; where several steps share a line and may be
    enabled at once (lifecycle queue_sync drained=1/0, digest §2.9) each is tried, and the path is
    the first that replays to the end and satisfies `ok`. Shared by the certificate store
    (spec/certs.py) and the parametric counterexample store (spec/parametric/confirm.py)."""
    from .backend import CONCRETE

    def go(i: int, acts: list[Action], states: list[dict]) -> "tuple[list[Action], list[dict]] | None":
        if i == n:
            return (acts, states) if ok is None or ok(states, acts) else None
        s = states[-1]
        for a in candidates(i, s):
            got = go(i + 1, acts + [a], states + [apply(model, CONCRETE, s, a)])
            if got is not None:
                return got
        return None

    return go(0, [], [model.init_state()])
