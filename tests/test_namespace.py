"""One install namespace (issue 13): the repository's spec/ and checker/ are installed as
`spmcheck.spec` and `spmcheck.checker`, so the wheel claims no top-level name but `spmcheck`.

These tests fail when a new subpackage or data file is left out of pyproject (a non-editable install
would then break while the checkout still works), when code imports the bare top-level names (two
copies of every module would load, one under each name), or when the running program loads them."""
from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
DIRS = {"spmcheck.spec": ROOT / "spec", "spmcheck.checker": ROOT / "checker", "spmcheck": ROOT / "spmcheck"}


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "spec", "checker", "spmcheck"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    return [ROOT / f for f in out]


def _package_of(path: Path) -> tuple[str, Path]:
    """The installed dotted name of the folder holding `path` and that folder."""
    for name, base in sorted(DIRS.items(), key=lambda kv: -len(str(kv[1]))):
        if base in path.parents:
            rel = path.parent.relative_to(base)
            return ".".join([name, *rel.parts]), path.parent
    raise AssertionError(f"{path} is outside the installed folders")


def test_every_package_folder_is_installed() -> None:
    folders = {p.parent for p in _tracked() if p.name == "__init__.py"}
    want = {_package_of(f / "__init__.py")[0] for f in folders}
    assert want == set(CONF["packages"])


def test_package_dir_maps_the_two_folders() -> None:
    assert CONF["package-dir"] == {"spmcheck.spec": "spec", "spmcheck.checker": "checker"}


def test_every_data_file_is_installed() -> None:
    data = CONF["package-data"]
    missing = []
    for f in _tracked():
        if f.suffix == ".py":
            continue
        pkg, folder = _package_of(f)
        # package-data globs are relative to the package that names them: walk up until one matches
        found = False
        while True:
            rel = f.relative_to(folder).as_posix()
            if any(fnmatch.fnmatch(rel, g) for g in data.get(pkg, ())):
                found = True
                break
            if "." not in pkg or folder in DIRS.values():
                break
            pkg, folder = pkg.rsplit(".", 1)[0], folder.parent
        if not found:
            missing.append(str(f.relative_to(ROOT)))
    assert missing == []


BARE = re.compile(r"(?m)^\s*(from|import) (spec|checker)(\.|\s|$)")


def test_no_code_imports_the_bare_names() -> None:
    files = [p for p in _tracked() if p.suffix == ".py"]
    files += sorted((ROOT / "tests").glob("*.py")) + sorted((ROOT / "bench").rglob("*.py"))
    bad = [f"{p.relative_to(ROOT)}:{p.read_text().count(chr(10), 0, m.start()) + 1}"
           for p in files for m in BARE.finditer(p.read_text())]
    assert bad == []


def test_the_cli_loads_no_top_level_spec_or_checker() -> None:
    code = ("import sys, spmcheck.checker.cli, spmcheck.checker.check_cli, spmcheck.spec.prove, "
            "spmcheck.spec.datapath.verdicts, spmcheck.spec.parametric.prove; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('spec', 'checker')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "tests", capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
