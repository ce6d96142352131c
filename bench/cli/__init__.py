"""The `distbench` command, run in the CLI process only and torch-free: app.py (the commands),
options.py (every option, defined once), args.py (what was typed, resolved against the machine),
sweep.py and multinode.py (config files and several nodes). It builds a RunSpec and hands it to
launch/."""

from distbench.cli.app import main

__all__ = ["main"]
