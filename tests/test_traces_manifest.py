"""Every trace under traces/ has an expected verdict in traces/manifest.json, and the checker agrees."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

TRACES = Path(__file__).resolve().parent.parent / "traces"
MANIFEST = json.loads((TRACES / "manifest.json").read_text(encoding="utf-8"))["files"]

replay = pytest.importorskip("spmcheck.checker.replay", reason="the trace checker (checker/replay.py) is missing")


def test_manifest_covers_every_trace() -> None:
    on_disk = {p.name for p in TRACES.glob("*.log")}
    assert on_disk == set(MANIFEST), (on_disk ^ set(MANIFEST))


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_checker_verdict_matches_manifest(name: str) -> None:
    want = MANIFEST[name]
    r = replay.check_path(str(TRACES / name))
    assert r.verdict.value == want["expected"], (r.code, r.message)
    if want["expected"] == "violated":
        assert r.prop == want["property"], (r.prop, r.message)
    assert want["provenance"]["command"]
