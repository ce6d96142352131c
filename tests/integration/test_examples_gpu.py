"""The manual's gpu-marked examples, run as written on a GPU node (gpu marker: skipped elsewhere;
ci/gpu-smoke.sh runs this file by name as its pytest-gpu-examples step). On CPU,
tests/unit/test_examples.py checks only that each is refused for want of a GPU.

A command passes with exit 0, or, on a node with fewer GPUs than it needs, when it is refused in
one line that says how many GPUs (or ranks) it needs: what a user of that node would see."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import torch

from tests.conftest import run_cli
from tests.doc_examples import all_examples, reference_file, words

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

TIMEOUT_S = 120
"""One example's limit: the longest (a 1G all_reduce sweep, 50 transformer steps) take well under
it on one H200."""
TOO_FEW = re.compile(r"needs \d+\+? (CUDA )?(GPUs|ranks)|needs 2 ranks or more")
"""A refusal for want of GPUs or ranks: the only exit 2 an example may end in."""


def gpu_commands() -> list[str]:
    seen: dict[str, None] = {}
    for example in all_examples():
        runnable = example.text.startswith("distbench ") and words(example.text) is not None
        if example.kind == "gpu" and runnable:
            seen.setdefault(example.text)
    return list(seen)


@pytest.mark.parametrize("command", gpu_commands())
def test_a_gpu_example_runs_as_written(command: str, tmp_path: Path) -> None:
    argv = shlex.split(command)[1:]
    (tmp_path / "expected.toml").write_text(reference_file())  # the file the examples name
    done = run_cli(*argv, cwd=tmp_path, timeout=TIMEOUT_S)
    output = done.stdout + done.stderr
    errors = [line for line in output.splitlines() if line.startswith("distbench: error: ")]
    if done.returncode == 2 and len(errors) == 1 and TOO_FEW.search(errors[0]):
        if torch.cuda.device_count() >= 8:  # every example is written for a node of 8 GPUs
            pytest.fail(f"refused on {torch.cuda.device_count()} GPUs: {errors[0]}")
        pytest.skip(f"{torch.cuda.device_count()} GPU(s): {errors[0]}")
    assert done.returncode == 0, output[-3000:]
