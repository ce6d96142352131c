"""The option toolkit, below the workloads and above nothing of theirs: opt.py (an option is a
field of a frozen dataclass group whose annotation carries an `Opt`; with_groups lays groups out
as a command's options, parse_group builds one from text), launch.py (LaunchArgs, resolved
against the machine into a ResolvedLaunch and a LaunchSpec), multinode.py and envsweep.py (the
parsers of the node and --env options), shared.py (options several commands declare alike).
Each workload's args.py builds its option group from these; cli/ lays the groups out as
commands. Torch-free (the CLI process)."""
