"""`distbench history` as the docs write it (issue #26): every documented form with its own
defaults (0.2.0 refused its own default `--cache ''`, and every other test passed --cache), its
output kept out of the working directory, and a night that ci/nightly.sh left partial skipped
and named."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path
from types import ModuleType

import pytest

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


def test_a_partial_night_is_skipped_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A night ci/nightly.sh left partial (nightly.state status=partial: Ctrl-C, a crash) and a
    run whose manifest says it did not complete are not nights: history skips them and names
    them with how to finish them; a night finished by --resume (status=complete) counts."""
    import json

    import pandas as pd

    from distbench.cli.app import run_cli
    from distbench.collectors.rundir import NIGHT_STATE

    runs = tmp_path / "results"
    bench_history().build_history(runs, 8, 4, None, seed=1)
    (runs / "nightly-0003" / NIGHT_STATE).write_text("status=partial\nlaunches=2\nresumed=0\n")
    (runs / "nightly-0004" / NIGHT_STATE).write_text("status=complete\nlaunches=2\nresumed=1\n")
    manifest = runs / "nightly-0006" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "interrupted"}))
    out = tmp_path / "h"
    code = run_cli(
        ["history", "--glob", str(runs / "nightly-*"), "--out", str(out), "--cache", "off"]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert "skipped 2 runs that did not complete" in text
    assert f"{runs / 'nightly-0003'} (partial night: ci/nightly.sh --resume " in text
    assert f"{runs / 'nightly-0006'} (status interrupted)" in text
    kept = set(pd.read_csv(out / "history.csv", keep_default_na=False)["run"])
    assert kept == {f"nightly-{n:04d}" for n in (0, 1, 2, 4, 5, 7)}
