#!/usr/bin/env bash
# The NCCL / CUDA paths on one GPU node, in a few minutes, ending in a short table.
#
#   bash ci/gpu-smoke.sh            # on a node with at least one CUDA GPU and a CUDA build of torch
#
# With one GPU, NCCL runs at world size 1 (every code path: device binding by LOCAL_RANK, NCCL
# init with device_id, CUDA-event timing, drains, --check on the GPU); with more GPUs it also runs
# world size 2. Exit code: 0 when every step passed, 1 otherwise. Offline-safe: installs distbench
# with --no-deps --no-index (torch, pandas, seaborn, typer must already be there).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${SMOKE_OUT:-${OUT:-/tmp}/distbench-gpu-smoke}
rm -rf "$OUT" && mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

if ! "$PY" -c "import distbench" 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-index --no-build-isolation -e . || exit 1
fi
DB=("$PY" -m distbench)
nvidia-smi -L || true
"$PY" - <<'PY'
import torch
print(f"torch {torch.__version__} cuda {torch.version.cuda} gpus {torch.cuda.device_count()}",
      f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))}" if torch.cuda.is_available() else "")
PY
GPUS=$("$PY" -c "import torch; print(torch.cuda.device_count())")
WS=1; [ "$GPUS" -ge 2 ] && WS=1,2

failed=0
step() {  # step NAME COMMAND...: run, log, remember failures
  local name=$1; shift
  echo "== $name: $*"
  if "$@" >"$OUT/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED (exit $?), tail:"; tail -15 "$OUT/$name.log"; failed=1; fi
}

step allreduce-nccl "${DB[@]}" allreduce --backend nccl --world-sizes "$WS" \
  --sizes 4K,1M,64M,1G --dtype float32,bfloat16 --mode both --check --out "$OUT/allreduce-nccl"
step allreduce-gloo-cuda "${DB[@]}" allreduce --backend gloo --device cuda --world-sizes 1 \
  --sizes 1M --check --out "$OUT/allreduce-gloo-cuda"
step sweep-nccl "${DB[@]}" sweep --backend nccl --world-sizes "$WS" \
  --primitives allreduce,broadcast,allgather,reducescatter,alltoall,reduce \
  --sizes 1M,64M --check --out "$OUT/sweep-nccl"
step ddp-cuda "${DB[@]}" ddp --backend nccl --world-sizes "$WS" --model mlp \
  --strategies ddp,ddp-nocomm,ddp-bf16,grad-avg,grad-avg-flat,param-avg --steps 20 \
  --out "$OUT/ddp-cuda"
step pytest-gpu "$PY" -m pytest -q -m gpu tests

echo
"$PY" - "$OUT" <<'PY'
import csv, sys
from pathlib import Path
out = Path(sys.argv[1])
print(f"{'run':<20}{'primitive':<16}{'ws':>3} {'dtype':<9}{'mode':<11}{'size/strategy':>14}"
      f"{'time_us':>11}{'busbw_GBps':>11} {'timer':<11}{'wrong':>6}")
for path in sorted(out.glob("*/results.csv")):
    for r in csv.DictReader(open(path)):
        if r["primitive"] == "ddp":
            print(f"{path.parent.name:<20}{'ddp':<16}{r['world_size']:>3} {r['dtype']:<9}{'step':<11}"
                  f"{r['strategy']:>14}{float(r['step_time_us_p50']):>11.1f}{'':>11} {r['timer']:<11}{'':>6}")
        else:
            print(f"{path.parent.name:<20}{r['primitive']:<16}{r['world_size']:>3} {r['dtype']:<9}"
                  f"{r['mode']:<11}{r['size_bytes']:>14}{float(r['time_us_p50']):>11.1f}"
                  f"{float(r['busbw_GBps']):>11.2f} {r['timer']:<11}{r['wrong']:>6}")
PY
echo
[ "$failed" = 0 ] && echo "gpu-smoke: all steps passed" || echo "gpu-smoke: some steps FAILED (logs in $OUT)"
exit "$failed"
