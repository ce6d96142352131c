"""`distbench ddp` on real gloo groups: the manual strategies train the same weights as DDP, every
strategy runs end to end through the CLI, bad input is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import usage_error_line

BAD_INPUT = [
    (["--strategies", "ddp,zero3"], "unknown strategy 'zero3'"),
    (["--model", "cnn"], "unknown model 'cnn'"),
    (["--params", "0"], "--params must be at least 1"),
    (["--params", "ten"], "--params 'ten' is not a parameter count"),
    (["--params", "1M", "--width", "64"], "either --params or --width"),
    (["--avg-every", "0"], "--avg-every must be at least 1"),
    (["--bucket-mb", "x"], "--bucket-mb 'x' is not a number of MB"),
    (["--bucket-mb", "0"], "--bucket-mb must be positive"),
    (["--steps", "0"], "--steps must be at least 1"),
    (["--warmup", "-1"], "--warmup must be at least 0"),
    (["--model", "transformer", "--width", "30"], "multiple of 4"),
    (["--backend", "nccl"], "Available here: gloo"),
    (["--resume", "nowhere"], "--resume nowhere: no spec.json there"),
]


@pytest.mark.parametrize(("args", "message"), BAD_INPUT)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    line = usage_error_line(["ddp", *args], capsys)
    assert message in line, line
    assert not (tmp_path / "results").exists()
