"""--api: which of torch's interfaces issues the timed collective (torch-free: the CLI plans with
it; the cases are built by comm/api_cases.py on the ranks).

- c10d: `torch.distributed.all_reduce(...)` and its siblings, in place or into a given output.
- functional: `torch.distributed._functional_collectives` called eagerly, out of place, then
  `wait_tensor` (what torch.compile traces collectives into).
- compiled: a `torch.compile`d function performing that functional collective, with backend
  inductor where a C++ compiler is found, else aot_eager (`compiled:inductor`,
  `compiled:aot_eager` choose one). The row's api column names the backend.

Each primitive's facts say whether torch has a functional form of it (`functional`). reduce,
gather and send_recv have none in torch 2.13 (no `_functional_collectives.reduce` or `gather`, no
send/recv): --api functional or compiled refuses them in one line. alltoallv has one:
`all_to_all_single` takes the output and input split sizes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from distbench.parse import UsageError, parse_list
from distbench.primitives.facts import FACTS, with_flag

APIS = ("c10d", "functional", "compiled")
"""The --api values (compiled also as compiled:BACKEND)."""
COMPILE_BACKENDS = ("inductor", "aot_eager")
FUNCTIONAL_PRIMITIVES = with_flag("functional")
"""The primitives torch 2.13 has a functional collective for (checked on gloo/CPU)."""


def has_cxx_compiler() -> bool:
    """Whether inductor's CPU code can be compiled here: $CXX, else c++, g++ or clang++ on PATH
    (the compilers torch's cpp_builder looks for)."""
    names = [os.environ["CXX"]] if os.environ.get("CXX") else ["c++", "g++", "clang++"]
    return any(shutil.which(name) for name in names)


def parse_api(text: str) -> str:
    """c10d, functional, compiled (backend chosen here), compiled:inductor or compiled:aot_eager:
    the value the spec and the rows' api column carry."""
    value = text.strip().lower()
    choices = "c10d, functional, compiled, compiled:inductor or compiled:aot_eager"
    if value == "compiled":
        return "compiled:" + ("inductor" if has_cxx_compiler() else "aot_eager")
    name, _, backend = value.partition(":")
    if name not in APIS or (backend and (name != "compiled" or backend not in COMPILE_BACKENDS)):
        raise UsageError(f"unknown --api '{text}': choose {choices}")
    if name == "compiled" and not backend:
        raise UsageError(f"--api '{text}' names no compile backend: choose {choices}")
    return value


def parse_apis(text: str) -> tuple[str, ...]:
    """'c10d,functional' -> each API as parse_api reads it, each once, in the order given: every
    API a case of its own, measured in the same launch (as --dtype, --mode, --placement)."""
    items = parse_list(text, "APIs", example="c10d,functional")
    return tuple(dict.fromkeys(parse_api(item) for item in items))


def check_api(api: str, primitives: Sequence[str]) -> None:
    """Refuse a primitive the api cannot issue, in one line."""
    if api == "c10d":
        return
    missing = [name for name in primitives if name not in FUNCTIONAL_PRIMITIVES]
    if missing:
        *first, last = [FACTS[name].command for name in FUNCTIONAL_PRIMITIVES]
        raise UsageError(
            f"--api {api.partition(':')[0]} cannot run {', '.join(missing)}: torch has no "
            f"functional collective for it; use --api c10d for it, or measure "
            f"{', '.join(first)} or {last}"
        )


def compile_backend(api: str) -> str:
    """The torch.compile backend of a compiled:BACKEND api, else ''."""
    name, _, backend = api.partition(":")
    return backend if name == "compiled" else ""
