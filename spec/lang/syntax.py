"""The protocol language: sorts, state over sorts, expressions, actions.

A protocol is data, not code: every guard, update and observation is an expression tree built
from the constructors below, so each reading (`spec.lang.finite` for the fixed-size prover and
the recorder, `spec.lang.openworld` for the trace checker, `spec.lang.symbolic` for the any-size
prover) interprets or compiles the same tree. Nothing here evaluates anything.

Anchor: mypyvy's one AST of sorts, relations and actions read both as Z3 terms and by a concrete
evaluator (../shared/reference/style-anchors.md §1.1). Operators are overloaded like z3py's, so
`rc_all() + rc(a) > 0` builds a tree; `==` builds an equation, which is why expressions hash by
identity.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence, Union

# ---- sorts ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Sort:
    """A sort of protocol objects (agents, threads, contexts, ...).

    `parts` makes a union sort out of disjoint sub-sorts (a `thread` is an `updater` or a
    `lookup`); a leaf sort's finite elements are named `prefix + index` (or plain ints when
    `prefix` is empty, as agents are: their ids appear in lock names and agent sets).
    """

    name: str
    prefix: str = ""
    parts: tuple["Sort", ...] = ()

    def leaves(self) -> tuple["Sort", ...]:
        return self.parts and tuple(x for p in self.parts for x in p.leaves()) or (self,)

    def contains(self, other: "Sort") -> bool:
        return other.name == self.name or any(p.contains(other) for p in self.parts)

    def __repr__(self) -> str:
        return self.name


# ---- value domains --------------------------------------------------------------------------


@dataclass(frozen=True)
class Card:
    """The number of elements of a sort (a size-dependent bound of a counter)."""

    sort: Sort
    minus: int = 0


Bound = Union[int, Card]


@dataclass(frozen=True)
class BoolDom:
    def __repr__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class IntDom:
    """A bounded counter lo..hi (hi may be a sort's cardinality)."""

    lo: Bound = 0
    hi: Bound = 1


@dataclass(frozen=True)
class EnumDom:
    """A program counter or other finite enumeration; finite readings store the label index."""

    name: str
    labels: tuple[str, ...]

    def index(self, label: str) -> int:
        try:
            return self.labels.index(label)
        except ValueError:
            raise KeyError(f"{label!r} is not a label of {self.name}") from None


@dataclass(frozen=True)
class SortDom:
    """A value that is an element of a sort (the agent a lookup thread works on)."""

    sort: Sort


@dataclass(frozen=True)
class OwnerDom(IntDom):
    """The holder of a mutex: nobody, or one element of `sort`.

    Finite readings store it as the counter `lo..hi` = 0..|sort| it extends (0 free, `owner(e)` =
    Index(e) + 1 held by e), so the variable keeps its name and range. The any-size reading
    (`spec.lang.symbolic`) reads it as a relation `held(e)` over the sort: the only values
    written or compared are `NOBODY` (0), `owner(e)`, and Ite of those.
    """

    sort: Sort | None = None


def owner_dom(sort: Sort) -> OwnerDom:
    return OwnerDom(0, Card(sort), sort)


Dom = Union[BoolDom, IntDom, EnumDom, SortDom]
BOOL = BoolDom()

# ---- expressions ----------------------------------------------------------------------------

ExprLike = Union["Expr", bool, int, str]


class Expr:
    """An expression node. Subclasses are plain records; the operators only build trees."""

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> "Expr":  # type: ignore[override]
        return Op("eq", (self, lift(other)))

    def __ne__(self, other: object) -> "Expr":  # type: ignore[override]
        return Op("ne", (self, lift(other)))

    def __add__(self, other: ExprLike) -> "Expr":
        return Op("add", (self, lift(other)))

    def __sub__(self, other: ExprLike) -> "Expr":
        return Op("sub", (self, lift(other)))

    def __lt__(self, other: ExprLike) -> "Expr":
        return Op("lt", (self, lift(other)))

    def __le__(self, other: ExprLike) -> "Expr":
        return Op("le", (self, lift(other)))

    def __gt__(self, other: ExprLike) -> "Expr":
        return Op("gt", (self, lift(other)))

    def __ge__(self, other: ExprLike) -> "Expr":
        return Op("ge", (self, lift(other)))

    def __bool__(self) -> bool:
        raise TypeError("a protocol expression has no truth value; use And/Or/Not/Ite")


@dataclass(frozen=True, eq=False)
class Lit(Expr):
    """A constant: bool, int, or an enum label (resolved against the domain it meets)."""

    value: bool | int | str


@dataclass(frozen=True, eq=False)
class Var(Expr):
    """A bound variable: an action parameter or a quantified variable, ranging over `sort`."""

    name: str
    sort: Sort


@dataclass(frozen=True, eq=False)
class App(Expr):
    """A state function applied to arguments (element-valued expressions)."""

    func: "Func"
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Op(Expr):
    """and or not implies ite eq ne add sub lt le gt ge."""

    op: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Quant(Expr):
    """`forall` / `exists` over every element of `var.sort`."""

    kind: str
    var: Var
    body: Expr


@dataclass(frozen=True, eq=False)
class Member(Expr):
    """x is a member of the agent-set parameter `scope` (never true of an `all` scope)."""

    elem: Expr
    scope: "ScopeParam"


@dataclass(frozen=True, eq=False)
class IsAll(Expr):
    """The agent-set parameter `scope` is `all` (the SDK's empty agent list)."""

    scope: "ScopeParam"


@dataclass(frozen=True, eq=False)
class Agg(Expr):
    """`count`: how many elements of `var.sort` satisfy `body`; `mask`: the bitmask with bit i
    set when the sort's i-th element does (an event's agent or context set). Finite readings
    only: a cardinality is not a first-order term, so the any-size reading refuses it."""

    kind: str  # "count" | "mask"
    var: Var
    body: Expr


@dataclass(frozen=True, eq=False)
class Index(Expr):
    """The position of element `elem` in its sort (finite readings only): the owner of a mutex
    stored as a number (the lifecycle's `mtx` is 0 when free, index + 1 of the owner)."""

    elem: Expr


@dataclass(frozen=True, eq=False)
class Post(Expr):
    """The value the acting step leaves in the state application `app`: what the step writes
    there, or its pre-state value where the step writes nothing (so a mutant that lost the update
    is judged by what it does). Only in an action's `checks`: a step claim about what the step
    decides (the enter hook's serialize request, the packets it inserts, the counts it moves)."""

    app: App


@dataclass(frozen=True, eq=False)
class Reported(Expr):
    """The value the step's event reports for its observation `key`. The model's own steps report
    what `observe` computes, so the fixed-size and any-size readings read that expression (a step
    written with it means exactly what it means without it). The trace checker, given an event
    that reports another value, fires the step with the reported value (that observation not
    compared): the updates record what the run did and the claims judge it, so a second
    DISPATCH_END is a P4 violation rather than a divergence.

    With `at` (an element variable), the bit of element `at` in the reported mask `key`: the
    model's own steps read the mask observation's body at `at` (`Mask(c, body)` gives `body`
    with c := at), the checker the bit the event reports (the enter hook's packet kinds, which
    the code reads per context after its snapshot of the active contexts)."""

    key: str
    at: "Var | None" = None


def owner(e: Expr) -> Expr:
    """The value of an `OwnerDom` function while element `e` holds it (finite: Index(e) + 1)."""
    return Index(e) + 1


NOBODY = 0  # the value of an `OwnerDom` function nobody holds


def lift(x: object) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, (bool, int, str)):
        return Lit(x)
    raise TypeError(f"cannot use {x!r} in a protocol expression")


def And(*xs: ExprLike) -> Expr:
    return Op("and", tuple(lift(x) for x in xs))


def Or(*xs: ExprLike) -> Expr:
    return Op("or", tuple(lift(x) for x in xs))


def Not(x: ExprLike) -> Expr:
    return Op("not", (lift(x),))


def Implies(a: ExprLike, b: ExprLike) -> Expr:
    return Op("implies", (lift(a), lift(b)))


def Ite(c: ExprLike, a: ExprLike, b: ExprLike) -> Expr:
    return Op("ite", (lift(c), lift(a), lift(b)))


def Forall(var: Var, body: ExprLike) -> Expr:
    return Quant("forall", var, lift(body))


def Exists(var: Var, body: ExprLike) -> Expr:
    return Quant("exists", var, lift(body))


def Count(var: Var, body: ExprLike) -> Expr:
    return Agg("count", var, lift(body))


def Mask(var: Var, body: ExprLike) -> Expr:
    return Agg("mask", var, lift(body))


TRUE, FALSE = Lit(True), Lit(False)

# ---- state ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Func:
    """A piece of state: a function from `args` sorts to `dom`, initially `init` everywhere.

    `key` names the finite reading's scalar for one application (`pend.{0}.{1}`), so stored
    certificates and traces keep their names; `lock` marks a lock-holding relation
    (`(lock class, mode)`), which the readings use for lock graphs and discipline checks.
    """

    name: str
    args: tuple[Sort, ...]
    dom: Dom
    init: bool | int | str
    key: str
    doc: str = ""
    lock: tuple[str, str] | None = None
    # lock classes any of which protects this state (writes need one held exclusively, reads
    # one held in any mode); read by `spec.lang.discipline` to derive the lock-discipline claim
    guarded: tuple[str, ...] = ()

    def __call__(self, *args: Expr) -> App:
        if len(args) != len(self.args):
            raise TypeError(f"{self.name} takes {len(self.args)} arguments")
        for want, a in zip(self.args, args):
            got = _sort_of(a)
            if got is not None and not want.contains(got) and not got.contains(want):
                raise TypeError(f"{self.name}: argument {a} of sort {got} where {want} is expected")
        return App(self, tuple(args))

    def __repr__(self) -> str:
        return self.name


def _sort_of(e: Expr) -> Sort | None:
    if isinstance(e, Var):
        return e.sort
    if isinstance(e, App) and isinstance(e.func.dom, SortDom):
        return e.func.dom.sort
    return None


# ---- actions --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ScopeParam:
    """An `update_serialization` agent-set argument: `all`, or a non-empty set of agents
    (`sets=False`: only `all`, the pre-refcount era's one global switch)."""

    name: str
    sort: Sort
    sets: bool = True

    def has(self, x: Expr) -> Member:
        return Member(x, self)

    def is_all(self) -> IsAll:
        return IsAll(self)


@dataclass(frozen=True, eq=False)
class BoolParam(Expr):
    """A boolean constant of one action (the `enable` of `enable_serialization`), usable in
    expressions and in the static keys; bound by `Action.consts`."""

    name: str


Param = Union[Var, ScopeParam, BoolParam]


@dataclass(frozen=True, eq=False)
class Every:
    """An update of `target` at every element `var` of its sort (`var` free in both sides)."""

    var: Var
    target: App
    value: Expr


Update = Union[tuple[App, Expr], Every]


@dataclass(frozen=True)
class Action:
    """One step of one role's program: one trace event.

    The acting thread is `thread`; it is at label `at` of `pc` (a selector), the extra selectors
    `select` pick the instance (the agent a lookup works on), `guard` are the conditions the step
    waits for, `updates` the state changes (all read the pre-state), `observe` the values the
    event reports, `static` the event keys that select the action (values: literals, parameters,
    or `{param}` templates such as `serializer.{a}`).
    """

    role: Sort
    at: str
    kind: str
    thread: Var
    params: tuple[Param, ...]
    static: tuple[tuple[str, str | Param], ...]
    select: tuple[tuple[str, Expr], ...]
    guard: tuple[tuple[str, Expr], ...]
    updates: tuple[Update, ...]
    observe: tuple[tuple[str, Expr], ...]
    source: str
    goto: Expr | None = None
    consts: tuple[tuple[str, bool | int | str], ...] = ()
    # step claims checked in this action's pre-state: (claim name, what is required, condition);
    # the condition may name the action's thread and parameters, the text may use `{t}`, `{agent}`
    checks: tuple[tuple[str, str, Expr], ...] = ()
    # functions this step writes as ghost bookkeeping (no lock protects a ghost; discipline skips it)
    ghost: tuple[str, ...] = ()
    # finite-only conjuncts: (label of a `select`/`guard` conjunct, what the any-size reading reads
    # instead). For a bound or cursor of the finite model (a registry cap, "the next dispatch
    # index"): the replacement must follow from the conjunct (and the rest of the guard) on every
    # reachable finite state, so the any-size system is a superset and an invariant proved there
    # holds at every size (tests/test_parametric_lifecycle.py checks the implication on reached
    # states). TRUE drops the conjunct. Finite and open-world readings ignore this field.
    any_size: tuple[tuple[str, Expr], ...] = ()
    # static keys an event may leave out: an omitted one names the acting thread's own element of
    # that parameter's sort (finite readings: the element with the thread's index in its role; the
    # open world: the element spelled like the thread's id), so a trace whose threads each act for
    # one holder of their own (format v1, the recorders) need not write it
    implied: tuple[str, ...] = ()
    # conditions of step findings (`Protocol.findings`), in this action's pre-state as `checks`;
    # kept apart from `checks` so a reading that does not know findings ignores them
    finding_checks: tuple[tuple[str, str, Expr], ...] = ()
    # True for a step composed from a `Shorthand` (spec.lang.shorthand.compose): the trace
    # readings take it, nothing generates it (the simulator skips it like the provers do)
    shorthand: bool = False

    @property
    def per(self) -> str:
        """Legacy instance kind: '' one instance, 'agent' per agent, 'scope' per scope x enable."""
        if any(isinstance(p, ScopeParam) for p in self.params) or self.consts:
            return "scope"
        return "agent" if any(isinstance(p, Var) for p in self.params) else ""


@dataclass(frozen=True)
class Shorthand:
    """One event a trace may write for two consecutive steps of one thread that the definition
    has split (a log written before the split has one event where the code has two points):
    `second`'s kind at `first`'s label reads as step `first` immediately followed by step
    `second`, nothing of another thread between them. Only the trace readings take it
    (spec.lang.shorthand.trace_actions composes it from the two steps as they stand, so a
    mutant's shorthand is the mutant's composition); the provers, the recorders and the
    simulator never make it: the composed step is a path of the model, so it adds no behaviour."""

    role: str
    first: tuple[str, str]   # (label, event kind) of the first step
    second: tuple[str, str]  # (label, event kind) of the second; its label is where `first` goes
    source: str


@dataclass(frozen=True)
class Claim:
    """A named property of the protocol, written once in the language.

    `invariant`: `expr` (closed) holds in every reachable state. `step`: the condition each
    action lists under this name in its `checks` holds in that action's pre-state (a claim with
    no listed condition is derived by a reading, e.g. `spec.lang.discipline`).
    """

    name: str
    kind: str  # "invariant" | "step"
    summary: str
    source: str
    expr: Expr | None = None


@dataclass
class Protocol:
    """Sorts, state functions (in layout order) and per-role programs of one protocol."""

    name: str
    sorts: list[Sort] = field(default_factory=list)
    funcs: list[Func] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    pc: dict[str, Func] = field(default_factory=dict)  # role name -> its program counter
    layout: list[tuple[Func, ...]] = field(default_factory=list)
    claims: dict[str, Claim] = field(default_factory=dict)
    # claims the design is known to break: residual risks of the code as it stands (fidelity-audit
    # U2, ...). A counterexample of one is a finding, not a failure: a reading that judges a run
    # reports it as a note and keeps the verdict; a reading that does not know findings ignores
    # them (they are kept apart from `claims` so no reading can take one for a fatal property)
    findings: dict[str, Claim] = field(default_factory=dict)
    # counters the any-size reading reads through what they count: name -> (one variable per
    # argument, a `Count` over those). Finite readings keep the stored counter (and ignore this);
    # the any-size reading declares no symbol for it, drops its updates and reads each
    # application as the count, which it can compare with 0 only (`Count == 0` is "no element
    # satisfies the body"). The equation counter = count must hold on every reachable finite
    # state: tests/test_parametric_lifecycle.py checks it, and that every step keeps it.
    abstractions: dict[str, tuple[tuple[Var, ...], Expr]] = field(default_factory=dict)
    # conditions that are bounds of the finite model, not of the code (a counter saturating at
    # its finite domain's top), by node identity: the any-size reading reads each as true (the
    # code's unbounded counter); finite readings read them as written. Sound for an invariant
    # that keeps the counter below the bound at every size (say so where one is declared).
    bounds: dict[int, Expr] = field(default_factory=dict)
    # events an older trace writes for two steps of the model (see `Shorthand`); only the trace
    # readings compose them (spec.lang.shorthand.trace_actions)
    shorthands: list["Shorthand"] = field(default_factory=list)

    def func(self, name: str) -> Func:
        for f in self.funcs:
            if f.name == name:
                return f
        raise KeyError(name)

    def leaf_sorts(self) -> list[Sort]:
        out: list[Sort] = []
        for s in self.sorts:
            for leaf in s.leaves():
                if leaf not in out:
                    out.append(leaf)
        return out


# ---- a small builder that keeps definitions short -------------------------------------------


class Builder:
    """Declares state and appends actions; `lay` groups functions for the finite layout."""

    def __init__(self, name: str) -> None:
        self.p = Protocol(name)

    def sort(self, name: str, prefix: str = "", parts: Sequence[Sort] = ()) -> Sort:
        s = Sort(name, prefix, tuple(parts))
        self.p.sorts.append(s)
        return s

    def state(self, name: str, args: Sequence[Sort], dom: Dom, init: bool | int | str, key: str,
              doc: str = "", lock: tuple[str, str] | None = None, guarded: Sequence[str] = ()) -> Func:
        f = Func(name, tuple(args), dom, init, key, doc, lock, tuple(guarded))
        self.p.funcs.append(f)
        return f

    def lay(self, *groups: tuple[Func, ...]) -> None:
        self.p.layout.extend(groups)

    def abstract(self, f: Func, args: Sequence[Var], count: Expr) -> None:
        """Declare counter `f(args)` = `count` for the any-size reading (`Protocol.abstractions`)."""
        if len(args) != len(f.args):
            raise TypeError(f"{f.name} takes {len(f.args)} arguments")
        self.p.abstractions[f.name] = (tuple(args), count)

    def bound(self, cond: Expr) -> Expr:
        """Mark `cond` a finite-only bound (`Protocol.bounds`); returns it."""
        self.p.bounds[id(cond)] = cond
        return cond

    def invariant(self, name: str, summary: str, source: str, expr: Expr) -> Claim:
        c = Claim(name, "invariant", summary, source, expr)
        self.p.claims[name] = c
        return c

    def finding(self, name: str, summary: str, source: str, expr: Expr) -> Claim:
        """An invariant the design is known to break (`Protocol.findings`)."""
        c = Claim(name, "invariant", summary, source, expr)
        self.p.findings[name] = c
        return c

    def step_finding(self, name: str, summary: str, source: str) -> Claim:
        """A step claim the design is known to break (`Protocol.findings`); its conditions sit in
        the `finding_checks` of the actions it watches."""
        c = Claim(name, "step", summary, source)
        self.p.findings[name] = c
        return c

    def step_claim(self, name: str, summary: str, source: str) -> Claim:
        c = Claim(name, "step", summary, source)
        self.p.claims[name] = c
        return c

    def action(self, role: Sort, at: str, kind: str, thread: Var, *,
               params: Iterable[Param] = (),
               static: Mapping[str, str | Param] | None = None,
               select: Iterable[tuple[str, Expr]] = (),
               guard: Iterable[tuple[str, Expr]] = (),
               updates: Iterable[Update] = (),
               goto: ExprLike | None = None,
               observe: Mapping[str, ExprLike] | None = None,
               consts: Mapping[str, bool | int | str] | None = None,
               checks: Iterable[tuple[str, str, ExprLike]] = (),
               ghost: Iterable[str] = (),
               any_size: Mapping[str, ExprLike] | None = None,
               implied: Iterable[str] = (),
               finding_checks: Iterable[tuple[str, str, ExprLike]] = (),
               source: str = "") -> Action:
        ups = list(updates)
        act = Action(role, at, kind, thread, tuple(params), tuple((static or {}).items()),
                     tuple(select), tuple(guard), tuple(ups),
                     tuple((k, lift(v)) for k, v in (observe or {}).items()), source,
                     None if goto is None else lift(goto), tuple((consts or {}).items()),
                     tuple((k, why, lift(v)) for k, why, v in checks), tuple(ghost),
                     tuple((k, lift(v)) for k, v in (any_size or {}).items()), tuple(implied),
                     tuple((k, why, lift(v)) for k, why, v in finding_checks))
        assert all(isinstance(dict(act.static).get(k), Var) for k in act.implied), "implied keys name sort parameters"
        self.p.actions.append(act)
        return act

    def shorthand(self, role: Sort, first: tuple[str, str], second: tuple[str, str], source: str) -> None:
        """Declare that event kind `second[1]` at label `first[0]` reads as the two steps (`Shorthand`)."""
        self.p.shorthands.append(Shorthand(role.name, first, second, source))
