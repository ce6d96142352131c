"""What `distbench overlap` measures (OverlapSpec, spec.json's workload). Torch-free: the CLI
plans with it too."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.parse import UsageError
from distbench.primitives.facts import with_flag
from distbench.spec import Repeats, check_known, check_minimums

OVERLAP_PRIMITIVES = with_flag("overlap")
"""The collectives a training step overlaps with compute (DDP's buckets, FSDP's gathers and
reductions, parameter broadcasts), each issued with async_op=True (their facts say `overlap`)."""
PHASES = ("compute", "comm", "both")
"""What every case times: the matmuls alone, the collective alone, the collective issued
async_op=True, the matmuls, then wait."""
MAX_COMPUTE = 16384
"""Largest --compute N: a 16384 x 16384 fp32 matmul is 8.8 TFLOP, seconds even on a GPU."""


@dataclass(frozen=True)
class OverlapSpec(Repeats):
    """Every (compute threads, primitive, size, compute size, mode) case: three phases each."""

    sizes: tuple[int, ...]
    """Requested bytes per rank's buffer (the gathered buffer for all_gather/reduce_scatter)."""
    primitives: tuple[str, ...] = ("all_reduce",)
    compute: tuple[int, ...] = (1024,)
    """N of the compute: one op is `compute_iters` fp32 matmuls of [N, N] @ [N, N]."""
    compute_iters: int = 0
    """Matmuls per compute op; 0: as many as take about the collective's time alone (measured
    per case after warm-up, the largest count over ranks)."""
    compute_threads: tuple[int, ...] = (0,)
    """torch.set_num_threads on every rank per case; 0: leave the launch's setting."""
    check: bool = False
    """Check the collective's result in the overlapped phase (compute running), untimed."""

    kind = "overlap"

    def __post_init__(self) -> None:
        if not (self.primitives and self.sizes and self.compute and self.compute_threads):
            raise UsageError("overlap needs at least one primitive, size, compute and thread count")
        check_known(self.primitives, OVERLAP_PRIMITIVES, "overlap primitive")
        self.check_repeats()
        if max(self.compute) > MAX_COMPUTE:
            raise UsageError(f"--compute sizes must be 1..{MAX_COMPUTE}")
        check_minimums(
            ("sizes", min(self.sizes), 1),
            ("--compute", min(self.compute), 1),
            ("--compute-iters", self.compute_iters, 0),
            ("--compute-threads", min(self.compute_threads), 0),
        )


def plan_size(workload: OverlapSpec, world_size: int) -> int:
    """Rows one launch writes: one per case."""
    cases = len(workload.primitives) * len(workload.sizes) * len(workload.compute)
    return cases * len(workload.compute_threads) * len(workload.modes)
