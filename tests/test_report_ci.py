"""Formats for tools: the JSON envelope of every command validates against the shipped schema;
SARIF validates against the bundled SARIF 2.1.0 schema; the JUnit XML parses and its counts
equal the prove table; GitHub annotations are well-formed workflow commands."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from spmcheck.checker.cli import main as cli_main
from spmcheck.checker.render.envelope import SCHEMA_PATH, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures"
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json").read_text())
ENVELOPE = json.loads(SCHEMA_PATH.read_text())


def _valid(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(ENVELOPE, format_checker=jsonschema.FormatChecker()).validate(doc)


def _sarif_valid(doc: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)


@pytest.fixture(scope="module")
def prove_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small prove run over both models: a core violation and a lifecycle violation."""
    d = tmp_path_factory.mktemp("prove")
    out = {k: d / f"prove.{k}" for k in ("json", "sarif", "xml", "tjson")}
    code = cli_main(["prove", "--variant", "stale-lookup", "--variant", "positive-tags", "--property", "P2",
                     "--property", "P6", "--json", str(out["json"]), "--sarif", str(out["sarif"]),
                     "--junit", str(out["xml"])])
    assert code == 0
    return out


def test_schema_itself_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(ENVELOPE)
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)


def test_prove_json_sarif_junit(prove_out: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(prove_out["json"].read_text())
    _valid(doc)
    assert [(r["model"], r["variant"], r["label"], r["verdict"]) for r in doc["results"]] == \
        [("core", "stale-lookup", "P2", "violated"), ("lifecycle", "positive-tags", "P6", "violated")]
    sarif = json.loads(prove_out["sarif"].read_text())
    _sarif_valid(sarif)
    (run,) = sarif["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["core/creation-consistent", "lifecycle/tags-disjoint"]
    first = run["results"][0]
    assert first["level"] == "note" and first["kind"] == "fail"  # a known bug caught, as expected
    uri = first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "spec/programs.py"  # the claim is written in the definition
    line = first["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert '"creation-consistent"' in (ROOT / uri).read_text().splitlines()[line - 1]
    flows = first["codeFlows"][0]["threadFlows"]
    steps = sum(len(t["locations"]) for t in flows)
    assert steps == len(doc["results"][0]["counterexample"])
    xml = ET.fromstring(prove_out["xml"].read_text())
    cases = xml.findall(".//testcase")
    assert len(cases) == len(doc["results"]) == int(xml.get("tests", "0"))
    assert int(xml.get("failures", "-1")) == sum(not r["matches"] and r["verdict"] != "unknown" for r in doc["results"])
    assert int(xml.get("errors", "-1")) == sum(r["verdict"] == "unknown" for r in doc["results"])
    capsys.readouterr()


def test_junit_counts_follow_mismatches() -> None:
    from spmcheck.checker.render.junit import prove_junit
    from spmcheck.checker.render.records import make_run
    from tests.test_report_text import default_records

    core, lc = default_records(flip=("final", "creation-consistent"))
    xml = ET.fromstring(prove_junit(make_run(core, lc, "", "", {})))
    assert int(xml.get("tests", "0")) == len(core) + len(lc)
    assert int(xml.get("failures", "0")) == 1
    (bad,) = [c for c in xml.iter("testcase") if c.find("failure") is not None]
    assert (bad.get("classname"), bad.get("name")) == ("spmcheck.prove.core.final", "creation-consistent")


def test_check_json_sarif_junit_github(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(FIX / "lookup-ok.log"), str(FIX / "violated-bad.log"), str(FIX / "utf8-bad.log"),
             str(FIX / "gap-bad.log"), str(tmp_path / "missing.log"), str(ROOT / "traces" / "lc-final-a2-c2-t2.log")]
    js, sa, ju = tmp_path / "c.json", tmp_path / "c.sarif", tmp_path / "c.xml"
    code = cli_main(["check", *files, "--json", str(js), "--sarif", str(sa), "--junit", str(ju), "--format", "github"])
    assert code == 1
    out = capsys.readouterr().out.splitlines()
    doc = json.loads(js.read_text())
    _valid(doc)
    assert [r["verdict"] for r in doc["results"]] == ["accepted", "violated", "malformed", "inconclusive",
                                                      "unreadable", "accepted"]
    assert doc["counts"]["files"] == 6 and doc["exit_code"] == 1
    sarif = json.loads(sa.read_text())
    _sarif_valid(sarif)
    res = sarif["runs"][0]["results"]
    viol = next(r for r in res if r["ruleId"] == "creation-consistent")
    assert viol["locations"][0]["physicalLocation"]["region"]["startLine"] == doc["results"][1]["line"]
    assert any(r["level"] == "note" and r["ruleId"] == "drain-covers-hooked-dispatches" for r in res)
    xml = ET.fromstring(ju.read_text())
    assert (xml.get("tests"), xml.get("failures"), xml.get("errors")) == ("6", "1", "3")
    ann = [ln for ln in out if ln.startswith("::")]
    assert f"::error file={FIX / 'violated-bad.log'},line={doc['results'][1]['line']}" in ann[0]
    assert any(a.startswith("::warning ") and "gap-bad.log" in a for a in ann)
    assert any(a.startswith("::notice ") and "drain-covers-hooked-dispatches" in a for a in ann)
    assert out[-1].startswith("::") or out[-1].startswith("spmcheck: ")


def test_github_annotation_escaping() -> None:
    from spmcheck.checker.render.github import annotation

    assert annotation("error", "a%b\nc", "x,y:z.log", 3, 2, "t") == "::error file=x%2Cy%3Az.log,line=3,col=2,title=t::a%25b%0Ac"
    assert annotation("notice", "m") == "::notice::m"


def test_every_other_command_json_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = {}
    p = tmp_path / "p.json"
    assert cli_main(["prove", "--parametric", "--model", "core", "--variant", "stale-lookup", "--json", str(p),
                     "--timings"]) == 0
    docs["prove-parametric"] = json.loads(p.read_text())
    assert any(c["cti"] for r in docs["prove-parametric"]["results"] for c in r["checks"])
    assert "timings" in docs["prove-parametric"]
    c = tmp_path / "c.json"
    assert cli_main(["cex", "--variant", "positive-tags", "--property", "P6", "-o", str(tmp_path / "x.log"),
                     "--json", str(c)]) == 0
    docs["cex"] = json.loads(c.read_text())
    u = tmp_path / "u.json"
    assert cli_main(["cex", "--variant", "final", "--property", "P6", "-o", str(tmp_path / "y.log"),
                     "--timeout", "0.001", "--json", str(u)]) == 3
    docs["cex-unknown"] = json.loads(u.read_text())
    ls = tmp_path / "l.json"
    assert cli_main(["list", "--json", str(ls)]) == 0
    docs["list"] = json.loads(ls.read_text())
    rj = tmp_path / "r.json"
    assert cli_main(["record", "--variant", "final", "--ops", "3", "-o", str(tmp_path / "r.log"), "--json", str(rj)]) == 0
    docs["record"] = json.loads(rj.read_text())
    for name, doc in docs.items():
        _valid(doc)
        assert doc["command"] == name.split("-unknown")[0], name
    bad = dict(docs["list"], schema_version=SCHEMA_VERSION + 1)  # a version this schema does not describe
    with pytest.raises(jsonschema.ValidationError):
        _valid(bad)
    capsys.readouterr()


def test_datapath_json_sarif_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The data path through the same formats: envelope (schema 2, a `datapath` object per
    result), SARIF located at the claim's definition, JUnit counts equal the table."""
    out = {k: tmp_path / f"d.{k}" for k in ("json", "sarif", "xml")}
    assert cli_main(["prove", "--model", "datapath", "--variant", "2a7bb457", "--variant", "ee045e38",
                     "--property", "H1", "--property", "H2b", "--property", "H4", "--json", str(out["json"]),
                     "--sarif", str(out["sarif"]), "--junit", str(out["xml"])]) == 0
    text = capsys.readouterr().out.splitlines()
    doc = json.loads(out["json"].read_text())
    _valid(doc)
    assert doc["summary"] == text[-1]
    got = {(r["variant"], r["property"]): r for r in doc["results"]}
    assert {r["model"] for r in doc["results"]} == {"datapath"} and len(got) == 6
    assert got[("2a7bb457", "H1")]["datapath"]["claim"] == "batched-not-serialized"
    h4 = got[("2a7bb457", "H4")]
    assert h4["datapath"]["kind"] == "progress" and h4["datapath"]["waits"] and h4["counterexample"]
    assert got[("2a7bb457", "H2b")]["verdict"] == "proved" and got[("2a7bb457", "H2b")]["datapath"]["states"] > 0
    sarif = json.loads(out["sarif"].read_text())
    _sarif_valid(sarif)
    (run,) = sarif["runs"]
    h1 = next(r for r in run["results"] if r["ruleId"] == "datapath/H1")
    loc = h1["locations"][0]["physicalLocation"]
    src = (ROOT / loc["artifactLocation"]["uri"]).read_text().splitlines()
    assert "b.invariant(H1," in src[loc["region"]["startLine"] - 1]
    assert h1["codeFlows"] and h1["level"] == "note"
    xml = ET.fromstring(out["xml"].read_text())
    (suite,) = xml
    assert suite.get("name") == "spmcheck prove datapath"
    assert (int(suite.get("tests", "0")), int(suite.get("failures", "0"))) == (6, 0)
    cells = sum(len(ln.split()) - 2 for ln in text[2:5])  # the table's cells (row, scope, one per revision)
    assert cells // 2 == 6  # "violated (5)" and "proved [n]" are two words each
    cj = tmp_path / "cex.json"
    assert cli_main(["cex", "--model", "datapath", "--variant", "2a7bb457", "--property", "H1", "-o",
                     str(tmp_path / "h1.log"), "--json", str(cj)]) == 0
    cdoc = json.loads(cj.read_text())
    _valid(cdoc)
    assert cdoc["results"][0]["model"] == "datapath" and cdoc["counts"]["events"] == \
        len((tmp_path / "h1.log").read_text().splitlines()) - 1


def test_datapath_mismatch_in_junit_sarif_github() -> None:
    from spmcheck.checker.render.github import prove_annotations
    from spmcheck.checker.render.junit import prove_junit
    from spmcheck.checker.render.records import make_run
    from spmcheck.checker.render.sarif import prove_sarif
    from tests.test_report_text import datapath_records

    run = make_run([], [], "", "", {}, datapath=datapath_records(flip=("H6", "2a7bb457")))
    assert run.exit_code == 1
    xml = ET.fromstring(prove_junit(run))
    assert int(xml.get("tests", "0")) == len(run.pairs) and int(xml.get("failures", "0")) == 1
    (bad,) = [c for c in xml.iter("testcase") if c.find("failure") is not None]
    assert (bad.get("classname"), bad.get("name")) == ("spmcheck.prove.datapath.2a7bb457", "H6")
    sarif = prove_sarif(run)
    _sarif_valid(sarif)
    errs = [r for r in sarif["runs"][0]["results"] if r["level"] == "error"]
    assert [r["ruleId"] for r in errs] == ["datapath/H6"]
    (ann,) = [a for a in prove_annotations(run) if a.startswith("::error")]
    assert ann.startswith("::error file=spec/datapath/protocol.py,line=") and "H6" in ann
