"""One rank of a distbench launch. The CLI starts it through torchrun:

    python -m torch.distributed.run --standalone --nproc-per-node 2 \
        -m distbench.worker RUN/spec.json

It reads the one spec file (torchrun never sees distbench's flags), binds its device, joins the
process group, runs the workload and tears the group down in `finally`. Its stdout and stderr,
C++ messages included, go to RUN/logs/ws<N>-rank<R>.log.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

from distbench.collectors.schema import progress_path, rank_log_path
from distbench.comm.nccl_trace import enable_nccl_trace
from distbench.groups import (
    WAIT_TIMEOUT,
    announce_measurements,
    bind_device,
    join_world,
    record_torch_facts,
    record_worker_env,
    share_done,
    share_node_facts,
    start_heartbeat,
)
from distbench.plan import measured_sizes
from distbench.primitives.base import Context
from distbench.spec import RunSpec
from distbench.workloads import WORKLOADS, Runner, load_spec


def redirect_output(path: Path) -> None:
    """Point file descriptors 1 and 2 at the rank's log: gloo's and NCCL's C++ output lands too."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, closefd=False)


def make_logger(rank: int) -> Callable[[str], None]:
    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')} rank {rank}] {message}", flush=True)

    return log


def run_world_sizes(
    spec: RunSpec,
    runner: Runner,
    rank: int,
    world_size: int,
    device: torch.device,
    log: Callable[[str], None],
) -> None:
    """Run the workload at every world size this launch measures: the whole world, or subgroups
    of ranks 0..k-1 for the smaller sizes."""
    sizes = measured_sizes(spec.launch, spec.kind, world_size)
    if rank == 0:
        record_worker_env(Path(spec.launch.run_dir), world_size)
    waiters = None
    if any(size < world_size for size in sizes):
        waiters = dist.new_group(backend="gloo", timeout=WAIT_TIMEOUT)
    for size in sizes:
        group = None
        if size < world_size:
            group = dist.new_group(ranks=list(range(size)))
        if rank < size:
            ctx = Context(
                rank=rank,
                world_size=size,
                device=device,
                backend=spec.launch.backend,
                group=group,
                global_ranks=tuple(range(size)),
            )
            log(f"world size {size}: ranks 0-{size - 1}" + (" (subgroup)" if group else ""))
            runner(spec, ctx, log)
        else:
            log(f"world size {size}: waiting outside the subgroup of ranks 0-{size - 1}")
        if waiters is not None:
            dist.barrier(group=waiters)  # members arrive when their sweep is done
        if group is not None:
            dist.destroy_process_group(group)


@record
def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    spec = load_spec(Path(args[0]))
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    run_dir = Path(spec.launch.run_dir)
    redirect_output(rank_log_path(run_dir, world_size, rank))
    log = make_logger(rank)
    if rank == 0:  # rank 0 of every measured group (subgroups are ranks 0..k-1)
        log = announce_measurements(log, progress_path(run_dir, world_size))
    node = os.environ.get("GROUP_RANK", "0")  # torchrun's node rank
    log(
        f"start pid={os.getpid()} world_size={world_size} local_rank={local_rank} "
        f"node={node}/{spec.launch.nnodes} host={socket.gethostname()}"
    )
    heartbeat = start_heartbeat(run_dir, world_size, rank)
    try:
        device = bind_device(spec.launch.device, local_rank)
        if local_rank == 0:
            record_torch_facts(run_dir, world_size)  # the CLI never imports torch: it reads these
        if getattr(spec.workload, "nccl_trace", False):  # before NCCL reads NCCL_DEBUG
            enable_nccl_trace(run_dir, world_size, rank)
        join_world(spec.launch.backend, device, spec.launch.timeout_s)
        share_node_facts(run_dir, world_size, local_rank, device)  # manifest: nodes, ranks
        try:
            spec, writer = share_done(spec, rank)
            if spec.launch.done:
                log(
                    f"{len(spec.launch.done)} measurements already in results.csv (earlier "
                    "launches of this run, or the run being resumed): not measured again"
                )
            if rank != 0 and local_rank == 0 and spec.launch.nnodes > 1:
                log(f"results are written by global rank 0 on {writer}, not on this node")
            runner = WORKLOADS[spec.kind].load_runner()
            run_world_sizes(spec, runner, rank, world_size, device, log)
            log("done")
        finally:
            if dist.is_initialized():  # init's runner may have lost its group to an error
                dist.destroy_process_group()
    finally:
        heartbeat.stop()


if __name__ == "__main__":
    main()
