"""The pure parts of `distbench pipeline` (exact numbers) and its refusals (one line, exit 2)."""

from __future__ import annotations

import pytest

from distbench.ddp.params import param_count
from distbench.pipeline.spec import (
    PipelineSpec,
    bubble_theory,
    partition,
    plan_size,
    unit_params,
)
from tests.conftest import usage_error_line


def test_partition_minimises_the_largest_stage() -> None:
    assert partition([1, 1, 1, 1], 2) == [0, 2]
    assert partition([4, 1, 1, 1, 1], 2) == [0, 1]
    assert partition([1, 1, 1, 1, 4], 3) == [0, 2, 4]
    assert partition([5, 5, 5, 1], 2) == [0, 2]  # 10 | 6 (not 5 | 11)
    assert partition([3, 3, 3], 3) == [0, 1, 2]
    with pytest.raises(ValueError):
        partition([1, 1], 3)


def test_unit_params_add_up_to_the_ddp_model() -> None:
    for model, width, depth in (("mlp", 256, 4), ("mlp", 7, 9), ("transformer", 64, 3)):
        assert sum(unit_params(model, width, depth)) == param_count(model, width, depth)
    assert len(unit_params("mlp", 8, 5)) == 5  # 4 hidden pairs + head
    assert len(unit_params("transformer", 8, 2)) == 3  # 2 layers + head


def test_bubble_theory_is_gpipes() -> None:
    assert bubble_theory(2, 1) == pytest.approx(1 / 2)
    assert bubble_theory(2, 4) == pytest.approx(1 / 5)
    assert bubble_theory(4, 8) == pytest.approx(3 / 11)


def test_1f1b_left_out_below_w_microbatches() -> None:
    spec = PipelineSpec(microbatches=(1, 4))
    assert spec.runs(2) == [
        ("sendrecv", 1),
        ("pipelining", 1),
        ("sendrecv", 4),
        ("pipelining", 4),
        ("pipelining-1f1b", 4),
    ]
    assert plan_size(spec, 4) == 5
    assert plan_size(spec, 5 - 1) == 5


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--microbatches", "0"], "--microbatches"),
        (["--microbatches", "x"], "--microbatches"),
        (["--microbatches", ""], "--microbatches"),
        (["--microbatches", "3"], "does not split into 3 equal microbatches"),
        (["--strategies", "gpipe"], "gpipe"),
        (["--strategies", "pipelining-1f1b", "--microbatches", "1"], "Schedule1F1B"),
        (["--world-sizes", "1"], "at least 2 ranks"),
        (["--world-sizes", "4", "--depth", "2"], "raise --depth"),
        (["--warmup", "0"], "--warmup"),
        (["--model", "cnn"], "cnn"),
        (["--width", "10", "--params", "1M"], "either --params or --width"),
        (["--window-steps", "3"], "--window-steps 3"),
        (["--batch-size", "0"], "--batch-size"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    line = usage_error_line(["pipeline", "--out", str(tmp_path), *argv], capsys)
    assert expected in line
