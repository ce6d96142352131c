"""distbench report builds its report from what the user gave (#21 §4), on real gloo runs made
here with the real CLI: runs given one by one or as their parent folder give one report;
unlabelled folders are sources named after them; a run given twice is used once; a user's file in
--out survives; the default --out never lies inside an input folder; every figure shows what its
title claims, or a note says what it leaves out; legends never cover titles; no two lines share
a colour; report.md embeds its figures."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def report_md(out: Path) -> str:
    return (out / "report.md").read_text(encoding="utf-8")


def notes_of(text: str) -> list[str]:
    block = text.split("## What could not be shown", 1)[1] if "## What could" in text else ""
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def test_the_runs_table_marks_a_worker_variable_not_torchrun_s_port() -> None:
    """Two launches always get different MASTER_PORTs: not a difference between the runs, so not
    shown or marked; a variable the user set differently (NCCL_ALGO) is marked."""

    from distbench.reports.load import RunData
    from distbench.reports.report.page.build import manifests_table

    def run(name: str, **worker_env: str) -> RunData:
        manifest = {"status": "completed", "worker_env": {"MASTER_ADDR": "localhost", **worker_env}}
        return RunData(Path(name), name, 0, "comm", pd.DataFrame(), None, manifest)

    same = manifests_table([run("a", MASTER_PORT="45961"), run("b", MASTER_PORT="37367")])
    assert not same.highlight and "MASTER_PORT" not in same.frame.to_string()
    algo = manifests_table([run("a", NCCL_ALGO="Ring"), run("b", NCCL_ALGO="Tree")])
    fields = list(algo.frame[""])
    assert [fields[i] for i in algo.highlight] == ["worker environment"]


def test_the_runs_table_names_logical_cpus_and_the_usable_ones_where_fewer() -> None:
    from distbench.reports.report.page.build import cpu_text

    model = {"cpu_model": "EPYC", "cpu_cores": 2}
    assert cpu_text(model) == "EPYC \u00d7 2 logical CPUs"  # before v4: no cpu_usable
    assert cpu_text({**model, "cpu_usable": 2}) == "EPYC \u00d7 2 logical CPUs"
    assert cpu_text({**model, "cpu_usable": 1}) == "EPYC \u00d7 2 logical CPUs (1 usable)"


def test_the_ddp_table_names_param_avg_with_its_period() -> None:
    """A param-avg row at K = 2 drifts from ddp by design: its strategy says K, as the
    terminal's table does, so its max param diff does not read as a failure."""
    from distbench.reports.report.sections.ddp import with_period

    rows = pd.DataFrame({"strategy": ["ddp", "param-avg", "param-avg"], "avg_every": ["", 2, 1]})
    assert list(with_period(rows)) == ["ddp", "param-avg K=2", "param-avg K=1"]
    assert list(with_period(rows.drop(columns="avg_every"))) == ["ddp", "param-avg", "param-avg"]
