"""What cannot work on a GPU node is refused in the CLI process, in one line with exit 2, before
any rank starts (#30 items 2-4). This box has no GPU: the machine probe is replaced by one that
reports eight CUDA GPUs (the CLI never imports torch to decide), so the refusals run as on a GPU
node; ci/gpu-smoke.sh's `refusals` step runs the same command lines there."""

from __future__ import annotations

import pytest

from distbench.comm.args import CommArgs, build_comm_spec
from distbench.comm.gpu_modes import check_gpu_modes
from distbench.comm.uneven import refuse_in_place
from distbench.options.launch import Machine
from distbench.parse import UsageError
from tests.conftest import usage_error_line

NCCL = ("--backend", "nccl", "--sizes", "1K", "--dry-run")


@pytest.fixture
def gpu_node(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's view of a node with eight CUDA GPUs and NCCL."""
    monkeypatch.setattr(Machine, "probe", staticmethod(lambda: Machine(cuda_gpus=8, nccl=True)))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["allreduce", "--buffers", "symmetric", "--world-sizes", "1"],
            "--buffers symmetric needs 2 ranks or more",
        ),
        (
            ["allreduce", "--buffers", "symmetric", "--world-sizes", "1,2"],
            "use --world-sizes 2",
        ),
        (
            ["allgather", "--buffers", "symmetric", "--world-sizes", "2,4"],
            "needs --separate-launches",
        ),
        (
            ["alltoall", "--placement", "in", "--world-sizes", "2"],
            "nccl's all_to_all_single is a group of send/recv pairs",
        ),
        (
            ["sweep", "--primitives", "allgather,alltoall", "--placement", "in,out"],
            "use --placement out for alltoall",
        ),
    ],
)
def test_on_a_gpu_node_what_cannot_work_is_one_line_and_exit_2(
    argv: list[str], expected: str, gpu_node: None, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line([*argv, *NCCL], capsys)
    assert expected in line, line


def test_what_can_work_passes_the_same_checks(
    gpu_node: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from distbench.cli.app import run_cli as run_in_process

    for argv in (
        ["allreduce", "--buffers", "symmetric", "--world-sizes", "2"],
        ["allreduce", "--buffers", "symmetric", "--world-sizes", "2,4", "--separate-launches"],
        ["allgather", "--placement", "in,out", "--world-sizes", "2"],
    ):
        assert run_in_process([*argv, *NCCL, "--out", "/tmp/t30/never"]) == 0, capsys.readouterr()


def test_the_checks_themselves_answer_in_one_line() -> None:
    with pytest.raises(UsageError) as refused:
        refuse_in_place(("all_to_all",), {"placements": ["in", "out"]}, "nccl")
    assert "\n" not in str(refused.value)
    refuse_in_place(("all_to_all",), {"placements": ["out"]}, "nccl")  # out of place: fine
    refuse_in_place(("all_gather",), {"placements": ["in"]}, "nccl")
    symmetric = CommArgs(buffers="symmetric")
    for sizes, separate in (((1,), False), ((2, 4), False)):
        with pytest.raises(UsageError):
            check_gpu_modes(("all_reduce",), symmetric, "nccl", "cuda", sizes, separate)
    check_gpu_modes(("all_reduce",), symmetric, "nccl", "cuda", (2, 4), True)
    check_gpu_modes(("all_reduce",), symmetric, "nccl", "cuda", (4,), False)


def test_symmetric_buffers_record_what_nccl_ran() -> None:
    """--buffers symmetric turns --nccl-trace on: each row's nccl_symmetric then says whether
    NCCL ran its symmetric kernels (it falls back to its regular ones silently)."""
    from distbench.options.launch import ResolvedLaunch

    launch = ResolvedLaunch("nccl", "cuda", [2], "", 60.0)
    args = CommArgs(buffers="symmetric", sizes=(1024,))
    assert build_comm_spec(("all_reduce",), args, launch).nccl_trace
    regular = CommArgs(sizes=(1024,))
    assert not build_comm_spec(("all_reduce",), regular, launch).nccl_trace


def test_gloo_ranks_may_share_a_gpu_nccl_ranks_may_not(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On one GPU, gloo on CUDA tensors runs 3 ranks sharing it (groups.bind_device: local rank
    modulo the GPUs); NCCL, which refuses two ranks on one GPU, is refused in one line."""
    from distbench.cli.app import run_cli as run_in_process

    monkeypatch.setattr(Machine, "probe", staticmethod(lambda: Machine(cuda_gpus=1, nccl=True)))
    shared = ["allreduce", "--backend", "gloo", "--device", "cuda", "--world-sizes", "2,3"]
    code = run_in_process([*shared, "--sizes", "1K", "--dry-run"])
    assert code == 0, capsys.readouterr()
    capsys.readouterr()  # the plan and its 'nothing launched' line
    line = usage_error_line(["allreduce", "--world-sizes", "2", *NCCL], capsys)
    assert "world size 2 needs 2 GPUs (one per rank)" in line
