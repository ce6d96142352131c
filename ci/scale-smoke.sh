#!/usr/bin/env bash
# A 32-rank gloo smoke on one CPU box (#12 §6): does anything break at that count (file
# descriptors, rendezvous ports, heartbeat files, the max over ranks, the manifest merge)?
#
#   bash ci/scale-smoke.sh              # RANKS=32 by default; OUT=/tmp/distbench-scale
#   RANKS=16 bash ci/scale-smoke.sh
#
# Steps (tiny sizes: the point is the count, not the numbers): a sweep of two primitives at
# RANKS, subgroups (RANKS/4, RANKS/2, RANKS in one launch), `distbench pairs` over every pair,
# and a report of all of them. After each step it checks what scale breaks: exit 0, no heartbeat
# file left behind, manifest.json's `ranks` map has an entry per rank and `nodes` one entry, a
# row is there, and samples.csv holds the max over ranks only (rank -1: no rank's own rows
# gathered). Prints one line per step with its wall time: docs/performance.md keeps them.
# Exit 0 when every step and check passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
RANKS=${RANKS:-32}
OUT=${OUT:-/tmp/distbench-scale}
rm -rf "$OUT" && mkdir -p "$OUT"
TINY=(--backend gloo --iters 2 --warmup 1 --trials 2 --timeout 300)
failed=0
echo "scale smoke: $RANKS ranks on $(nproc) cores, ulimit -n $(ulimit -n), $(date -u +%FT%TZ)"

check_run() {  # run dir, expected ranks in the manifest's map
  "$PY" - "$1" "$2" <<'PY'
import json, sys
from pathlib import Path
run, ranks = Path(sys.argv[1]), int(sys.argv[2])
manifest = json.loads((run / "manifest.json").read_text())
problems = []
if manifest.get("status") != "completed":
    problems.append(f"status {manifest.get('status')}")
if len(manifest.get("ranks") or {}) != ranks:
    problems.append(f"ranks map has {len(manifest.get('ranks') or {})} entries, not {ranks}")
if len(manifest.get("nodes") or {}) != 1:
    problems.append("nodes should have one entry")
left = list((run / "logs").glob("*.alive"))
if left:
    problems.append(f"{len(left)} heartbeat files left")
with open(run / "samples.csv") as handle:
    column = handle.readline().rstrip("\n").split(",").index("rank")
    found = {line.split(",")[column] for line in handle}
if found != {"-1"}:
    problems.append(f"samples.csv has ranks {sorted(found)[:5]}, not only -1")
with open(run / "results.csv") as handle:
    if sum(1 for _ in handle) < 2:
        problems.append("results.csv has no row")
print("  checks: " + ("; ".join(problems) if problems else "ok"))
sys.exit(1 if problems else 0)
PY
}

step() {  # name, ranks in the manifest, run dir, distbench arguments...
  local name=$1 ranks=$2 dir=$3
  shift 3
  local start end code
  start=$(date +%s.%N)
  "$PY" -m distbench "$@" --out "$dir" >"$OUT/$name.log" 2>&1
  code=$?
  end=$(date +%s.%N)
  printf '%-10s exit %d  %6.1f s  %s\n' "$name" "$code" "$(echo "$end - $start" | bc)" "$*"
  if [ "$code" -ne 0 ]; then
    failed=1
    tail -5 "$OUT/$name.log"
  elif [ "$ranks" -gt 0 ]; then
    check_run "$dir" "$ranks" || failed=1
  fi
}

step sweep "$RANKS" "$OUT/sweep" allreduce "${TINY[@]}" --world-sizes "$RANKS" --sizes 1K,16K
step subgroups "$RANKS" "$OUT/subgroups" broadcast "${TINY[@]}" \
  --world-sizes "$((RANKS / 4)),$((RANKS / 2)),$RANKS" --sizes 1K
step pairs "$RANKS" "$OUT/pairs" pairs "${TINY[@]}" --world-sizes "$RANKS" --sizes 1K
start=$(date +%s.%N)
"$PY" -m distbench report "$OUT/sweep" "$OUT/subgroups" "$OUT/pairs" --out "$OUT/report" \
  >"$OUT/report.log" 2>&1
code=$?
printf '%-10s exit %d  %6.1f s  report of the three runs\n' report "$code" \
  "$(echo "$(date +%s.%N) - $start" | bc)"
[ "$code" -eq 0 ] || { failed=1; tail -5 "$OUT/report.log"; }
exit $failed
