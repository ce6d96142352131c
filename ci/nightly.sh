#!/usr/bin/env bash
# The nightly regression gate: sweep from a config file, report against the baseline, compare.
#
#   ci/nightly.sh --bootstrap                       # first night: sweep, save the run as baseline
#   ci/nightly.sh                                   # every night: sweep, report, gate
#   ci/nightly.sh --run-dir RUN --bootstrap         # pin a run you already have (no sweep)
#   ci/nightly.sh --config ci/my-sweep.toml --baseline a100-main --thresholds ci/thresholds-example.toml
#   ci/nightly.sh --run-dir results/last-night      # gate a run made elsewhere (Slurm: after srun)
#
# Each night sweeps twice (--launches 2) into RUN/launch-1 and RUN/launch-2, and compare pools
# the launches of each side (the geometric mean of a row's launches, every launch's trials): a
# row's level moves between launches far more than between the trials of one, and two launches
# a night average that (docs: the nightly gate). --launches 1 halves the time, a plain RUN.
#
# The gate is distbench compare's default rule: a row regresses when it is past its threshold, its
# trials differ by an exact rank test after Benjamini-Hochberg, and a neighbouring size agrees; a
# primitive regresses when its rows are slower than the other primitives' rows (rank test, BH
# across primitives, >= 15 % beyond them), which needs interleaved trials on both sides.
# Without --config and --threshold(s) it gates ci/sweep-nightly-cpu.toml (order = "interleaved")
# on the fastest trial (--metric time_us_min) against ci/thresholds-nightly-cpu.toml, per-row
# thresholds measured from 12 interleaved launches on a shared 2-core box (ci/bench_gate.py):
# with two launches a night, 2.4 % of 500 replayed unchanged nights failed and 96.8 % of nights
# with one primitive 25 % slower failed naming it (goals: <= 5 %, >= 95 %; one launch: 89-92 %).
# Regenerate the thresholds on your own box (docs: the nightly gate).
#
# Exit codes (for the CI system):
#   0  no regression          1  at least one row regressed (distbench compare's verdict)
#   2  usage: bad option, missing config or baseline, nothing in common with the baseline
#   3  the benchmark itself failed (a rank died, --check found wrong results, interrupted)
#   4  rows of the baseline are missing tonight (a case was lost); --allow-missing passes them
#
# Writes into the run directory: report/ (distbench report, tonight over the baseline),
# compare.md (also appended to $GITHUB_STEP_SUMMARY when set), compare.json, compare.txt.
# Environment: DISTBENCH (the command, default "distbench"), SWEEP_ARGS (extra sweep flags, e.g.
# "--backend nccl"), DISTBENCH_BASELINES (the baseline store, default ./baselines).
set -uo pipefail

DISTBENCH=${DISTBENCH:-distbench}
CONFIG=ci/sweep-nightly-cpu.toml
CONFIG_GIVEN=0
THRESHOLDS_GIVEN=0
METRIC_GIVEN=0
BASELINE=nightly
OUT=""
RUN_DIR=""
STORE=${DISTBENCH_BASELINES:-baselines}
COMPARE_ARGS=()
UPDATE=0
BOOTSTRAP=0
REPORT=1
LAUNCHES=2

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    cat <<'EOF'
Options:
  --config FILE        sweep config (default ci/sweep-nightly-cpu.toml, gated with --thresholds
                       ci/thresholds-nightly-cpu.toml unless --threshold(s) is given)
  --out DIR            run directory for tonight (default results/nightly-<UTC date and time>)
  --launches N         sweeps tonight, into DIR/launch-1 ... DIR/launch-N, pooled by compare
                       (default 2; 1: one sweep into DIR itself)
  --run-dir DIR        skip the sweep and gate this existing run
  --baseline NAME      baseline name or run directory (default nightly)
  --store DIR          baseline store (default $DISTBENCH_BASELINES or ./baselines)
  --metric M, --threshold T, --thresholds FILE, --alpha A, --min-samples N
                       passed to distbench compare (as are --allow-missing, --no-fdr, --any-size);
                       --metric defaults to time_us_min (the fastest trial)
  --update-baseline    after a night without regression, save this run as the baseline
  --bootstrap          when the baseline does not exist, save this run as it and exit 0
  --no-report          skip distbench report
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --config) CONFIG=$2; CONFIG_GIVEN=1; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --launches) LAUNCHES=$2; shift 2 ;;
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --baseline) BASELINE=$2; shift 2 ;;
        --store) STORE=$2; shift 2 ;;
        --metric|--threshold|--thresholds|--alpha|--min-samples)
            [[ $1 == --thresholds || $1 == --threshold ]] && THRESHOLDS_GIVEN=1
            [[ $1 == --metric || ($1 == --threshold && $2 == *:*) ]] && METRIC_GIVEN=1
            COMPARE_ARGS+=("$1" "$2"); shift 2 ;;
        --allow-missing|--no-fdr|--fdr|--any-size|--adjacent) COMPARE_ARGS+=("$1"); shift ;;
        --update-baseline) UPDATE=1; shift ;;
        --bootstrap) BOOTSTRAP=1; shift ;;
        --no-report) REPORT=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "nightly.sh: error: unknown option '$1' (see ci/nightly.sh --help)" >&2; exit 2 ;;
    esac
done

say() { echo "nightly.sh: $*" >&2; }
if [[ ! $LAUNCHES =~ ^[1-9][0-9]?$ ]]; then
    say "error: --launches '$LAUNCHES' must be a whole number from 1 to 99, e.g. 2"
    exit 2
fi

# The shipped gate: the measured per-row thresholds belong to the default matrix only.
if [[ $CONFIG_GIVEN -eq 0 && $THRESHOLDS_GIVEN -eq 0 ]]; then
    COMPARE_ARGS+=(--thresholds "$(dirname "$0")/thresholds-nightly-cpu.toml")
fi
[[ $METRIC_GIVEN -eq 0 ]] && COMPARE_ARGS+=(--metric time_us_min)

# 1. The baseline: a run directory, or a name in the store. Checked before minutes of sweeping.
if [[ -d "$BASELINE" ]]; then
    BASELINE_DIR=$BASELINE
else
    BASELINE_DIR=$STORE/$BASELINE
fi
if [[ ! -d "$BASELINE_DIR" && $BOOTSTRAP -eq 0 ]]; then
    if [[ -n "$RUN_DIR" ]]; then
        say "error: no baseline '$BASELINE' in $STORE: pin this run as it with" \
            "ci/nightly.sh --run-dir $RUN_DIR --bootstrap (no new sweep)"
    else
        say "error: no baseline '$BASELINE' in $STORE: the first night is" \
            "ci/nightly.sh --bootstrap (sweeps and saves the run as '$BASELINE');" \
            "to pin a run you already have: ci/nightly.sh --run-dir RUN --bootstrap"
    fi
    exit 2
fi

# 2. Sweep (unless the run was made elsewhere, e.g. by srun on every node of a Slurm job).
if [[ -n "$RUN_DIR" ]]; then
    OUT=$RUN_DIR
    if [[ ! -d "$OUT" ]]; then say "error: --run-dir $OUT does not exist"; exit 2; fi
else
    OUT=${OUT:-results/nightly-$(date -u +%Y%m%dT%H%M%SZ)}
    if [[ ! -f "$CONFIG" ]]; then say "error: no sweep config $CONFIG (give --config FILE)"; exit 2; fi
    for ((launch = 1; launch <= LAUNCHES; launch++)); do
        dir=$OUT
        [[ $LAUNCHES -gt 1 ]] && dir=$OUT/launch-$launch
        say "sweep $launch of $LAUNCHES: $DISTBENCH sweep --config $CONFIG --out $dir ${SWEEP_ARGS:-}"
        # shellcheck disable=SC2086  # DISTBENCH and SWEEP_ARGS are word lists on purpose
        $DISTBENCH sweep --config "$CONFIG" --out "$dir" ${SWEEP_ARGS:-}
        rc=$?
        if [[ $rc -eq 2 ]]; then say "error: the sweep refused its configuration"; exit 2; fi
        if [[ $rc -ne 0 ]]; then say "error: the benchmark failed (exit $rc); see $dir/logs"; exit 3; fi
    done
fi

# 3. Report: figures for people, tonight over the baseline; its failure is a warning, never the
#    gate's verdict.
report() {
    [[ $REPORT -eq 1 ]] || return 0
    # shellcheck disable=SC2086
    $DISTBENCH report "$@" --out "$OUT/report" || say "warning: distbench report failed"
}

# 4. The bootstrap night: save tonight as the baseline, report it, nothing to compare.
if [[ ! -d "$BASELINE_DIR" ]]; then
    # shellcheck disable=SC2086
    $DISTBENCH baseline save "$OUT" --name "$BASELINE" --store "$STORE" || exit 2
    report "$OUT"
    say "no baseline '$BASELINE' yet: saved $OUT as it (nothing to compare tonight)"
    exit 0
fi
report "$BASELINE_DIR" "$OUT"

# 5. Compare: the verdict first on stdout, the same as Markdown and JSON beside the run.
# shellcheck disable=SC2086
$DISTBENCH compare "$BASELINE" "$OUT" --store "$STORE" "${COMPARE_ARGS[@]}" \
    --save "$OUT/compare.md" --save "$OUT/compare.json" --save "$OUT/compare.txt"
rc=$?
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -s "$OUT/compare.md" ]]; then
    cat "$OUT/compare.md" >>"$GITHUB_STEP_SUMMARY"
fi
case $rc in
    0) say "no regression against '$BASELINE'" ;;
    1) say "REGRESSION against '$BASELINE': see $OUT/compare.md" ;;
    4) say "FAILED: cases of '$BASELINE' are missing tonight: see $OUT/compare.md" ;;
    *) say "error: distbench compare failed (exit $rc)"; exit 2 ;;
esac

# 6. Optionally roll the baseline forward after a clean night.
if [[ $rc -eq 0 && $UPDATE -eq 1 ]]; then
    # shellcheck disable=SC2086
    $DISTBENCH baseline save "$OUT" --name "$BASELINE" --store "$STORE" --force || exit 2
fi
exit "$rc"
