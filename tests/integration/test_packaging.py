"""The wheel ships every module: pyproject lists the subpackages by hand (setuptools' package-dir
maps distbench -> bench/, distbench.collectors -> collectors/, distbench.reports -> reports/,
which its package discovery cannot follow), and a wheel once shipped without five workloads.

The wheel is built from a copy of the source (a stale build/ in the checkout would hide a missing
entry), unpacked, and every subpackage imported from it in a fresh interpreter that sees the
wheel and the installed dependencies only: no site hook, so not the editable install.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.unit.test_imports import REPO, source_modules

SOURCES = ("pyproject.toml", "README.md", "bench", "collectors", "reports")


def build_wheel(out: Path, pyproject: str | None = None) -> Path:
    """The wheel of a copy of the source (`pyproject`: that text in place of pyproject.toml's)."""
    copy = out / "src"
    copy.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, copy / name)
    if pyproject is not None:
        (copy / "pyproject.toml").write_text(pyproject)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run(
        [*pip, "-w", str(out / "dist"), str(copy)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (out / "dist").glob("distbench-*.whl")
    return wheel


def wheel_modules(wheel: Path) -> set[str]:
    names = zipfile.ZipFile(wheel).namelist()
    found = set()
    for name in names:
        if name.startswith("distbench/") and name.endswith(".py"):
            parts = name[: -len(".py")].split("/")
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.mark.slow
def test_the_wheel_holds_every_module(wheel: Path) -> None:
    missing = sorted(set(source_modules(REPO)) - wheel_modules(wheel))
    assert not missing, f"modules the wheel lacks (pyproject's packages list): {missing}"


@pytest.mark.slow
def test_every_subpackage_imports_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    packages = sorted(
        name for name, path in source_modules(REPO).items() if path.name == "__init__.py"
    )
    dependencies = sysconfig.get_paths()["purelib"]
    code = (
        "import importlib, sys\n"
        f"sys.path[:0] = [{str(site)!r}, {dependencies!r}]\n"
        f"for name in {packages!r}:\n"
        "    module = importlib.import_module(name)\n"
        f"    assert module.__file__.startswith({str(site)!r}), (name, module.__file__)\n"
        "print(len(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    entry_points = next(site.glob("distbench-*.dist-info")) / "entry_points.txt"
    assert "distbench = distbench.cli:main" in entry_points.read_text()


@pytest.mark.slow
def test_the_check_sees_a_package_left_out(tmp_path: Path) -> None:
    """Proven by breaking it: the list without distbench.options builds a wheel that lacks its
    modules, which the first test names."""
    text = (REPO / "pyproject.toml").read_text()
    assert '"distbench.options", ' in text
    wheel = build_wheel(tmp_path, text.replace('"distbench.options", ', ""))
    options = {name for name in source_modules(REPO) if name.startswith("distbench.options")}
    assert set(source_modules(REPO)) - wheel_modules(wheel) == options
