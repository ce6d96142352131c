#!/usr/bin/env bash
# The NCCL / CUDA paths on a GPU node, in one call that fits a 5-minute device slot on 1 GPU
# (install included), ending in summary.tsv for docs/verified-on.md.
#
#   bash ci/gpu-smoke.sh                          # install the carried wheels, run every step
#   bash ci/gpu-smoke.sh --only graph-nccl,pytest-gpu-graph   # rerun some steps (<= 4 min)
#   bash ci/gpu-smoke.sh --plan [--gpus 8]        # the steps and their planned times; runs nothing
#   bash ci/gpu-smoke.sh --cli-only               # the CLI side only (ci/gpu-rehearse.sh, no GPU)
#   bash ci/gpu-smoke.sh --time-cap 600           # or SMOKE_TIME_CAP: seconds for everything
#
# Install: the node has no network. Its image has torch (CUDA), numpy, pandas, matplotlib,
# seaborn, pytest, hypothesis, pyyaml, pyarrow, but not duckdb or pydantic, and its
# typer/rich may not be the tested releases. ci/gpu-wheels.sh DIR (run where pip reaches a
# registry) puts Python 3.12 manylinux wheels of those and distbench's own wheel in DIR
# (default .gpu-wheels/, git-ignored: a device call carries it). They are installed with
# --no-index --no-deps into SMOKE_SITE (default /tmp/distbench-smoke-site), put first on
# PYTHONPATH; the image's torch is never touched. A wheel folder built from other sources than
# this tree's is refused in one line (its SOURCE.sha256 against ci/gpu_smoke.py --source-hash).
# Without a wheel folder, an installed distbench is used as it is.
#
# Steps (ci/gpu_smoke_steps.py): planned from a stated start-up figure per launch, each under its
# own timeout, "skipped: no time" when its plan no longer fits the cap, "skipped: needs 2 GPUs"
# on one GPU; the gpu test files by name, then --api compiled, last. Output in SMOKE_DIR (default
# /tmp/distbench-gpu-smoke); with $OUT set (a device call) also $OUT/summary.tsv and
# $OUT/smoke-runs.tar.gz. Fill the docs from it: python3 ci/gpu_smoke_report.py --fill
# docs/verified-on.md summary.tsv. Exit 0 when no step failed, timed out or found no time.
set -uo pipefail
cd "$(dirname "$0")/.."
SMOKE_T0=$(date +%s.%N)
export SMOKE_T0
PY=${PYTHON:-python3}
WHEELS=${SMOKE_WHEELS:-.gpu-wheels}
SITE=${SMOKE_SITE:-/tmp/distbench-smoke-site}
CAP=${SMOKE_TIME_CAP:-}
args=()
install=1
while [ $# -gt 0 ]; do
  case $1 in
    --wheels) WHEELS=${2:?--wheels needs a folder}; shift 2 ;;
    --wheels=*) WHEELS=${1#*=}; shift ;;
    --plan) install=0; args+=("$1"); shift ;;
    --time-cap) CAP=${2:?--time-cap needs seconds}; shift 2 ;;
    --time-cap=*) CAP=${1#*=}; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -n "$CAP" ] && args+=(--time-cap "$CAP")
export PYTHONUNBUFFERED=1

if [ "$install" = 1 ]; then
  if compgen -G "$WHEELS/*.whl" >/dev/null; then
    want=$(cat "$WHEELS/SOURCE.sha256" 2>/dev/null || echo none)
    have=$("$PY" ci/gpu_smoke.py --source-hash)
    if [ "$want" != "$have" ]; then
      echo "gpu-smoke: the wheels in $WHEELS were built from other sources than this tree" \
        "(SOURCE.sha256 $want, tree $have): run bash ci/gpu-wheels.sh $WHEELS again" >&2
      exit 2
    fi
    began=$(date +%s.%N)
    rm -rf "$SITE"
    if ! "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --disable-pip-version-check --target "$SITE" "$WHEELS"/*.whl; then
      echo "gpu-smoke: pip could not install the wheels of $WHEELS into $SITE" >&2
      exit 1
    fi
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    SMOKE_INSTALL_S=$(awk "BEGIN {print $(date +%s.%N) - $began}")
    export SMOKE_INSTALL_S
    echo "installed $(ls "$WHEELS"/*.whl | wc -l) wheels from $WHEELS in ${SMOKE_INSTALL_S%.*} s"
  elif ! "$PY" -c "import distbench" 2>/dev/null; then
    echo "gpu-smoke: no wheels in $WHEELS and no distbench installed: run bash ci/gpu-wheels.sh" \
      "$WHEELS where pip reaches a registry, and carry the folder (device call: carry" \
      "[\"$WHEELS\"])" >&2
    exit 2
  else
    export SMOKE_INSTALL_S=0
  fi
fi
exec "$PY" ci/gpu_smoke.py "${args[@]}"
