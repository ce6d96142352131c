"""The DDP training-step workload (kind `ddp`): args.py and spec.py (CLI side); runner.py,
steps.py, rows.py, models.py, strategies.py (rank side, torch); metrics.py and table.py."""
