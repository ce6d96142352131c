"""`distbench acceptance`: is this cluster healthy, and how does it compare. Pairs, the nightly
matrix at the full world size, the report with reference values and "What differs", and a
pass/fail verdict per node (plan.py, verdict.py, runner.py)."""
