"""Compile trace.lark mechanically into one regex for well-formed lines (perf-notes §7, appendix).

The regex is built by walking the Lark grammar's rules and terminals, so the grammar stays the
single definition of the format: every terminal contributes its own pattern, every rule its
sequence/alternatives. Each alternative of a rule without inner markers gets an empty named
marker group `(?P<k_NAME>)` at its end, so `m.lastgroup` names the event kind (or `header`, ...)
without a Python loop. Lark stays the fallback for every line the regex rejects and produces every
error message; tests/test_checker_fastpath.py checks that both accept exactly the same lines.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Lark is imported when a grammar is compiled (checker/parse.py: not on import)
    from lark import Lark
    from lark.grammar import Rule, Symbol


@dataclass(frozen=True)
class FastPath:
    regex: re.Pattern[str]
    # marker group name -> (rule name, [(group index, terminal name)] of its captured terminals)
    markers: dict[str, tuple[str, tuple[tuple[int, str], ...]]]


def compile_grammar(lark_obj: Lark, start: str = "line", dispatch: tuple[str, ...] = ("line", "body")) -> FastPath:
    """`dispatch` names the rules whose alternatives are told apart by a marker group."""
    from lark.grammar import NonTerminal, Terminal

    rules: dict[str, list[Rule]] = {}
    for r in lark_obj.rules:
        rules.setdefault(r.origin.name, []).append(r)
    terms = {t.name: t for t in lark_obj.terminals}
    # a grammar loaded from Lark's cache has no ignore_tokens; its lexer configuration says the same
    if getattr(lark_obj, "ignore_tokens", None) or lark_obj.lexer_conf.ignore:
        raise ValueError("fast path assumes a grammar without %ignore (blanks live in terminals)")
    counter = [0]
    markers: dict[str, tuple[str, tuple[str, ...]]] = {}

    def sym_re(sym: Symbol, slots: list[str], capture: bool) -> tuple[str, bool]:
        """Regex for one symbol; the bool says whether it contains a marker group."""
        if isinstance(sym, Terminal):
            rx = terms[sym.name].pattern.to_regexp()
            if not capture or sym.filter_out or sym.name.startswith("_"):
                return f"(?:{rx})", False
            counter[0] += 1
            gname = f"t{counter[0]}_{sym.name}"
            slots.append(gname)
            return f"(?P<{gname}>{rx})", False
        return rule_re(sym.name, slots, capture)

    def seq_re(expansion: list[Symbol], slots: list[str], capture: bool) -> tuple[str, bool]:
        parts, marked = [], False
        for s in expansion:
            rx, m = sym_re(s, slots, capture)
            parts.append(rx)
            marked |= m
        return "".join(parts), marked

    def rule_re(name: str, slots: list[str], capture: bool) -> tuple[str, bool]:
        alts = rules[name]
        me = NonTerminal(name)
        rec = [r for r in alts if me in r.expansion]
        if rec:
            # Lark's EBNF `X*`/`X+` helpers: `R: base | R tail`. Repeated captures keep only the
            # last match, so the repetition captures nothing; lines using it (the header) get
            # their values from Lark, see parse.py.
            base = [r for r in alts if me not in r.expansion]
            if len(rec) != 1 or rec[0].expansion[0] != me or me in rec[0].expansion[1:] or not base:
                raise ValueError(f"rule {name}: only left-recursive repetition is supported")
            b = "|".join(seq_re(r.expansion, [], False)[0] for r in base)
            t = seq_re(rec[0].expansion[1:], [], False)[0]
            return f"(?:(?:{b})(?:{t})*)", False
        out, any_marked = [], False
        for r in alts:
            sub: list[str] = []
            rx, marked = seq_re(r.expansion, sub, capture)
            if name in dispatch and not marked:
                label = _label(r)
                if f"k_{label}" in markers:
                    raise ValueError(f"two alternatives of {name} would both be called {label}")
                markers[f"k_{label}"] = (label, tuple(sub))
                rx = f"{rx}(?P<k_{label}>)"
                marked = True
            slots.extend(sub)
            out.append(f"(?:{rx})")
            any_marked |= marked
        return "(?:" + "|".join(out) + ")", any_marked

    body, _ = rule_re(start, [], True)
    regex = re.compile(body)
    gi = regex.groupindex
    return FastPath(regex, {k: (lab, tuple((gi[g], g.split("_", 1)[1]) for g in slots))
                            for k, (lab, slots) in markers.items()})


def _label(r: Rule) -> str:
    if len(r.expansion) == 1:
        return r.expansion[0].name.lower()
    if not r.expansion:
        return "empty"
    return r.origin.name
