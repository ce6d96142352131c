"""`distbench ddp`'s own options, as typed (strings), and the DdpSpec built from them: every value
parsed, every bad one refused with one line (UsageError -> exit 2)."""

from __future__ import annotations

from dataclasses import dataclass

from distbench.ddp.params import parse_param_count, width_for_params
from distbench.ddp.spec import DEFAULT_SHAPE, MODELS, STRATEGIES, DdpSpec
from distbench.parse import UsageError, parse_choice, parse_int, parse_list


@dataclass(frozen=True)
class DdpArgs:
    """The ddp command's workload options, as typed."""

    model: str = "mlp"
    width: str | None = None
    depth: str | None = None
    params: str | None = None
    strategies: str = ",".join(STRATEGIES)
    steps: str = "20"
    warmup: str = "5"
    window_steps: str = "auto"
    batch_size: str = "32"
    bucket_mb: str = "25"
    gradient_as_bucket_view: bool = False
    static_graph: bool = False
    avg_every: str = "1"
    seed: str = "0"


def parse_strategies(text: str) -> list[str]:
    """'ddp,grad-avg' -> ['ddp', 'grad-avg']; 'all' -> every strategy."""
    if text.strip().lower() == "all":
        return list(STRATEGIES)
    items = parse_list(text, "strategies")
    return list(dict.fromkeys(parse_choice(item, STRATEGIES, "strategy") for item in items))


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


def resolve_shape(
    model: str, width: str | None, depth: str | None, params: str | None
) -> tuple[int, int]:
    """(width, depth): as given, or the model's default, or the width that comes closest to
    --params at the given (or default) depth."""
    default_width, default_depth = DEFAULT_SHAPE[model]
    layers = parse_int(depth, "--depth") if depth is not None else default_depth
    if params is not None:
        if width is not None:
            raise UsageError("give either --params or --width, not both (--params picks the width)")
        return width_for_params(model, layers, parse_param_count(params)), layers
    return (parse_int(width, "--width") if width is not None else default_width), layers


def build_ddp_spec(args: DdpArgs) -> DdpSpec:
    """The ddp workload, every value parsed and checked."""
    model = parse_choice(args.model, MODELS, "model")
    width, depth = resolve_shape(model, args.width, args.depth, args.params)
    return DdpSpec(
        strategies=tuple(parse_strategies(args.strategies)),
        model=model,
        width=width,
        depth=depth,
        batch_size=parse_int(args.batch_size, "--batch-size"),
        steps=parse_int(args.steps, "--steps"),
        warmup=parse_int(args.warmup, "--warmup", minimum=0),
        window_steps=parse_window_steps(args.window_steps),
        bucket_mbs=tuple(parse_bucket_mbs(args.bucket_mb)),
        gradient_as_bucket_view=args.gradient_as_bucket_view,
        static_graph=args.static_graph,
        avg_every=parse_int(args.avg_every, "--avg-every"),
        seed=parse_int(args.seed, "--seed", minimum=0),
    )
