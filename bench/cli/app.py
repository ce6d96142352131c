"""The `distbench` command: parse what the user typed, build a RunSpec, hand it to run.execute.

Every primitive command shares one option set (built by add_collective_command), so they all
take the same flags, write the same rows and refuse bad input the same way: one line, exit 2.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from distbench.cli import options as opt
from distbench.cli.args import (
    LaunchArgs,
    Machine,
    build_launch_spec,
    resolve_launch,
)
from distbench.comm.args import CommArgs
from distbench.launch.run import EXIT_USAGE, execute, prepare_run_dir
from distbench.parse import UsageError
from distbench.primitives.facts import FACTS
from distbench.spec import RunSpec

if TYPE_CHECKING:
    from distbench.comm.options import PrimitiveArgs

app = typer.Typer(
    name="distbench",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def run_collective(
    primitive: str,
    launch_args: LaunchArgs,
    comm_args: CommArgs,
    primitive_args: PrimitiveArgs | None = None,
) -> int:
    """Shared body of every primitive command: parse -> spec -> execute."""
    from distbench.comm.options import PrimitiveArgs, build_workload
    from distbench.launch.resume import resume_run

    if launch_args.resume is not None:
        return resume_run(launch_args.resume, primitive)
    launch = resolve_launch(launch_args, Machine.probe())
    workload = build_workload((primitive,), comm_args, primitive_args or PrimitiveArgs(), launch)
    run_dir = prepare_run_dir(launch_args.out, primitive, launch.label, launch.node_rank)
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
        op: opt.Op = None,
        mode: opt.Mode = "throughput",
        iters: opt.Iters = "20",
        warmup: opt.Warmup = "5",
        trials: opt.Trials = "5",
        check: opt.Check = False,
        out: opt.Out = None,
        label: opt.Label = "",
        timeout: opt.Timeout = "300",
        nnodes: opt.Nnodes = None,
        node_rank: opt.NodeRank = None,
        nproc_per_node: opt.NprocPerNode = None,
        rdzv_endpoint: opt.RdzvEndpoint = None,
        rdzv_id: opt.RdzvId = None,
        separate_launches: opt.SeparateLaunches = False,
        resume: opt.Resume = None,
        root: opt.Root = None,
        pairs: opt.Pairs = None,
        pattern: opt.Pattern = None,
        window: opt.Window = None,
        bidirectional: opt.Bidirectional = False,
        primitives: opt.Primitives = None,
        config: opt.Config = None,
    ) -> None:
        launch_args = LaunchArgs(
            backend=backend,
            device=device,
            world_sizes=world_sizes,
            out=out,
            label=label,
            timeout=timeout,
            nnodes=nnodes,
            node_rank=node_rank,
            nproc_per_node=nproc_per_node,
            rdzv_endpoint=rdzv_endpoint,
            rdzv_id=rdzv_id,
            separate_launches=separate_launches,
            resume=resume,
        )
        comm_args = CommArgs(
            sizes=sizes,
            min_size=min_size,
            max_size=max_size,
            factor=factor,
            dtype=dtype,
            op=op or "sum",
            mode=mode,
            iters=iters,
            warmup=warmup,
            trials=trials,
            check=check,
        )
        from distbench.cli.sweep import run_sweep
        from distbench.comm.options import PrimitiveArgs

        primitive_args = PrimitiveArgs(root, pairs, pattern, window, bidirectional)
        if name == "sweep":
            raise typer.Exit(run_sweep(primitives, config, launch_args, comm_args, primitive_args))
        if primitives is not None or config is not None:
            flag = "--primitives" if primitives is not None else "--config"
            raise UsageError(f"{flag} applies to distbench sweep only")
        if op is not None and not FACTS[primitive].reduces:
            raise UsageError(
                f"--op applies to reducing primitives (allreduce, reduce, reducescatter); "
                f"{name} moves data unchanged: drop --op"
            )
        raise typer.Exit(run_collective(primitive, launch_args, comm_args, primitive_args))

    command.__doc__ = f"{summary}\n\n\b\nExamples:\n{examples}"
    for param in opt.hidden_options(primitive):  # options that do not apply stay out of --help
        command.__annotations__[param] = opt.hidden(opt.PRIMITIVE_OPTIONS[param])
    app.command(name)(command)


add_collective_command(
    "allreduce",
    "all_reduce",
    "Time all_reduce (busbw = algbw x 2(n-1)/n, nccl-tests' convention).",
    "  distbench allreduce --backend gloo --sizes 1M,64M\n"
    "  distbench allreduce --backend nccl --world-sizes 2,4,8 --dtype bfloat16 --check\n"
    "  distbench allreduce --mode latency --min-size 4 --max-size 1M --factor 2",
)
add_collective_command(
    "broadcast",
    "broadcast",
    "Time broadcast from --root (busbw = algbw, nccl-tests' convention).",
    "  distbench broadcast --backend gloo --sizes 1M,64M --root 1\n"
    "  distbench broadcast --root all --check",
)
add_collective_command(
    "reduce",
    "reduce",
    "Time reduce to --root (busbw = algbw, nccl-tests' convention).",
    "  distbench reduce --backend gloo --sizes 1M,64M --op max\n"
    "  distbench reduce --root all --check",
)
add_collective_command(
    "allgather",
    "all_gather",
    "Time all_gather_into_tensor; size = the whole gathered buffer (busbw = algbw x (n-1)/n).",
    "  distbench allgather --backend gloo --sizes 1M,64M\n"
    "  distbench allgather --world-sizes 3 --check",
)
add_collective_command(
    "reducescatter",
    "reduce_scatter",
    "Time reduce_scatter_tensor; size = each rank's input (busbw = algbw x (n-1)/n).",
    "  distbench reducescatter --backend gloo --sizes 1M,64M\n"
    "  distbench reducescatter --world-sizes 3 --dtype bfloat16 --check",
)
add_collective_command(
    "alltoall",
    "all_to_all",
    "Time all_to_all_single; size = each rank's send buffer (busbw = algbw x (n-1)/n).",
    "  distbench alltoall --backend gloo --sizes 1M,64M\n"
    "  distbench alltoall --world-sizes 2,3 --check",
)
add_collective_command(
    "sendrecv",
    "send_recv",
    "Time point-to-point send/recv: ping-pong latency, windowed bandwidth, ring (busbw = algbw).",
    "  distbench sendrecv --backend gloo --sizes 8,1K,1M            # pingpong and window, 0->1\n"
    "  distbench sendrecv --pattern window --window 16 --bidirectional\n"
    "  distbench sendrecv --pattern pingpong --pairs all --world-sizes 4\n"
    "  distbench sendrecv --pattern ring --world-sizes 2,4",
)
add_collective_command(
    "sweep",
    "sweep",
    "Time several primitives over the same sizes, or a matrix from a TOML file.",
    "  distbench sweep --primitives allreduce,broadcast,sendrecv --sizes 1K,1M\n"
    "  distbench sweep --primitives all --world-sizes 2,3 --check\n"
    "  distbench sweep --config ci/sweep-example.toml --out results/nightly",
)


@app.command("compare")
def compare(
    baseline: Annotated[str, typer.Argument(help="Run directory or saved baseline name.")],
    current: Annotated[str, typer.Argument(help="Run directory (or baseline name).")],
    metric: opt.Metric = "time_us_p50",
    threshold: opt.Threshold = "5%",
    thresholds: opt.ThresholdsFile = None,
    alpha: opt.Alpha = "0.05",
    noise_test: opt.NoiseTest = True,
    output_format: opt.CompareFormat = "table",
    store: opt.Store = None,
    save: opt.CompareSave = None,
    fdr: opt.Fdr = True,
    min_samples: opt.MinSamples = "5",
    adjacent: opt.Adjacent = True,
    allow_missing: opt.AllowMissing = False,
) -> None:
    """Compare two runs row by row. Exit 0 pass, 1 a row regressed (past its threshold, past the
    noise, at two adjacent sizes), 4 rows of the baseline are missing, 2 bad input.

    \b
    Examples:
      distbench compare results/monday results/tuesday
      distbench compare nightly results/today --threshold busbw:10% --format markdown
      distbench compare nightly results/today --thresholds ci/thresholds-example.toml
      distbench compare nightly results/today --save verdict.md --save verdict.json
    """
    from distbench.reports.gate import CompareArgs, run_compare

    args = CompareArgs(
        baseline, current, metric, threshold, thresholds, alpha, output_format, store, noise_test,
        tuple(save or ()), fdr, min_samples, adjacent, allow_missing,
    )  # fmt: skip
    code, text = run_compare(args)
    print(text)
    raise typer.Exit(code)


baseline_app = typer.Typer(
    help="Save, list and delete named baselines for distbench compare.", no_args_is_help=True
)
app.add_typer(baseline_app, name="baseline")


@baseline_app.command("save")
def baseline_save(
    run_dir: Annotated[str, typer.Argument(help="The run directory to pin.")],
    name: Annotated[str, typer.Option(help="Baseline name, e.g. nightly or a100-torch2.13.")],
    store: opt.Store = None,
    force: opt.Force = False,
) -> None:
    """Copy a run's results, samples and manifest into the baseline store.

    \b
    Example:
      distbench baseline save results/20261129T020000Z-sweep --name nightly
    """
    from distbench.reports.gate import run_baseline_save

    print(run_baseline_save(run_dir, name, store, force))


@baseline_app.command("delete")
def baseline_delete(
    name: Annotated[str, typer.Argument(help="The baseline to remove from the store.")],
    store: opt.Store = None,
) -> None:
    """Remove a saved baseline from the store.

    \b
    Example:
      distbench baseline delete nightly-old
    """
    from distbench.reports.gate import run_baseline_delete

    print(run_baseline_delete(name, store))


@baseline_app.command("list")
def baseline_list(store: opt.Store = None) -> None:
    """List the saved baselines."""
    from distbench.reports.gate import run_baseline_list

    print(run_baseline_list(store))


@app.command("ddp")
def ddp(
    backend: opt.Backend = "auto",
    device: opt.Device = "auto",
    world_sizes: opt.WorldSizes = None,
    model: opt.Model = "mlp",
    width: opt.Width = None,
    depth: opt.Depth = None,
    params: opt.Params = None,
    strategies: opt.Strategies = "all",
    steps: opt.Steps = "20",
    warmup: opt.WarmupSteps = "5",
    window_steps: opt.WindowSteps = "auto",
    batch_size: opt.BatchSize = "32",
    bucket_mb: opt.BucketMb = "25",
    gradient_as_bucket_view: opt.GradientAsBucketView = False,
    static_graph: opt.StaticGraph = False,
    avg_every: opt.AvgEvery = "1",
    seed: opt.Seed = "0",
    out: opt.Out = None,
    label: opt.Label = "",
    timeout: opt.Timeout = "300",
    nnodes: opt.Nnodes = None,
    node_rank: opt.NodeRank = None,
    nproc_per_node: opt.NprocPerNode = None,
    rdzv_endpoint: opt.RdzvEndpoint = None,
    rdzv_id: opt.RdzvId = None,
    resume: opt.Resume = None,
) -> None:
    """Time whole training steps: DDP (buckets, hooks) versus manual gradient/parameter averaging.

    \b
    Examples:
      distbench ddp --backend gloo --world-sizes 1,2
      distbench ddp --strategies ddp,ddp-nocomm,grad-avg --bucket-mb 1,5,25 --params 10M
      distbench ddp --backend nccl --model transformer --width 512 --depth 6 --steps 50
    """
    from distbench.ddp.options import DdpArgs, build_ddp_spec
    from distbench.launch.resume import resume_run

    launch_args = LaunchArgs(
        backend=backend, device=device, world_sizes=world_sizes, out=out, label=label,
        timeout=timeout, nnodes=nnodes, node_rank=node_rank, nproc_per_node=nproc_per_node,
        rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id,
    )  # fmt: skip
    ddp_args = DdpArgs(
        model=model, width=width, depth=depth, params=params, strategies=strategies,
        steps=steps, warmup=warmup, window_steps=window_steps, batch_size=batch_size,
        bucket_mb=bucket_mb,
        gradient_as_bucket_view=gradient_as_bucket_view, static_graph=static_graph,
        avg_every=avg_every, seed=seed,
    )  # fmt: skip
    if resume is not None:
        raise typer.Exit(resume_run(resume, "ddp"))
    launch = resolve_launch(launch_args, Machine.probe())
    workload = build_ddp_spec(ddp_args)
    run_dir = prepare_run_dir(launch_args.out, "ddp", launch.label, launch.node_rank)
    spec = RunSpec(launch=build_launch_spec(launch, run_dir), workload=workload)
    raise typer.Exit(execute(spec, title="ddp"))


@app.command("report")
def report(run_dirs: opt.ReportRuns, out: opt.ReportOut = None, by: opt.ReportBy = "auto") -> None:
    """Figures and tables from run directories: report.html (one self-contained page), report.md
    and PNGs; several runs (labels, hosts, clusters) are compared side by side.

    \b
    Examples:
      distbench report results/20261129T101500Z-all_reduce
      distbench report results/cluster-a results/cluster-b --out report-ab
      distbench report results/ --by host
    """
    from distbench.reports.report import build_report

    files = build_report(run_dirs, out, by)
    print(
        f"report: {files.html} and {files.markdown.name}, {len(files.figures)} figures "
        f"({files.rows} rows)"
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


def print_version(value: bool) -> None:
    if value:
        from distbench import __version__
        from distbench.collectors.schema import SCHEMA_VERSION

        print(f"distbench {__version__} (results schema v{SCHEMA_VERSION})")
        raise typer.Exit()


@app.callback()
def distbench(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=print_version,
            is_eager=True,
            help="Print distbench's version and the results schema version it writes.",
        ),
    ] = False,
) -> None:
    """Benchmark PyTorch's communication primitives on real torchrun process groups.

    \b
    Start here (no GPU needed):
      distbench allreduce --backend gloo --sizes 1M,64M
    On a GPU node (one rank per GPU, CUDA-event timing):
      distbench allreduce --backend nccl --sizes 1M,64M,1G --check
    Then:
      distbench sweep --config ci/sweep-example.toml       every primitive
      distbench ddp --world-sizes 1,2                      DDP vs manual averaging
      distbench report results/RUN                         figures and tables
      distbench compare BASELINE_RUN NEW_RUN               the regression gate
    Every run writes results.csv, samples.csv and manifest.json under results/.
    'distbench COMMAND --help' shows each command's options and examples.
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
