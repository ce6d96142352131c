"""A new user's smaller trip-ups (issue #26 item 11), each as the user met it: a size in megabits,
the too-new-schema error's upgrade advice, and the skip message of the pytest-benchmark example
under plain pytest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from distbench.parse import UsageError, parse_size, parse_sizes
from tests.conftest import usage_error_line
from tests.paths import ROOT as REPO


@pytest.mark.parametrize("text", ["64Mb", "64mb", "1Kb", "1kib", "2Gb", "8b", "1GiB,64Mb"])
def test_a_size_in_bits_is_refused_in_one_line(text: str) -> None:
    """b is a bit: '64Mb' (64 megabits) was read as 64 MiB. Sizes are bytes (B, or no unit)."""
    with pytest.raises(UsageError) as error:
        parse_sizes(text)
    message = str(error.value)
    assert "\n" not in message
    assert "is in bits" in message and "not a size" in message
    assert "M is MiB (1M = 1048576 bytes)" in message and "e.g. 64M" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [("64MB", 64 << 20), ("64MiB", 64 << 20), ("64M", 64 << 20), ("64m", 64 << 20), ("8B", 8)],
)
def test_byte_units_stay_binary(text: str, expected: int) -> None:
    assert parse_size(text) == expected


def test_the_cli_refuses_megabits(capsys: pytest.CaptureFixture[str]) -> None:
    line = usage_error_line(["allreduce", "--sizes", "64Mb", "--dry-run"], capsys)
    assert "'64Mb' is in bits" in line


def test_a_too_new_run_says_how_distbench_is_upgraded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """distbench installs from its repository: the advice is a git pull and an editable install,
    not `pip install -U distbench` (no such package on the index)."""
    from distbench.collectors.schema import SCHEMA_VERSION

    for name in ("a", "b"):
        shutil.copytree(REPO / "tests" / "data" / "cluster-a" / "allreduce", tmp_path / name)
    manifest = tmp_path / "b" / "manifest.json"
    body = json.loads(manifest.read_text())
    body["schema_version"] = SCHEMA_VERSION + 1
    manifest.write_text(json.dumps(body))
    argv = ["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "r")]
    line = usage_error_line(argv, capsys)
    assert "pip install -U" not in line
    assert "git pull && pip install -e ." in line
