"""Text of `spmcheck prove`: brief by default (verdict matrices, the reviewers' questions, the
findings, anything not as expected, then one summary line), details with -v. No timings unless
asked (`--timings`), so two runs on the same inputs print the same bytes."""
from __future__ import annotations

from typing import Sequence

from spmcheck.spec.names import label

from . import cex as cexr
from .records import Pair, ProveRun
from .summary import prove_summary

def _core_cols() -> tuple[str, ...]:
    from spmcheck.spec.properties import PROPERTIES  # the core's properties, in the definition's order

    return tuple(PROPERTIES)


CORE_COLS = _core_cols()


def cell(p: Pair | None) -> str:
    if p is None:
        return "."
    r = p.result
    text = {"proved": "proved*" if p.any else "proved", "violated": "viol", "unknown": "UNKNOWN"}.get(r.verdict, r.verdict)
    return text if r.matches else text + "!"


def matrix(pairs: Sequence[Pair], cols: Sequence[str]) -> list[str]:
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    by = {(p.result.variant, p.result.property): p for p in pairs}
    heads = [label(c) for c in cols]
    vw = max([len("variant")] + [len(v) for v in variants])
    cw = [max(len(h), 7) for h in heads]
    out = [("variant".ljust(vw) + "  " + "  ".join(h.ljust(w) for h, w in zip(heads, cw))).rstrip()]
    for v in variants:
        out.append((v.ljust(vw) + "  " + "  ".join(cell(by.get((v, c))).ljust(w) for c, w in zip(cols, cw))).rstrip())
    return out


def lifecycle_cols(pairs: Sequence[Pair]) -> list[str]:
    from spmcheck.spec.lifecycle.properties import CORE_LPROPS

    from spmcheck.spec.names import ALIASES

    seen = {p.result.property for p in pairs if not p.finding}
    order = list(ALIASES.values())
    return sorted((c for c in CORE_LPROPS if c in seen), key=lambda c: order.index(c) if c in order else len(order))


def _legend(cols: Sequence[str]) -> list[str]:
    return wrap("; ".join(f"{label(c)} {c}" for c in cols if label(c) != c), "  ")


def wrap(text: str, indent: str, width: int = 116) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def brief(run: ProveRun, timings: bool = False) -> list[str]:
    out: list[str] = []
    core = run.model("core")
    lc = [p for p in run.model("lifecycle")]
    used: list[str] = []
    if any(not p.finding for p in core):
        cols = [c for c in CORE_COLS if any(p.result.property == c for p in core)]
        out.append(f"core model ({run.core_size})")
        out += ["  " + ln for ln in matrix(core, cols)]
        used += cols
    main = [p for p in lc if not p.finding]
    if main:
        cols = lifecycle_cols(main)
        out.append(f"SPM context lifecycle ({run.lifecycle_size})")
        out += ["  " + ln for ln in matrix(main, cols)]
        used += cols
    if core or main:
        from spmcheck.spec.names import ALIASES

        order = list(ALIASES.values())
        labels = sorted(dict.fromkeys(used), key=lambda c: order.index(c) if c in order else len(order))
        out += _legend(labels)
        out.append("  proved* for any size (parametric) | proved at this size | viol counterexample "
                   "(expected: known-bad) | . not run | ! unexpected")
    if lc:
        out += questions(run)
    finds = [p for p in run.pairs if p.finding and p.model != "datapath"]
    if finds:
        out.append("\nfindings: residual risks of the final design, shown as counterexamples (expected, not failures):")
        w = max(len(p.result.property) for p in finds)
        for p in finds:
            from spmcheck.spec.lifecycle.expected import FINDING_REASON

            what = FINDING_REASON.get(p.result.property, p.result.source)
            what = what.split(": ", 1)[1] if what.startswith("residual") and ": " in what else what
            mark = "" if p.result.matches else f"  [{p.result.verdict}, not as expected]"
            out.append(f"  {p.result.property.ljust(w)}  {_first_line(what + mark, 114 - w)}")
    out += datapath_block(run)
    out += problems(run)
    out.append(prove_summary(run, timings))
    return out


def datapath_block(run: ProveRun, full: bool = False) -> list[str]:
    """The data path's part of the default text: one line per run (the main job stays one screen)
    naming what the latest revision violates and proves, or with `full` (-v) the revisions x
    rows matrix with short cells; `--model datapath` prints the full table with its scopes."""
    pairs = run.model("datapath")
    if not pairs:
        return []
    from spmcheck.checker.datapath_cli import compact
    from spmcheck.spec.datapath.variants import LATEST

    if full:
        return (["\ndata path: audit hazards x revision, each row at its own scope (vN counterexample of N steps, "
                 "p proved there; bounded)"] + ["  " + ln for ln in compact(pairs)])
    latest = [p for p in pairs if p.result.variant == LATEST] or pairs
    v = latest[0].result.variant
    mine = [p for p in latest if p.result.variant == v]
    viol = " ".join(p.result.property for p in mine if p.result.verdict == "violated")
    proved = " ".join(p.result.property for p in mine if p.result.verdict == "proved")
    rows, revs = len({p.result.property for p in pairs}), len({p.result.variant for p in pairs})
    first = (f"data path, {'latest revision ' if v == LATEST else ''}{v} ({rows} hazard row{'s' * (rows != 1)} x "
             f"{revs} revision{'s' * (revs != 1)}, bounded: spmcheck prove --model datapath):")
    return [first] + wrap(f"violated {viol or '-'}; proved {proved or '-'}", "  ", 128)


def questions(run: ProveRun) -> list[str]:
    from spmcheck.spec.lifecycle.expected import QUESTION_VARIANTS
    from spmcheck.spec.lifecycle.report import answer, questions as qs

    lc = [p.result for p in run.model("lifecycle")]
    anys = {(p.result.variant, p.result.property): p.any_size for p in run.model("lifecycle")}
    asked = {p.result.variant for p in run.model("lifecycle")}
    variants = [v for v in QUESTION_VARIANTS if v in asked]
    if not variants:
        return []
    out = ["reviewers' questions:"]
    for i, q in enumerate(qs(), 1):
        if not any((v, pr) in anys for v in variants for pr in q.props):
            continue
        out.append(f"  Q{i}. {q.text}")
        got = [f"{v}: {answer(lc, v, q.props, lambda a, b: anys.get((a, b), '-'), run.lifecycle_size)}" for v in variants]
        out += wrap("; ".join(got), "      ", 112)
    return out


def problems(run: ProveRun) -> list[str]:
    """Every pair not as expected and every unreachable witness, with its reason (never hidden)."""
    out = []
    for p in run.pairs:
        r = p.result
        if not r.matches:
            why = f": {_first_line(r.reason, 110)}" if r.reason else ""
            out.append(f"  {p.model} {r.variant} / {r.property}: {r.verdict}, expected {r.expected}{why}")
        for w in r.witnesses:
            if w.verdict == "unreachable":
                out.append(f"  {p.model} {r.variant}: non-vacuity witness {w.name} unreachable ({w.summary})")
    return (["\nnot as expected:"] + list(dict.fromkeys(out))) if out else []


def _first_line(s: str, width: int) -> str:
    s = s.splitlines()[0] if s else ""
    return s if len(s) <= width else s[: width - 3].rstrip() + "..."


def verbose(run: ProveRun, timings: bool = False) -> list[str]:
    """The brief text, then per pair: method, depth, any-size status, notes, witnesses, and every
    counterexample as thread columns with start state, failing step and legend."""
    out = brief(run, timings)[:-1]
    dp = datapath_block(run)
    if dp:  # the matrix instead of the one-line form
        at = out.index(dp[0])
        out[at:at + len(dp)] = datapath_block(run, full=True)
    out.append("\nevery pair:")
    head = ("model", "variant", "property", "verdict", "expected", "any size / bounded", "depth covered", "method") + (
        ("seconds",) if timings else ())
    rows = [(p.model, p.result.variant, p.result.property, p.result.verdict, p.result.expected,
             p.any_size, p.result.bound, p.result.method) + ((f"{p.result.seconds:.1f}",) if timings else ())
            for p in run.pairs]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
    for p in run.pairs:
        if p.result.reason and p.result.verdict != "violated":
            out.append(f"  note {p.model} {p.result.variant} / {p.result.property}: {p.result.reason}")
    seen = set()
    for p in run.pairs:
        for w in p.result.witnesses:
            if (p.model, p.result.variant, w.name) in seen:
                continue
            if not seen:
                out.append("\nnon-vacuity witnesses (must be reachable):")
            seen.add((p.model, p.result.variant, w.name))
            out.append(f"  {p.model:9} {p.result.variant:22} {w.name:38} {w.verdict:11} {w.steps:>3} steps  {w.summary}")
    for p in run.pairs:
        if p.result.counterexample is None:
            continue
        v = cexr.view(p.result, p.model)
        what = "finding" if p.finding else "counterexample"
        out.append(f"\n{what}: {p.model} {p.result.variant} violates {p.result.property} ({label(p.result.property)})"
                   + (f" — {p.result.reason}" if p.result.reason else ""))
        out += cexr.text(v, f"{p.result.property} ({label(p.result.property)})")
    out.append("")
    out.append(prove_summary(run, timings))
    return out
