"""`distbench sweep`: the TOML matrix file, the options that may go with it, the shipped example run
end to end (the nightly job's input), and several specs launched into one run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from distbench.cli.app import run_cli as run_in_process
from distbench.cli.sweep import load_config
from distbench.comm.args import CommArgs
from distbench.comm.primitive_args import PrimitiveArgs
from distbench.parse import UsageError
from distbench.primitives.registry import PRIMITIVES
from tests.conftest import usage_error_line
from tests.paths import ROOT

EXAMPLE = ROOT / "ci" / "sweep-example.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def test_config_reads_like_the_command_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'backend = "gloo"\nworld-sizes = [2, 3]\nprimitives = ["allreduce", "sendrecv"]\n'
        'sizes = ["1K", 4096]\ndtypes = ["float32", "bf16"]\niters = 3\ncheck = true\n'
        'patterns = ["ring"]\nbidirectional = false\n',
    )
    config = load_config(path)
    assert config.backends == ("gloo",)
    assert config.primitives == ("all_reduce", "send_recv")
    assert config.launch == {"world_sizes": (2, 3)}
    assert config.comm == CommArgs(
        sizes=(1024, 4096), dtype=("float32", "bfloat16"), iters=3, check=True
    )
    assert config.primitive_args == PrimitiveArgs(pattern=["ring"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('primitives = ["allreduce"]\nsize = ["1K"]\n', "unknown key 'size'"),
        ('primitives = ["allreduce"\n', "is not valid TOML"),
        ('sizes = ["1K"]\n', "needs 'primitives'"),
        ('primitives = ["allreduce"]\ncheck = "yes"\n', "'check' must be true or false"),
        ('primitives = ["allreduce"]\nsizes = []\n', "'sizes' must be a non-empty list"),
        ('primitives = ["allgather", "scatter"]\n', "unknown primitive 'scatter'"),
    ],
)
def test_bad_config_is_a_usage_error(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_config(write(tmp_path, text))


def test_the_shipped_example_covers_every_primitive() -> None:
    config = load_config(EXAMPLE)
    assert set(config.primitives) == set(PRIMITIVES)
    assert config.backends == ("gloo",)
    assert config.comm.check is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep"], "sweep needs --primitives"),
        (["sweep", "--primitives", "allreduce,scatter"], "unknown primitive 'scatter'"),
        (["sweep", "--config", "missing.toml"], "--config missing.toml: no such file"),
        (["sweep", "--config", str(EXAMPLE), "--sizes", "1K"], "--sizes cannot be combined"),
        (["sweep", "--config", str(EXAMPLE), "--pattern", "ring"], "--pattern cannot be combined"),
        # Launch options override the file's: here a backend this machine lacks.
        (["sweep", "--config", str(EXAMPLE), "--backend", "nccl"], "--backend nccl needs CUDA"),
        (["sweep", "--config", str(EXAMPLE), "--world-sizes", "1"], "sendrecv needs two ranks"),
        (["allreduce", "--config", str(EXAMPLE)], "--config applies to distbench sweep only"),
    ],
)
def test_sweep_usage_errors_are_one_line_and_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = run_in_process([*args, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_resume_of_a_sweep_over_several_backends_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "spec.json").write_text("{}")
    (run_dir / "spec-nccl.json").write_text("{}")
    assert run_in_process(["sweep", "--resume", str(run_dir)]) == 2
    assert "cannot be resumed" in capsys.readouterr().err
    assert run_in_process(["sweep", "--resume", str(tmp_path / "none")]) == 2
    assert "no spec.json there" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('backends = ["gloo"]\nsizes = ["1Q"]\n', "'1Q' has an unknown unit"),
        ('backends = ["mpi"]\n', "unknown backend 'mpi'"),
        ("world_sizes = [0]\n", "a world size must be at least 1"),
        ("window = 5000\n", "--window 5000 is too large"),
        ('mode = "fast"\n', "unknown mode 'fast'"),
    ],
)
def test_config_value_errors_name_the_file(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file's values go through the command line's option parsers."""
    path = write(tmp_path, f'primitives = ["allreduce"]\n{text}')
    code = run_in_process(["sweep", "--config", str(path), "--out", str(tmp_path / "run")])
    assert code == 2
    assert f"--config {path}: {message}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "--config", "ci/sweep-example.toml"],
        ["compare", "a", "b", "--thresholds", "ci/thresholds-example.toml"],
    ],
)
def test_a_shipped_example_named_outside_the_clone_points_at_distbench_s_own_copy(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The help and the manual write `--config ci/sweep-example.toml`; typed in another directory
    (where results/ should go), the error names where it looked and the clone's own copy."""
    monkeypatch.chdir(tmp_path)
    line = usage_error_line(argv, capsys)
    own = ROOT / argv[-1]
    assert f"no such file in {tmp_path}; distbench's own copy is {own}: give that path" in line
    monkeypatch.chdir(ROOT)  # in the clone: the file is there, no hint needed
    assert "no such file" not in usage_error_line(
        ["sweep", "--config", "ci/sweep-example.toml", "--sizes", "1K"], capsys
    )


def test_a_missing_file_of_the_users_own_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    line = usage_error_line(["sweep", "--config", "mine.toml"], capsys)
    assert line.endswith(f"--config mine.toml: no such file in {tmp_path}"), line
