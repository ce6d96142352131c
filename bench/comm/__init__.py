"""The communication workload (kind `comm`): args.py and options.py (CLI side: the options every
primitive command shares, and those only some take), runner.py (rank side, torch), table.py (the
nccl-tests-like terminal table)."""
