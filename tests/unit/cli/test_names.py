"""One name, one meaning (issue #20 §2): an option that several commands take has one type and
one set of choices everywhere, a column that several files hold has one type, and an option
named like a column (`--batch-size` and `batch_size`) has the column's type.

Options are fields of the option groups (options/opt.py): whole numbers declare int, choices
their values, flags bool, and the test holds those to the column's type. Options whose text a
distbench parser reads (sizes, comma lists) declare str, which says nothing: such an option
matches any column type. That a declared type is the truth is checked against the group's field
(an option declaring int fills an int field)."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any

from distbench.cli.app import command as built_cli
from distbench.cli.sweep import SweepArgs
from distbench.collectors.schema import DdpRow, ResultRow, SampleRow
from distbench.comm.args import CommArgs
from distbench.comm.primitive_args import PrimitiveArgs
from distbench.ddp.args import DdpArgs
from distbench.options.launch import LaunchArgs
from distbench.options.opt import flag_of, options_of
from distbench.reports.compare.options import CompareOptions

ROW_TYPES = (ResultRow, DdpRow, SampleRow)
TEXT = "str"
"""The declared type of an option whose value distbench parses itself."""

ALLOWED: dict[str, str] = {
    "--gradient-as-bucket-view ~ column gradient_as_bucket_view": "same meaning: the column "
    "holds the flag's value as text because manual strategies, which have no DDP flags, leave "
    "it empty",
    "--static-graph ~ column static_graph": "same meaning: the column holds the flag's value as "
    "text because manual strategies, which have no DDP flags, leave it empty",
    "--avg-every ~ column avg_every": "same meaning: the column holds param-avg's K as text "
    "because the other strategies, which average nothing, leave it empty",
    "--env ~ column env": "same meaning: the repeatable option gives each variable's values, the "
    "column holds the one combination of them (`NAME=V ...`) that a row's launch ran with",
}
"""Known collisions that keep their names, each with the reason. Keep it short."""


@dataclass(frozen=True)
class Meaning:
    """What a name's type says about it."""

    type: str
    choices: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.type}{'{' + ','.join(self.choices) + '}' if self.choices else ''}"


def option_meaning(param: Any) -> Meaning:
    """The type and choices an option declares: typer's own parameter classes (typer >= 0.20
    keeps them on `type_descriptor`), else Click's `param.type`."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        choices = descriptor.choices
        type_name = param.bare_type()
    else:
        choices = getattr(param.type, "choices", None)
        type_name = param.type.name
    if choices:
        values = tuple(sorted(str(c.value if isinstance(c, Enum) else c) for c in choices))
        return Meaning(type(values[0]).__name__, values)
    return Meaning("bool" if getattr(param, "is_flag", False) else type_name)


def walk_options(command: Any, path: str = "distbench") -> Iterator[tuple[str, str, Meaning]]:
    """(command path, option string, meaning) for every option of every (sub)command."""
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        for opt in [*param.opts, *getattr(param, "secondary_opts", [])]:
            if opt.startswith("--"):
                yield path, opt, option_meaning(param)
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from walk_options(sub, f"{path} {name}")


def column_meanings() -> dict[str, dict[str, Meaning]]:
    """Column name -> {row class: meaning}; a column that may be empty (`int | None`) means its
    type (DdpRow's bytes per step, empty at world size 1)."""
    found: dict[str, dict[str, Meaning]] = {}
    for row_type in ROW_TYPES:
        hints = typing.get_type_hints(row_type)
        for f in fields(row_type):
            kept = [t for t in typing.get_args(hints[f.name]) if t is not type(None)]
            hint = kept[0] if len(kept) == 1 else hints[f.name]
            found.setdefault(f.name, {})[row_type.__name__] = Meaning(hint.__name__)
    return found


def find_collisions() -> dict[str, str]:
    """Every name with two meanings: a description keyed by the names involved."""
    options: dict[str, dict[Meaning, list[str]]] = {}
    for path, opt, meaning in walk_options(built_cli()):
        options.setdefault(opt, {}).setdefault(meaning, []).append(path)
    collisions = {}
    for opt, meanings in options.items():
        if len(meanings) > 1:
            where = "; ".join(f"{m} in {', '.join(paths)}" for m, paths in meanings.items())
            collisions[f"{opt} across commands"] = where
    columns = column_meanings()
    for name, by_row in columns.items():
        if len(set(by_row.values())) > 1:
            where = "; ".join(f"{m} in {row}" for row, m in by_row.items())
            collisions[f"column {name} across files"] = where
    for opt, meanings in options.items():
        by_row = columns.get(opt.removeprefix("--").replace("-", "_"), {})
        for meaning, paths in meanings.items():
            if meaning.type == TEXT and not meaning.choices:
                continue  # parsed by distbench: the declared type says nothing
            for row, column in by_row.items():
                if meaning.type != column.type:
                    key = f"{opt} ~ column {opt.removeprefix('--').replace('-', '_')}"
                    collisions[key] = f"option {meaning} ({', '.join(paths)}); {column} in {row}"
    return collisions


def test_the_walk_sees_every_command_and_its_options() -> None:
    seen = list(walk_options(built_cli()))
    paths = {path for path, _, _ in seen}
    assert {"distbench allreduce", "distbench ddp", "distbench baseline save"} <= paths
    assert ("distbench compare", "--no-noise-test", Meaning("bool")) in seen
    assert ("distbench", "--version", Meaning("bool")) in seen


def test_every_column_has_a_type_the_test_can_read() -> None:
    columns = column_meanings()
    assert columns["size_bytes"] == {"ResultRow": Meaning("int")}
    assert set(columns["run_id"]) == {"ResultRow", "DdpRow", "SampleRow"}


def test_no_name_carries_two_meanings() -> None:
    collisions = find_collisions()
    new = {key: where for key, where in collisions.items() if key not in ALLOWED}
    assert not new, "one name, two meanings:\n" + "\n".join(f"{k}: {v}" for k, v in new.items())
    stale = set(ALLOWED) - set(collisions)
    assert not stale, f"no longer collide, remove from ALLOWED: {sorted(stale)}"


GROUPS = (LaunchArgs, CommArgs, PrimitiveArgs, SweepArgs, DdpArgs, CompareOptions)


def test_a_declared_type_is_the_fields_type() -> None:
    """An option that declares int, float or bool fills a field of that type (None aside), so
    what --help and the checks above read is what the command gets."""
    wrong = []
    for group in GROUPS:
        hints = typing.get_type_hints(group)
        for name, opt in options_of(group).items():
            if opt.cli_type in (int, float, bool):
                field_types = set(typing.get_args(hints[name])) - {type(None)} or {hints[name]}
                if field_types != {opt.cli_type}:
                    wrong.append(f"{group.__name__}.{name}: declares {opt.cli_type.__name__}")
    assert not wrong, wrong


def test_every_group_field_is_an_option_of_its_commands() -> None:
    """The walk above sees the groups: each field is an option of a command that takes it."""
    seen = {opt for _, opt, _ in walk_options(built_cli())}
    flags = {flag_of(name, opt) for group in GROUPS for name, opt in options_of(group).items()}
    assert flags <= seen, sorted(flags - seen)
