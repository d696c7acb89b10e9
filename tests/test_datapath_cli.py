"""The data path in `spmcheck list` and `spmcheck report --model datapath`."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from spmcheck.checker.cli import main
from spmcheck.spec.datapath.variants import DVARIANTS
from spmcheck.spec.datapath.verdicts import ROWS


def test_list_names_every_data_path_revision_and_row(tmp_path: Path) -> None:
    buf = io.StringIO()
    out = tmp_path / "list.json"
    with contextlib.redirect_stdout(buf):
        assert main(["list", "--json", str(out)]) == 0
    text = buf.getvalue()
    block = text[text.index("data path ("):]
    for v in DVARIANTS:
        assert f"\n  {v} " in block, v
    for r in ROWS:
        assert f"\n  {r.id} " in block and r.prop in block, r.id
    doc = json.loads(out.read_text())
    dp = next(m for m in doc["results"] if m["model"] == "datapath")
    assert [v["name"] for v in dp["variants"]] == list(DVARIANTS)
    assert [(p["name"], p["label"]) for p in dp["properties"]] == [(r.id, r.prop) for r in ROWS]
    assert [p["finding"] for p in dp["properties"]] == [r.finding for r in ROWS]


def test_report_for_the_data_path_alone(tmp_path: Path) -> None:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["report", "--model", "datapath", "--variant", "2a7bb457", "--property", "H1",
                     "--property", "H5", "-o", str(tmp_path), "--no-progress"])
    assert code == 0, buf.getvalue()
    md = (tmp_path / "summary.md").read_text()
    assert "| H1 | multi | violated (4) |" in md and "| H5 | destroy |" in md
    assert "Core model" not in md and "SPM context lifecycle" not in md and "Properties: ." not in md
    doc = json.loads((tmp_path / "prove.json").read_text())
    assert {r["model"] for r in doc["results"]} == {"datapath"}
    assert sorted(r["property"] for r in doc["results"]) == ["H1", "H5"]
    html = (tmp_path / "report.html").read_text()
    assert "<svg" in html  # the counterexamples' swim lanes
