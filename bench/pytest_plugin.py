"""pytest-benchmark inside a torchrun group: fixtures that time one primitive on every rank.

    ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-autosave

(ci/bench-tests.sh runs `python -m torch.distributed.run --standalone --nproc-per-node N -m pytest`
with the status and log handling below.)

Registered as the `distbench` pytest11 plugin, so it loads in every pytest run: it imports only
pytest at module level, and does nothing unless a test asks for its fixtures or the process is a
torchrun rank (RANK is set).

Why the care (docs/method.md, "Every rank runs the same operations"): pytest-benchmark calibrates
rounds from the clock, and the clocks of two ranks disagree, so one rank would run one more
collective than the other and hang. `comm_benchmark` fixes rounds with `benchmark.pedantic`, aligns
ranks with a barrier before every round (untimed), and replaces the round times with their maximum
over ranks (the slowest rank, the one a training step waits for) divided by the ops per round, so
every rank holds the same numbers. Only rank 0 saves JSON, compares, fails and prints: the other
ranks' save/compare options are cleared and their output goes to $DISTBENCH_RANK_LOGS/rank<N>.log
(else the temp folder), so one pytest report reaches the terminal. A --benchmark-compare-fail
regression ends rank 0's report with one `REGRESSED name: why` line per benchmark instead of
pytest-benchmark's traceback. Under ci/bench-tests.sh ($DISTBENCH_PYTEST_STATUS set) every rank
writes its pytest exit status to that folder and exits 0, so torchrun's ChildFailedError banner is
not printed for a verdict; the script exits with the status.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from distbench.primitives.base import Context

TORCHRUN_HINT = (
    "needs a torchrun group: run it with ci/bench-tests.sh FILE (torchrun, 2 ranks or one per "
    "GPU; docs/compare.md#pytest-benchmark-comm_benchmark)"
)

RANK0_ONLY_OPTIONS: dict[str, object] = {
    "benchmark_autosave": False,
    "benchmark_save": None,
    "benchmark_save_data": False,
    "benchmark_json": None,
    "benchmark_compare": [],
    "benchmark_compare_fail": [],
    "benchmark_histogram": None,
    "benchmark_cprofile_dump": None,
    "benchmark_quiet": True,
}
"""pytest-benchmark options that write files, fail the run or print the table: rank 0 only."""


def torchrun_rank() -> int | None:
    """This process's global rank under torchrun, None outside it."""
    rank = os.environ.get("RANK")
    return int(rank) if rank is not None and rank.isdigit() else None


LOGS_ENV = "DISTBENCH_RANK_LOGS"
STATUS_ENV = "DISTBENCH_PYTEST_STATUS"


def silence_rank(rank: int) -> Path:
    """Send this process's stdout and stderr (file descriptors, so children and pytest's
    terminal writer follow) to a per-rank log file: only rank 0 speaks on the terminal."""
    folder = Path(os.environ.get(LOGS_ENV) or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"rank{rank}.log"
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    return log


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Iterator[None]:
    """Outside pytest's output capture, which saves the terminal's file descriptors when it
    starts: ranks other than 0 send theirs to a log file first, so nothing of theirs (not even
    "collected N items") reaches the terminal."""
    rank = torchrun_rank()
    if rank is not None and rank > 0:
        silence_rank(rank)
    return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before pytest-benchmark reads its options: on ranks other than 0, nothing is saved or
    compared, so one JSON per run reaches the storage and only rank 0 decides the verdict."""
    rank = torchrun_rank()
    if rank is None or rank == 0:
        return
    for name, value in RANK0_ONLY_OPTIONS.items():
        if hasattr(config.option, name):
            setattr(config.option, name, value)


@pytest.hookimpl(wrapper=True)
def pytest_terminal_summary(terminalreporter: Any) -> Iterator[None]:
    """pytest-benchmark raises PerformanceRegression out of its summary (a traceback): keep its
    regressions for one line each at the very end (pytest_unconfigure), and fail the session."""
    try:
        yield
    except Exception as error:
        if type(error).__name__ != "PerformanceRegression":
            raise
        regressions = terminalreporter.config._benchmarksession.performance_regressions
        terminalreporter.config._distbench_regressions = list(regressions)
        terminalreporter._session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """The verdict last: one line per regressed benchmark. Under ci/bench-tests.sh also record
    this rank's exit status for the script and exit 0, so torchrun does not print a
    ChildFailedError traceback over the verdict."""
    regressions = getattr(config, "_distbench_regressions", [])
    if regressions:
        print(f"{len(regressions)} benchmark(s) regressed:", flush=True)
        for name, why in regressions:
            print(f"REGRESSED {name}: {why}", flush=True)
    folder = os.environ.get(STATUS_ENV)
    session = getattr(config, "_distbench_session", None)
    rank = torchrun_rank()
    if not folder or session is None or rank is None:
        return
    (Path(folder) / f"rank{rank}.status").write_text(f"{int(session.exitstatus)}\n")
    session.exitstatus = pytest.ExitCode.OK


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config._distbench_session = session  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def dist_context() -> Iterator[Context]:
    """The torchrun group, joined once per session and torn down at its end. Backend: nccl with
    GPUs, else gloo ($DISTBENCH_BACKEND overrides); the device and the join are the worker's
    (groups.bind_device: each rank uses the GPU of its LOCAL_RANK; groups.join_world)."""
    if torchrun_rank() is None:
        pytest.skip(TORCHRUN_HINT)
    import torch
    import torch.distributed as dist

    from distbench.groups import bind_device, join_world
    from distbench.primitives.base import Context

    backend = os.environ.get("DISTBENCH_BACKEND") or (
        "nccl" if torch.cuda.is_available() else "gloo"
    )
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = bind_device("cuda" if backend == "nccl" else "cpu", local_rank)
    join_world(backend, device, float(os.environ.get("DISTBENCH_TIMEOUT", "300")))
    try:
        world_size = dist.get_world_size()
        yield Context(
            rank=dist.get_rank(),
            world_size=world_size,
            device=device,
            backend=backend,
            group=None,
            global_ranks=tuple(range(world_size)),
        )
    finally:
        dist.destroy_process_group()


@dataclass(frozen=True)
class CommRequest:
    """One comm_benchmark call: the fixture's arguments, in this order and with these defaults."""

    primitive: str = "all_reduce"
    """A name in the primitive registry (primitives/registry.py)."""
    size: str | int = "1M"
    """Bytes asked for: an int, or text such as '64K' (parse_size)."""
    dtype: str = "float32"
    op: str = "sum"
    """The reduction, for primitives that reduce."""
    root: str = "0"
    """broadcast's and reduce's root rank, or 'all' to rotate it."""
    rounds: int = 20
    """Timed rounds, fixed: pytest-benchmark's calibration would differ between ranks."""
    warmup_rounds: int = 5
    ops_per_round: int = 1
    """Calls of the case in one timed round."""

    def __post_init__(self) -> None:
        from distbench.primitives.registry import PRIMITIVES

        if self.primitive not in PRIMITIVES:
            choices = ", ".join(PRIMITIVES)
            raise ValueError(f"unknown primitive {self.primitive!r}: choose from {choices}")


@dataclass(frozen=True)
class CommResult:
    """What one comm_benchmark call measured (seconds are pytest-benchmark's unit)."""

    primitive: str
    size_bytes: int
    world_size: int
    median_s: float
    """Median over rounds of the slowest rank's time per op."""
    algbw_GBps: float
    busbw_GBps: float


CommBenchmark = Callable[..., CommResult]


@pytest.fixture
def comm_benchmark(benchmark: Any, dist_context: Context) -> CommBenchmark:
    """Time one primitive under pytest-benchmark on every rank of the group (the arguments are
    CommRequest's):

    def test_all_reduce(comm_benchmark):
        result = comm_benchmark("all_reduce", size="1M", rounds=50)
    """

    def measure(*args: Any, **kwargs: Any) -> CommResult:
        return run_comm_benchmark(benchmark, dist_context, CommRequest(*args, **kwargs))

    return measure


def run_comm_benchmark(benchmark: Any, ctx: Context, request: CommRequest) -> CommResult:
    """The body of comm_benchmark: build the case, pedantic rounds, slowest rank, extra_info."""
    import torch

    from distbench.parse import parse_dtype, parse_size
    from distbench.primitives.base import CaseRequest
    from distbench.primitives.registry import PRIMITIVES
    from distbench.ranks import max_over_ranks
    from distbench.stats import algbw_gbps
    from distbench.timing import barrier, drain

    prim = PRIMITIVES[request.primitive]
    size, op = request.size, request.op
    requested = size if isinstance(size, int) else parse_size(size)
    torch_dtype = getattr(torch, parse_dtype(request.dtype))
    case = prim.build_cases(ctx, CaseRequest(requested, torch_dtype, op, request.root))[0]
    ops_per_round = request.ops_per_round  # a local: target() is timed
    per_round = ops_per_round * case.ops_per_run  # messages one timed round completes

    def align() -> None:
        barrier(ctx)  # untimed: every round starts together, as in latency mode

    def target() -> None:
        for _ in range(ops_per_round):
            case.run()
        drain(ctx.device)  # the host clock stops only after the GPU finished

    benchmark.pedantic(
        target,
        setup=align,
        rounds=request.rounds,
        warmup_rounds=request.warmup_rounds,
        iterations=1,
    )
    factor = prim.busbw_factor(ctx.world_size)
    metadata = getattr(benchmark, "stats", None)
    median_s = float("nan")
    if metadata is not None:  # None under --benchmark-disable (one untimed call)
        stats = metadata.stats
        slowest = max_over_ranks(ctx, list(stats.data))  # same length on every rank
        stats.data[:] = [t / per_round for t in slowest]
        for cached in [name for name in vars(stats) if name != "data"]:
            delattr(stats, cached)  # drop statistics computed from the per-rank times
        median_s = float(stats.median)
    algbw = algbw_gbps(case.size_bytes, median_s * 1e6) if median_s == median_s else 0.0
    result = CommResult(
        request.primitive, case.size_bytes, ctx.world_size, median_s, algbw, algbw * factor
    )
    benchmark.extra_info.update(
        {
            "primitive": request.primitive,
            "size_bytes": case.size_bytes,
            "world_size": ctx.world_size,
            "backend": ctx.backend,
            "device": ctx.device.type,
            "dtype": str(torch_dtype).removeprefix("torch."),
            "op": op if prim.reduces else "",
            "ops_per_round": per_round,
            "time": "per op, max over ranks per round, barrier before each round",
            "algbw_GBps": result.algbw_GBps,
            "busbw_GBps": result.busbw_GBps,
            "busbw_factor": factor,
        }
    )
    return result
