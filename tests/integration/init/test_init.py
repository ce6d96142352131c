"""`distbench init` on real gloo groups. The half that launches or runs for seconds; the in-process
half, and the file's whole story: tests/unit/init/test_init.py."""

from __future__ import annotations

import os
import statistics
from pathlib import Path

import pandas as pd
import pytest

from distbench.collectors.rank_samples import find_rank_sample_files, read_rank_samples
from distbench.init.spec import PHASES
from tests.conftest import run_cli, run_in_process, usage_error_line
from tests.paths import ROOT


@pytest.fixture(scope="module")
def init_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("init") / "run"
    done = run_cli(
        "init", "--backend", "gloo", "--world-sizes", "2,3", "--init-methods", "env,tcp,file",
        "--trials", "3", "--new-groups", "2", "--out", str(out), "--quiet",
        "--rank-samples", "node",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def test_one_row_per_world_size_method_and_phase(init_run: Path) -> None:
    rows = pd.read_csv(init_run / "results.csv", keep_default_na=False)
    assert set(rows["primitive"]) == {"init"}
    assert len(rows) == 2 * 3 * len(PHASES)
    expected = {f"{m}:{p}" for m in ("env", "tcp", "file") for p in PHASES}
    for world_size in (2, 3):
        part = rows[rows["world_size"] == world_size]
        assert set(part["pattern"]) == expected
        assert list(part["phase"]) == [p.split(":")[1] for p in part["pattern"]]
    assert (rows["trials"] == 3).all() and (rows["samples"] == 3).all()
    assert (rows["time_us_min"] > 0).all()


def test_tcp_alone_gets_a_store_of_its_own(tmp_path: Path) -> None:
    """Under torchrun, tcp:// first (no env:// before it) must not wait on torchrun's store."""
    out = tmp_path / "run"
    done = run_cli(
        "init", "--backend", "gloo", "--world-sizes", "2", "--init-methods", "tcp",
        "--trials", "1", "--out", str(out), "--quiet", "--timeout", "60",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert sorted(rows["pattern"]) == sorted(f"tcp:{p}" for p in PHASES if p != "new_groups")


def test_row_statistics_equal_those_recomputed_from_samples(init_run: Path) -> None:
    """samples.csv holds the maximum (rank -1) only; every rank's own times are in the node's
    Parquet file (--rank-samples node, over the last method's untimed group), and their maximum
    is samples.csv's."""
    rows = pd.read_csv(init_run / "results.csv", keep_default_na=False)
    samples = pd.read_csv(init_run / "samples.csv", keep_default_na=False)
    assert set(samples["rank"]) == {-1}
    names = [p.name for p in find_rank_sample_files(init_run)]
    assert names == ["ws2-node0.parquet", "ws3-node0.parquet"]
    own = read_rank_samples(init_run).astype({"measurement": str})
    for row in rows.itertuples():
        mine = samples[samples["measurement"] == row.measurement]
        worst = mine.sort_values("trial")["time_us"].tolist()
        ranks = own[own["measurement"] == row.measurement]
        per_rank = ranks.pivot(index="trial", columns="rank", values="time_us")
        assert sorted(per_rank.columns) == list(range(int(str(row.world_size))))
        assert per_rank.max(axis=1).tolist() == pytest.approx(worst)  # the slowest rank
        assert row.time_us_p50 == pytest.approx(statistics.median(worst))
        assert row.time_us_mean == pytest.approx(statistics.fmean(worst))
        assert row.time_us_min == pytest.approx(min(worst))
        assert row.time_us_max == pytest.approx(max(worst))


def test_report_and_compare_accept_init_rows(init_run: Path, tmp_path: Path) -> None:
    report = run_in_process("report", str(init_run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.md").read_text()
    assert "## Process-group start-up" in page
    assert "## Collectives" not in page and "## Model fit" not in page  # init is no collective
    assert (tmp_path / "report" / "fig-init-startup.png").stat().st_size > 0
    compare = run_in_process("compare", str(init_run), str(init_run))
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert "distbench compare: pass (24 " in compare.stdout  # every row alike: itself


def test_an_init_run_is_not_resumed(
    init_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A resumed init would measure every method again beside the kept rows: refused, and an
    --out holding an init run says so instead of suggesting --resume."""
    import json
    import shutil

    unfinished = tmp_path / "unfinished"
    shutil.copytree(init_run, unfinished)
    manifest = json.loads((unfinished / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (unfinished / "manifest.json").write_text(json.dumps(manifest))
    line = usage_error_line(["init", "--resume", str(unfinished)], capsys)
    assert "init run cannot be resumed" in line and "new --out" in line
    line = usage_error_line(["init", "--backend", "gloo", "--out", str(unfinished)], capsys)
    assert "cannot be resumed" in line and "--resume" not in line
    line = usage_error_line(["init", "--resume", str(init_run)], capsys)  # completed: same reason
    assert "init run cannot be resumed" in line, line


def test_a_taken_port_is_reported_as_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process listens at the port of rank 0's first fresh group (tests/inject/port_taken,
    loaded only here): the run fails naming the store's own error. Before, the worker's teardown
    of a group that no longer existed raised 'Process group cannot be None' over it."""
    inject = ROOT / "tests" / "inject" / "port_taken"
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(inject), os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setenv("DISTBENCH_TEST_PORT_TAKEN", "1")
    out = tmp_path / "run"
    done = run_cli(
        "init", "--backend", "gloo", "--world-sizes", "2", "--init-methods", "tcp",
        "--trials", "1", "--out", str(out), "--timeout", "60",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Process group cannot be None" not in done.stderr
    log = (out / "logs" / "ws2-rank0.log").read_text()
    assert "Process group cannot be None" not in log
    assert "EADDRINUSE" in log or "address already in use" in log.lower(), log[-3000:]
