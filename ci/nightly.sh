#!/usr/bin/env bash
# The nightly regression gate: sweep from a config file, report, compare against a pinned baseline.
#
#   ci/nightly.sh                                   # ci/sweep-example.toml against baseline "nightly"
#   ci/nightly.sh --config ci/my-sweep.toml --baseline a100-main --thresholds ci/thresholds-example.toml
#   ci/nightly.sh --run-dir results/last-night      # gate a run made elsewhere (Slurm: after srun)
#   ci/nightly.sh --bootstrap                       # first night: no baseline yet, save this run as it
#
# Exit codes (for the CI system):
#   0  no regression          1  at least one row regressed (distbench compare's verdict)
#   2  usage: bad option, missing config or baseline, nothing in common with the baseline
#   3  the benchmark itself failed (a rank died, --check found wrong results, interrupted)
#
# Writes into the run directory: report/ (distbench report, when that command exists),
# compare.md (also appended to $GITHUB_STEP_SUMMARY when set), compare.json, compare.txt.
# Environment: DISTBENCH (the command, default "distbench"), SWEEP_ARGS (extra sweep flags, e.g.
# "--backend nccl"), DISTBENCH_BASELINES (the baseline store, default ./baselines).
set -uo pipefail

DISTBENCH=${DISTBENCH:-distbench}
CONFIG=ci/sweep-example.toml
BASELINE=nightly
OUT=""
RUN_DIR=""
STORE=${DISTBENCH_BASELINES:-baselines}
COMPARE_ARGS=()
UPDATE=0
BOOTSTRAP=0
REPORT=1

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    cat <<'EOF'
Options:
  --config FILE        sweep config (default ci/sweep-example.toml)
  --out DIR            run directory for tonight (default results/nightly-<UTC date and time>)
  --run-dir DIR        skip the sweep and gate this existing run
  --baseline NAME      baseline name or run directory (default nightly)
  --store DIR          baseline store (default $DISTBENCH_BASELINES or ./baselines)
  --metric M, --threshold T, --thresholds FILE, --alpha A   passed to distbench compare
  --update-baseline    after a night without regression, save this run as the baseline
  --bootstrap          when the baseline does not exist, save this run as it and exit 0
  --no-report          skip distbench report
EOF
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --config) CONFIG=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --run-dir) RUN_DIR=$2; shift 2 ;;
        --baseline) BASELINE=$2; shift 2 ;;
        --store) STORE=$2; shift 2 ;;
        --metric|--threshold|--thresholds|--alpha) COMPARE_ARGS+=("$1" "$2"); shift 2 ;;
        --update-baseline) UPDATE=1; shift ;;
        --bootstrap) BOOTSTRAP=1; shift ;;
        --no-report) REPORT=0; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "nightly.sh: error: unknown option '$1' (see ci/nightly.sh --help)" >&2; exit 2 ;;
    esac
done

say() { echo "nightly.sh: $*" >&2; }

# 1. Sweep (unless the run was made elsewhere, e.g. by srun on every node of a Slurm job).
if [[ -n "$RUN_DIR" ]]; then
    OUT=$RUN_DIR
    if [[ ! -d "$OUT" ]]; then say "error: --run-dir $OUT does not exist"; exit 2; fi
else
    OUT=${OUT:-results/nightly-$(date -u +%Y%m%dT%H%M%SZ)}
    if [[ ! -f "$CONFIG" ]]; then say "error: no sweep config $CONFIG (give --config FILE)"; exit 2; fi
    say "sweep: $DISTBENCH sweep --config $CONFIG --out $OUT ${SWEEP_ARGS:-}"
    # shellcheck disable=SC2086  # DISTBENCH and SWEEP_ARGS are word lists on purpose
    $DISTBENCH sweep --config "$CONFIG" --out "$OUT" ${SWEEP_ARGS:-}
    rc=$?
    if [[ $rc -eq 2 ]]; then say "error: the sweep refused its configuration"; exit 2; fi
    if [[ $rc -ne 0 ]]; then say "error: the benchmark failed (exit $rc); see $OUT/logs"; exit 3; fi
fi

# 2. The baseline must exist (checked before the report, so a usage error fails fast).
if [[ ! -d "$BASELINE" && ! -d "$STORE/$BASELINE" ]]; then
    if [[ $BOOTSTRAP -eq 1 ]]; then
        # shellcheck disable=SC2086
        $DISTBENCH baseline save "$OUT" --name "$BASELINE" --store "$STORE" || exit 2
        say "no baseline '$BASELINE' yet: saved this run as it (nothing to compare tonight)"
        exit 0
    fi
    say "error: no baseline '$BASELINE' in $STORE (first night: pass --bootstrap)"
    exit 2
fi

# 3. Report: figures for people; its failure is a warning, never the gate's verdict.
# shellcheck disable=SC2086
if [[ $REPORT -eq 0 ]]; then
    :
elif $DISTBENCH report --help >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    $DISTBENCH report "$OUT" --out "$OUT/report" || say "warning: distbench report failed"
else
    say "note: this distbench has no report command; skipping the report"
fi

# 4. Compare: the table on stdout, the same verdict as Markdown and JSON beside the run.
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
    *) say "error: distbench compare failed (exit $rc)"; exit 2 ;;
esac

# 5. Optionally roll the baseline forward after a clean night.
if [[ $rc -eq 0 && $UPDATE -eq 1 ]]; then
    # shellcheck disable=SC2086
    $DISTBENCH baseline save "$OUT" --name "$BASELINE" --store "$STORE" --force || exit 2
fi
exit "$rc"
