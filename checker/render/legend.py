"""Human names for the models' internal state variables (`sh.l0`, `pend.u1.0`, `mk.1` ...).

A counterexample prints a legend for every name it shows; tests check that every variable of
both models has an entry here, so a new variable cannot reach a user unexplained.
"""
from __future__ import annotations

import re

# (pattern, meaning); groups are thread / agent / context / dispatch numbers, named in the text
_CORE: tuple[tuple[str, str], ...] = (
    (r"rc\.all", "refcount of the 'all agents' scope"),
    (r"rc\.(\d+)", "refcount of agent {0} (per_agent[{0}])"),
    (r"ser\.ex\.(\d+)", "serializer entry of agent {0} exists"),
    (r"ser\.en\.(\d+)", "serializer entry of agent {0} is ENABLED"),
    (r"flag", "_serialized_enabled (process-wide flag)"),
    (r"lk\.([a-z_]+(?:\.\d+)?)\.w\.(\w+)", "{1} holds lock {0} exclusive"),
    (r"lk\.([a-z_]+(?:\.\d+)?)\.r\.(\w+)", "{1} holds lock {0} shared"),
    (r"pc\.(\w+)", "program counter of thread {0} (its step label)"),
    (r"held\.(c\w+)", "holder (context) {0} holds a serialization reference (between enable and disable)"),
    (r"hall\.(c\w+)", "{0}'s reference is on the 'all agents' scope"),
    (r"hin\.(c\w+)\.(\d+)", "{0}'s reference includes agent {1}"),
    (r"enable\.(u\d+)", "{0}'s current call is enable (1) or disable (0)"),
    (r"all\.(u\d+)", "{0}'s call is for the 'all agents' scope"),
    (r"in\.(u\d+)\.(\d+)", "{0}'s scope includes agent {1}"),
    (r"pend\.(u\d+)\.(\d+)", "{0} still has to apply the new state to agent {1}'s serializer"),
    (r"was\.(u\d+)\.(\d+)", "{0} saw agent {1} enabled (count > 0) before its change"),
    (r"wh\.(u\d+)\.(\d+)", "{0} saw agent {1}'s serializer entry existing"),
    (r"any\.(u\d+)", "{0}'s any_enabled, computed under W(rc) and stored after releasing it"),
    (r"ag\.(l\d+)", "agent that lookup {0} asks serializer() for"),
    (r"sh\.(l\d+)", "lookup {0}'s snapshot of 'should be enabled' (may go stale)"),
)

_LIFECYCLE: tuple[tuple[str, str], ...] = (
    (r"inf\.(\d+)", "kernels in flight on agent {0} (_active_kernels)"),
    (r"mtx", "contexts mutex: 0 free, i+1 held by tool thread t<i>"),
    (r"ids", "registry ids add_callback handed out so far"),
    (r"g\.conflict", "some start reported an SPM conflict"),
    (r"g\.locked", "batching gate: some agent's queues had batching disabled"),
    (r"g\.timeout", "some drain (Queue::sync) timed out"),
    (r"reg\.(\d+)", "context {0} is registered"),
    (r"slot\.(\d+)", "active slot of context {0}: 0 free, 1 reserved (null), 2 published"),
    (r"en\.(\d+)", "context {0}'s `enabled` flag"),
    (r"mk\.(\d+)", "start marker of context {0} (start in progress)"),
    (r"prof\.(\d+)", "context {0}'s SPM profile is alive (not destroyed)"),
    (r"hd\.(\d+)\.all", "serialization references context {0} holds on the 'all' scope"),
    (r"hd\.(\d+)\.(\d+)", "serialization references context {0} holds on agent {1}"),
    (r"ag\.(\d+)\.(\d+)", "agent {1} is in context {0}'s agent set (none set = all agents)"),
    (r"pc\.(\w+)", "program counter of thread {0} (its step label)"),
    (r"cx\.(t\d+)", "context tool thread {0} is working on"),
    (r"was\.(t\d+)", "{0}'s was_enabled guard at stop"),
    (r"sc\.(t\d+)", "result of {0}'s conflict scan (0 ok, else conflict/busy)"),
    (r"sa\.(t\d+)\.(\d+)", "agent {1} in the agent set {0} is installing"),
    (r"ds\.(t\d+)\.(\d+)", "phase of dispatch {1} when {0}'s drain began (0 none: also outside a drain)"),
    (r"ze\.(\d+)", "dispatch {0}'s async_complete() left its queue with no kernel in flight"),
    (r"dn", "dispatches written so far by d0"),
    (r"hk", "dispatch the completion thread h0 handles"),
    (r"gk\.(d\d+)", "dispatch {0}'s WriteInterceptor gated (its write follows)"),
    (r"ga\.(d\d+)", "agent (queue) of the write {0} gated"),
    (r"gb\.(d\d+)", "{0}'s gate decided the write stays batched (no active SPM context collects on the agent)"),
    (r"st\.(\d+)", "phase of dispatch {0}: 0 none, 1 hooked, 2 in flight, 3 exit hooks ran, 4 done"),
    (r"da\.(\d+)", "agent of dispatch {0}"),
    (r"rq\.(\d+)", "dispatch {0} requests serialization"),
    (r"sz\.(\d+)", "dispatch {0} was submitted serialized"),
    (r"ks\.(\d+)", "kfd_stop / DISPATCH_END deliveries for dispatch {0}"),
    (r"rt\.(\d+)", "registry tag the enter hook recorded for dispatch {0}"),
    (r"pk\.(\d+)\.(\d+)", "packet of dispatch {0} in context {1}: 0 none, 1 empty, 2 SPM"),
    (r"mp\.(\d+)\.(\d+)", "dispatch {0} has an entry in context {1}'s packet_return_map"),
    (r"rc\.all", "refcount of the 'all agents' scope"),
    (r"rc\.(\d+)", "refcount of agent {0}"),
    (r"ser\.ex\.(\d+)", "serializer entry of agent {0} exists"),
    (r"ser\.en\.(\d+)", "serializer entry of agent {0} is ENABLED"),
)

_COMPILED = {m: [(re.compile(p + r"\Z"), t) for p, t in table] for m, table in (("core", _CORE), ("lifecycle", _LIFECYCLE))}


def _datapath() -> list[tuple[re.Pattern[str], str]]:
    """The data path's legend, from its one definition: each state function's key template
    (`st.{0}.{1}`) and the words it was declared with, its arguments named by their sorts."""
    from spmcheck.spec.datapath.protocol import Scope, definition
    from spmcheck.spec.datapath.variants import DVARIANTS, LATEST

    out: list[tuple[re.Pattern[str], str]] = [(re.compile(r"pc\.(\w+)\Z"), "program counter of thread {0} (its step label)")]
    for f in definition(DVARIANTS[LATEST], Scope(tracers=1, destroy=True)).funcs:
        if f.key.startswith("pc.") or not f.doc:
            continue
        rx = re.escape(f.key)
        for i in range(len(f.args)):
            rx = rx.replace(re.escape("{%d}" % i), r"(\w+)")
        # groups come in the order the key writes the arguments (fb.{2}.{0}.{1})
        order = sorted(range(len(f.args)), key=lambda i: f.key.index("{%d}" % i))
        where = ", ".join(f"{a.name} {{{order.index(i)}}}" for i, a in enumerate(f.args))
        out.append((re.compile(rx + r"\Z"), f.doc.replace("{", "{{").replace("}", "}}") + (f" ({where})" if where else "")))
    return out


def meaning(name: str, model: str = "core") -> str | None:
    """What state variable `name` of `model` ('core' | 'lifecycle' | 'datapath') stands for, or None."""
    if model not in _COMPILED:
        _COMPILED[model] = _datapath()
    for rx, text in _COMPILED[model]:
        m = rx.match(name)
        if m:
            return text.format(*m.groups())
    return None


def legend(names: list[str], model: str = "core") -> list[tuple[str, str]]:
    """(name, meaning) for each distinct name, in first-seen order; unknown names say so."""
    out = []
    for n in dict.fromkeys(names):
        out.append((n, meaning(n, model) or "internal state (no description)"))
    return out


# what each kind of highlight in a counterexample's swim lane stands for (checker.render.cex.Highlight)
HIGHLIGHTS: dict[str, str] = {
    "stale-state": "stale state: shared state that disagrees with what it should mirror, from the step "
                   "that made it disagree to the failing step",
    "stale-read": "stale read: the value a step acted on, from where it was read to where it was used, "
                  "after another thread changed (or began changing) it",
    "unprotected": "unprotected access: a step that touches shared state without holding its lock in "
                   "the mode the access needs",
    "stuck": "stuck thread: the locks it holds while it waits for a lock another stuck thread holds",
    "changed": "the state the failing step changes, from the step that gave it its previous value",
}

MARKS: dict[str, str] = {
    "read": "read", "write": "stale write", "change": "changed here", "overtake": "overtaken here", "acquire": "acquired",
    "access": "unprotected",
}


def highlight_meaning(kind: str) -> str:
    """Legend text of a highlight kind; an unknown kind says so."""
    return HIGHLIGHTS.get(kind, "highlighted state (no description)")
