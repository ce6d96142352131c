"""`distbench history` as the docs write it (issue #26). The half that launches or runs for seconds;
the in-process half, and the file's whole story: tests/unit/reports/test_history_cli.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.reports.test_history import bench_history
from tests.unit.reports.test_history_cli import documented_forms


def test_every_documented_form_runs_with_its_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a fresh directory holding results/nightly-*, each documented command runs as written
    (no --cache: the default cache file under $XDG_CACHE_HOME is made and used)."""
    import glob

    from distbench.cli.app import run_cli

    bench_history().build_history(tmp_path / "results", 8, 4, None, seed=1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    forms = documented_forms()
    assert len(forms) >= 4, forms  # two in history.md, two in commands.md (and --help's)
    for argv in forms:
        # the shell expands an unquoted glob; the quoted --glob pattern reaches distbench
        expanded = [m for a in argv for m in (sorted(glob.glob(a)) if "*" in a else [a])]
        if "--glob" in argv:
            expanded = argv
        code = run_cli(["history", *expanded])
        captured = capsys.readouterr()
        assert code == 0, (argv, captured.err)
        assert "history" in captured.out
    assert (tmp_path / "xdg" / "distbench" / "history.duckdb").is_file()


def test_a_cached_run_rewritten_as_not_completed_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cache spares parsing the manifests of runs it holds unchanged (their status was read
    when they were cached), never the check: a cached run whose manifest is rewritten as
    interrupted, or whose night is marked partial, is skipped on the next history. Trusting
    every cached run (the cache's own check broken from here) would keep the interrupted one."""
    import json

    from distbench.cli.app import run_cli
    from distbench.collectors.rundir import NIGHT_STATE
    from distbench.reports.history.cache import PointCache

    runs = tmp_path / "results"
    bench_history().build_history(runs, 6, 4, None, seed=1)
    argv = ["history", "--glob", str(runs / "nightly-*"), "--out", str(tmp_path / "h"),
            "--cache", str(tmp_path / "c.duckdb")]  # fmt: skip
    assert run_cli(argv) == 0
    capsys.readouterr()
    manifest = runs / "nightly-0002" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "interrupted"}))
    (runs / "nightly-0004" / NIGHT_STATE).write_text("status=partial\nlaunches=1\nresumed=0\n")
    assert run_cli(argv) == 0
    text = capsys.readouterr().out
    assert "skipped 2 runs that did not complete" in text
    assert f"{runs / 'nightly-0002'} (status interrupted)" in text
    monkeypatch.setattr(PointCache, "unchanged", lambda self, paths: frozenset(paths))
    assert run_cli(argv) == 0
    assert "skipped 1 run that did not complete" in capsys.readouterr().out


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
    assert f"{runs / 'nightly-0003'} (partial night, every launch so far completed: " in text
    assert f"if it is not running, ci/nightly.sh --resume {runs / 'nightly-0003'} finishes" in text
    assert f"{runs / 'nightly-0006'} (status interrupted)" in text
    kept = set(pd.read_csv(out / "history.csv", keep_default_na=False)["run"])
    assert kept == {f"nightly-{n:04d}" for n in (0, 1, 2, 4, 5, 7)}
