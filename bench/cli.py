"""The `distbench` command: parse what the user typed, build a RunSpec, hand it to run.execute.

Every primitive command shares one option set (built by add_collective_command), so they all
take the same flags, write the same rows and refuse bad input the same way: one line, exit 2.
"""

from __future__ import annotations

import sys

import typer

from distbench import cli_options as opt
from distbench.options import (
    CommArgs,
    LaunchArgs,
    Machine,
    build_comm_spec,
    build_launch_spec,
    resolve_launch,
)
from distbench.parse import UsageError
from distbench.run import EXIT_USAGE, execute, prepare_run_dir
from distbench.spec import RunSpec

app = typer.Typer(
    name="distbench",
    help="Benchmark PyTorch's communication primitives on real torchrun process groups.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def run_collective(primitive: str, launch_args: LaunchArgs, comm_args: CommArgs) -> int:
    """Shared body of every primitive command: parse -> spec -> execute."""
    launch = resolve_launch(launch_args, Machine.probe())
    workload = build_comm_spec((primitive,), comm_args, launch)
    run_dir = prepare_run_dir(launch_args.out, primitive, launch.label)
    spec = RunSpec(launch=build_launch_spec(launch, run_dir), workload=workload)
    return execute(spec, title=primitive)


def add_collective_command(name: str, primitive: str, summary: str, examples: str) -> None:
    """Register `distbench <name>` for one primitive with the shared option set."""

    def command(
        sizes: opt.Sizes = None,
        backend: opt.Backend = "auto",
        device: opt.Device = "auto",
        world_sizes: opt.WorldSizes = None,
        min_size: opt.MinSize = None,
        max_size: opt.MaxSize = None,
        factor: opt.Factor = None,
        dtype: opt.Dtype = "float32",
        op: opt.Op = "sum",
        mode: opt.Mode = "throughput",
        iters: opt.Iters = "20",
        warmup: opt.Warmup = "5",
        trials: opt.Trials = "5",
        check: opt.Check = False,
        out: opt.Out = None,
        label: opt.Label = "",
        timeout: opt.Timeout = "300",
    ) -> None:
        launch_args = LaunchArgs(
            backend=backend,
            device=device,
            world_sizes=world_sizes,
            out=out,
            label=label,
            timeout=timeout,
        )
        comm_args = CommArgs(
            sizes=sizes,
            min_size=min_size,
            max_size=max_size,
            factor=factor,
            dtype=dtype,
            op=op,
            mode=mode,
            iters=iters,
            warmup=warmup,
            trials=trials,
            check=check,
        )
        raise typer.Exit(run_collective(primitive, launch_args, comm_args))

    command.__doc__ = f"{summary}\n\n\b\nExamples:\n{examples}"
    app.command(name)(command)


add_collective_command(
    "allreduce",
    "all_reduce",
    "Time all_reduce (busbw = algbw x 2(n-1)/n, nccl-tests' convention).",
    "  distbench allreduce --backend gloo --sizes 1M,64M\n"
    "  distbench allreduce --backend nccl --world-sizes 2,4,8 --dtype bfloat16 --check\n"
    "  distbench allreduce --mode latency --min-size 4 --max-size 1M --factor 2",
)


def _framework_errors() -> tuple[type[Exception], ...]:
    """Typer's parse errors: its own (typer >= 0.26 vendors click) or click's (older typer)."""
    errors: list[type[Exception]] = [typer.TyperException]
    try:
        import click

        errors.append(click.ClickException)
    except ImportError:
        pass
    return tuple(errors)


@app.callback()
def distbench() -> None:
    """Benchmark PyTorch's communication primitives on real torchrun process groups.

    \b
    Start here (no GPU needed):
      distbench allreduce --backend gloo --sizes 1M,64M
    Every run writes results.csv, samples.csv and manifest.json under results/.
    """


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI in this process; usage errors become one line on stderr and exit code 2."""
    try:
        code = app(args=argv, prog_name="distbench", standalone_mode=False)
    except UsageError as error:
        print(f"distbench: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except _framework_errors() as error:
        ctx = getattr(error, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        print(f"distbench: error: {message}{hint}", file=sys.stderr)
        return EXIT_USAGE
    except typer.Abort:
        return 130
    return code if isinstance(code, int) else 0


def main() -> None:
    """Console entry point (`distbench`, `python -m distbench`)."""
    sys.exit(run_cli())
