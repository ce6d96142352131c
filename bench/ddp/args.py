"""`distbench ddp`'s own options (DdpArgs), each value parsed by its option, and the DdpSpec built
from them: every bad value refused with one line (UsageError -> exit 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from distbench.ddp.params import parse_param_count, width_for_params
from distbench.ddp.spec import DEFAULT_SHAPE, MODELS, ONE_PROCESS, STRATEGIES, DdpSpec
from distbench.options.launch import Machine, ResolvedLaunch, same_named
from distbench.options.opt import Opt, choice, flag, integer, text
from distbench.parse import UsageError, parse_choice, parse_int, parse_list


def parse_strategies(
    text: str,
    every: tuple[str, ...] = STRATEGIES,
    known: tuple[str, ...] = (*STRATEGIES, *ONE_PROCESS),
) -> list[str]:
    """'ddp,grad-avg' -> ['ddp', 'grad-avg'] (each of `known`, a repeat once); 'all' -> every
    strategy (`every`). ddp's by default, pipeline's given."""
    if text.strip().lower() == "all":
        return list(every)
    items = parse_list(text, "strategies")
    return list(dict.fromkeys(parse_choice(item, known, "strategy") for item in items))


def strategies_option(help: str, every: tuple[str, ...], known: tuple[str, ...]) -> Opt:
    """--strategies of a training command: a comma list of `known`, or 'all' (`every`)."""
    return text(
        help, lambda value: tuple(parse_strategies(value, every, known)), default_text="all"
    )


def parse_bucket_mbs(text: str) -> list[float]:
    """'1,25' -> [1.0, 25.0]: DDP bucket_cap_mb values (MB, as DDP counts them), each positive."""
    values = []
    for item in parse_list(text, "bucket sizes in MB"):
        try:
            value = float(item)
        except ValueError:
            raise UsageError(
                f"--bucket-mb '{item}' is not a number of MB: give e.g. 25 or a list 1,5,25"
            ) from None
        if not value > 0 or value == float("inf"):
            raise UsageError(f"--bucket-mb must be positive MB, got {item}: e.g. 25")
        values.append(value)
    return list(dict.fromkeys(values))


def parse_window_steps(text: str) -> int:
    """'auto' -> 0 (DdpSpec picks the length: at least 10 windows from 10 steps on), else the
    timed steps per window between barriers, at least 1."""
    if text.strip().lower() == "auto":
        return 0
    return parse_int(text, "--window-steps")


@dataclass(frozen=True)
class ModelArgs:
    """The synthetic model's options, which ddp and pipeline share (resolve_shape reads them)."""

    model: Annotated[
        str, choice("mlp or transformer (synthetic models and data, seeded).", MODELS, "model")
    ] = "mlp"
    width: Annotated[
        int | None, integer("Hidden width / d_model [default: 256 mlp, 128 transformer].")
    ] = None
    depth: Annotated[
        int | None, integer("Layers (mlp: Linear layers) [default: 4 mlp, 2 transformer].")
    ] = None
    params: Annotated[
        int | None,
        text(
            "Target parameter count, decimal (10M = 10,000,000 parameters; K/M/G here are "
            "powers of 1000, not --sizes' 1024): picks the width.",
            parse_param_count,
        ),
    ] = None


@dataclass(frozen=True)
class DdpArgs(ModelArgs):
    """The ddp command's workload options: the model's, then the training's."""

    strategies: Annotated[
        tuple[str, ...],
        strategies_option(
            f"Comma list or 'all': {', '.join(STRATEGIES)}; dp (nn.DataParallel, named only: "
            "2+ GPUs, --world-sizes 1).",
            STRATEGIES,
            (*STRATEGIES, *ONE_PROCESS),
        ),
    ] = STRATEGIES
    steps: Annotated[int, integer("Timed training steps per strategy.")] = 20
    warmup: Annotated[int, integer("Untimed steps before the timed ones.", minimum=0)] = 5
    window_steps: Annotated[
        int,
        text(
            "Timed steps per window between barriers; a window is one sample (the slowest "
            "rank's window / steps). 'auto': at least 10 windows (20 steps: windows of 2).",
            parse_window_steps,
            default_text="auto",
        ),
    ] = 0
    """0: auto (DdpSpec picks the length)."""
    batch_size: Annotated[int, integer("Samples per rank per step.")] = 32
    bucket_mb: Annotated[
        tuple[float, ...],
        text(
            "DDP bucket_cap_mb; a comma list sweeps it, e.g. 1,5,25.",
            lambda value: tuple(parse_bucket_mbs(value)),
        ),
    ] = (25.0,)
    gradient_as_bucket_view: Annotated[
        bool, flag("DDP gradient_as_bucket_view=True.", "--gradient-as-bucket-view")
    ] = False
    static_graph: Annotated[bool, flag("DDP static_graph=True.", "--static-graph")] = False
    avg_every: Annotated[
        int, integer("param-avg: average parameters every K optimizer steps (1 = every).")
    ] = 1
    seed: Annotated[int, integer("Seed of the initial weights and the data.", minimum=0)] = 0


def resolve_shape(args: ModelArgs) -> tuple[int, int]:
    """(width, depth): as given, or the model's default, or the width that comes closest to
    --params at the given (or default) depth."""
    default_width, default_depth = DEFAULT_SHAPE[args.model]
    layers = args.depth or default_depth
    if args.params is not None:
        if args.width is not None:
            raise UsageError("give either --params or --width, not both (--params picks the width)")
        return width_for_params(args.model, layers, args.params), layers
    return args.width or default_width, layers


def check_one_process(strategies: tuple[str, ...], launch: ResolvedLaunch) -> None:
    """dp (nn.DataParallel) drives every local GPU from one process: refused below 2 GPUs, and
    on any launch but one cuda rank."""
    if "dp" not in strategies:
        return
    gpus = Machine.probe().cuda_gpus
    if gpus < 2:
        raise UsageError(
            f"--strategies dp (nn.DataParallel: one process driving every local GPU) needs at "
            f"least 2 CUDA GPUs, this machine has {gpus}: drop dp, or run it on a multi-GPU node"
        )
    if launch.device != "cuda" or launch.world_sizes != [1]:
        raise UsageError(
            "--strategies dp is one process driving every GPU: give --backend nccl (or --device "
            "cuda) --world-sizes 1; its batch (--batch-size) is split over the GPUs"
        )


def build_ddp_spec(args: DdpArgs, launch: ResolvedLaunch | None = None) -> DdpSpec:
    """The ddp workload, the model's shape resolved; dp checked against the launch."""
    if launch is not None:
        check_one_process(args.strategies, launch)
    width, depth = resolve_shape(args)
    return DdpSpec(
        width=width,
        depth=depth,
        bucket_mbs=args.bucket_mb,
        **same_named(args, "strategies", "model", "batch_size", "steps", "warmup", "window_steps"),
        **same_named(args, "gradient_as_bucket_view", "static_graph", "avg_every", "seed"),
    )
