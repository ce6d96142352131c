#!/usr/bin/env bash
# The GPU smoke rehearsed on a CPU box, as the GPU node will see it: a fresh clone, the carried
# wheels, a fresh Python 3.12 with no torch and no registry.
#
#   bash ci/gpu-rehearse.sh [WORK]          # default /tmp/distbench-rehearse; prints a timing table
#
# 1. git clone of this checkout's HEAD (committed files only) into WORK/repo;
# 2. bash ci/gpu-wheels.sh WORK/repo/.gpu-wheels (needs the registry; versions from this
#    checkout's .venv, the tested ones);
# 3. a fresh venv of Python 3.12 ($PY312, default pyenv's 3.12.1), without torch;
# 4. the smoke's own install and CLI side: PYTHON=venv/bin/python bash ci/gpu-smoke.sh --cli-only
#    (pip --no-index --no-deps --target, then the CLI's imports and every command's --help);
# 5. pip install --no-index --no-deps of the same wheels into the venv: `distbench --help` and a
#    `--dry-run` there, torch-free;
# 6. the smoke's plan for 1 and 8 GPUs, each within its cap;
# 7. what a device call would carry: the tracked tree plus the wheel folder, under 64 MiB.
# Exit 0 when every part passed.
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/distbench-rehearse}
PY312=${PY312:-/root/.pyenv/versions/3.12.1/bin/python}
TESTED=${PYTHON:-$SRC/.venv/bin/python}
rm -rf "$WORK" && mkdir -p "$WORK"
failed=0
timings=()
part() {  # part NAME COMMAND...: run, time, record
  local name=$1 began code=0 took
  shift
  began=$(date +%s.%N)
  "$@" >"$WORK/$name.log" 2>&1 || code=$?
  took=$(awk "BEGIN {printf \"%.1f\", $(date +%s.%N) - $began}")
  timings+=("$(printf '%-22s %6s s  %s' "$name" "$took" "$([ $code = 0 ] && echo ok || echo "FAILED (exit $code)")")")
  if [ "$code" != 0 ]; then failed=1; echo "== $name failed, tail of $WORK/$name.log:"; tail -15 "$WORK/$name.log"; fi
  return 0
}
part clone git clone -q "$SRC" "$WORK/repo"
cd "$WORK/repo" || exit 1
part wheels env PYTHON="$TESTED" bash ci/gpu-wheels.sh .gpu-wheels
part venv-3.12 "$PY312" -m venv "$WORK/venv"
VPY=$WORK/venv/bin/python
part smoke-install-cli env PYTHON="$VPY" SMOKE_SITE="$WORK/site" SMOKE_DIR="$WORK/smoke" \
  bash ci/gpu-smoke.sh --cli-only
part venv-install "$VPY" -m pip install -q --no-index --no-deps --disable-pip-version-check \
  .gpu-wheels/*.whl
part distbench-help "$WORK/venv/bin/distbench" --help
part dry-run "$WORK/venv/bin/distbench" allreduce --world-sizes 2 --sizes 1K,1M --dry-run
part no-torch "$VPY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None)"
part duckdb "$VPY" -c "import duckdb; duckdb.sql('select 42').fetchall()"
part plan-1gpu "$VPY" ci/gpu_smoke.py --plan --gpus 1
part plan-8gpu "$VPY" ci/gpu_smoke.py --plan --gpus 8
carried() {  # the device call's payload: tracked files + the wheel folder (MiB)
  local tree wheels
  tree=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
  wheels=$(du -sb .gpu-wheels | cut -f1)
  echo "tree $((tree / 1024)) KiB + wheels $((wheels / 1024)) KiB = $(((tree + wheels) / 1048576)) MiB of 64"
  [ $((tree + wheels)) -lt $((64 * 1048576)) ]
}
part carried carried

echo
printf '%s\n' "${timings[@]}"
echo
grep -h "^missing\|exit" "$WORK/smoke-install-cli.log" | sed 's/^/smoke --cli-only: /'
grep -h "^installed" "$WORK/smoke-install-cli.log"
grep -h "total planned" "$WORK/plan-1gpu.log" "$WORK/plan-8gpu.log"
grep -h "^gpu-wheels:" "$WORK/wheels.log"
cat "$WORK/carried.log"
[ "$failed" = 0 ] && echo "gpu-rehearse: every part passed" || echo "gpu-rehearse: some parts failed"
exit "$failed"
