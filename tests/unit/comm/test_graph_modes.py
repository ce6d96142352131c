"""--cuda-graph N and --buffers symmetric (#15 §5) on a box without a GPU: the refusals (one line,
exit 2, in the CLI process), the checks they use (comm/static.py's buffers, checked on a real
3-rank gloo group as they are and under every mutation of the mutation suite: the graph only
changes how the op is issued), the graph and buffers columns of a gloo run with their defaults,
an older run that lacks them loading, and report and compare accepting the rows. The GPU runs are
tests/integration/comm/test_graph_gpu.py's (gpu marker) and ci/gpu-smoke.sh's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from distbench.comm.args import CommArgs
from distbench.comm.gpu_modes import GRAPH_PRIMITIVES, check_gpu_modes
from distbench.parse import UsageError
from distbench.reports.runs import load_run
from tests.conftest import usage_error_line
from tests.paths import DATA

# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["allreduce", "--cuda-graph", "4"], "--cuda-graph needs CUDA and the nccl backend"),
        (["allreduce", "--buffers", "symmetric"], "--buffers symmetric needs CUDA and the nccl"),
        (["sweep", "--primitives", "all", "--cuda-graph", "2"], "(this run: gloo on cpu)"),
        (["allreduce", "--cuda-graph", "-1"], "--cuda-graph must be at least 0"),  # 0: off
        (["allreduce", "--buffers", "shared"], "unknown buffers 'shared'"),
    ],
)
def test_off_cuda_the_gpu_modes_are_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = usage_error_line([*argv, "--world-sizes", "2", "--sizes", "1K", "--dry-run"], capsys)
    assert expected in line


@pytest.mark.parametrize(
    ("primitives", "given", "expected"),
    [
        (("reduce",), {"cuda_graph": 2}, "not reduce: drop --cuda-graph"),
        (("send_recv",), {"cuda_graph": 2}, "not sendrecv"),
        (("all_reduce",), {"cuda_graph": 2, "mode": ("latency",)}, "drop --mode latency"),
        (("all_reduce",), {"cuda_graph": 2, "iters": "auto"}, "give a number"),
        (("all_reduce",), {"cuda_graph": 2, "api": ("functional",)}, "drop --api functional"),
        (("all_reduce",), {"cuda_graph": 2, "order": "interleaved"}, "--order sequential"),
        (("all_reduce",), {"buffers": "symmetric", "order": "grouped"}, "--order sequential"),
        (("broadcast",), {"buffers": "symmetric"}, "would run its regular kernels"),
        (("all_reduce",), {"buffers": "symmetric", "op": "max"}, "--op max would run"),
        (("reduce_scatter",), {"buffers": "symmetric", "dtype": ("float64",)}, "float64 would"),
        (("all_reduce",), {"buffers": "symmetric", "api": ("compiled:aot_eager",)}, "drop --api"),
    ],
)
def test_on_nccl_what_cannot_run_is_refused(
    primitives: tuple[str, ...], given: dict[str, Any], expected: str
) -> None:
    with pytest.raises(UsageError) as refused:
        check_gpu_modes(primitives, CommArgs(**given), "nccl", "cuda")
    assert expected in str(refused.value) and "\n" not in str(refused.value)


def test_on_nccl_what_can_run_passes() -> None:
    check_gpu_modes(GRAPH_PRIMITIVES, CommArgs(cuda_graph=10), "nccl", "cuda")
    check_gpu_modes(("all_gather",), CommArgs(buffers="symmetric", dtype=("int8",)), "nccl", "cuda")
    both = CommArgs(cuda_graph=2, buffers="symmetric", dtype=("bfloat16",), op="avg")
    check_gpu_modes(("all_reduce", "reduce_scatter"), both, "nccl", "cuda")
    check_gpu_modes(("reduce", "send_recv"), CommArgs(), "gloo", "cpu")  # neither asked


def test_an_older_run_without_the_columns_loads_as_eager_and_regular() -> None:
    run = load_run(DATA / "cluster-a" / "allreduce")  # schema v1: neither column
    assert run.schema_version == 1
    assert {(row.values["graph"], row.values["buffers"]) for row in run.rows.values()} == {
        ("false", "regular")
    }


# --- the capture mode and the untimed replays (#30) ---------------------------------------------


def test_graphs_are_captured_in_thread_local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """As nccl-tests: another thread's CUDA call (NCCL's watchdog, the heartbeat) cannot
    invalidate the capture. torch.cuda.graph itself needs a GPU, so the test records what
    capture_scope hands it; the parameter exists in this torch (and in 2.11, docs/apis.md)."""
    import inspect

    from distbench.comm import graph

    assert "capture_error_mode" in inspect.signature(torch.cuda.graph.__init__).parameters
    seen: dict[str, Any] = {}

    def recorder(cuda_graph: object, **kwargs: Any) -> str:
        seen.update(kwargs, graph=cuda_graph)
        return "scope"

    monkeypatch.setattr(graph.torch.cuda, "graph", recorder)
    sentinel = object()
    assert graph.capture_scope(sentinel) == "scope"
    assert seen == {"graph": sentinel, "capture_error_mode": "thread_local"}
