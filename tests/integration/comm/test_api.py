"""--api c10d|functional|compiled (#15 §2). The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/comm/test_api.py."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import pytest

from distbench.comm.api import FUNCTIONAL_PRIMITIVES
from distbench.comm.table import render_table
from tests.conftest import CliRun, run_cli, run_in_process

TINY = ("--backend", "gloo", "--sizes", "1K,64K", "--iters", "3", "--warmup", "1", "--trials", "2")
FUNCTIONAL_COMMANDS = "allreduce,broadcast,allgather,reducescatter,alltoall,alltoallv"


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


# --- real gloo launches -------------------------------------------------------------------------


def split_by_api(run: Path, api: str, out: Path) -> Path:
    """A copy of `run` keeping the rows of `api` and their samples only."""
    shutil.copytree(run, out)
    for name in ("results.csv", "samples.csv"):
        with open(out / name, newline="") as handle:
            reader = csv.DictReader(handle)
            fields, rows = list(reader.fieldnames or []), list(reader)
        if name == "results.csv":
            kept = [r for r in rows if r["api"] == api]
            measurements = {r["measurement"] for r in kept}
        else:
            kept = [r for r in rows if r["measurement"] in measurements]
        with open(out / name, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(kept)
    return out


@pytest.mark.slow
def test_every_functional_primitive_runs_and_checks(tmp_path: Path) -> None:
    """Both forms in one launch (a comma list of --api is one launch, test_api_list.py): every
    primitive with a functional form, at every root, --op max, checked, per api."""
    out = tmp_path / "run"
    apis = ("functional", "compiled:aot_eager")
    result = run_cli(
        "sweep", "--primitives", FUNCTIONAL_COMMANDS, *TINY, "--world-sizes", "3",
        "--check", "--api", ",".join(apis), "--out", str(out), "--root", "all", "--op", "max",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    every = read_csv(out / "results.csv")
    assert {r["api"] for r in every} == set(apis)
    # the terminal tables name the api: two in one launch get a column of their own
    heads = [line for line in result.stdout.splitlines() if line.startswith("#  ")]
    assert heads and all("api" in line for line in heads), result.stdout
    for api in apis:
        rows = [r for r in every if r["api"] == api]
        assert len(rows) == 2 * (5 + 3)  # broadcast at each of the 3 roots
        assert api in result.stdout
        # a launch of one api names it in each table's title instead (the CLI's renderer)
        assert f"# api: {api}" in render_table(rows)
        assert {r["wrong"] for r in rows} == {"0"}
        assert {r["primitive"] for r in rows} == set(FUNCTIONAL_PRIMITIVES)
        compile_s = [float(r["compile_s"]) if r["compile_s"] else math.nan for r in rows]
        if api == "functional":
            assert all(math.isnan(c) for c in compile_s)
        else:
            assert all(c > 0 for c in compile_s), compile_s
        # the same sizes as c10d's (nccl-tests' rounding of gather types at n=3)
        gathered = {r["size_bytes"] for r in rows if r["primitive"] == "all_gather"}
        assert gathered == {"1008", "65520"}


@pytest.mark.slow
def test_api_rows_report_beside_c10d_and_compare(two_apis: CliRun, tmp_path: Path) -> None:
    """conftest.py's `two_apis` (one interleaved launch of c10d and functional, 1K and 4K),
    split by api into two run directories, as two runs of one --api each would be."""
    assert two_apis.done.returncode == 0, two_apis.done.stderr
    runs = {api: split_by_api(two_apis.out, api, tmp_path / api) for api in ("c10d", "functional")}
    report = run_in_process(
        "report", str(runs["c10d"]), str(runs["functional"]), "--out", str(tmp_path / "r")
    )
    assert report.returncode == 0, report.stderr
    markdown = (tmp_path / "r" / "report.md").read_text()
    section = markdown.split("## Collective APIs")[1]
    table = [line for line in section.splitlines() if line.startswith("| all_reduce")]
    assert len(table) == 2  # one per size
    for line in table:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[4] == "functional"
        c10d, functional, ratio = (float(c) for c in cells[6:9])
        assert math.isclose(ratio, functional / c10d, rel_tol=0.01)
    same = run_in_process("compare", str(runs["functional"]), str(runs["functional"]))
    assert same.returncode == 0, same.stdout + same.stderr
    # c10d and functional rows are different cases: compare never sets them side by side
    across = run_in_process("compare", str(runs["c10d"]), str(runs["functional"]))
    assert across.returncode == 2
    assert across.stderr.startswith("distbench: error: ") and "no row in common" in across.stderr
    # the message names the column the runs differ in, and what would match (reports/keydiff.py)
    assert "differ only in api" in across.stderr
    assert "compare runs of the same --api" in across.stderr


@pytest.mark.slow
def test_inductor_smoke(tmp_path: Path) -> None:
    """The one inductor launch (minutes of compiling per size on a 2-core box: one size). Once
    (CI rehearsal of 79ae21d, 1 run in ~20) a rank aborted in the interpreter's teardown after
    its last measurement ("terminate called without an active exception", SIGABRT; not
    reproduced in 10 cold runs since). Such a run now ends completed with a warning
    (test_faults.py injects that abort on purpose); its row is checked as a clean run's is."""
    out = tmp_path / "run"
    result = run_cli(
        "allreduce", "--backend", "gloo", "--sizes", "4K", "--iters", "3", "--warmup", "1",
        "--trials", "2", "--world-sizes", "2", "--check", "--api", "compiled:inductor",
        "--out", str(out), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [row] = read_csv(out / "results.csv")
    assert (row["api"], row["wrong"]) == ("compiled:inductor", "0")
    assert float(row["compile_s"]) > 0
