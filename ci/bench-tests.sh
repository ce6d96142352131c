#!/usr/bin/env bash
# Run pytest-benchmark tests that use distbench's comm_benchmark fixture inside a torchrun group.
#
#   ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-autosave
#   ci/bench-tests.sh ci/test_bench_allreduce.py --benchmark-compare \
#       --benchmark-compare-fail=min:100%
#
# NPROC ranks (default: local GPUs, else 2), one node. Only rank 0 prints, saves JSON and applies
# --benchmark-compare-fail; the other ranks' output goes to rank<N>.log in $DISTBENCH_RANK_LOGS
# (default: a temporary folder, named when a rank fails, removed when every rank passed). A
# regression ends the output with one `REGRESSED name: why` line per benchmark. pytest's cache
# is off: several ranks writing .pytest_cache at once would race.
#
# The compare setting above is the one whose false-alarm rate was measured: over 10 runs on a
# shared 2-core CPU box (0.2.0's ci/bench_gate.py --pytest-json DIR), min:100% failed 2 % of
# unchanged pairs, median:10% 84 % and median:100% 47 % (the medians of 20 rounds differ by up to
# 3x there). Measure your own node the same way before tightening it.
#
# Exit codes: pytest's (0 pass, 1 a test failed or a benchmark regressed, 2-5 usage/internal),
# 3 when a rank died without a verdict (its log is named).
set -uo pipefail
PYTHON=${PYTHON:-python}
if [[ -z "${NPROC:-}" ]]; then
    NPROC=$("$PYTHON" -c "import torch; print(torch.cuda.device_count() or 2)")
fi
STATUS_DIR=$(mktemp -d)
trap 'rm -rf "$STATUS_DIR"' EXIT
export DISTBENCH_PYTEST_STATUS=$STATUS_DIR
OWN_LOGS=""  # a folder made here is removed when every rank passed; a given one is kept
if [[ -z "${DISTBENCH_RANK_LOGS:-}" ]]; then
    OWN_LOGS=$(mktemp -d -t distbench-ranks-XXXXXX)
    export DISTBENCH_RANK_LOGS=$OWN_LOGS
fi
QUIET=()  # pyproject.toml's `timeout` is pytest-timeout's ([dev]); without it, no warning of it
if ! "$PYTHON" -c "import pytest_timeout" 2>/dev/null; then
    QUIET=(-W "ignore:Unknown config option:pytest.PytestConfigWarning")  # -W splits on ':'
fi

"$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$NPROC" \
    --max-restarts 0 -m pytest -p no:cacheprovider ${QUIET[@]+"${QUIET[@]}"} "$@"
rc=$?

verdict=""
for ((rank = 0; rank < NPROC; rank++)); do
    status_file=$STATUS_DIR/rank$rank.status
    where="$DISTBENCH_RANK_LOGS/rank$rank.log"
    [[ $rank -eq 0 ]] && where="the output above"
    if [[ ! -s $status_file ]]; then
        echo "bench-tests.sh: rank $rank ended without a verdict (torchrun exit $rc): see $where" >&2
        exit 3
    fi
    status=$(<"$status_file")
    if [[ $rank -eq 0 ]]; then
        verdict=$status
    elif [[ $status -ne 0 && $status -ne $verdict ]]; then
        echo "bench-tests.sh: rank $rank failed (pytest exit $status): see $where" >&2
        [[ $verdict -eq 0 ]] && verdict=1
    fi
done
[[ $verdict -eq 0 && -n $OWN_LOGS ]] && rm -rf "$OWN_LOGS"
exit "$verdict"
