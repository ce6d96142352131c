"""The communication workload (kind `comm`): options.py (CLI side), runner.py (rank side, torch),
table.py (the nccl-tests-like terminal table)."""
