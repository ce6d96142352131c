"""`distbench sweep`: several primitives over the same sizes in one launch per world size, or a
matrix (backends x world sizes x primitives x sizes x dtypes) from a TOML file:

    distbench sweep --primitives allreduce,broadcast,sendrecv --sizes 1K,1M --backend gloo
    distbench sweep --config ci/sweep-example.toml --out results/nightly

A config file holds the same options as the command line, with the same names ('-' or '_'),
lists as TOML arrays, plus `backends`. Every backend runs its launches into the one run
directory; measurement ids of the second backend on carry its name ('nccl/ws2/i0').
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from distbench.cli.args import LaunchArgs, Machine, build_launch_spec, resolve_launch
from distbench.comm.args import CommArgs
from distbench.comm.options import PrimitiveArgs, build_workload, parse_primitives
from distbench.launch.run import execute, file_logs, prepare_run_dir
from distbench.parse import UsageError, parse_list
from distbench.spec import RunSpec

LAUNCH_KEYS = ("device", "world_sizes", "label", "timeout")
COMM_KEYS = tuple(f.name for f in fields(CommArgs))
PRIMITIVE_KEYS = tuple(f.name for f in fields(PrimitiveArgs))
ALIASES = {"dtypes": "dtype", "modes": "mode", "patterns": "pattern", "backend": "backends"}


@dataclass(frozen=True)
class SweepConfig:
    """A sweep file, as the command-line strings it stands for."""

    backends: tuple[str, ...]
    primitives: tuple[str, ...]
    launch: dict[str, str]
    comm: CommArgs
    primitive_args: PrimitiveArgs


def _as_text(key: str, value: Any) -> str | bool:
    """A TOML value as the string the CLI option would take (lists joined with commas)."""
    if key in ("check", "bidirectional"):
        if not isinstance(value, bool):
            raise UsageError(f"sweep config: '{key}' must be true or false, got {value!r}")
        return value
    if isinstance(value, list):
        if not value or any(isinstance(v, (list, dict, bool)) for v in value):
            raise UsageError(f"sweep config: '{key}' must be a non-empty list of plain values")
        return ",".join(str(v) for v in value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    raise UsageError(f"sweep config: '{key}' has a value of the wrong kind: {value!r}")


def load_config(path: Path) -> SweepConfig:
    """Read and check a sweep file: unknown keys and malformed TOML are one-line UsageErrors."""
    try:
        body = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"--config {path}: no such file") from None
    except OSError as error:
        raise UsageError(f"--config {path}: cannot read it ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"--config {path} is not valid TOML: {error}") from None
    known = ("backends", "primitives", *LAUNCH_KEYS, *COMM_KEYS, *PRIMITIVE_KEYS)
    values: dict[str, Any] = {}
    for raw_key, raw_value in body.items():
        key = raw_key.replace("-", "_")
        key = ALIASES.get(key, key)
        if key not in known:
            raise UsageError(
                f"--config {path}: unknown key '{raw_key}'; known keys: {', '.join(known)}"
            )
        values[key] = _as_text(key, raw_value)
    if "primitives" not in values:
        raise UsageError(f"--config {path} needs 'primitives', e.g. primitives = [\"allreduce\"]")
    backends = parse_list(str(values.get("backends", "auto")), "backends", example="gloo,nccl")
    return SweepConfig(
        backends=tuple(dict.fromkeys(b.lower() for b in backends)),
        primitives=parse_primitives(str(values["primitives"])),
        launch={k: str(values[k]) for k in LAUNCH_KEYS if k in values},
        comm=CommArgs(**{k: values[k] for k in COMM_KEYS if k in values}),
        primitive_args=PrimitiveArgs(**{k: values[k] for k in PRIMITIVE_KEYS if k in values}),
    )


def run_sweep(
    primitives: str | None,
    config: str | None,
    launch_args: LaunchArgs,
    comm_args: CommArgs,
    primitive_args: PrimitiveArgs,
) -> int:
    """`distbench sweep`: --primitives with the command line's options, or --config FILE."""
    if launch_args.resume is not None:
        return resume_sweep(launch_args.resume)
    if config is None:
        if primitives is None:
            raise UsageError(
                "sweep needs --primitives (e.g. --primitives allreduce,broadcast,sendrecv) or "
                "--config FILE.toml"
            )
        names = parse_primitives(primitives)
        launch = resolve_launch(launch_args, Machine.probe())
        workload = build_workload(names, comm_args, primitive_args, launch)
        run_dir = prepare_run_dir(launch_args.out, "sweep", launch.label, launch.node_rank)
        spec = RunSpec(launch=build_launch_spec(launch, run_dir), workload=workload)
        return execute(spec, title="sweep")
    refuse_mixed_options(primitives, launch_args, comm_args, primitive_args)
    matrix = load_config(Path(config))
    return run_matrix(matrix, launch_args, config)


def refuse_mixed_options(
    primitives: str | None,
    launch_args: LaunchArgs,
    comm_args: CommArgs,
    primitive_args: PrimitiveArgs,
) -> None:
    """With --config the file says what is measured: of the command line's options only the
    launch options (where and how it runs: --backend, --device, --world-sizes, --out, --label,
    --timeout, the multi-node ones) may go with it, and they override the file."""
    given = ["--primitives"] if primitives is not None else []
    given += [
        "--" + f.name.replace("_", "-")
        for f in fields(CommArgs)
        if getattr(comm_args, f.name) != getattr(CommArgs(), f.name)
    ]
    given += [
        "--" + f.name.replace("_", "-")
        for f in fields(PrimitiveArgs)
        if getattr(primitive_args, f.name) != getattr(PrimitiveArgs(), f.name)
    ]
    if given:
        raise UsageError(
            f"{given[0]} cannot be combined with --config: put it in the config file "
            "(only launch options such as --backend, --world-sizes and --out go with --config)"
        )


def run_matrix(matrix: SweepConfig, launch_args: LaunchArgs, source: str = "config") -> int:
    """One CommSpec per backend, all launched into one run directory, backend after backend."""
    try:
        specs = build_matrix_specs(matrix, launch_args)
    except UsageError as error:
        raise UsageError(f"--config {source}: {error}") from None
    code = execute(specs[0], title="sweep", more=specs[1:])
    if len(specs) > 1 and code == 0:
        file_logs(Path(specs[-1].launch.run_dir), specs[-1].launch.backend)
    return code


def build_matrix_specs(matrix: SweepConfig, launch_args: LaunchArgs) -> list[RunSpec]:
    """Resolve every backend of the matrix and make the run directory they share."""
    machine = Machine.probe()
    defaults = LaunchArgs()
    overrides = dict(matrix.launch)
    for key in LAUNCH_KEYS:  # the command line's launch options win over the file's
        if getattr(launch_args, key) != getattr(defaults, key):
            overrides[key] = getattr(launch_args, key)
    given = launch_args.backend != defaults.backend
    backends = (launch_args.backend,) if given else matrix.backends
    launches = [
        resolve_launch(replace(launch_args, backend=backend, **overrides), machine)
        for backend in backends
    ]
    resolved = [launch.backend for launch in launches]
    if len(set(resolved)) < len(resolved):
        raise UsageError(f"backends {resolved} name one backend twice")
    workloads = [
        build_workload(matrix.primitives, matrix.comm, matrix.primitive_args, launch)
        for launch in launches
    ]
    run_dir = prepare_run_dir(launch_args.out, "sweep", launches[0].label, launches[0].node_rank)
    return [
        RunSpec(
            launch=build_launch_spec(launch, run_dir),
            workload=replace(workload, tag="" if index == 0 else f"{launch.backend}/"),
        )
        for index, (launch, workload) in enumerate(zip(launches, workloads, strict=True))
    ]


def resume_sweep(path: str) -> int:
    """--resume of a sweep: one spec resumes like any run; several backends' specs do not."""
    from distbench.launch.resume import resume_run

    if any(Path(path).glob("spec-*.json")):
        raise UsageError(
            f"--resume {path}: a sweep over several backends cannot be resumed; run its config "
            "again with a new --out"
        )
    return resume_run(path)
