"""A torchx component: `distbench sweep` on any scheduler torchx knows (slurm, kubernetes,
local_cwd ...). Needs the optional extra: pip install 'distbench[torchx]'.

    torchx run -s local_cwd bench/torchx.py:sweep --primitives allreduce --world_sizes 2
    torchx run -s kubernetes -cfg queue=default,namespace=bench bench/torchx.py:sweep \\
        --nnodes 2 --nproc_per_node 8 --backend nccl --image ghcr.io/me/distbench:0.2.0

distbench starts its own torchrun on each node (it times and watches the ranks itself), so the
component asks torchx.components.dist.ddp for one process per node: that process is the distbench
command, which then launches --nproc_per_node ranks and joins the other nodes through torchrun's
c10d rendezvous on node 0's host (the scheduler's rank-0 host variable, as ddp's own rendezvous),
one port above torchx's.
"""

# torchx reads the signature with its own linter, which knows Optional[...] and List[...] only
# ruff: noqa: UP006, UP035, UP045
from typing import List, Optional

import torchx.specs as specs
from torchx.components.dist import _noquote, ddp

DEFAULT_IMAGE = "ghcr.io/pytorch/torchx:0.7.0"


def sweep(
    *extra: str,
    primitives: str = "allreduce",
    sizes: str = "1K,1M,64M",
    backend: str = "auto",
    world_sizes: Optional[str] = None,
    nnodes: int = 1,
    nproc_per_node: Optional[int] = None,
    out: str = "results/torchx",
    label: str = "",
    image: str = DEFAULT_IMAGE,
    cpu: int = 2,
    gpu: int = 0,
    memMB: int = 4096,
    h: Optional[str] = None,
    mounts: Optional[List[str]] = None,
    rdzv_port: int = 29500,
) -> specs.AppDef:
    """Run `distbench sweep` on `nnodes` nodes of `nproc_per_node` ranks each.

    Args:
        extra: more distbench sweep options, as typed (e.g. --check --mode both)
        primitives: --primitives, e.g. allreduce,broadcast or all
        sizes: --sizes, e.g. 1K,1M,64M
        backend: gloo, nccl or auto
        world_sizes: --world-sizes [default: every rank of the job]
        nnodes: nodes
        nproc_per_node: ranks per node [default: distbench's: GPUs for nccl, 1 per CPU node]
        out: the run directory (on a shared volume when nnodes > 1)
        label: --label stored in every row
        image: container image with distbench installed
        cpu: CPUs per node
        gpu: GPUs per node
        memMB: memory per node in MB
        h: a named resource of the scheduler instead of cpu/gpu/memMB
        mounts: volumes, torchx's syntax: type=bind,src=/data,dst=/results
        rdzv_port: torchx's rendezvous port; distbench's is the next one
    """
    args = ["sweep", "--primitives", primitives, "--sizes", sizes, "--backend", backend]
    args += ["--out", out]
    if nproc_per_node is not None:
        args += ["--nproc-per-node", str(nproc_per_node)]
    if world_sizes:
        args += ["--world-sizes", world_sizes]
    if label:
        args += ["--label", label]
    if nnodes > 1:
        # the host is the scheduler's variable, expanded by the job's shell (as ddp does)
        endpoint = _noquote(f"$${{{specs.macros.rank0_env}:=localhost}}:{rdzv_port + 1}")
        args += ["--nnodes", str(nnodes), "--rdzv-endpoint", endpoint]
        args += ["--rdzv-id", specs.macros.app_id]
    return ddp(
        *args,
        *extra,
        m="distbench",
        name="distbench",
        image=image,
        cpu=cpu,
        gpu=gpu,
        memMB=memMB,
        h=h,
        j=f"{nnodes}x1",
        rdzv_port=rdzv_port,
        mounts=mounts,
    )
