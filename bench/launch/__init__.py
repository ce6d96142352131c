"""The launcher, CLI process only and torch-free: run.py (a run from start to finish),
torchrun.py (one torchrun launch, its heartbeat watchdog and failure diagnosis), resume.py."""
