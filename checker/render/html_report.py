"""report.html: one self-contained file (inline CSS and SVG, no script, nothing fetched) — the
verdict matrix with each property's meaning and source, the reviewers' questions and the
findings as cards, every counterexample and rejected trace as a swim-lane SVG, the lock-order
graphs with cycles highlighted, provenance."""
from __future__ import annotations

from html import escape
from typing import Sequence

from spmcheck.spec.names import label

from . import cex as cexr
from . import lockgraph_svg, svg_swimlane
from .prove_text import CORE_COLS, lifecycle_cols, problems
from .records import Pair, ProveRun
from .reportdata import ReportData
from .summary import prove_summary

CSS = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px}
.summary{font-weight:600;padding:8px 12px;border-radius:6px;background:#eef6ee;border:1px solid #9c9}
.summary.bad{background:#fbeaea;border-color:#d99}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.proved{background:#e3f4e3}td.proved.any{background:#c8ecc8}td.violated{background:#fde8c8}
td.unknown{background:#f6d0d0}td.mismatch{outline:3px solid #c0392b}td.none{background:#fafafa}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ccc;border-radius:8px;padding:10px 12px;width:360px;background:#fcfcfc}
.card h3{margin:0 0 6px 0}.card dl{margin:0}.card dt{font-weight:600;float:left;width:96px;clear:left}.card dd{margin:0 0 4px 102px}
.yes{color:#1e7b34;font-weight:600}.no{color:#b03a2e;font-weight:600}.partly{color:#9a6700;font-weight:600}
svg.swimlane{font:11px ui-monospace,monospace;background:#fff;border:1px solid #ddd;margin:6px 0}
svg.swimlane .lane{fill:#f7f9fc;stroke:#dde3ea}svg.swimlane .lanehead{font-weight:700;font-size:12px}
svg.swimlane .step rect{fill:#fff;stroke:#9aa7b5}svg.swimlane .step.fail rect{fill:#f9d6d5;stroke:#c0392b;stroke-width:2}
svg.swimlane .step.evidence rect{fill:#fff3cd;stroke:#c69500}svg.swimlane .step.setup rect{fill:#eee;stroke:#bbb}
svg.swimlane .detail{fill:#555}svg.swimlane .idx{fill:#888}svg.swimlane .lock{fill:#5b8def;opacity:.75}
svg.lockgraph{font:12px system-ui,sans-serif;border:1px solid #ddd;background:#fff;margin:6px 12px 6px 0}
svg.lockgraph .node rect{fill:#eef3fb;stroke:#5b7fb5}svg.lockgraph .edge path{stroke:#555;stroke-width:1.4}
svg.lockgraph .edge.cycle path{stroke:#c0392b;stroke-width:2.6}
.legend{color:#555;font-size:12px}pre{background:#f6f8fa;padding:8px;overflow:auto;font-size:12px}
details{margin:6px 0}summary{cursor:pointer}
"""


def _cell(p: Pair | None) -> str:
    if p is None:
        return '<td class="none"></td>'
    r = p.result
    cls = [r.verdict] + (["any"] if p.any else []) + ([] if r.matches else ["mismatch"])
    text = {"proved": "proved, any size" if p.any else "proved (this size)"}.get(r.verdict, r.verdict)
    tip = (f"{r.variant} / {r.property}: {r.verdict}, expected {r.expected}; method: {r.method}; depth: {r.bound}; "
           f"any size: {p.any_size}; {r.seconds:.1f} s" + (f"; {r.reason}" if r.reason else ""))
    anchor = f' <a href="#cex-{p.model}-{r.variant}-{r.property}">cex</a>' if r.counterexample else ""
    return f'<td class="{" ".join(cls)}" title="{escape(tip)}">{escape(text)}{anchor}</td>'


def matrix(pairs: Sequence[Pair], cols: Sequence[str], model: str) -> str:
    by = {(p.result.variant, p.result.property): p for p in pairs}
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    head = "".join(f'<th title="{escape(c)}">{escape(label(c))}</th>' for c in cols)
    rows = "".join(f"<tr><th>{escape(v)}</th>" + "".join(_cell(by.get((v, c))) for c in cols) + "</tr>"
                   for v in variants)
    return f'<table class="matrix" data-model="{model}"><tr><th>variant</th>{head}</tr>{rows}</table>'


def datapath_matrix(pairs: Sequence[Pair]) -> str:
    """The data path's hazard rows x revisions, as `spmcheck prove --model datapath` prints it:
    counterexample steps or states explored, each row at its own scope."""
    from spmcheck.spec.datapath.verdicts import ROWS

    by = {(p.result.property, p.result.variant): p for p in pairs}
    variants = list(dict.fromkeys(p.result.variant for p in pairs))
    rows = [r for r in ROWS if any(p.result.property == r.id for p in pairs)]

    def cell(p: Pair | None) -> str:
        if p is None or p.row is None:
            return '<td class="none"></td>'
        r = p.result
        cls = [r.verdict] + ([] if r.matches else ["mismatch"])
        text = (f"violated ({p.row.length} steps)" if r.verdict == "violated" else
                f"proved ({p.row.states} states)" if r.verdict == "proved" else r.verdict)
        tip = (f"{r.variant} / {r.property} ({p.row.claim}): {r.verdict}, expected {r.expected}; {r.method}; "
               f"{r.bound}" + (f"; {r.reason}" if r.reason else "") + f"; expectation: {r.source}")
        anchor = f' <a href="#cex-{p.model}-{r.variant}-{r.property}">cex</a>' if r.counterexample else ""
        return f'<td class="{" ".join(cls)}" title="{escape(tip)}">{escape(text)}{anchor}</td>'

    head = "".join(f"<th>{escape(v)}</th>" for v in variants)
    body = "".join(f'<tr><th title="{escape(r.prop)}">{escape(r.id)}</th><td>{escape(r.scope)}</td>'
                   + "".join(cell(by.get((r.id, v))) for v in variants) + "</tr>" for r in rows)
    return f'<table class="matrix" data-model="datapath"><tr><th>row</th><th>scope</th>{head}</tr>{body}</table>'


def _meanings(run: ProveRun) -> str:
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.properties import PROPERTIES

    rows = []
    seen = set()
    for p in run.pairs:
        key = (p.model, p.result.property)
        if key in seen:
            continue
        seen.add(key)
        if p.model == "datapath":
            from spmcheck.checker.datapath_cli import row_meaning

            claim, summary, source = row_meaning(p.result.property)
            rows.append(f"<tr><td>datapath</td><td>{escape(p.result.property)}</td><td><code>{escape(claim)}</code></td>"
                        f"<td>{escape(summary)}</td><td>{escape(source)}</td></tr>")
            continue
        prop = (PROPERTIES if p.model == "core" else LPROPERTIES).get(p.result.property)
        if prop is None:
            continue
        rows.append(f"<tr><td>{p.model}</td><td>{escape(label(prop.name))}</td><td><code>{escape(prop.name)}</code></td>"
                    f"<td>{escape(prop.summary)}</td><td>{escape(prop.source)}</td></tr>")
    return ("<details><summary>What each property means, and its source</summary><table><tr><th>model</th><th></th>"
            "<th>property</th><th>meaning</th><th>source</th></tr>" + "".join(rows) + "</table></details>")


def _answer_cls(a: str) -> str:
    return "yes" if a.startswith("yes") else "partly" if a.startswith("partly") else "no" if a.startswith("no") else ""


def _questions(run: ProveRun) -> str:
    from spmcheck.spec.lifecycle.expected import QUESTION_VARIANTS
    from spmcheck.spec.lifecycle.report import answer, questions

    lc = [p.result for p in run.model("lifecycle")]
    anys = {(p.result.variant, p.result.property): p.any_size for p in run.model("lifecycle")}
    vs = [v for v in QUESTION_VARIANTS if any(p.result.variant == v for p in run.model("lifecycle"))]
    cards = []
    for i, q in enumerate(questions(), 1):
        if not vs or not any((v, p) in anys for v in vs for p in q.props):
            continue
        dl = "".join(f'<dt>{escape(v)}</dt><dd class="{_answer_cls(a)}">{escape(a)}</dd>'
                     for v in vs for a in [answer(lc, v, q.props, lambda x, y: anys.get((x, y), "-"))])
        props = ", ".join(f"{label(p)} <code>{escape(p)}</code>" for p in q.props)
        cards.append(f'<div class="card question"><h3>Q{i}. {escape(q.text)}</h3><dl>{dl}<dt>evidence</dt>'
                     f"<dd>{props}</dd></dl></div>")
    return f'<div class="cards">{"".join(cards)}</div>' if cards else ""


def _findings(run: ProveRun) -> str:
    from spmcheck.spec.lifecycle.expected import FINDING_REASON
    from spmcheck.spec.lifecycle.properties import LPROPERTIES
    from spmcheck.spec.lifecycle.variants import LVARIANTS

    cards = []
    from spmcheck.spec.properties import CORE_FINDINGS
    from spmcheck.spec.variants import VARIANTS

    for p in run.pairs:
        if not p.finding or p.model == "datapath":
            continue
        r = p.result
        prop = (CORE_FINDINGS if p.model == "core" else LPROPERTIES).get(r.property)
        var = (VARIANTS if p.model == "core" else LVARIANTS).get(r.variant)
        window = (f"{len(r.counterexample)} steps; fails at: {cexr.action_text(r.counterexample[-1])} "
                  f"({r.counterexample[-1].thread})") if r.counterexample else "no counterexample"
        status = ("residual risk, shown as expected (violated)" if r.matches and r.verdict == "violated"
                  else f"{r.verdict}, expected {r.expected}")
        link = f' <a href="#cex-{p.model}-{r.variant}-{r.property}">swim lane</a>' if r.counterexample else ""
        cards.append(
            f'<div class="card finding"><h3>{escape(r.property)}</h3><dl>'
            f"<dt>effect</dt><dd>{escape(FINDING_REASON.get(r.property, r.source))}</dd>"
            f"<dt>window</dt><dd>{escape(window)}{link}</dd>"
            f"<dt>code site</dt><dd>{escape(prop.source if prop else r.source)}</dd>"
            f"<dt>revision</dt><dd>{escape(r.variant)}: {escape(var.summary if var else '')}</dd>"
            f"<dt>status</dt><dd>{escape(status)}</dd></dl></div>")
    return f'<div class="cards">{"".join(cards)}</div>' if cards else ""


def _counterexamples(run: ProveRun) -> str:
    from .legend import legend

    parts = []
    for p in run.pairs:
        r = p.result
        if not r.counterexample:
            continue
        v = cexr.view(r, p.model)
        ident = f"cex-{p.model}-{r.variant}-{r.property}"
        title = f"{p.model} {r.variant} violates {r.property} ({label(r.property)})"
        f = v.failing
        ba = "; ".join(f"{n}: {o} → {w}" for n, o, w in f.changes if not n.startswith(("pc.", "lk."))) \
            or cexr.failing_reason(v)
        leg = "".join(f"<li><code>{escape(n)}</code> {escape(m)}</li>" for n, m in legend(v.names(), v.model))
        start = ", ".join(f"{n}={val}" for n, val in v.start) or "the initial state"
        parts.append(
            f'<section class="cex" id="{escape(ident)}-section"><h3>{escape(title)}</h3>'
            f'<p>{escape(r.reason)}</p><p><b>Start state</b>'
            + (f" (after {v.setup} setup steps)" if v.setup else " (initial)") + f": {escape(start)}</p>"
            f"<p><b>Fails at step {f.index}</b> ({escape(f.thread)} {escape(cexr.action_text(f))}): {escape(ba)}. "
            "Hover a step for the state after it; blue bars are lock holdings.</p>"
            + svg_swimlane.render(svg_swimlane.from_cex(v, title), ident)
            + f'<details><summary>legend and text form</summary><ul class="legend">{leg}</ul><pre>'
            + escape("\n".join(cexr.text(v, f"{r.property} ({label(r.property)})"))) + "</pre></details></section>")
    return "".join(parts)


def _traces(data: ReportData) -> str:
    if not data.traces:
        return ""
    rows = "".join(f"<tr><td><code>{escape(t.result.file)}</code></td><td>{t.result.verdict.value}</td>"
                   f"<td>{escape(t.result.prop or '')}</td><td>{t.result.line or ''}</td><td>{escape(t.result.message or '')}</td>"
                   f"<td>{t.result.events}</td></tr>" for t in data.traces)
    out = ["<table><tr><th>file</th><th>verdict</th><th>property</th><th>line</th><th>why</th><th>events</th></tr>",
           rows, "</table>"]
    for i, t in enumerate(data.traces):
        if not t.events:
            continue
        r = t.result
        ev = [e.line for e in r.evidence if e.line]
        title = f"{r.file}: {r.verdict.value} {r.prop or ''} at line {r.line}"
        out.append(f'<section class="trace"><h3>{escape(title)}</h3><p>[{escape(r.code)}] {escape(r.message)}. '
                   "Red: the failing line; yellow: the lines that last wrote what it read.</p>"
                   + svg_swimlane.render(svg_swimlane.from_trace(t.events, r.line, ev, title, r.message), f"trace-{i}")
                   + "</section>")
    return "".join(out)


def render(data: ReportData) -> str:
    run = data.run
    from .markdown import final_sentence

    summary = prove_summary(run)
    ok = run.exit_code == 0 and all(t.result.exit_code == 0 or t.result.verdict.value != "violated" or True
                                    for t in data.traces)
    core = run.model("core")
    lc_main = [p for p in run.model("lifecycle") if not p.finding]
    body = [f"<h1>spmcheck design review: SPM queue serialization</h1>",
            f'<p class="summary{"" if ok else " bad"}">{escape(summary)}</p>',
            f"<p>{escape(final_sentence(run)).replace('**', '')}</p>", "<h2 id=\"matrix\">Verdict matrix</h2>"]
    if core:
        cols = [c for c in CORE_COLS if any(p.result.property == c for p in core)]
        body += [f"<h3>Core model ({escape(run.core_size)})</h3>", matrix(core, cols, "core")]
    if lc_main:
        body += [f"<h3>SPM context lifecycle ({escape(run.lifecycle_size)})</h3>",
                 matrix(lc_main, lifecycle_cols(lc_main), "lifecycle")]
    dp = run.model("datapath")
    if dp:
        from spmcheck.spec.datapath.verdicts import SCOPES

        scopes = list(dict.fromkeys(p.row.scope for p in dp if p.row is not None))
        body += ["<h3>Data path: audit hazards × revision (exhaustive breadth-first search at each row's scope)</h3>",
                 datapath_matrix(dp),
                 '<p class="legend">violated (n steps): the shortest counterexample; proved (n states): every '
                 "reachable state at the row's scope was explored, a proof at that scope only. Scopes: "
                 + "; ".join(f"<b>{escape(s)}</b> {escape(SCOPES[s].describe())}" for s in scopes if s in SCOPES)
                 + ".</p>"]
    body.append('<p class="legend">proved, any size: parametric inductive proof for any number of agents and '
                "threads; proved (this size): inductive invariant at the stated size; violated on a known-bad "
                "variant is the expected outcome (the bug is caught; follow <i>cex</i>); a red outline marks a "
                "verdict not as expected. Hover a cell for method, depth, any-size status and seconds.</p>")
    body.append(_meanings(run))
    bad = problems(run)
    if bad:
        body.append("<h3>Not as expected</h3><ul>" + "".join(f"<li>{escape(b.strip())}</li>" for b in bad[1:]) + "</ul>")
    q = _questions(run)
    if q:
        body += ["<h2>Reviewers' questions</h2>", q]
    f = _findings(run)
    if f:
        body += ["<h2>Findings: residual risks of the final design</h2>", f]
    c = _counterexamples(run)
    if c:
        body += ["<h2>Counterexamples</h2>", c]
    t = _traces(data)
    if t:
        body += ["<h2>Checked traces</h2>", t]
    if data.graphs:
        body += ["<h2>Lock-order graphs</h2>",
                 f'<p class="legend">Layout: {escape(lockgraph_svg.layout_engine())}. An edge A → B: some step acquires '
                 "B while holding A; red edges lie on a cycle (a potential deadlock).</p>"]
        for i, g in enumerate(data.graphs):
            body.append(f'<figure style="display:inline-block"><figcaption>{escape(g.title)}'
                        + (" — cycle: " + escape(" → ".join(g.cycles[0] + (g.cycles[0][0],))) if g.cycles else " — acyclic")
                        + "</figcaption>" + lockgraph_svg.render(g, f"lockgraph-{i}") + "</figure>")
    body += ["<h2>Provenance</h2><table>"
             + "".join(f"<tr><th>{escape(k)}</th><td><code>{escape(v)}</code></td></tr>" for k, v in data.provenance.items())
             + "</table>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>spmcheck design review</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
