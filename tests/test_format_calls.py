"""traces/FORMAT.md's per-call event order (the ```calls block) is what the code writes: every
call of C++ runs (cpp/) of each core variant, v1 and v2, matches its variant's block."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from spmcheck.checker import cpp_build

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("g++") is None or shutil.which("make") is None,
                                reason="g++/make not installed (.ci/run installs them)")
VARIANTS = ("final", "caller-flag", "stale-lookup", "apply-after-unlock", "pre-fix", "global-flag")


def _lock(verb: str, lock: str, mode: str) -> str:
    name = r"serializer\.[^;:]+" if lock == "serializer.<agent>" else re.escape(lock)
    return f"lock_{verb}:{name}:{mode};"


def blocks() -> dict[tuple[str, str], re.Pattern[str]]:
    """(call, variant) -> a regex over a call's tokens `kind;` / `lock_acquire:lock:mode;`."""
    text = (ROOT / "traces" / "FORMAT.md").read_text()
    body = text.split("```calls\n", 1)[1].split("```", 1)[0]
    out: dict[tuple[str, str], re.Pattern[str]] = {}
    for chunk in body.strip().split("\n\n"):
        head, *lines = chunk.splitlines()
        call, variants = head.split(":", 1)
        rx, stack = "", []
        for ln in lines:
            ln = ln.split("#", 1)[0].strip()
            if ln.startswith("{"):
                stack.append(ln[1])
                rx += "(?:"
            elif ln == "}":
                rx += ")" + stack.pop()
            elif ln.startswith(("acquire ", "release ")):
                verb, lock, mode = ln.split()
                rx += _lock(verb, lock, mode)
            else:
                rx += "(?:" + "|".join(re.escape(k.strip()) + ";" for k in ln.split("|")) + ")"
        assert not stack, head
        for v in variants.split():
            out[(call.strip(), v)] = re.compile(rx)
    return out


def calls(path: Path) -> list[tuple[str, str]]:
    """(call, token string) of every complete call in a core trace, per thread."""
    cur: dict[str, list[str]] = defaultdict(list)
    out = []
    for ln in path.read_text().splitlines()[1:]:
        w = ln.split()
        if len(w) < 3:
            continue
        t, k = w[1], w[2]
        a = dict(x.split("=", 1) for x in w[3:])
        cur[t].append(f"{k}:{a['lock']}:{a['mode']};" if k.startswith("lock_") else f"{k};")
        if k in ("update_end", "lookup_end"):
            out.append(("update_serialization()" if k == "update_end" else "serializer()", "".join(cur.pop(t))))
    return out


@pytest.fixture(scope="module")
def exe() -> Path:
    os.environ.setdefault("SPMCHECK_CPP_SRC", str(ROOT / "cpp"))
    return cpp_build.binary()


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_call_follows_format_md(exe: Path, tmp_path: Path, variant: str) -> None:
    pats = blocks()
    seen = set()
    for fmt in ("1", "2"):
        out = tmp_path / f"{variant}-{fmt}.log"
        subprocess.run([str(exe), "--model", "core", "--variant", variant, "--agents", "3", "--threads", "3",
                        "--ops", "40", "--seed", "2", "--format", fmt, "-o", str(out)], check=True,
                       capture_output=True, timeout=120)
        for call, toks in calls(out):
            pat = pats[(call, variant)]
            assert pat.fullmatch(toks), (variant, fmt, call, toks.replace(";", "\n"))
            seen.add(call)
    assert seen == {"serializer()", "update_serialization()"}


def test_the_block_is_not_vacuous() -> None:
    pats = blocks()
    assert {v for _, v in pats} == set(VARIANTS) and len(pats) == 2 * len(VARIANTS)
    final = pats[("serializer()", "final")]
    ok = ("lookup_begin;lock_acquire:refcount:shared;refcount_read;lock_acquire:serializer_map:shared;"
          "serializer_lookup;lock_release:serializer_map:shared;lock_release:refcount:shared;lookup_end;")
    assert final.fullmatch(ok)
    # the pre-fix order (refcount released before the map lookup) is not final's
    assert not final.fullmatch(ok.replace("lock_release:refcount:shared;lookup_end;", "lookup_end;").replace(
        "refcount_read;", "refcount_read;lock_release:refcount:shared;"))
    assert pats[("serializer()", "pre-fix")].fullmatch(ok.replace("lock_release:refcount:shared;lookup_end;",
                                                                  "lookup_end;").replace(
        "refcount_read;", "refcount_read;lock_release:refcount:shared;"))
