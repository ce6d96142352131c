"""`distbench init`'s own options (InitArgs), each parsed by its option, and the InitSpec built
from them. Torch-free (the CLI process)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from distbench.init.spec import INIT_METHODS, InitSpec
from distbench.options.launch import ResolvedLaunch
from distbench.options.opt import integer, text
from distbench.options.shared import parse_count
from distbench.parse import UsageError

MAX_NEW_GROUPS = 1000


def parse_init_methods(value: str) -> tuple[str, ...]:
    """'env,tcp,file' (any subset, in the order given, each once)."""
    methods = tuple(m.strip().lower() for m in value.split(","))
    bad = [m for m in methods if m not in INIT_METHODS]
    if bad or not value.strip() or len(set(methods)) != len(methods):
        raise UsageError(
            f"--init-methods '{value}' is not a comma list of distinct methods among "
            f"{', '.join(INIT_METHODS)}, e.g. --init-methods env,tcp,file"
        )
    return methods


def parse_new_groups(value: str) -> int:
    """A whole number 0..MAX_NEW_GROUPS."""
    return parse_count(value, "--new-groups", MAX_NEW_GROUPS, minimum=0)


@dataclass(frozen=True)
class InitArgs:
    """Options of `distbench init`."""

    init_methods: Annotated[
        tuple[str, ...],
        text(
            "Comma list of init_process_group rendezvous: env (env://), tcp (tcp://HOST:PORT), "
            "file (file://PATH, a shared filesystem across nodes).",
            parse_init_methods,
            default_text="env,tcp,file",
        ),
    ] = INIT_METHODS
    trials: Annotated[
        int,
        integer("Repetitions per method, each a fresh process group giving one sample.", 1),
    ] = 5
    new_groups: Annotated[
        int,
        integer(
            "K: also time creating K subgroups of every rank (0: skip the phase).",
            0,
            MAX_NEW_GROUPS,
            parse_new_groups,
        ),
    ] = 0


def build_init_spec(args: InitArgs, launch: ResolvedLaunch) -> InitSpec:
    """The spec of one launch, every combination of options checked (one line, exit 2)."""
    if launch.nnodes > 1 and "file" in args.init_methods:
        raise UsageError(
            "--init-methods file needs one path every node sees: on several nodes use env,tcp"
        )
    return InitSpec(methods=args.init_methods, trials=args.trials, new_groups=args.new_groups)
