#!/usr/bin/env bash
# The nightly regression gate: sweep from a config file, gate against the baseline, report.
#
#   ci/nightly.sh --bootstrap                       # first night: sweep, save the run as baseline
#   ci/nightly.sh                                   # every night: sweep, gate, report
#   ci/nightly.sh --resume results/nightly-RUN      # finish a night cut short (Ctrl-C, a crash)
#   ci/nightly.sh --run-dir RUN --bootstrap         # pin a run you already have (no sweep)
#   ci/nightly.sh --config ci/my-sweep.toml --baseline a100-main --thresholds ci/thresholds-example.toml
#   ci/nightly.sh --run-dir results/last-night      # gate a run made elsewhere (Slurm: after srun)
#   ci/nightly.sh --no-confirm                      # a regressed night fails at once, no re-run
#
# Works from any directory. The shipped config and thresholds are found beside this script; the
# nights go to ./results/nightly-<UTC date and time> and the baseline store is ./baselines (or
# $DISTBENCH_BASELINES), both under the directory you run it from, so run it from the same one
# every night; paths you give (--config, --out, --run-dir, --store) are read as you typed them.
#
# Each night sweeps three times (--launches 3) into RUN/launch-1 ... RUN/launch-3: a row's level
# moves between launches far more than between the trials of one, and compare, report and history
# read a night's launches together (docs: How the gate decides). --launches 1 is a third of the
# time, a plain RUN, and a gate that judges far less (docs: the gate, its replays).
#
# The gate is distbench compare's rule (docs: How the gate decides). Without --config and
# --threshold(s) it gates ci/sweep-nightly-cpu.toml (order = "interleaved") on the fastest trial
# (--metric time_us_min) with the 5 % floor of ci/thresholds-nightly-cpu.toml; the noise is learnt
# by the baseline window (--update-baseline appends each passed night; docs: the gate).
#
# The log: one line per sweep (the sweeps' tables and progress go to RUN/sweeps.log; --verbose
# shows them as they come instead), then distbench compare's output, which opens with the verdict,
# and the verdict again as the last line; a night on which compare judged nothing (every row and
# band 'cannot tell', e.g. a window still learning the noise) passes, and its last line says so:
# "nothing judged against 'nightly' yet (every row cannot tell: the window is learning the noise,
# 1 of 5 nights); the night passes", the reason read from compare.json.
#
# Confirmation (on by default when the script sweeps): on a shared or virtual box the hypervisor
# can take the CPU for minutes and slow a whole night. A night that regressed is swept again at
# once into RUN-confirm and gated too; the night fails only when that re-run regresses as well
# (docs: the nightly gate). It costs a second night's sweeps on a failing night only, and a few
# catches of a real slowdown. --no-confirm fails at the first regression; --run-dir (a run made
# elsewhere, nothing to sweep again) never confirms.
#
# A night cut short stays marked partial in RUN/nightly.state: distbench history skips it,
# --update-baseline never saves it, and ci/nightly.sh --resume RUN finishes it (each launch
# resumed where it stopped, or run if it never started) and gates it. A resumed night is gated
# and kept for history, but never becomes the baseline.
#
# Exit codes (for the CI system):
#   0    no regression, or a regression its re-run did not confirm, or nothing judged (every row
#        cannot tell)
#   1    at least one row regressed (distbench compare's verdict), and its re-run regressed too
#        (with --no-confirm or --run-dir: no re-run)
#   2    usage: bad option, missing config, run (--run-dir) or baseline, checked in that order,
#        nothing in common with the baseline; compare's options (--metric, --threshold(s) ...)
#        are checked before any sweep. And distbench compare failed: no verdict (its internal
#        error, exit 3, or no compare.json), never read as a regression, in the re-run's gate too
#   3    the benchmark itself failed (a rank died, --check found wrong results)
#   4    rows of the baseline are missing tonight (a case was lost); --allow-missing passes them
#   5    cannot tell: the box changed under the baseline window (most primitives moved at once,
#        each its own way; docs: the gate). Not swept again, never added to the window. A
#        regressed night whose re-run cannot tell exits 5 too
#   130  interrupted (Ctrl-C, SIGTERM): the night is partial; --resume RUN finishes it
#
# Writes into the run directory: nightly.state, sweeps.log, compare.md, compare.json,
# compare.txt, report/ (distbench report, tonight over the baseline); a run gated again (--run-dir
# after a CI retry) keeps the earlier gate's three as compare.earlier-K.*. After a re-run, the
# first gate's compare.md and compare.txt open with what the re-run decided.
# In GitHub Actions (GITHUB_ACTIONS=true, or $GITHUB_STEP_SUMMARY set) compare itself appends its
# Markdown to the job summary and annotates each regressed row or band (distbench compare
# --github), for the night's verdict only: a first gate that a re-run judges again stays quiet,
# and after a re-run nightly.sh adds the night's verdict below the re-run's summary, one line.
# Environment: DISTBENCH (the command, default "distbench"; ci/slurm-nightly.sbatch gives one
# that runs each sweep as an srun step on every node), SWEEP_ARGS (extra sweep flags, e.g.
# "--backend nccl"), DISTBENCH_BASELINES (the baseline store, default ./baselines).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DISTBENCH=${DISTBENCH:-distbench}
CONFIG=$HERE/sweep-nightly-cpu.toml
CONFIG_GIVEN=0
THRESHOLDS_GIVEN=0
METRIC_GIVEN=0
GATE_METRIC=time_us_min  # the report of the night compares on it too, where it is a time
BASELINE=nightly
OUT=""
RUN_DIR=""
RESUME=""
STORE=${DISTBENCH_BASELINES:-baselines}
COMPARE_ARGS=()
UPDATE=0
BOOTSTRAP=0
CONFIRM=""        # 1 --confirm, 0 --no-confirm, empty: on when this script sweeps
CONFIRMS=""       # the confirmation night's record: the night it re-measures
CONFIRMATION=""   # the regressed night's record: its re-run and that one's verdict
REPORT=1
LAUNCHES=3
LAUNCHES_GIVEN=0
VERBOSE=0
STATE_FILE=nightly.state  # collectors/rundir.py NIGHT_STATE: distbench history reads it
SWEEP_LOG=sweeps.log
EXIT_INTERRUPTED=130
SELF=$0  # the script as it was called: the hints it prints run from where the user stands

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
    cat <<'EOF'
Options:
  --config FILE        sweep config (default ci/sweep-nightly-cpu.toml beside this script, gated
                       with its --thresholds ci/thresholds-nightly-cpu.toml unless --threshold(s)
                       is given)
  --out DIR            run directory for tonight (default results/nightly-<UTC date and time>)
  --launches N         sweeps tonight, into DIR/launch-1 ... DIR/launch-N, pooled by compare
                       (default 3; 1: one sweep into DIR itself)
  --resume RUN         finish the night RUN that was cut short: each launch resumed or run, then
                       the gate (its config, launches and SWEEP_ARGS are the night's own)
  --run-dir DIR        skip the sweep and gate this existing run
  --baseline NAME      baseline name or run directory (default nightly)
  --store DIR          baseline store (default $DISTBENCH_BASELINES or ./baselines)
  --metric M, --threshold T, --thresholds FILE, --alpha A, --min-nights N
                       passed to distbench compare (as are --allow-missing, --relative,
                       --absolute); --metric defaults to time_us_min (the fastest trial)
  --update-baseline    after a night that passed, was complete and was not resumed, add it to
                       the baseline's window of recent nights (distbench baseline save); a
                       night in the window already (a CI retry) is left as it is
  --bootstrap          when the baseline does not exist, save this run as it and exit 0 (when it
                       exists: ignored, with a note, and the night is gated)
  --confirm            when tonight regresses, sweep the night again at once (into RUN-confirm)
                       and gate that too: exit 1 only when the re-run regresses as well (the
                       default whenever this script sweeps; refused with --run-dir)
  --no-confirm         exit 1 at tonight's regression, without a re-run
  --no-report          skip distbench report
  --verbose            the sweeps' progress and tables on the terminal (default: RUN/sweeps.log)
EOF
}

say() { echo "nightly.sh: $*" >&2; }
need_value() {
    if [[ $# -lt 2 || $2 == --* ]]; then
        say "error: $1 needs a value (see $SELF --help)"
        exit 2
    fi
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --config) need_value "$@"; CONFIG=$2; CONFIG_GIVEN=1; shift 2 ;;
        --out) need_value "$@"; OUT=$2; shift 2 ;;
        --launches) need_value "$@"; LAUNCHES=$2; LAUNCHES_GIVEN=1; shift 2 ;;
        --resume) need_value "$@"; RESUME=$2; shift 2 ;;
        --run-dir) need_value "$@"; RUN_DIR=$2; shift 2 ;;
        --baseline) need_value "$@"; BASELINE=$2; shift 2 ;;
        --store) need_value "$@"; STORE=$2; shift 2 ;;
        --min-samples|--fdr|--no-fdr|--any-size|--adjacent|--noise-test|--no-noise-test)
            # 0.2.0's trial-level options: refused now, not after the night's sweeps
            say "error: $1 was removed in 0.3: compare no longer tests trials across launches" \
                "(the launch is the unit); drop it, and see --min-nights and --threshold" \
                "(docs/gate.md)"
            exit 2 ;;
        --metric|--threshold|--thresholds|--alpha|--min-nights)
            need_value "$@"
            [[ $1 == --thresholds || $1 == --threshold ]] && THRESHOLDS_GIVEN=1
            [[ $1 == --metric || ($1 == --threshold && $2 == *:*) ]] && METRIC_GIVEN=1
            [[ $1 == --metric ]] && GATE_METRIC=$2
            [[ $1 == --threshold && $2 == *:* ]] && GATE_METRIC=${2%:*}
            COMPARE_ARGS+=("$1" "$2"); shift 2 ;;
        --allow-missing|--relative|--absolute)
            COMPARE_ARGS+=("$1"); shift ;;
        --update-baseline) UPDATE=1; shift ;;
        --bootstrap) BOOTSTRAP=1; shift ;;
        --confirm) CONFIRM=1; shift ;;
        --no-confirm) CONFIRM=0; shift ;;
        --no-report) REPORT=0; shift ;;
        --verbose) VERBOSE=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) say "error: unknown option '$1' (see $SELF --help)"; exit 2 ;;
    esac
done

# Ctrl-C reaches the sweep too (the terminal signals the whole process group): the sweep keeps its
# rows and exits 130, and this script stops after it, the night marked partial.
INTERRUPTED=0
trap 'INTERRUPTED=1' INT TERM

# --- the night's record (nightly.state) -------------------------------------------------------
state_value() {  # KEY: its value in RUN's nightly.state, empty when absent
    [[ -f "$OUT/$STATE_FILE" ]] || return 0
    awk -v key="$1" 'index($0, key "=") == 1 { print substr($0, length(key) + 2); exit }' \
        "$OUT/$STATE_FILE"
}
write_state() {  # STATUS (partial or complete): written whole, atomically
    [[ -d "$OUT" ]] || return 0
    {
        echo "# ci/nightly.sh's record of this night. distbench history skips it unless"
        echo "# status=complete; ci/nightly.sh --resume $OUT finishes a partial one."
        echo "status=$1"
        echo "launches=$LAUNCHES"
        echo "config=$CONFIG"
        echo "sweep_args=${SWEEP_ARGS:-}"
        echo "resumed=$RESUMED"
        [[ -z "$CONFIRMS" ]] || echo "confirms=$CONFIRMS"
        [[ -z "$CONFIRMATION" ]] || echo "confirmation=$CONFIRMATION"
    } >"$OUT/$STATE_FILE.tmp" && mv -f "$OUT/$STATE_FILE.tmp" "$OUT/$STATE_FILE"
}
launch_dir() {  # K: where launch K of the night goes
    if [[ $LAUNCHES -gt 1 ]]; then echo "$OUT/launch-$1"; else echo "$OUT"; fi
}
launch_completed() {  # DIR: its manifest says the sweep completed
    grep -q '"status": "completed"' "$1/manifest.json" 2>/dev/null
}
clean_night() {  # DIR: a whole night measured in one go (every manifest completed, none resumed)
    local manifest found=0
    if [[ -f "$1/$STATE_FILE" ]]; then
        grep -qx 'status=complete' "$1/$STATE_FILE" || return 1
        grep -qx 'resumed=0' "$1/$STATE_FILE" || return 1
    fi
    for manifest in "$1"/manifest.json "$1"/*/manifest.json; do
        [[ -f $manifest ]] || continue
        found=1
        grep -q '"status": "completed"' "$manifest" || return 1
        grep -q '"resumes"' "$manifest" && return 1
    done
    [[ $found -eq 1 ]]
}
interrupted() {  # the night stops here, partial (130)
    write_state partial
    if [[ ! -f "$OUT/$STATE_FILE" ]]; then
        say "INTERRUPTED before anything was measured: nothing kept; run the night again"
        exit "$EXIT_INTERRUPTED"
    fi
    say "INTERRUPTED: the night is partial (marked in $OUT/$STATE_FILE: history skips it," \
        "and it never becomes the baseline); to finish the whole night and gate it:" \
        "$SELF --resume $OUT"
    exit "$EXIT_INTERRUPTED"
}

# --- 0. what tonight is: a new night, a cut night to finish, or a run made elsewhere ----------
RESUMED=0
if [[ -n "$RESUME" ]]; then
    if [[ -n "$RUN_DIR" || -n "$OUT" ]]; then
        say "error: --resume RUN finishes that night: drop --run-dir and --out"
        exit 2
    fi
    OUT=${RESUME%/}
    if [[ ! -f "$OUT/$STATE_FILE" ]]; then
        say "error: --resume $OUT: no $STATE_FILE there, so it is not a night of ci/nightly.sh" \
            "(a run of distbench sweep resumes with distbench sweep --resume RUN)"
        exit 2
    fi
    [[ $CONFIG_GIVEN -eq 1 || $LAUNCHES_GIVEN -eq 1 ]] &&
        say "note: --resume uses the night's own config and launches; --config/--launches ignored"
    CONFIG=$(state_value config)
    LAUNCHES=$(state_value launches)
    [[ -z "${SWEEP_ARGS+set}" ]] && SWEEP_ARGS=$(state_value sweep_args)
    [[ $(state_value resumed) == 1 ]] && RESUMED=1
    CONFIG_GIVEN=$([[ $CONFIG == "$HERE/sweep-nightly-cpu.toml" ]] && echo 0 || echo 1)
fi
if [[ ! $LAUNCHES =~ ^[1-9][0-9]?$ ]]; then
    say "error: --launches '$LAUNCHES' must be a whole number from 1 to 99, e.g. 3"
    exit 2
fi
if [[ $CONFIRM -eq 1 && -n "$RUN_DIR" ]]; then
    say "error: --confirm sweeps a regressed night again, so it needs the sweep: drop --run-dir" \
        "(or gate a second run made elsewhere with --run-dir)"
    exit 2
fi
[[ -z $CONFIRM ]] && CONFIRM=$([[ -z $RUN_DIR ]] && echo 1 || echo 0)

# The shipped gate: the measured per-row thresholds belong to the default matrix only.
if [[ $CONFIG_GIVEN -eq 0 && $THRESHOLDS_GIVEN -eq 0 ]]; then
    COMPARE_ARGS+=(--thresholds "$HERE/thresholds-nightly-cpu.toml")
fi
[[ $METRIC_GIVEN -eq 0 ]] && COMPARE_ARGS+=(--metric time_us_min)

# --- 0b. what the night reads and writes: checked before the baseline, whose advice names them --
if [[ -n "$RUN_DIR" ]]; then
    OUT=${RUN_DIR%/}
    if [[ ! -d "$OUT" ]]; then
        say "error: --run-dir $OUT does not exist (give the folder of a run or of a night)"
        exit 2
    fi
    if [[ -f "$OUT/$STATE_FILE" && $(state_value status) != complete ]]; then
        say "error: --run-dir $OUT is a partial night: finish it with $SELF --resume $OUT"
        exit 2
    fi
    if [[ -z $(find "$OUT" -name results.csv -not -path "$OUT/report/*" -print -quit) ]]; then
        say "error: --run-dir $OUT holds no results (no results.csv in it or in its launch-N" \
            "folders): give the folder of a run or of a night"
        exit 2
    fi
else
    if [[ -z "$RESUME" ]]; then
        OUT=${OUT:-results/nightly-$(date -u +%Y%m%dT%H%M%SZ)}
        if [[ -e "$OUT" ]]; then
            say "error: --out $OUT already exists: give a new directory" \
                "(a night cut short: $SELF --resume $OUT)"
            exit 2
        fi
    fi
    if [[ ! -f "$CONFIG" ]]; then say "error: no sweep config $CONFIG (give --config FILE)"; exit 2; fi
    CONFIG=$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")  # --resume finds it anywhere
fi

# --- 1. the baseline: a run directory, or a name in the store; checked before any sweep ------
if [[ -d "$BASELINE" ]]; then
    BASELINE_DIR=$BASELINE
else
    BASELINE_DIR=$STORE/$BASELINE
fi
if [[ -d "$BASELINE_DIR" && $BOOTSTRAP -eq 1 ]]; then
    if [[ $BASELINE_DIR == "$BASELINE" ]]; then
        say "note: --bootstrap ignored: the baseline $BASELINE is a run directory that exists;" \
            "gating against it"
    else
        say "note: --bootstrap ignored: baseline '$BASELINE' exists in $STORE, so tonight is" \
            "gated against it; to start it over from this run instead: distbench baseline save" \
            "$OUT --name $BASELINE --store $STORE --force"
    fi
fi
if [[ ! -d "$BASELINE_DIR" && $BOOTSTRAP -eq 0 ]]; then
    if [[ -n "$RUN_DIR" ]]; then
        say "error: no baseline '$BASELINE' in $STORE: pin this run as it with" \
            "$SELF --run-dir $RUN_DIR --bootstrap (no new sweep)"
    else
        say "error: no baseline '$BASELINE' in $STORE: the first night is" \
            "$SELF --bootstrap (sweeps and saves the night as '$BASELINE');" \
            "to pin a run you already have: $SELF --run-dir RUN --bootstrap"
    fi
    exit 2
fi

# --- 1b. compare's options, checked before any sweep: the gate comes after the night's sweeps,
# and a night whose gate refused its options would be complete (history counts it) but never gated.
# compare alone knows its options (a metric's names, a thresholds file's rules and units): it
# judges the baseline against itself with them, which prints nothing when they are good.
check_compare_options() {
    local refused rc
    # shellcheck disable=SC2086  # DISTBENCH is a word list on purpose
    refused=$($DISTBENCH compare "$BASELINE" "$BASELINE" --store "$STORE" "${COMPARE_ARGS[@]}" \
        --no-github 2>&1 >/dev/null)
    rc=$?
    if [[ $rc -eq $EXIT_INTERRUPTED || $INTERRUPTED -eq 1 ]]; then
        say "INTERRUPTED before anything was measured: nothing kept; run the night again"
        exit "$EXIT_INTERRUPTED"
    fi
    case $rc in
        0 | 1 | 4 | 5) ;;
        2) refused=$(tail -n 1 <<<"$refused")
           say "error: the gate's options: ${refused#distbench: error: } (nothing swept)"
           exit 2 ;;
        *) [[ -z $refused ]] || echo "$refused" >&2  # its error (exit 3: an internal error)
           say "error: distbench compare failed (exit $rc) judging the baseline '$BASELINE'" \
               "against itself: tonight's gate would fail too (nothing swept)"
           exit 2 ;;
    esac
}
[[ -z "$RUN_DIR" && -d "$BASELINE_DIR" ]] && check_compare_options

# --- 2. the sweeps (unless the run was made elsewhere, e.g. by srun on every node) ------------
sweep() {  # K DIR: launch K of the night into DIR (a new sweep, or --resume of a cut one)
    local k=$1 dir=$2 what rc start log
    if [[ -f "$dir/spec.json" ]]; then
        what="resume"
        set -- sweep --resume "$dir"
    else
        what="sweep"
        set -- sweep --config "$CONFIG" --out "$dir"
    fi
    start=$SECONDS
    if [[ $VERBOSE -eq 1 ]]; then
        say "$what $k of $LAUNCHES: $DISTBENCH $* ${SWEEP_ARGS:-}"
        # shellcheck disable=SC2086  # DISTBENCH and SWEEP_ARGS are word lists on purpose
        $DISTBENCH "$@" ${SWEEP_ARGS:-}
        rc=$?
    else
        # into the night's sweeps.log (tail -f it to follow); a one-launch night's folder is made
        # by its sweep, so its output waits in a temporary file until then
        log=$OUT/$SWEEP_LOG
        [[ -d "$OUT" ]] || log=$(mktemp -t distbench-nightly-XXXXXX.log)
        say "$what $k of $LAUNCHES: $DISTBENCH $* ${SWEEP_ARGS:-} (progress and tables: $log)"
        echo "=== $what $k of $LAUNCHES: $DISTBENCH $* ${SWEEP_ARGS:-}" >>"$log"
        # shellcheck disable=SC2086
        $DISTBENCH "$@" ${SWEEP_ARGS:-} >>"$log" 2>&1
        rc=$?
        if [[ $rc -ne 0 && $rc -ne $EXIT_INTERRUPTED && $INTERRUPTED -eq 0 ]]; then
            tail -n 25 "$log" >&2  # why it failed, without opening the file
        fi
        if [[ $log != "$OUT/$SWEEP_LOG" ]]; then
            if [[ -d "$OUT" ]]; then cat "$log" >>"$OUT/$SWEEP_LOG"; fi
            rm -f "$log"
        fi
    fi
    if [[ $rc -eq $EXIT_INTERRUPTED || $INTERRUPTED -eq 1 ]]; then interrupted; fi
    if [[ $rc -eq 2 ]]; then say "error: the sweep refused its configuration"; exit 2; fi
    if [[ $rc -ne 0 ]]; then
        write_state partial
        say "error: the benchmark failed (exit $rc); every finished row is kept in $dir;" \
            "logs: $dir/logs$([[ $VERBOSE -eq 1 ]] || echo " and $OUT/$SWEEP_LOG")"
        exit 3
    fi
    local rows=$(($(wc -l <"$dir/results.csv") - 1))
    say "$what $k of $LAUNCHES done in $((SECONDS - start)) s: $rows rows in $dir" \
        "$([[ $VERBOSE -eq 1 ]] || echo "(tables: $OUT/$SWEEP_LOG)")"
}

sweep_night() {  # every launch of the night OUT (with --resume: those not complete yet)
    local launch dir
    if [[ $LAUNCHES -gt 1 ]]; then mkdir -p "$OUT" && write_state partial; fi
    for ((launch = 1; launch <= LAUNCHES; launch++)); do
        dir=$(launch_dir "$launch")
        if [[ -n "$RESUME" ]] && launch_completed "$dir"; then
            say "launch $launch of $LAUNCHES: complete, kept ($dir)"
            continue
        fi
        [[ -n "$RESUME" ]] && RESUMED=1
        sweep "$launch" "$dir"
        [[ $INTERRUPTED -eq 1 ]] && interrupted
    done
    write_state complete
}

[[ -z "$RUN_DIR" ]] && sweep_night

# --- 3. the bootstrap night: save tonight as the baseline, report it, nothing to compare ------
report() {  # figures for people: a failure is a warning, never the gate's verdict
    [[ $REPORT -eq 1 ]] || return 0
    local metric=()  # the gate's metric, so report and gate judge one number (a time only)
    case ${GATE_METRIC,,} in  # compare takes METRIC in any case
        time_us_*|p50|median|mean|min|max|p95|p99) metric=(--metric "${GATE_METRIC,,}") ;;
    esac
    # shellcheck disable=SC2086
    $DISTBENCH report "$@" "${metric[@]}" --out "$OUT/report" ||
        say "warning: distbench report failed"
}
if [[ ! -d "$BASELINE_DIR" ]]; then
    # shellcheck disable=SC2086
    $DISTBENCH baseline save "$OUT" --name "$BASELINE" --store "$STORE" || exit 2
    report "$OUT"
    say "no baseline '$BASELINE' yet: saved $OUT as it (nothing to compare tonight)"
    exit 0
fi

# --- 4. the gate: its verdict opens stdout; the same as Markdown and JSON beside the run ------
# The job summary and annotations: compare writes them (--github), for the night's verdict only.
# A first gate that a re-run may judge again is quiet (--no-github): a regression the re-run does
# not confirm would leave its annotations, and a second summary, contradicting the night's verdict.
GITHUB=0
[[ ${GITHUB_ACTIONS:-} == true || -n ${GITHUB_STEP_SUMMARY:-} ]] && GITHUB=1
keep_earlier_verdict() {  # OUT gated before (a CI retry of --run-dir): its verdict files kept
    local k=1 ext
    [[ -e $OUT/compare.md || -e $OUT/compare.json || -e $OUT/compare.txt ]] || return 0
    while compgen -G "$OUT/compare.earlier-$k.*" >/dev/null; do k=$((k + 1)); done
    for ext in md json txt; do
        [[ ! -e $OUT/compare.$ext ]] || mv -f "$OUT/compare.$ext" "$OUT/compare.earlier-$k.$ext"
    done
    say "note: $OUT was gated before: its verdict kept as $OUT/compare.earlier-$k.{md,json,txt}"
}
gate() {  # PUBLISH: the night OUT against the baseline; sets rc (compare's exit code)
    local github=(--no-github)
    [[ $1 -eq 1 && $GITHUB -eq 1 ]] && github=(--github)
    keep_earlier_verdict
    # shellcheck disable=SC2086
    $DISTBENCH compare "$BASELINE" "$OUT" --store "$STORE" "${COMPARE_ARGS[@]}" "${github[@]}" \
        --save "$OUT/compare.md" --save "$OUT/compare.json" --save "$OUT/compare.txt"
    rc=$?
    [[ $INTERRUPTED -eq 1 || $rc -eq $EXIT_INTERRUPTED ]] && {
        say "INTERRUPTED before the verdict: the night's sweeps are complete; to gate it:" \
            "$SELF --resume $OUT"
        exit "$EXIT_INTERRUPTED"
    }
    # a verdict is one of compare's four exit codes with its verdict file written; anything else
    # (exit 3: an internal error, its traceback above) is no verdict: never read as a regression
    case $rc in
        0 | 1 | 4 | 5) [[ -f $OUT/compare.json ]] || compare_broke "$rc, and no $OUT/compare.json" ;;
        *) compare_broke "$rc" ;;
    esac
}
compare_broke() {  # WHY: compare gave no verdict on OUT; the night fails (exit 2), never regressed
    if [[ -z ${FIRST_NIGHT:-} ]]; then
        say "error: distbench compare failed (exit $1; its error above): no verdict, so the" \
            "night neither passed nor regressed"
        exit 2
    fi
    # the re-run's gate, as a re-run that did not finish (rerun_broke): the first gate's word stands
    local again=$OUT words
    OUT=$FIRST_NIGHT CONFIRMS="" CONFIRMATION="$again compare failed"
    write_state complete
    words="this night regressed, and the gate of its re-run at once ($again) failed (distbench"
    words+=" compare exit $1, no verdict): the regression stands, unconfirmed"
    prepend "$OUT/compare.md" "> **ci/nightly.sh: $words.**"
    prepend "$OUT/compare.txt" "ci/nightly.sh: $words."
    rc=1 publish  # the quiet first gate's verdict reaches the job summary after all
    say "error: distbench compare failed (its error above): $words; see $OUT/compare.md"
    exit 2
}
publish() {  # the quiet first gate's verdict is the night's after all: compare publishes it now
    [[ $GITHUB -eq 1 ]] || return 0
    # shellcheck disable=SC2086
    $DISTBENCH compare "$BASELINE" "$OUT" --store "$STORE" "${COMPARE_ARGS[@]}" --github >/dev/null
    [[ $? -eq $rc ]] || say "warning: the verdict did not reach GitHub's job summary (distbench" \
        "compare --github failed): it is in $OUT/compare.md"
}
gate $((CONFIRM == 0))
[[ $CONFIRM -eq 1 && $rc -ne 1 ]] && publish
REGRESSED=$((rc == 1))
judged_nothing() {  # compare's verdict on OUT passed and judged nothing: every row and band of
    # its compare.json 'cannot tell'; prints why (its 'learning', else that none could be told)
    local states learning
    grep -q '"status": *"pass"' "$OUT/compare.json" || return 1
    states=$(grep -o '"state": *"[^"]*"' "$OUT/compare.json" | sed 's/.*: *"//; s/"$//' | sort -u)
    [[ $states == "cannot tell" ]] || return 1
    learning=$(grep -o '"learning": *"[^"]*"' "$OUT/compare.json" | sed 's/.*: *"//; s/"$//')
    if [[ $learning == "learning the noise: "* && $BASELINE_DIR == "$BASELINE" ]]; then
        echo "the baseline, a run directory, is one night and never learns the noise: save" \
            "nights into a window (distbench baseline save) to judge"
    elif [[ $learning == "learning the noise: "* ]]; then
        echo "the window is learning the noise, ${learning#learning the noise: }"
    elif [[ -n $learning ]]; then
        echo "$learning"
    else
        echo "none could be told from the noise"
    fi
}
case $rc in
    0) VERDICT="no regression against '$BASELINE'"
       if why=$(judged_nothing); then
           VERDICT="nothing judged against '$BASELINE'$([[ $why != *"is learning"* ]] || echo " yet")"
           VERDICT+=" (every row cannot tell: $why); the night passes"
       fi ;;
    1) VERDICT="REGRESSION against '$BASELINE': see $OUT/compare.md" ;;
    4) VERDICT="FAILED: cases of '$BASELINE' are missing tonight: see $OUT/compare.md" ;;
    5) VERDICT="CANNOT TELL against '$BASELINE': the box changed (most primitives moved at once,"
       VERDICT+=" each its own way): see $OUT/compare.md; not swept again" ;;
esac

# --- 4b. confirmation: a regressed night swept again at once, into RUN-confirm, and gated ----
confirm() {
    local night=$OUT resumed=$RESUMED again=${OUT%/}-confirm k=2 both head did decided
    while [[ -e "$again" ]]; do again=${OUT%/}-confirm-$k; k=$((k + 1)); done
    say "tonight regressed; confirming: the night again at once, into $again" \
        "(--no-confirm: fail at once)"
    OUT=$again RESUME="" RESUMED=0 CONFIRMS=$night FIRST_NIGHT=$night
    trap rerun_broke EXIT  # a re-run that fails or is cut exits in sweep_night
    sweep_night
    trap - EXIT
    gate 1
    OUT=$night RESUMED=$resumed CONFIRMS=""
    both="see $night/compare.md and $again/compare.md"
    case $rc in
        0) CONFIRMATION="$again passed" head="regression NOT CONFIRMED" did="passed"
           VERDICT="regression NOT CONFIRMED against '$BASELINE': tonight regressed, its re-run"
           VERDICT+=" at once did not ($both)" ;;
        1) CONFIRMATION="$again regressed" head="REGRESSION, confirmed" did="regressed too"
           VERDICT="REGRESSION against '$BASELINE', confirmed by a re-run at once: $both" ;;
        4) CONFIRMATION="$again lost cases"; rc=1
           head="REGRESSION, not disproved" did="lost cases"
           VERDICT="REGRESSION against '$BASELINE', not disproved: its re-run lost cases ($both)" ;;
        5) CONFIRMATION="$again cannot tell"
           head="CANNOT TELL" did="could not tell (the box changed)"
           VERDICT="CANNOT TELL against '$BASELINE': tonight regressed, and its re-run at once"
           VERDICT+=" could not tell: the box changed ($both)" ;;
    esac
    write_state complete
    # the night's verdict files (the first gate's) and the job summary (the re-run's) say it
    decided="$head against '$BASELINE' (exit $rc): this night regressed, and its re-run at"
    decided+=" once ($again) $did"
    prepend "$night/compare.md" "> **ci/nightly.sh, after the re-run: $decided.** Below: this" \
        "night's own gate; the re-run's: $again/compare.md"
    prepend "$night/compare.txt" "ci/nightly.sh, after the re-run: $decided. Below: this" \
        "night's own gate; the re-run's: $again/compare.txt"
    if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
        decided="**ci/nightly.sh: $decided.** Above: the re-run's verdict; this night's own"
        decided+=" gate: $night/compare.md"
        printf '%s\n\n' "$decided" >>"$GITHUB_STEP_SUMMARY" ||
            say "warning: cannot append the night's verdict to \$GITHUB_STEP_SUMMARY"
    fi
}
# shellcheck disable=SC2329  # called by confirm's EXIT trap
rerun_broke() {  # the re-run stopped (its sweep failed or was cut): the first gate's word stands
    local code=$?
    OUT=$FIRST_NIGHT
    local words="this night regressed, and its re-run at once did not finish (exit $code): the"
    words+=" regression stands, unconfirmed"
    prepend "$OUT/compare.md" "> **ci/nightly.sh: $words.**"
    prepend "$OUT/compare.txt" "ci/nightly.sh: $words."
    rc=1 publish  # the quiet first gate's verdict reaches the job summary after all
    say "REGRESSION against '$BASELINE', unconfirmed: $words; see $OUT/compare.md"
}
prepend() {  # FILE WORDS...: the words, then a blank line, before FILE's text (when FILE exists)
    local file=$1
    shift
    [[ -f $file ]] || return 0
    { printf '%s\n\n' "$*" && cat "$file"; } >"$file.tmp" && mv -f "$file.tmp" "$file"
}
[[ $CONFIRM -eq 1 && $rc -eq 1 ]] && confirm

# --- 5. the report, tonight over the baseline --------------------------------------------------
report "$BASELINE_DIR" "$OUT"

# --- 6. optionally add the night to the baseline: only a clean one ---------------------------
saved_already() {  # OUT is in the window: a night enters once, by its folder's name (as save keys
    # it), and with the same results (a CI retry of this night); another run of that name: exit 2
    local name stored results
    name=$(basename "$(cd "$OUT" && pwd -P)")
    stored=$BASELINE_DIR/nights/$name
    [[ -d $stored ]] || return 1
    while IFS= read -r results; do
        if ! cmp -s "$results" "$stored/${results#"$OUT"/}"; then
            say "error: baseline '$BASELINE' already holds a night named '$name' whose results" \
                "are not $OUT's: a night enters once, by its folder's name; give this run a" \
                "folder of its own name to add it"
            exit 2
        fi
    done < <(find "$OUT" -name results.csv -not -path "$OUT/report/*")
}
if [[ $UPDATE -eq 1 ]]; then
    if [[ $BASELINE_DIR == "$BASELINE" ]]; then
        say "baseline not updated: --baseline $BASELINE is a run directory, not a name in the store"
    elif [[ $rc -eq 5 ]]; then
        say "baseline '$BASELINE' not updated: tonight could not tell (if the box changed for good," \
            "and no change of code slowed the primitives $OUT/compare.md names slower, start a" \
            "new window: $DISTBENCH baseline save $OUT --name $BASELINE --force)"
    elif [[ $rc -ne 0 ]]; then
        say "baseline '$BASELINE' not updated: tonight did not pass"
    elif [[ $REGRESSED -eq 1 ]]; then
        say "baseline '$BASELINE' not updated: tonight regressed (its re-run did not)"
    elif [[ $RESUMED -eq 1 ]] || ! clean_night "$OUT"; then
        say "baseline '$BASELINE' not updated: tonight was resumed or is incomplete" \
            "(a baseline takes only whole nights measured in one go)"
    elif saved_already; then
        say "baseline '$BASELINE' not updated: $OUT is in its window already (saved by an" \
            "earlier run of this night): nothing to do"
    else
        SAVE=(baseline save "$OUT" --name "$BASELINE" --store "$STORE")
        # a store keeping a window of recent nights appends; one baseline per name is replaced
        $DISTBENCH baseline save --help 2>/dev/null | grep -q -- '--keep' || SAVE+=(--force)
        # shellcheck disable=SC2086
        $DISTBENCH "${SAVE[@]}" >&2 || exit 2
    fi
fi
say "$VERDICT"
exit "$rc"
