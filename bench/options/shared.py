"""Options that several commands declare alike, each with its own help, default and error
wording: --sizes, a bounded count (rpc's --window, --new-groups) and a comma list of choices
(sendrecv's --pattern, --placement). One definition each (an Opt for options/opt.py's groups, or
the parser behind one); --mode and a whole-number --iters are options/opt.py's MODE_OPTION and
ITERS_OPTION. Torch-free (the CLI process)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from distbench.options.opt import Opt, text
from distbench.parse import UsageError, parse_int, parse_list, parse_sizes


def sizes_option(
    help: str,
    parse: Callable[[str], Any] = lambda value: tuple(parse_sizes(value)),
    default_text: str | None = None,
) -> Opt:
    """--sizes / -s: a comma list of byte sizes with binary suffixes (`parse`: parse_sizes)."""
    return text(help, parse, "--sizes", "-s", default_text=default_text)


def parse_count(text: str, flag: str, maximum: int, minimum: int = 1, unit: str = "") -> int:
    """A whole number from `minimum` to `maximum` (`unit`, e.g. ' calls in flight', follows the
    maximum in the error)."""
    count = parse_int(text, flag, minimum)
    if count > maximum:
        raise UsageError(f"{flag} must be at most {maximum}{unit}, got {text}")
    return count


def parse_choice_list(
    text: str, flag: str, choices: Sequence[str], every: str, what: str, example: str, hint: str
) -> list[str]:
    """A comma list (of `what`, e.g. `example`) of `choices`, case-insensitive, each once in the
    order given; or the word `every` for all of them. An unknown item's error ends in `hint`."""
    if text.strip().lower() == every:
        return list(choices)
    given = []
    for item in parse_list(text, what, example=example):
        value = item.lower()
        if value not in choices:
            raise UsageError(f"unknown {flag} '{item}': choose from {', '.join(choices)} ({hint})")
        given.append(value)
    return list(dict.fromkeys(given))
