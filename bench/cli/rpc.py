"""`distbench rpc`: build the RpcSpec and run it like every measuring command (cli/run.py)."""

from __future__ import annotations

import typer

from distbench.cli.run import run_workload
from distbench.options.launch import LaunchArgs, ResolvedLaunch
from distbench.options.opt import with_groups
from distbench.rpc.args import RpcArgs, build_rpc_spec
from distbench.rpc.spec import RpcSpec


@with_groups(rpc=RpcArgs, launch=LaunchArgs)
def rpc(rpc: RpcArgs, launch: LaunchArgs) -> None:
    """Time torch.distributed.rpc over TensorPipe (CPU, 2+ ranks): rpc_sync echo, rpc_async
    with --window in flight, remote()+to_here(), and a parameter server at rank 0.

    \b
    Examples:
      distbench rpc --backend gloo --world-sizes 2 --pattern all --sizes 8,64K,1M
    """

    def build(resolved: ResolvedLaunch) -> RpcSpec:
        return build_rpc_spec(rpc, resolved)

    raise typer.Exit(run_workload(launch, "rpc", build, resumed_by="rpc"))
