"""`distbench history` as the docs write it (issue #26): every documented form with its own
defaults (0.2.0 refused its own default `--cache ''`, and every other test passed --cache), its
output kept out of the working directory, and a night that ci/nightly.sh left partial skipped
and named."""

from __future__ import annotations

import shlex

from tests.paths import ROOT


def documented_forms() -> list[list[str]]:
    """Every `distbench history` command of docs/history.md, docs/commands.md and its --help."""
    from distbench.cli.history import history

    texts = [
        (ROOT / "docs" / "history.md").read_text(),
        (ROOT / "docs" / "commands.md").read_text(),
        history.__doc__ or "",
    ]
    forms = []
    for text in texts:
        for line in text.splitlines():
            command = line.split("#")[0].strip()
            if command.startswith("distbench history "):
                forms.append(shlex.split(command)[2:])
    return forms
