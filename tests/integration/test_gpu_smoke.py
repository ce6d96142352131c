"""ci/gpu-smoke.sh's plan and steps, checked where no GPU is (#30). The half that launches or runs
for seconds; the in-process half, and the file's whole story: tests/unit/test_gpu_smoke.py."""

from __future__ import annotations

import subprocess
import sys

from tests.paths import ROOT

sys.path.insert(0, str(ROOT / "ci"))

from gpu_smoke import select


def test_only_picks_steps_and_names_unknown_ones() -> None:
    assert [s.name for s in select(1, "graph-nccl,refusals")] == ["refusals", "graph-nccl"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "ci" / "gpu_smoke.py"), "--plan", "--gpus", "1", "--only",
         "graph"], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "unknown step 'graph'" in done.stderr
