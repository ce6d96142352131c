"""`distbench sweep`: several primitives over the same sizes in one launch per world size, or a
matrix (backends x world sizes x primitives x sizes x dtypes) from a TOML file:

    distbench sweep --primitives allreduce,broadcast,sendrecv --sizes 1K,1M --backend gloo
    distbench sweep --config ci/sweep-example.toml --out results/nightly

A config file holds the same options as the command line, with the same names ('-' or '_'),
lists as TOML arrays, plus `backends`; each value goes through its option's parser. Every backend
runs its launches into the one run directory; measurement ids of the second backend on carry its
name ('nccl/ws2/i0').
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Annotated, Any

from distbench.cli.run import build_specs, run_specs, run_workload
from distbench.comm.args import CommArgs
from distbench.comm.primitive_args import PrimitiveArgs, build_workload, parse_primitives
from distbench.comm.spec import CommSpec
from distbench.options.launch import LaunchArgs, Machine, ResolvedLaunch, resolve_launch
from distbench.options.opt import parse_fields, parse_group, text
from distbench.parse import UsageError, missing_file_hint, parse_list
from distbench.spec import RunSpec

LAUNCH_KEYS = ("device", "world_sizes", "label", "timeout")
COMM_KEYS = tuple(f.name for f in fields(CommArgs))
PRIMITIVE_KEYS = tuple(f.name for f in fields(PrimitiveArgs))
ALIASES = {"dtypes": "dtype", "modes": "mode", "patterns": "pattern", "backend": "backends"}


@dataclass(frozen=True)
class SweepArgs:
    """sweep's own options: what to measure. Every primitive command takes them too (hidden), so
    that giving one there is refused with one line."""

    primitives: Annotated[
        tuple[str, ...] | None,
        text(
            "sweep: comma list of commands, e.g. allreduce,broadcast,sendrecv, or all.",
            parse_primitives,
        ),
    ] = None
    config: Annotated[
        str | None,
        text("sweep: a TOML matrix of backends, world sizes, primitives, sizes, dtypes."),
    ] = None

    def refuse_outside_sweep(self) -> None:
        if self.primitives is not None or self.config is not None:
            flag = "--primitives" if self.primitives is not None else "--config"
            raise UsageError(f"{flag} applies to distbench sweep only")


@dataclass(frozen=True)
class SweepConfig:
    """A sweep file, its values parsed as the command line's."""

    backends: tuple[str, ...]
    primitives: tuple[str, ...]
    launch: dict[str, Any]
    """The file's launch options (LAUNCH_KEYS), which the command line's override."""
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


def read_config(path: Path) -> dict[str, str | bool]:
    """A sweep file's keys (normalized) and values as typed; unknown keys and malformed TOML
    are one-line UsageErrors."""
    try:
        body = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"--config {path}: {missing_file_hint(path)}") from None
    except OSError as error:
        raise UsageError(f"--config {path}: cannot read it ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"--config {path} is not valid TOML: {error}") from None
    known = ("backends", "primitives", *LAUNCH_KEYS, *COMM_KEYS, *PRIMITIVE_KEYS)
    values: dict[str, str | bool] = {}
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
    return values


def load_config(path: Path) -> SweepConfig:
    """Read a sweep file and parse its values; a bad one is one line naming the file."""
    values = read_config(path)
    try:
        backends = parse_list(str(values.get("backends", "auto")), "backends", example="gloo,nccl")
        return SweepConfig(
            backends=tuple(
                dict.fromkeys(parse_fields(LaunchArgs, {"backend": b})["backend"] for b in backends)
            ),
            primitives=parse_primitives(str(values["primitives"])),
            launch=parse_fields(LaunchArgs, {k: values[k] for k in LAUNCH_KEYS if k in values}),
            comm=parse_group(CommArgs, {k: values[k] for k in COMM_KEYS if k in values}),
            primitive_args=parse_group(
                PrimitiveArgs, {k: values[k] for k in PRIMITIVE_KEYS if k in values}
            ),
        )
    except UsageError as error:
        raise UsageError(f"--config {path}: {error}") from None


def run_sweep(
    sweep: SweepArgs, launch_args: LaunchArgs, comm_args: CommArgs, primitive_args: PrimitiveArgs
) -> int:
    """`distbench sweep`: --primitives with the command line's options, or --config FILE."""
    if launch_args.resume is None and sweep.config is not None:
        refuse_mixed_options(sweep, comm_args, primitive_args)
        if launch_args.dry_run:
            raise UsageError("--dry-run takes --primitives, not --config, for now")
        matrix = load_config(Path(sweep.config))
        table = matrix.comm.table if comm_args.table == "default" else comm_args.table
        return run_matrix(matrix, launch_args, sweep.config, table)
    if launch_args.resume is None and sweep.primitives is None:
        raise UsageError(
            "sweep needs --primitives (e.g. --primitives allreduce,broadcast,sendrecv) or "
            "--config FILE.toml"
        )
    names = sweep.primitives or ()

    def build(launch: ResolvedLaunch) -> CommSpec:
        return build_workload(names, comm_args, primitive_args, launch)

    return run_workload(launch_args, "sweep", build, resumed_by=None, table=comm_args.table)


def refuse_mixed_options(
    sweep: SweepArgs, comm_args: CommArgs, primitive_args: PrimitiveArgs
) -> None:
    """With --config the file says what is measured: of the command line's options only the
    launch options (where and how it runs: --backend, --device, --world-sizes, --out, --label,
    --timeout, the multi-node ones) may go with it, and they override the file."""
    given = ["--primitives"] if sweep.primitives is not None else []
    for group in (comm_args, primitive_args):
        default = type(group)()
        given += [
            "--" + f.name.replace("_", "-")
            for f in fields(group)  # --table only prints: it goes with --config
            if getattr(group, f.name) != getattr(default, f.name) and f.name != "table"
        ]
    if given:
        raise UsageError(
            f"{given[0]} cannot be combined with --config: put it in the config file "
            "(only launch options such as --backend, --world-sizes and --out go with --config)"
        )


def run_matrix(
    matrix: SweepConfig, launch_args: LaunchArgs, source: str = "config", table: str = "default"
) -> int:
    """One CommSpec per backend, all launched into one run directory, backend after backend."""
    try:
        specs = build_matrix_specs(matrix, launch_args)
    except UsageError as error:
        raise UsageError(f"--config {source}: {error}") from None
    return run_specs(specs, "sweep", quiet=launch_args.quiet, table=table)


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
    first = resolved[0]

    def build(launch: ResolvedLaunch) -> CommSpec:
        workload = build_workload(matrix.primitives, matrix.comm, matrix.primitive_args, launch)
        return replace(workload, tag="" if launch.backend == first else f"{launch.backend}/")

    return build_specs(launches, build, launch_args.out, "sweep")
