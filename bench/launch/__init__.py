"""The launcher, CLI process only and torch-free: run.py (a run from start to finish),
torchrun.py (one torchrun launch and its heartbeat watchdog), diagnose.py (why a launch failed),
resume.py (--resume)."""
