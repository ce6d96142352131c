"""`distbench compare`, the nightly gate and named baselines: sides (a run, a night of launches, a
window of nights) matched row by row and judged by the statistical core (distbench.stats)."""
