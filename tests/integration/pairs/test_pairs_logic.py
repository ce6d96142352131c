"""Pure parts of `distbench pairs` and `--env`. The half that launches or runs for seconds; the
in-process half, and the file's whole story: tests/unit/pairs/test_pairs_logic.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DRY_RUN = """
import subprocess, sys
started = []
class Refused(subprocess.Popen):  # test side: a dry run that starts a process fails here at once
    def __init__(self, *args, **kwargs):
        started.append(args[0] if args else kwargs.get("args"))
        raise RuntimeError("a dry run started a process")
subprocess.Popen = Refused
from distbench.cli.app import run_cli
code = None
try:
    code = run_cli(sys.argv[1:])
finally:
    print("RESULT", code, "torch" in sys.modules, len(started))
"""


def test_pairs_dry_run_prints_the_plan_and_starts_nothing(tmp_path: Path) -> None:
    """As every measuring command: the options resolved and the PairsSpec built, printed as the
    plan; no run directory, no process (torchrun), no torch in the CLI process. 0.2.0's pairs
    ignored --dry-run and launched."""
    argv = ["pairs", "--backend", "gloo", "--world-sizes", "3", "--sizes", "1K,2K"]
    argv += ["--window", "4", "--out", str(tmp_path / "r"), "--dry-run"]
    done = subprocess.run(
        [sys.executable, "-c", DRY_RUN, *argv], capture_output=True, text=True, timeout=120
    )
    result = done.stdout.strip().splitlines()[-1]
    assert result == "RESULT 0 False 0", done.stdout + done.stderr
    assert not (tmp_path / "r").exists()
    assert "distbench: dry run, nothing launched" in done.stderr, done.stderr
    plan = json.loads(done.stdout.rsplit("RESULT", 1)[0])  # stdout is the plan alone
    [launch] = plan["launches"]
    assert plan["command"] == "pairs" and launch["launch"]["world_sizes"] == [3]
    workload = launch["workload"]
    assert (workload["primitive"], workload["sizes"], workload["window"]) == (
        "send_recv",
        [1024, 2048],
        4,
    )
