"""spmcheck: Z3 proofs and a trace checker for rocprofiler-sdk's SPM queue-serialization protocol.

Everything is installed under this one namespace: `spmcheck.spec` (the protocol definition and
the provers) and `spmcheck.checker` (the trace checker and the CLI). In the repository those two
packages stay in the top-level folders `spec/` and `checker/` (pyproject's package-dir maps them);
when the code runs from a checkout that has not been installed, this package's search path is
extended to the checkout's root so that `spmcheck.spec` and `spmcheck.checker` resolve to those
folders — the same files either way, never a second copy under another name."""
from __future__ import annotations

from pathlib import Path

_here = Path(__file__).resolve().parent
_root = _here.parent
# installed wheel: spmcheck/spec exists next to this file; checkout: the folders sit beside it
if not (_here / "spec").is_dir() and (_root / "spec" / "__init__.py").is_file() \
        and (_root / "checker" / "__init__.py").is_file():
    __path__.append(str(_root))  # type: ignore[name-defined]  # package __path__
