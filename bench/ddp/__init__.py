"""The DDP training-step workload (kind `ddp`): spec.py and options.py (CLI side); runner.py,
steps.py, rows.py, models.py, strategies.py (rank side, torch); metrics.py and table.py."""
