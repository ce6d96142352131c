"""The `distbench` command, run in the CLI process only and torch-free: app.py (the commands),
options.py (how an option group becomes a command's options), args.py (the launch options,
resolved against the machine), compare.py (the gate's options and commands), sweep.py and
multinode.py (config files and several nodes), run.py (resume, or resolve -> run directory ->
RunSpec -> launch/). The comm and ddp option groups live with their workloads (comm/args.py,
comm/options.py, ddp/options.py)."""


def main() -> None:
    """Console entry point (`distbench`, `python -m distbench`). app is imported here, not at the
    package's import, so that a workload's option module (e.g. ddp/options.py, which uses
    cli/args.py) imports cleanly on its own, whichever of them comes first."""
    from distbench.cli.app import main as run

    run()


__all__ = ["main"]
