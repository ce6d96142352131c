"""Options defined once. Every option is a field of a frozen dataclass group (LaunchArgs, CommArgs,
PrimitiveArgs, SweepArgs, DdpArgs, CompareOptions) whose annotation carries an `Opt`: its help,
its flags and the parser that turns what was typed into the field's value.

    @app.command("ddp")
    @with_groups(ddp=DdpArgs, launch=LaunchArgs)
    def ddp(ddp: DdpArgs, launch: LaunchArgs) -> None: ...

`with_groups` lays the groups' fields out as the command's options (typer reads the signature)
and calls the command with the groups built; `parse_group` builds a group from text (a sweep file,
a test) through the same parsers. So a value is parsed once, by its option's parser, and a bad
one is one line and exit 2 (cli/app.py's run_cli prints it).

Typer (>= 0.26) vendors click and takes no click types (no `click_type=`): what it takes instead
is used here, an int with `min`/`max` (click's IntRange; --help shows the range), a Literal of
the choices (click's Choice) and `parser=` for the rest (a ParamType's `convert`), each calling
distbench.parse's functions.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import MISSING, dataclass, fields
from types import SimpleNamespace
from typing import Annotated, Any, Literal, TypeVar, get_origin, get_type_hints

import typer

from distbench.parse import UsageError, parse_choice, parse_int, parse_modes

G = TypeVar("G")
Parser = Callable[[str, str], Any]
"""(text, flag) -> the field's value; raises UsageError with one line."""


@dataclass(frozen=True)
class Opt:
    """One option: what --help says about it and how its text becomes the field's value."""

    help: str
    parse: Parser | None = None
    """None: typer's value is the field's (a flag, a path, free text)."""
    cli_type: Any = str
    """What the option declares to typer, --help and tests/unit/cli/test_names.py: str for text that
    `parse` reads, int with its range, a Literal of the choices, bool for a flag."""
    decls: tuple[str, ...] = ()
    """The flags, where they are not --<field-name>."""
    minimum: int | None = None
    maximum: int | None = None
    """The range --help shows; `parse` enforces it."""
    default_text: str | None = None
    """The default as one would type it, where the field's default does not read as one."""


def text(
    help: str,
    parse: Callable[[str], Any] | None = None,
    *decls: str,
    default_text: str | None = None,
) -> Opt:
    """An option whose text `parse` reads (None: the text itself)."""
    parser = None if parse is None else (lambda value, _flag: parse(value))
    return Opt(help, parser, str, decls, default_text=default_text)


def integer(
    help: str,
    minimum: int = 1,
    maximum: int | None = None,
    parse: Callable[[str], int] | None = None,
    decls: tuple[str, ...] = (),
) -> Opt:
    """A whole number from `minimum` (and up to `maximum`, which `parse` then checks); `decls`:
    its flags where they are not --<field-name> alone (torchrun's underscore spellings)."""
    if parse is None:
        return Opt(help, lambda value, flag: parse_int(value, flag, minimum), int, decls, minimum)
    return Opt(help, lambda value, _flag: parse(value), int, decls, minimum, maximum)


def choice(help: str, choices: tuple[str, ...], what: str) -> Opt:
    """One of `choices`, case-insensitive."""
    return Opt(help, lambda value, _flag: parse_choice(value, choices, what), Literal[choices])


def flag(help: str, *decls: str) -> Opt:
    """An on/off switch; `decls` such as '--fdr/--no-fdr' name both ways."""
    return Opt(help, None, bool, decls)


MODE_OPTION = text(
    "throughput (back-to-back ops), latency (each op isolated), or both.",
    lambda value: tuple(parse_modes(value)),
)
"""--mode of the workloads that time in both modes (pairs, overlap)."""
ITERS_OPTION = text(
    "Ops per timed trial (latency: samples per trial).", lambda value: parse_int(value, "--iters")
)
"""--iters as a whole number (the primitives' --iters also takes auto)."""


class OptionValueError(typer.BadParameter):
    """A value its option's parser refused: the parser's line as it is where it names the option,
    else after click's "Invalid value for '--flag':"."""

    def format_message(self) -> str:
        hint = str(self.param_hint or "")
        return self.message if hint.strip("'") in self.message else super().format_message()


def flag_of(name: str, opt: Opt) -> str:
    """The option's long flag: its first declared one, else --<field-name>; an option declared
    with a short flag only (nccl-tests' -c) is that flag."""
    flags = [decl.split("/")[0] for decl in opt.decls]
    long = [flag for flag in flags if flag.startswith("--")]
    return (long or flags or ["--" + name.replace("_", "-")])[0]


def convert(parse: Parser, flag: str) -> Callable[[str], Any]:
    """The typer parser of an option: a UsageError becomes click's error, so run_cli prints it
    with the command's --help hint."""

    def parse_typed(value: str) -> Any:
        try:
            return parse(value, flag)
        except UsageError as error:
            raise OptionValueError(str(error), param_hint=f"'{flag}'") from None

    return parse_typed


def as_text(value: Any) -> Any:
    """A field's default as one would type it, which the option's parser then reads: tuples
    joined with commas (an empty one: None), whole floats without '.0'; None and flags as they
    are."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, tuple):
        return ",".join(as_text(item) for item in value) or None
    return format(value, "g") if isinstance(value, float) else str(value)


def declared_hints(group: type) -> dict[str, Any]:
    """The field annotations of a group and of the groups it extends (ModelArgs), each read in
    the module of the class that declares it, as the module's globals: a lambda in an
    annotation then sees that module's names."""
    hints: dict[str, Any] = {}
    for cls in reversed(group.__mro__):
        own = SimpleNamespace(__annotations__=vars(cls).get("__annotations__", {}))
        module = vars(sys.modules[cls.__module__])
        hints.update(get_type_hints(own, globalns=module, include_extras=True))
    return hints


@functools.cache
def options_of(group: type) -> dict[str, Opt]:
    """Field name -> Opt of a group (each field's annotation carries one)."""
    hints = declared_hints(group)
    found = {}
    for field in fields(group):
        opts = [m for m in getattr(hints[field.name], "__metadata__", ()) if isinstance(m, Opt)]
        assert len(opts) == 1, f"{group.__name__}.{field.name} needs one Opt in its annotation"
        found[field.name] = opts[0]
    return found


def typer_parameter(name: str, opt: Opt, default: Any, hidden: bool) -> inspect.Parameter:
    """The field as typer reads a command parameter: Annotated[type, typer.Option(...)]."""
    info = typer.Option(
        *opt.decls,
        help=opt.help,
        hidden=hidden,
        min=opt.minimum,
        max=opt.maximum,
        parser=None if opt.parse is None else convert(opt.parse, flag_of(name, opt)),
    )
    shown = as_text(default) if opt.default_text is None else opt.default_text
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=shown,
        annotation=Annotated[opt.cli_type, info],
    )


def group_parameters(group: type, hidden: Collection[str]) -> list[inspect.Parameter]:
    defaults = {f.name: f.default for f in fields(group)}
    assert MISSING not in defaults.values(), f"every option of {group.__name__} needs a default"
    return [
        typer_parameter(name, opt, defaults[name], name in hidden)
        for name, opt in options_of(group).items()
    ]


def with_groups(hidden: Collection[str] = (), **groups: type) -> Callable[..., Callable[..., Any]]:
    """Decorate a command whose keyword `key` takes a group: its fields become the command's
    options (`hidden` ones parsed but left out of --help) and the command gets the group built."""

    def wrap(command: Callable[..., Any]) -> Callable[..., Any]:
        params = inspect.signature(command, eval_str=True).parameters.values()
        own = [p for p in params if p.name not in groups]
        options = [p for group in groups.values() for p in group_parameters(group, hidden)]
        names = [p.name for p in (*own, *options)]
        assert len(names) == len(set(names)), f"{command.__name__}: an option name twice"

        @functools.wraps(command)
        def run(**values: Any) -> Any:
            built: dict[str, Any] = {
                key: build_group(group, values) for key, group in groups.items()
            }
            return command(**values, **built)

        run.__signature__ = inspect.Signature([*own, *options])  # type: ignore[attr-defined]
        run.__annotations__ = {}  # typer reads the signature's
        run.option_groups = dict(groups)  # type: ignore[attr-defined]  # tests/unit/cli/test_defaults
        return run

    return wrap


def build_group(group: type, values: dict[str, Any]) -> Any:
    """The group from typer's values of its fields (taken out of `values`); a repeatable
    option's values as the tuple a frozen group holds."""
    typed = {}
    for name, opt in options_of(group).items():
        value = values.pop(name)
        typed[name] = tuple(value or ()) if get_origin(opt.cli_type) is list else value
    return group(**typed)


def parse_fields(group: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """Values of some of a group's fields, each text through its option's parser (what typer
    would have made of it on the command line); other values as they are."""
    options = options_of(group)
    parsed = {}
    for name, value in values.items():
        opt = options[name]
        parsed[name] = (
            opt.parse(value, flag_of(name, opt))
            if isinstance(value, str) and opt.parse is not None
            else value
        )
    return parsed


def parse_group(group: type[G], values: Mapping[str, Any]) -> G:
    """A group from text, as the command line would build it; fields not given keep defaults."""
    return group(**parse_fields(group, values))
