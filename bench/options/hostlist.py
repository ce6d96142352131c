"""Slurm host lists: `node[01-04]-ib`, `rack[1-2]-gpu[01-04]`, `a1,b[3,5-6]` into host names.

`scontrol show hostnames LIST` is Slurm's own answer and is asked when Slurm is installed; the
parser below is the fallback (a login node without the client, a container), written to give
the same answer on Slurm's grammar (src/common/hostlist.c):

- the list splits at commas outside brackets;
- each name is a product of its bracket groups, left to right: `rack[1-2]-gpu[01-02]` is
  rack1-gpu01, rack1-gpu02, rack2-gpu01, rack2-gpu02 (later groups vary fastest), with the text
  around the groups (a suffix such as `-ib` included) kept in place;
- a group is a comma list of numbers and ranges `lo-hi`; a range keeps the width of `lo` when it
  is zero-padded (`[08-10]` is 08, 09, 10; `[8-10]` is 8, 9, 10).

tests/integration/launch/test_hostlist.py checks the parser against `scontrol` where Slurm is
there, and tests/unit/launch/test_hostlist.py every shape above everywhere.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess

from distbench.parse import UsageError

MAX_HOSTS = 1_000_000
"""A list naming more is refused: no allocation is that large, and a typo like [1-99999999]
would otherwise fill memory."""

_GROUP = re.compile(r"\[([^\[\]]*)\]")


def split_top_level(text: str) -> list[str]:
    """'a[1,2],b' -> ['a[1,2]', 'b']: commas outside brackets separate the names."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
            if depth > 1:
                raise UsageError(f"cannot read the Slurm host list '{text}': nested '['")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise UsageError(f"cannot read the Slurm host list '{text}': ']' without '['")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise UsageError(f"cannot read the Slurm host list '{text}': '[' without ']'")
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def expand_group(body: str, whole: str) -> list[str]:
    """'01-03,7' -> ['01', '02', '03', '7']."""
    out: list[str] = []
    for item in body.split(","):
        item = item.strip()
        lo, sep, hi = item.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise UsageError(f"cannot read the Slurm host list '{whole}': '[{body}]'")
        if not sep:
            out.append(lo)
            continue
        start, end = int(lo), int(hi)
        if end < start:
            raise UsageError(f"cannot read the Slurm host list '{whole}': {item} runs backwards")
        if len(out) + end - start + 1 > MAX_HOSTS:
            raise UsageError(f"the Slurm host list '{whole}' names over {MAX_HOSTS} hosts")
        out.extend(str(n).zfill(len(lo)) for n in range(start, end + 1))
    return out


def expand_name(name: str, whole: str) -> list[str]:
    """'rack[1-2]-gpu[01-02]' -> every host the name's groups make, later groups fastest."""
    texts = _GROUP.split(name)  # text, group, text, group, ..., text
    choices = [
        [piece] if i % 2 == 0 else expand_group(piece, whole) for i, piece in enumerate(texts)
    ]
    total = 1
    for options in choices:
        total *= len(options)
    if total > MAX_HOSTS:
        raise UsageError(f"the Slurm host list '{whole}' names over {MAX_HOSTS} hosts")
    return ["".join(parts) for parts in itertools.product(*choices)]


def parse_hostlist(text: str) -> list[str]:
    """Every host of a Slurm host list, in Slurm's order."""
    if not text.isprintable():
        raise UsageError(
            f"cannot read the Slurm host list {text!r}: a host list has no control characters "
            "(e.g. 'node[01-04],gpu7')"
        )
    hosts = [host for name in split_top_level(text) for host in expand_name(name, text)]
    if not hosts:
        raise UsageError(f"cannot read the Slurm host list '{text}': it names no host")
    return hosts


def scontrol_hostnames(text: str) -> list[str] | None:
    """`scontrol show hostnames TEXT`, or None where Slurm's client is absent or fails."""
    scontrol = shutil.which("scontrol")
    if scontrol is None or not text.isprintable():  # the parser refuses it, as it must
        return None
    try:
        done = subprocess.run(
            [scontrol, "show", "hostnames", text],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    hosts = done.stdout.split()
    return hosts if done.returncode == 0 and hosts else None


def expand_hostlist(text: str) -> list[str]:
    """Slurm's expansion of a host list: scontrol's where it answers, else the parser's."""
    return scontrol_hostnames(text) or parse_hostlist(text)
