"""Every option's default goes through its parser (issue #26, the class of item 1: history's
`--cache` defaulted to '', which its own parser refused, so `distbench history` failed in every
documented form while each test passed `--cache`).

In process, for every command of `distbench --help` (walking typer's click tree, the `baseline`
subcommands too): click builds the command's context from no options at all, so each default is
converted by its option's parser exactly as on a user's command line; required arguments and
options get a placeholder. For the commands built from option groups (options/opt.py
with_groups), the group built from those parsed defaults must equal the group's own defaults:
the default --help shows reads back as the default the code uses."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Annotated, Any

import pytest
import typer.main

from distbench.cli.app import command as built_cli
from distbench.options.opt import build_group, options_of, text, with_groups
from distbench.parse import UsageError


def commands() -> Iterator[tuple[str, Any]]:
    """(path, click command) for every leaf command under `distbench`."""

    def walk(command: Any, path: list[str]) -> Iterator[tuple[str, Any]]:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), command

    yield from walk(built_cli(), [])


COMMANDS = dict(commands())


def groups_of(command: Any) -> dict[str, type]:
    """The option groups with_groups laid out as the command's options ({} for plain ones)."""
    callback = command.callback
    while callback is not None:
        found = getattr(callback, "option_groups", None)
        if found is not None:
            return dict(found)
        callback = getattr(callback, "__wrapped__", None)
    return {}


def required_placeholders(command: Any) -> list[str]:
    """A placeholder for each required argument and option: the test is about the defaults."""
    args: list[str] = []
    for param in command.params:
        if not param.required:
            continue
        if param.param_type_name == "argument":
            args += ["PLACEHOLDER"] * max(param.nargs, 1)
        else:
            args += [param.opts[0], "placeholder"]
    return args


def test_the_walk_finds_every_command_of_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    """The walk covers what `distbench --help` lists, and the baseline subcommands."""
    from distbench.cli.app import run_cli

    assert run_cli(["--help"]) == 0
    section = capsys.readouterr().out.split("Commands:")[1]
    listed = {line.split()[0] for line in section.splitlines() if line.startswith("  ")}
    tops = {path.split()[0] for path in COMMANDS}
    assert tops == listed and "history" in tops
    assert len(tops) == 22, sorted(tops)
    assert {"baseline save", "baseline list", "baseline delete"} <= set(COMMANDS)
    assert sum(1 for path in COMMANDS if groups_of(COMMANDS[path])) >= 15  # with_groups found


def default_errors(path: str, command: Any) -> list[str]:
    """What goes wrong when `command` is built from its defaults alone: a parser refusing a
    default, or a group whose parsed defaults are not its own."""
    try:
        context = command.make_context(f"distbench {path}", required_placeholders(command))
    except Exception as error:  # click's error, which names the option and the parser's line
        return [f"distbench {path} with its defaults: {type(error).__name__}: {error}"]
    values = dict(context.params)
    errors = []
    for group in groups_of(command).values():
        built = build_group(group, {name: values[name] for name in options_of(group)})
        errors += [
            f"distbench {path}: {f.name}'s default parsed from its text is "
            f"{getattr(built, f.name)!r}, not {getattr(group(), f.name)!r}"
            for f in fields(group)
            if getattr(built, f.name) != getattr(group(), f.name)
        ]
    return errors


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_default_goes_through_its_parser(path: str) -> None:
    assert default_errors(path, COMMANDS[path]) == []


def refuse_empty(value: str) -> str:
    if value == "":
        raise UsageError("--cache '' names no file: give a file, or off")
    return value


@dataclass(frozen=True)
class Refused:
    """A group as history's was in 0.2.0: a default its own parser refuses."""

    cache: Annotated[str, text("A file, or off.", refuse_empty)] = ""


@dataclass(frozen=True)
class Misread:
    """A default whose text parses to another value than the field's default."""

    name: Annotated[str, text("Read in upper case.", str.upper)] = "x"


def toy_command(group: type) -> Any:
    toy = typer.Typer()

    @toy.command("toy")
    @with_groups(options=group)
    def command(options: Any) -> None:
        """A toy command."""

    @toy.command("other")
    def other() -> None:
        """A second command, so that typer keeps a group of commands."""

    return typer.main.get_command(toy).commands["toy"]  # type: ignore[attr-defined]


def test_the_check_bites() -> None:
    """The same check on toy commands: a default its parser refuses (0.2.0's history --cache)
    and a default that reads back as another value are each named."""
    assert default_errors("toy", toy_command(Refused)) == [
        "distbench toy with its defaults: OptionValueError: --cache '' names no file: give a "
        "file, or off"
    ]
    assert default_errors("toy", toy_command(Misread)) == [
        "distbench toy: name's default parsed from its text is 'X', not 'x'"
    ]
