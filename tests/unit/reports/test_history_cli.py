"""`distbench history` as the docs write it (issue #26): every documented form with its own
defaults (0.2.0 refused its own default `--cache ''`, and every other test passed --cache), its
output kept out of the working directory, and a night that ci/nightly.sh left partial skipped
and named."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from types import ModuleType

from tests.paths import ROOT


def bench_history() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_history", ROOT / "ci" / "bench_history.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_history"] = module
    spec.loader.exec_module(module)
    return module


def documented_forms() -> list[list[str]]:
    """Every `distbench history` command of docs/history.md, docs/commands.md and its --help."""
    from distbench.cli.history import history

    texts = [
        (ROOT / "docs" / "history.md").read_text(),
        (ROOT / "docs" / "commands.md").read_text(),
        history.__doc__ or "",
    ]
    forms = []
    for text in texts:
        for line in text.splitlines():
            command = line.split("#")[0].strip()
            if command.startswith("distbench history "):
                forms.append(shlex.split(command)[2:])
    return forms
