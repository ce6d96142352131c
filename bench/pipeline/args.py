"""`distbench pipeline`'s own options (PipelineArgs), each parsed by its option, and the
PipelineSpec built from them (the model's shape resolved as ddp's, every world size checked
against the model's units). Torch-free (the CLI process)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from distbench.ddp.args import ModelArgs, parse_window_steps, resolve_shape, strategies_option
from distbench.options.launch import ResolvedLaunch, same_named
from distbench.options.opt import integer, text
from distbench.parse import parse_int, parse_list
from distbench.pipeline.spec import STRATEGIES, PipelineSpec


def parse_microbatches(text: str) -> tuple[int, ...]:
    """'1,4' -> (1, 4): microbatches per step, each at least 1; a list sweeps them."""
    items = parse_list(text, "--microbatches", "1,4")
    return tuple(dict.fromkeys(parse_int(item, "--microbatches") for item in items))


@dataclass(frozen=True)
class PipelineArgs(ModelArgs):
    """The pipeline command's workload options: ddp's model's, then the pipeline's."""

    strategies: Annotated[
        tuple[str, ...],
        strategies_option(
            "Comma list or 'all': sendrecv (GPipe by hand), pipelining (ScheduleGPipe), "
            "pipelining-1f1b (Schedule1F1B).",
            STRATEGIES,
            STRATEGIES,
        ),
    ] = STRATEGIES
    microbatches: Annotated[
        tuple[int, ...],
        text(
            "Microbatches per step, M >= 1; a comma list sweeps it, e.g. 1,2,4,8.",
            parse_microbatches,
        ),
    ] = (4,)
    batch_size: Annotated[int, integer("Global samples per step (a multiple of every M).")] = 32
    steps: Annotated[int, integer("Timed training steps per measurement.")] = 20
    warmup: Annotated[int, integer("Untimed steps first (the library infers shapes in one).")] = 2
    window_steps: Annotated[
        int,
        text(
            "Timed steps per window between barriers, as ddp's; 'auto': at least 10 windows.",
            parse_window_steps,
            default_text="auto",
        ),
    ] = 0
    seed: Annotated[int, integer("Seed of the initial weights and the data.", minimum=0)] = 0


def build_pipeline_spec(args: PipelineArgs, launch: ResolvedLaunch) -> PipelineSpec:
    """The workload, its shape resolved as ddp's; every world size must fit the model."""
    width, depth = resolve_shape(args)
    spec = PipelineSpec(
        width=width,
        depth=depth,
        **same_named(args, "strategies", "model", "microbatches", "batch_size", "steps"),
        **same_named(args, "warmup", "window_steps", "seed"),
    )
    for world_size in launch.world_sizes:
        spec.check_world_size(world_size)
    return spec
