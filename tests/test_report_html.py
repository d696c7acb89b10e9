"""`spmcheck report`: the self-contained HTML (matrix, one swim lane per counterexample and per
rejected trace, lock graphs, no script, nothing fetched), the Markdown summary a newcomer can read,
and the JSON round trip it can be rendered from."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from spmcheck.checker.render import envelope as env
from spmcheck.checker.render import html_report, markdown
from spmcheck.checker.render.records import make_run
from spmcheck.checker.render.reportdata import ReportData, graphs_for, provenance, run_from_envelope, trace_view
from spmcheck.checker.render.summary import prove_counts, prove_summary
from tests.test_report_text import default_records

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def data() -> ReportData:
    from spmcheck.checker.check_cli import _check

    core, lc = default_records()
    run = make_run(core, lc, "2 agents, 2 updaters, 2 lookups", "2 agents, 2 contexts", {})
    traces = tuple(trace_view(_check(str(f))) for f in (FIX / "violated-bad.log", FIX / "lookup-ok.log"))
    # one static graph with a cycle (the lock inversion) and the traces' dynamic graph; the
    # report itself draws one per core variant (graphs_for)
    from spmcheck.checker.render.lockgraph_svg import static_core

    return ReportData(run, traces, (static_core("reversed-lookup-order"),) + graphs_for(make_run([], [], "", "", {}), traces),
                      provenance(run, "spmcheck report -o x", "built-in"))


def test_html_is_self_contained_with_matrix_and_a_lane_per_counterexample(data: ReportData) -> None:
    html = html_report.render(data)
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert '<table class="matrix" data-model="core">' in html and '<table class="matrix" data-model="lifecycle">' in html
    ncex = sum(1 for p in data.run.pairs if p.result.counterexample)
    rejected = sum(1 for t in data.traces if t.events)
    assert rejected == 1
    assert len(re.findall(r'<svg[^>]*class="swimlane"', html)) == ncex + rejected
    assert "<script" not in html.lower()
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html)  # nothing fetched
    assert html.count('class="step fail"') == ncex + rejected  # the failing step of each lane
    assert 'class="card question"' in html and html.count('class="card finding"') == 5
    assert "definition hash" in html and "Lock-order graphs" in html
    # reversed-lookup-order's static lock graph has a cycle, drawn red
    assert data.graphs[0].cycles and ('class="edge cycle"' in html or 'c0392b' in html)
    assert "cycle: " in html and "checked traces: dynamic lock order" in html


def test_markdown_tells_a_newcomer_what_breaks_stale_lookup(data: ReportData) -> None:
    md = markdown.render(data)
    assert md.splitlines()[2] == f"**{prove_summary(data.run)}**"
    # since the per-queue drain (cpp/DIVERGENCES.md L3) final violates P4m as expected: the sentence
    # says so instead of claiming every property proved at any size
    c = prove_counts(data.run)
    assert "P4m" in c.final_violated and c.final_any < c.final_total
    assert "**The final design is proved for any number of GPUs" not in md
    assert (f"The final design: {c.final_any} of {c.final_total} properties proved for any number of GPUs" in md
            and "It violates P4m, as the model of the code predicts" in md)
    block = md[md.index("<details><summary>core <b>stale-lookup</b> violates creation-consistent"):]
    block = block[: block.index("</details>")]
    assert "| step | u0 | l0 | state change |" in block
    assert "**Fails at step 6** (l0 `serializer_insert agent=0 created=0`): `ser.ex.0` 0 → 1." in block
    assert "It breaks P2:" in block and "Legend:" in block
    assert "| question | pr-758072b | final |" in md


def test_prove_json_round_trips_into_the_same_records(data: ReportData) -> None:
    doc = json.loads(env.dumps(env.envelope("prove", data.run.exit_code, prove_summary(data.run),
                                            env.prove_results(data.run), {}, prove_counts(data.run).to_json())))
    back = run_from_envelope(doc)
    assert [(p.model, p.finding, p.any_size) for p in back.pairs] == [(p.model, p.finding, p.any_size) for p in data.run.pairs]
    strip = lambda r: r.__class__(**{**r.__dict__, "seconds": 0.0, "witnesses": tuple(  # noqa: E731
        w.__class__(**{**w.__dict__, "seconds": 0.0}) for w in r.witnesses)})
    assert [p.result for p in back.pairs] == [strip(p.result) for p in data.run.pairs]
    with pytest.raises(ValueError):
        run_from_envelope(dict(doc, command="check"))


def test_report_cli_from_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: ReportData) -> None:
    from spmcheck.checker.cli import main as cli_main

    import dataclasses

    small = dataclasses.replace(data.run, pairs=tuple(p for p in data.run.pairs if p.result.variant == "stale-lookup"))
    pj = tmp_path / "prove.json"
    pj.write_text(env.dumps(env.envelope("prove", 0, prove_summary(small), env.prove_results(small),
                                         {"core": {"agents": 2, "updaters": 2, "lookups": 2}},
                                         prove_counts(small).to_json())))
    out = tmp_path / "rep"
    rj = tmp_path / "r.json"
    code = cli_main(["report", "--from-json", str(pj), "--check", str(FIX / "violated-bad.log"), "-o", str(out),
                     "--json", str(rj)])
    assert code == 1  # the checked trace is violated
    assert (out / "report.html").is_file() and (out / "summary.md").is_file() and (out / "prove.json").is_file()
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(f"spmcheck: wrote {out / 'report.html'} and {out / 'summary.md'}")
    import jsonschema

    schema = json.loads(env.SCHEMA_PATH.read_text())
    for doc in (json.loads(rj.read_text()), json.loads((out / "prove.json").read_text())):
        jsonschema.Draft202012Validator(schema).validate(doc)
    assert cli_main(["report", "--from-json", str(tmp_path / "nope.json"), "-o", str(out)]) == 2


def test_report_has_the_data_path_matrix_and_a_lane_per_its_counterexamples() -> None:
    from tests.test_report_text import datapath_records

    dp = datapath_records()
    run = make_run([], [], "", "", {}, datapath=dp)
    html = html_report.render(ReportData(run, (), (), {}))
    assert 'data-model="datapath"' in html
    ncex = sum(d.verdict == "violated" for d in dp)
    assert len(re.findall(r'<svg[^>]*class="swimlane"', html)) == ncex
    assert html.count('id="cex-datapath-') >= ncex
    md = markdown.render(ReportData(run, (), (), {}))
    assert "| row | scope | ee045e38 |" in md and md.count("<details><summary>datapath ") == ncex
    back = run_from_envelope(json.loads(env.dumps(env.envelope("prove", run.exit_code, prove_summary(run),
                                                               env.prove_results(run), {}, {}))))
    import dataclasses

    def same(pairs: tuple) -> list:  # seconds live in `timings`, not in results
        return [dataclasses.replace(p, result=dataclasses.replace(p.result, seconds=0.0)) for p in pairs]

    assert same(back.pairs) == same(run.pairs)  # the data path's rows survive the JSON round trip
