"""Build the C++ implementation (cpp/) on demand and run it: `spmcheck record --impl cpp`.

Sources are found in $SPMCHECK_CPP_SRC, next to this package (a checkout or editable install),
or under ./cpp; the binaries go to a cache directory keyed by a hash of the sources
($XDG_CACHE_HOME/spmcheck or ~/.cache/spmcheck), so an edit rebuilds and concurrent builds of
one source tree share one locked directory.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path


class BuildError(RuntimeError):
    """The C++ build cannot run or failed; the message says what to do."""


def source_dir() -> Path:
    env = os.environ.get("SPMCHECK_CPP_SRC")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parent.parent / "cpp", Path.cwd() / "cpp"]
    for c in candidates:
        if (c / "Makefile").is_file() and (c.parent / "include" / "spmcheck" / "trace.hpp").is_file():
            return c
    raise BuildError("the C++ sources (cpp/ and include/spmcheck/trace.hpp) were not found; run from a "
                     "spmcheck checkout or set SPMCHECK_CPP_SRC to its cpp/ directory")


def include_dir() -> Path:
    """Directory to pass as -I for `#include "spmcheck/trace.hpp"`."""
    return source_dir().parent / "include"


def _digest(src: Path) -> str:
    h = hashlib.sha1()
    files = sorted([*src.rglob("*.cpp"), *src.rglob("*.hpp"), src / "Makefile",
                    src.parent / "include" / "spmcheck" / "trace.hpp"])
    for f in files:
        if "build" in f.relative_to(src.parent).parts:
            continue
        h.update(str(f.relative_to(src.parent)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def build_dir(src: Path) -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spmcheck"
    return root / f"cpp-{_digest(src)}"


def build_all() -> Path:
    """Build both binaries (make -j2, one call) and return the build directory."""
    binary(tsan=False, jobs=2, both=True)
    return build_dir(source_dir())


def binary(tsan: bool = False, jobs: int = 1, both: bool = False) -> Path:
    """Path of spmcheck-impl (or its ThreadSanitizer build), building it first if needed."""
    for tool in ("g++", "make"):
        if shutil.which(tool) is None:
            raise BuildError(f"--impl cpp needs {tool} on PATH (Debian: apt-get install -y g++ make)")
    src = source_dir()
    out = build_dir(src)
    name = "spmcheck-impl-tsan" if tsan else "spmcheck-impl"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per cache dir; the others wait and reuse
        targets = ["all"] if both else [str(out / name)]
        if both or not (out / name).is_file():
            r = subprocess.run(["make", "-s", f"-j{jobs}", "-C", str(src), f"BUILD={out}", *targets],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise BuildError(f"building {name} failed (make -C {src}):\n{r.stderr.strip()[-4000:]}")
    return out / name
