"""The `distbench` command: each command takes its option groups (options/opt.py with_groups),
builds the workload and hands it to cli/run.py run_workload.

Every primitive command shares one option set (add_collective_command), so they all take the
same flags, write the same rows and refuse bad input the same way: one line, exit 2. They are
registered in one loop over the primitives' facts (primitives/facts.py: command, summary,
examples).
"""

from __future__ import annotations

import functools
import sys
import traceback
from dataclasses import fields
from typing import TYPE_CHECKING, Annotated, Any

import typer

from distbench.cli.acceptance import acceptance
from distbench.cli.compare import baseline_app, compare
from distbench.cli.export import export
from distbench.cli.history import history
from distbench.cli.init import init
from distbench.cli.overlap import overlap
from distbench.cli.pairs import pairs
from distbench.cli.pipeline import pipeline
from distbench.cli.report import report
from distbench.cli.rpc import rpc
from distbench.cli.run import run_workload
from distbench.cli.sweep import SweepArgs, run_sweep
from distbench.comm.args import CommArgs, check_op
from distbench.comm.primitive_args import PrimitiveArgs, build_workload, hidden_options
from distbench.comm.spec import CommSpec
from distbench.ddp.args import DdpArgs, build_ddp_spec
from distbench.launch.run import EXIT_USAGE
from distbench.options.launch import LaunchArgs, ResolvedLaunch
from distbench.options.opt import with_groups
from distbench.parse import UsageError
from distbench.primitives.facts import FACTS

EXIT_INTERNAL = 3
"""An unexpected error (a bug): its own code, since 1 means a regression to compare and the
gate, a failed rank to a measurement."""

if TYPE_CHECKING:
    from distbench.ddp.spec import DdpSpec

app = typer.Typer(
    name="distbench",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def add_collective_command(name: str, primitive: str, summary: str, examples: str) -> None:
    """Register `distbench <name>` for one primitive (or sweep) with the shared option groups;
    options that do not apply to the primitive are left out of its --help."""

    sweep_only = [] if name == "sweep" else [f.name for f in fields(SweepArgs)]

    @with_groups(
        [*hidden_options(primitive), *sweep_only],
        sweep=SweepArgs,
        comm=CommArgs,
        specific=PrimitiveArgs,
        launch=LaunchArgs,
    )
    def command(
        sweep: SweepArgs, comm: CommArgs, specific: PrimitiveArgs, launch: LaunchArgs
    ) -> None:
        if name == "sweep":
            raise typer.Exit(run_sweep(sweep, launch, comm, specific))
        sweep.refuse_outside_sweep()
        check_op(primitive, comm.op)

        def build(resolved: ResolvedLaunch) -> CommSpec:
            return build_workload((primitive,), comm, specific, resolved)

        raise typer.Exit(run_workload(launch, primitive, build, primitive, comm.table))

    command.__doc__ = f"{summary}\n\n\b\nExamples:\n{examples}"
    app.command(name)(command)


for facts in sorted(FACTS.values(), key=lambda facts: facts.point_to_point):  # collectives first
    add_collective_command(facts.command, facts.name, facts.summary, facts.examples)
add_collective_command(
    "sweep",
    "sweep",
    "Time several primitives over the same sizes, or a matrix from a TOML file.",
    "  distbench sweep --primitives all --world-sizes 2,3 --check --root all --pattern all\n"
    "  distbench sweep --config ci/sweep-example.toml",
)
app.command("pairs")(pairs)
app.command("init")(init)
app.command("rpc")(rpc)
app.command("pipeline")(pipeline)
app.command("overlap")(overlap)
app.command("compare")(compare)
app.command("history")(history)
app.command("report")(report)
app.command("acceptance")(acceptance)
app.command("export")(export)
app.add_typer(baseline_app, name="baseline")


@app.command("ddp")
@with_groups(ddp=DdpArgs, launch=LaunchArgs)
def ddp(ddp: DdpArgs, launch: LaunchArgs) -> None:
    """Time whole training steps: DDP (buckets, hooks) versus manual gradient/parameter averaging.

    \b
    Examples:
      distbench ddp --backend gloo --world-sizes 1,2
      distbench ddp --strategies ddp,ddp-nocomm,local,grad-avg --bucket-mb 1,5,25 --params 10M
      distbench ddp --backend nccl --model transformer --width 512 --depth 6 --steps 50
    """

    def build(resolved: ResolvedLaunch) -> DdpSpec:
        return build_ddp_spec(ddp, resolved)  # dp (nn.DataParallel) is checked there

    raise typer.Exit(run_workload(launch, "ddp", build, resumed_by="ddp"))


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
      distbench ddp --backend gloo --world-sizes 1,2       DDP vs manual averaging
      distbench report results/RUN                         figures and tables
      distbench compare BASELINE_RUN NEW_RUN               the regression gate
      distbench history --glob 'results/nightly-*'         nights as time series
      distbench acceptance --quick                         is this cluster healthy
    Every run writes results.csv, samples.csv and manifest.json under results/.
    'distbench COMMAND --help' shows each command's options and examples.
    """


@functools.cache
def command() -> Any:
    """The click command typer builds from `app`, once a process. Building it reads every
    command's signature (~0.15 s for ~30 commands); in-process callers (the tests, the manual's
    examples) run the CLI hundreds of times. `app(...)` would build it on every call, and adds
    only typer's pretty tracebacks, which `app` turns off."""
    group = typer.main.get_command(app)
    commands = getattr(group, "commands", {})
    for name, text in SHORT_HELP.items():
        if name in commands:
            commands[name].short_help = text
    ordered = [n for n in SHORT_HELP if n in commands]
    ordered += [n for n in commands if n not in SHORT_HELP]
    if commands:
        commands_of = {name: commands[name] for name in ordered}  # measure, then read
        setattr(group, "commands", commands_of)  # noqa: B010 (a click.Group; typed as Command)
    return group


SHORT_HELP = {
    "allreduce": "all_reduce: busbw = algbw x 2(n-1)/n",
    "broadcast": "broadcast from --root",
    "reduce": "reduce to --root",
    "allgather": "all_gather (size: the whole gathered buffer)",
    "reducescatter": "reduce_scatter (size: each rank's input)",
    "alltoall": "all_to_all (size: each rank's send buffer)",
    "alltoallv": "uneven all_to_all (MoE dispatch)",
    "gather": "gather to --root",
    "sendrecv": "send/recv: ping-pong, window, ring, multipair",
    "sweep": "several primitives, or a matrix from --config",
    "ddp": "whole training steps: DDP vs manual averaging, FSDP",
    "pipeline": "a model split into stages across ranks",
    "overlap": "a collective while a matmul computes",
    "pairs": "every pair of ranks or nodes: name the slow one",
    "init": "process-group start-up per init method",
    "rpc": "torch.distributed.rpc calls",
    "acceptance": "is this cluster healthy: pairs + the nightly matrix",
    "report": "figures and tables of runs: report.html, report.md",
    "compare": "the regression gate: a run against a baseline",
    "history": "runs as time series: change points, verdicts",
    "baseline": "save, list and delete named baselines",
    "export": "a run as nccl-tests JSON, OpenMetrics, bmf or gab",
}
"""The one-line summary `distbench --help` lists each command with (click cuts the docstrings'
first sentences mid-phrase at 80 columns), in the order listed: what measures, then what reads
runs."""


def given_twice(group: Any, argv: list[str]) -> str | None:
    """The first option of the command in `argv` that takes one value and is given twice
    (`--sizes 1K --sizes 1M`, `-s1K -s4K`: click keeps the last silently, a user expects both),
    or None. Options that repeat (--env) and flags may; an option's value is never read as an
    option (`--label --sizes`)."""
    command, args = group, list(argv)
    while args and args[0] in getattr(command, "commands", {}):
        command, args = command.commands[args[0]], args[1:]
    params = {}
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") == "option":
            for name in (*param.opts, *getattr(param, "secondary_opts", [])):
                params[name] = param
    seen: dict[str, int] = {}
    i = 0
    while i < len(args) and args[i] != "--":
        token, takes_next = args[i], False
        name, _, _ = token.partition("=")
        if token.startswith("-") and not token.startswith("--") and len(token) > 2:
            name = token[:2]  # -s1K: a short option with its value attached
        param = params.get(name)
        if param is not None:
            single = not getattr(param, "multiple", False) and not getattr(param, "is_flag", False)
            takes_next = not getattr(param, "is_flag", False) and token == name
            if single:
                seen[param.name] = seen.get(param.name, 0) + 1
                if seen[param.name] > 1:
                    return str(max(param.opts, key=len))
        i += 2 if takes_next else 1
    return None


def run_cli(argv: list[str] | None = None) -> int:
    """Run the CLI in this process; usage errors become one line on stderr and exit code 2."""
    try:
        group = command()
        twice = given_twice(group, sys.argv[1:] if argv is None else argv)
        if twice is not None:  # scripts put defaults first and overrides after: a note, not a stop
            print(
                f"distbench: note: {twice} is given more than once: the last one is used (a "
                "later value replaces an earlier one, it does not add to it)",
                file=sys.stderr,
            )
        code = group(args=argv, prog_name="distbench", standalone_mode=False)
    except UsageError as error:
        print(f"distbench: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except _framework_errors() as error:
        ctx = getattr(error, "ctx", None)
        if type(error).__name__ == "NoArgsIsHelpError" and ctx is not None:
            print(ctx.get_help())  # `distbench` or `distbench baseline` alone: the help, plainly
            return 0
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        print(f"distbench: error: {message}{hint}", file=sys.stderr)
        return EXIT_USAGE
    except typer.Abort:
        return 130
    except SystemExit as stop:  # click's answer to a closed output is exit 1, a gate's "failed"
        from distbench.launch.closed import EXIT_PIPE, output_closed, silence_closed_outputs

        if stop.code == 1 and output_closed():
            silence_closed_outputs()
            return EXIT_PIPE
        raise
    except Exception:  # a bug: never exit 1, which a gate reads as "regressed"
        traceback.print_exc()
        print(
            f"distbench: internal error (exit {EXIT_INTERNAL}): distbench failed, not your input "
            "and not a verdict; the traceback above is what to report",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    return code if isinstance(code, int) else 0


def main() -> None:
    """Console entry point (`distbench`, `python -m distbench`)."""
    sys.exit(run_cli())
