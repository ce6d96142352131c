#!/usr/bin/env bash
# Run pytest-benchmark tests that use distbench's comm_benchmark fixture inside a torchrun group.
#
#   ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-autosave
#   NPROC=8 ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-compare \
#       --benchmark-compare-fail=median:10%
#
# NPROC ranks (default: local GPUs, else 2), one node. Rank 0 alone saves JSON and applies
# --benchmark-compare-fail; the exit code is pytest's (torchrun fails when any rank fails).
# pytest's cache is off: several ranks writing .pytest_cache at once would race.
set -euo pipefail
PYTHON=${PYTHON:-python}
if [[ -z "${NPROC:-}" ]]; then
    NPROC=$("$PYTHON" -c "import torch; print(torch.cuda.device_count() or 2)")
fi
exec "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$NPROC" \
    --max-restarts 0 -m pytest -p no:cacheprovider "$@"
