"""Suite-wide test scheduling for pytest-xdist (pyproject: `-n auto --dist loadgroup`).

A module-scoped fixture is computed once per worker that runs a test using it, and several of
them are whole prover runs (tens of seconds each). Every test that uses a module- (or class-,
package-) scoped fixture of its own module is put in one xdist group per module, so that fixture
is computed once, on one worker; every other test is balanced freely. Session-scoped fixtures are
cheap here (a cached C++ build) and group nothing. With `-n 0` (no workers) the
marks do nothing.

pytest-xdist 3.8 puts a test in its group by appending `@group` to `item._nodeid`, which pytest 9
no longer reads (the node id lives in `item._id`), so under pytest 9 the grouping would silently
not happen; _group() appends it where pytest 9 reads it.

Bytecode: where the environment sets PYTHONDONTWRITEBYTECODE (this machine kind does), every
process the suite starts -- each xdist worker and each `python -m spmcheck ...` a CLI test runs,
a few hundred -- would compile the package and the assertion-rewritten test modules from source
again (0.1-0.15 CPU s per CLI run, measured 2026-12-04). The suite lets Python cache it instead:
the variable is dropped here, before the workers start, so they and every subprocess inherit that.

Garbage collection: the prover and replay tests allocate millions of small objects (Z3 terms,
states, compiled readings) that live until their module's fixtures go; with Python's default
threshold (700) the cyclic collector rescans them thousands of times. The test processes collect
after 50 000 new objects instead (measured 2026-12-04 on five prover/replay files, `-n 0`: 51.7 ->
49.2 CPU s). Nothing is leaked by it: the collector still runs, less often.

Worker exit: an xdist worker that ran the prover tests holds millions of Z3 terms and compiled
readings in per-process caches; freeing them one by one at interpreter shutdown took 3-6 s after
the last test (measured 2026-12-04: 6.3 s between the last test and the controller's exit), time
in which the suite has already reported everything. A worker (never the controller, whose exit
status is the suite's) therefore leaves with os._exit(0) as its last exit handler: Python has
joined its threads and run every other handler by then, and the OS reclaims the memory at once.
"""
from __future__ import annotations

import gc
import os
import sys

import pytest

gc.set_threshold(50_000, 20, 20)

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def _leave() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if os.environ.get("PYTEST_XDIST_WORKER"):
    import atexit

    atexit.register(_leave)  # registered first, so it runs last (atexit runs handlers in reverse)

_SHARED_SCOPES = ("module", "class", "package")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        for name in item.fixturenames:
            defs = info.name2fixturedefs.get(name)
            if defs and defs[-1].scope in _SHARED_SCOPES:
                group = item.module.__name__ if item.module else name
                item.add_marker(pytest.mark.xdist_group(group))
                if getattr(config.option, "loadgroup", False):
                    _group(item, group)
                break


def _group(item: pytest.Item, group: str) -> None:
    try:
        from _pytest.nodeid import coerce_node_id  # pytest >= 9: the id xdist's suffix misses
    except ImportError:
        return  # pytest < 9: xdist's own hook appends the suffix where pytest reads it
    item._id = coerce_node_id(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]
