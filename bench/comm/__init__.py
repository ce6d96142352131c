"""The communication workload (kind `comm`): args.py and primitive_args.py (CLI side: the options
every primitive command shares, and those only some take), spec.py (CommSpec, torch-free),
runner.py and rows.py (rank side, torch), table.py (the nccl-tests-like terminal table)."""
