"""summary.md: the report as Markdown fit for a PR comment — the verdict line, the matrices, the
reviewers' questions with plain answers, the findings, every counterexample as a thread-column
table (collapsed), rejected traces and provenance."""
from __future__ import annotations

from typing import Sequence

from spmcheck.spec.names import label

from . import cex as cexr
from .prove_text import CORE_COLS, lifecycle_cols
from .records import Pair, ProveRun
from .reportdata import ReportData
from .summary import prove_counts, prove_summary


def _cell(p: Pair | None) -> str:
    if p is None:
        return ""
    r = p.result
    txt = {"proved": "proved, any size" if p.any else "proved (this size)", "violated": "violated",
           "unknown": "**unknown**"}.get(r.verdict, r.verdict)
    return txt if r.matches else f"**{txt} (expected {r.expected})**"


def _md(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def matrix(pairs: Sequence[Pair], cols: Sequence[str]) -> list[str]:
    by = {(p.result.variant, p.result.property): p for p in pairs}
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    out = ["| variant | " + " | ".join(f"{label(c)}" for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    out += [f"| {v} | " + " | ".join(_cell(by.get((v, c))) for c in cols) + " |" for v in variants]
    return out


def datapath_matrix(pairs: Sequence[Pair]) -> list[str]:
    from spmcheck.spec.datapath.verdicts import ROWS

    by = {(p.result.property, p.result.variant): p for p in pairs}
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    rows = [r for r in ROWS if any(p.result.property == r.id for p in pairs)]

    def cell(p: Pair | None) -> str:
        if p is None or p.row is None:
            return ""
        r = p.result
        txt = (f"violated ({p.row.length})" if r.verdict == "violated" else
               f"proved [{p.row.states}]" if r.verdict == "proved" else "**unknown**")
        return txt if r.matches else f"**{txt} (expected {r.expected})**"

    out = ["| row | scope | " + " | ".join(variants) + " |", "|---" * (len(variants) + 2) + "|"]
    out += [f"| {r.id} | {r.scope} | " + " | ".join(cell(by.get((r.id, v))) for v in variants) + " |" for r in rows]
    return out + ["", "(n) counterexample steps, shortest; [n] reachable states, all explored (a proof at that "
                      "scope only)."]


def final_sentence(run: ProveRun) -> str:
    c = prove_counts(run)
    if not c.final_total:
        return ""
    if c.final_any == c.final_total:
        return (f"**The final design is proved for any number of GPUs (agents) and threads**: all {c.final_total} "
                "of its properties hold in every reachable state at any size (parametric inductive proofs), and "
                "at the fixed size by a stored inductive invariant re-checked by Z3.")
    broken = (f" It violates {', '.join(c.final_violated)}, as the model of the code predicts (a counterexample "
              "below; the expected verdict cites why)." if c.final_violated else "")
    return (f"The final design: {c.final_any} of {c.final_total} properties proved for any number of GPUs; the "
            "others are proved at the fixed size only or not proved (see the matrix)." + broken)


def _summary_of(prop: str, model: str) -> str:
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.properties import PROPERTIES

    if model == "datapath":
        from spmcheck.checker.datapath_cli import row_meaning

        return row_meaning(prop)[1]

    p = (PROPERTIES if model == "core" else LPROPERTIES).get(prop)
    return p.summary if p is not None else prop


def _strip_label(summary: str) -> str:
    """'P2: an entry is ...' -> 'an entry is ...' (the label is printed already)."""
    head, sep, rest = summary.partition(": ")
    return rest if sep and head[:1] == "P" and head[1:2].isdigit() else summary


def cex_table(v: cexr.CexView) -> list[str]:
    out = []
    if v.setup:
        out.append(f"Start state, reached by {v.setup} setup steps (calls run one at a time): "
                   + (", ".join(f"`{n}={val}`" for n, val in v.start) or "the initial state") + ".")
    else:
        out.append("Start state: the initial state (" + (", ".join(f"`{n}={val}`" for n, val in v.start[:12])
                                                         + (", …" if len(v.start) > 12 else "")) + ").")
    out += ["", "| step | " + " | ".join(v.threads) + " | state change |", "|---" * (len(v.threads) + 2) + "|"]
    for s in v.steps:
        if s.setup:
            continue
        fail = s.index == v.failing.index
        cells = [(f"**{_md(cexr.action_text(s))}**" if fail else _md(cexr.action_text(s))) if s.thread == t else ""
                 for t in v.threads]
        idx = f"**{s.index} ✗**" if fail else str(s.index)
        out.append(f"| {idx} | " + " | ".join(cells) + f" | {_md(cexr.change_text(s))} |")
    f = v.failing
    ba = "; ".join(f"`{n}` {o} → {w}" for n, o, w in f.changes if not n.startswith(("pc.", "lk."))) \
        or _md(cexr.failing_reason(v))
    out += ["", f"**Fails at step {f.index}** ({f.thread} `{cexr.action_text(f)}`): {ba}. "
                f"It breaks {label(v.property)}: {_md(_strip_label(_summary_of(v.property, v.model)))}."]
    names = v.names()
    if names:
        from .legend import legend

        out.append("")
        out.append("Legend: " + "; ".join(f"`{n}` {m}" for n, m in legend(names, v.model)) + ".")
    return out


def render(data: ReportData) -> str:
    from spmcheck.spec.lifecycle.expected import FINDING_REASON

    run = data.run
    out = ["# spmcheck design review: SPM queue serialization", "", f"**{prove_summary(run)}**", ""]
    s = final_sentence(run)
    if s:
        out += [s, ""]
    core = run.model("core")
    lc_main = [p for p in run.model("lifecycle") if not p.finding]
    out.append("## Verdicts")
    if core:
        cols = [c for c in CORE_COLS if any(p.result.property == c for p in core)]
        out += ["", f"Core model ({run.core_size}):", ""] + matrix(core, cols)
    if lc_main:
        out += ["", f"SPM context lifecycle ({run.lifecycle_size}):", ""] + matrix(lc_main, lifecycle_cols(lc_main))
    dp = run.model("datapath")
    if dp:
        out += ["", "Data path, audit hazards × revision (each row at its own scope; `spmcheck prove --model "
                "datapath` lists the scopes):", ""] + datapath_matrix(dp)
    used = list(dict.fromkeys(p.result.property for p in run.pairs if not p.finding and p.model != "datapath"))
    names = ("Properties: " + "; ".join(f"**{label(c)}** `{c}`" for c in used) + ". ") if used else ""
    out += ["", names + "*violated* on a known-bad variant is the expected outcome: the bug is caught with a "
            "counterexample."]
    from .prove_text import problems

    bad = problems(run)
    if bad:
        out += ["", "### Not as expected", ""] + [f"- {ln.strip()}" for ln in bad[1:]]
    qs = _questions(run)
    if qs:
        out += ["", "## Reviewers' questions", ""] + qs
    finds = [p for p in run.pairs if p.finding and p.model != "datapath"]
    if finds:
        out += ["", "## Findings: residual risks of the final design", "",
                "Expected counterexamples, not failures; each is drawn below.", ""]
        for p in finds:
            n = len(p.result.counterexample or ())
            out.append(f"- **{p.result.property}**: {FINDING_REASON.get(p.result.property, p.result.source)}"
                       + (f" ({n}-step counterexample)" if n else "") + ("" if p.result.matches else " **not as expected**"))
    cexs = [p for p in run.pairs if p.result.counterexample]
    if cexs:
        out += ["", "## Counterexamples", ""]
        for p in cexs:
            v = cexr.view(p.result, p.model)
            n = sum(1 for s in v.steps if not s.setup)
            head = (f"{p.model} <b>{p.result.variant}</b> violates {p.result.property} ({label(p.result.property)}): "
                    f"{n} steps" + (f" after {v.setup} setup steps" if v.setup else "") + f", fails at step {v.failing.index}")
            out += [f"<details><summary>{head}</summary>", ""] + cex_table(v) + ["", "</details>", ""]
    rejected = [t for t in data.traces if t.result.verdict.value != "accepted"]
    if data.traces:
        out += ["", "## Checked traces", "", "| file | verdict | where | events |", "|---|---|---|---|"]
        for t in data.traces:
            r = t.result
            where = f"{r.prop + ' ' if r.prop else ''}line {r.line}: {_md(r.message)[:120]}" if r.line else _md(r.message or "")[:120]
            out.append(f"| `{r.file}` | {r.verdict.value} | {where} | {r.events} |")
        if rejected:
            out += ["", f"{len(rejected)} rejected; swim lanes in report.html."]
    out += ["", "## Provenance", ""] + [f"- {k}: `{v}`" for k, v in data.provenance.items()]
    out += ["", "The full report with swim-lane diagrams and lock-order graphs: `report.html` (self-contained)."]
    return "\n".join(out) + "\n"


def _questions(run: ProveRun) -> list[str]:
    from spmcheck.spec.lifecycle.expected import QUESTION_VARIANTS
    from spmcheck.spec.lifecycle.report import answer, questions

    lc = [p.result for p in run.model("lifecycle")]
    anys = {(p.result.variant, p.result.property): p.any_size for p in run.model("lifecycle")}
    vs = [v for v in QUESTION_VARIANTS if any(p.result.variant == v for p in run.model("lifecycle"))]
    if not vs:
        return []
    out = ["| question | " + " | ".join(vs) + " |", "|---" * (len(vs) + 1) + "|"]
    for q in questions():
        if not any((v, p) in anys for v in vs for p in q.props):
            continue
        out.append(f"| {_md(q.text)} | " + " | ".join(_md(answer(lc, v, q.props, lambda a, b: anys.get((a, b), "-")))
                                                      for v in vs) + " |")
    return out
