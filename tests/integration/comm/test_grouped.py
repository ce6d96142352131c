"""--order grouped (the default in latency mode): trial t of each of 3 consecutive measurements
in round t, group after group. On real 2-rank gloo launches: a group's rows land in its last
round and before the next group starts, so Ctrl-C keeps every finished group, and --resume
measures only the rest, grouped again."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

from tests.conftest import run_cli, start_until_rows
from tests.integration.comm.test_order import read_csv

SIZES = "1K,2K,4K,8K,16K"
"""5 measurements: a group of 3, then one of 2 (1,500 isolated ops a trial: the second group
takes a second or more, so the interrupt lands inside it)."""


def test_groups_land_one_after_another_and_ctrl_c_keeps_the_finished_group(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    command = ["allreduce", "--backend", "gloo", "--world-sizes", "2", "--mode", "latency",
               "--sizes", SIZES, "--iters", "1500", "--warmup", "1", "--trials", "3",
               "--out", str(out)]  # fmt: skip
    proc = start_until_rows(command, out, 3, tmp_path)
    proc.send_signal(signal.SIGINT)  # the second group's rounds have begun, none of its rows
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    kept = read_csv(out / "results.csv")
    assert [r["measurement"] for r in kept] == ["ws2/i0", "ws2/i1", "ws2/i2"], kept
    assert {r["trial_order"] for r in kept} == {"grouped"}
    log = (out / "logs" / "ws2-rank0.log").read_text()
    first = [m.start() for m in re.finditer(r"round \d of 3 over 3 measurements", log)]
    ends = [m.start() for m in re.finditer(r"\bend ws2/i\d", log)]
    assert len(first) == 3 and len(ends) == 3
    assert min(ends) > first[-1]  # the group's trials interleaved: no row before its last round

    resumed = run_cli("allreduce", "--resume", str(out), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    rows = read_csv(out / "results.csv")
    assert [r["measurement"] for r in rows] == [f"ws2/i{k}" for k in range(5)]
    assert rows[:3] == kept  # appended, nothing rewritten
    assert {r["trial_order"] for r in rows} == {"grouped"}
    assert {r["trials_run"] for r in rows} == {"3"}
    log = (out / "logs" / "ws2-rank0.log").read_text().rsplit("start pid=", 1)[1]  # the resume's
    assert re.findall(r"round (\d) of 3 over (\d)", log) == [("1", "2"), ("2", "2"), ("3", "2")]
    samples = [s for s in read_csv(out / "samples.csv") if s["rank"] == "-1"]
    per: dict[str, list[int]] = {}
    for sample in samples:
        per.setdefault(sample["measurement"], []).append(int(sample["trial"]))
    assert {m: sorted(set(t)) for m, t in per.items()} == {
        r["measurement"]: [0, 1, 2] for r in rows
    }
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["spec"]["workload"]["trial_order"] == "grouped"
