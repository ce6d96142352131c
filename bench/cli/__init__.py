"""The `distbench` command, the roof of the house: it imports the workloads and the reports, and
nothing below imports it (tests/unit/test_imports.py checks; bench/__main__.py aside). app.py (the
commands), compare.py, report.py, history.py (the report commands), sweep.py (config files),
run.py (resume, or resolve -> run directory -> RunSpec -> launch/), one module per workload
command (ddp's and the primitives' in app.py). Option groups are declared with the toolkit of
distbench.options (opt.py, launch.py) in each workload's args.py. Torch-free (the CLI process)."""

from distbench.cli.app import main

__all__ = ["main"]
