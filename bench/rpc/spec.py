"""What `distbench rpc` measures (RpcSpec, spec.json's workload). Torch-free: the CLI plans with
it too."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.parse import UsageError

RPC_PATTERNS = ("sync", "async", "rref", "ps")
"""sync: rpc_sync echo (ping-pong); async: rpc_async with --window calls in flight; rref:
remote() then to_here(); ps: workers rpc_async gradients to rank 0, which averages and returns
the parameters."""
DEFAULT_WINDOW = 16


@dataclass(frozen=True)
class RpcSpec:
    """Remote calls between the launch's ranks over TensorPipe (CPU tensors)."""

    sizes: tuple[int, ...]
    """Bytes of the tensor each call carries (echoed, created remotely, or the gradient)."""
    patterns: tuple[str, ...] = ("sync", "async")
    window: int = DEFAULT_WINDOW
    """async: calls in flight per rank before it waits for them all."""
    iters: int = 20
    """Calls per timed trial (async: windows; ps: steps)."""
    warmup: int = 3
    trials: int = 5
    tag: str = ""
    """Prefix of measurement ids when one run directory holds several specs (--env combos)."""

    kind = "rpc"

    def __post_init__(self) -> None:
        if not self.patterns or any(p not in RPC_PATTERNS for p in self.patterns):
            raise UsageError(f"rpc patterns must be among {', '.join(RPC_PATTERNS)}")
        if not self.sizes or min(self.sizes) < 4:
            raise UsageError("sizes must be at least 4 bytes (one float32)")
        if self.iters < 1 or self.trials < 1 or self.warmup < 0 or self.window < 1:
            raise UsageError("--iters, --trials and --window must be at least 1, --warmup 0")


def pattern_label(spec: RpcSpec, pattern: str) -> str:
    """The row's pattern: `async:window=W` carries its window, the others their name."""
    return f"async:window={spec.window}" if pattern == "async" else pattern


def plan_size(workload: RpcSpec, world_size: int) -> int:
    """Rows one launch writes: one per pattern and size."""
    return len(workload.patterns) * len(workload.sizes)
