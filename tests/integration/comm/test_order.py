"""--order interleaved (#16). The half that launches or runs for seconds; the in-process half, and
the file's whole story: tests/unit/comm/test_order.py."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from tests.conftest import CliRun, run_cli


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_interleaved_rows_are_labelled_complete_and_land_after_the_last_round(
    tiny_sweep: CliRun,
) -> None:
    """The suite's shared sweep (tests/conftest.py TINY_SWEEP: all_reduce and broadcast at 1K and
    16K, 3 trials, --order interleaved --check --quiet)."""
    out, result = tiny_sweep.out, tiny_sweep.done
    assert result.returncode == 0, result.stderr
    # --quiet leaves the tables only (was test_progress.py's own launch)
    assert "] done" not in result.stderr and "starting" not in result.stderr, result.stderr
    assert result.stdout.startswith("# all_reduce"), result.stdout
    rows = read_csv(out / "results.csv")
    assert len(rows) == 4
    assert {row["trial_order"] for row in rows} == {"interleaved"}
    assert {row["trials_run"] for row in rows} == {"3"}
    assert {row["wrong"] for row in rows} == {"0"}
    samples = read_csv(out / "samples.csv")
    for rank in ("-1",):  # every measurement's trials 0, 1, 2: samples.csv holds the max (#27)
        per: dict[str, list[int]] = {}
        for sample in samples:
            if sample["rank"] == rank:
                per.setdefault(sample["measurement"], []).append(int(sample["trial"]))
        assert per == {row["measurement"]: [0, 1, 2] for row in rows}
    log = (out / "logs" / "ws2-rank0.log").read_text()
    rounds = [m.start() for m in re.finditer(r"round \d of 3 over 4 measurements", log)]
    ends = [m.start() for m in re.finditer(r"\bend ws2/i\d", log)]
    assert len(rounds) == 3 and len(ends) == 4
    assert min(ends) > rounds[-1]  # no row before the last round began: the trials interleave
    progress = [
        line.split() for line in (out / "logs" / "ws2-progress.log").read_text().splitlines()
    ]
    begins = [fields[2] for fields in progress if fields[1] == "begin"]
    assert begins == [row["measurement"] for row in rows]
    # each round announced (launch/progress.py shows it before any row lands), before the begins
    announced = [" ".join(fields[1:]) for fields in progress if fields[1] == "round"]
    assert announced == [f"round {k} of 3 over 4 measurements" for k in (1, 2, 3)]
    assert progress.index(next(f for f in progress if f[1] == "begin")) == 3


def test_auto_order_is_recorded_resolved_and_the_sweep_file_takes_order(
    tmp_path: Path, allreduce_2rank: CliRun
) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text(
        'primitives = ["allreduce"]\nworld_sizes = [2]\nsizes = ["1K"]\ntrials = 2\n'
        'iters = 1\norder = "interleaved"\n'
    )
    result = run_cli("sweep", "--config", str(config), "--out", str(tmp_path / "a"), "--quiet")
    assert result.returncode == 0, result.stderr
    assert read_csv(tmp_path / "a" / "results.csv")[0]["trial_order"] == "interleaved"
    # without --order: the suite's shared 2-rank allreduce (tests/conftest.py), --mode both:
    # auto is grouped wherever a latency row is measured, and the rows say so
    rows = read_csv(allreduce_2rank.out / "results.csv")
    assert len(rows) == 4 and {row["trial_order"] for row in rows} == {"grouped"}
