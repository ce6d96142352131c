#!/usr/bin/env bash
# The NCCL / CUDA paths on one GPU node, most important first, within a time cap, ending in a
# summary file for docs/verified-on.md and a short table of every row measured.
#
#   bash ci/gpu-smoke.sh                    # on a node with at least one CUDA GPU and a CUDA build of torch
#   bash ci/gpu-smoke.sh --time-cap 600     # or SMOKE_TIME_CAP=600: seconds for all steps (default 360)
#
# With one GPU, NCCL runs at world size 1 (every code path: device binding by LOCAL_RANK, NCCL
# init with device_id, CUDA-event timing, drains, --check on the GPU); with more GPUs it also runs
# world size 2. Steps run in order of importance (NCCL all_reduce with --check first); a step
# that would start after the cap is skipped, and one still running at the cap is stopped
# (SIGTERM: distbench stops its ranks and keeps the finished rows). Exit code: 0 when every step
# passed, 1 otherwise (a step failed, was stopped, or found no time left; send/recv, which
# needs two GPUs, is skipped on one without failing). Offline-safe: installs distbench with
# --no-deps --no-index (torch, pandas, seaborn, typer must already be there).
#
# $OUT/summary.tsv has one line per step: step, status (passed, failed, timed-out, skipped),
# exit code, seconds, the features it covers (the rows of docs/verified-on.md), and the date,
# GPU, torch, CUDA and NCCL versions that the table's GPU column records.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${SMOKE_OUT:-${OUT:-/tmp}/distbench-gpu-smoke}
CAP=${SMOKE_TIME_CAP:-360}
while [ $# -gt 0 ]; do
  case $1 in
    --time-cap) CAP=${2:?--time-cap needs seconds}; shift 2 ;;
    --time-cap=*) CAP=${1#*=}; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "gpu-smoke: unknown argument '$1' (use --time-cap SECONDS)" >&2; exit 2 ;;
  esac
done
case $CAP in ''|*[!0-9]*) echo "gpu-smoke: time cap '$CAP' is not a whole number of seconds" >&2; exit 2 ;; esac
rm -rf "$OUT" && mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
START=$(date +%s)
DEADLINE=$((START + CAP))

if ! "$PY" -c "import distbench" 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-index --no-build-isolation -e . || exit 1
fi
DB=("$PY" -m distbench)
nvidia-smi -L || true
# One line for the summary: date, GPU, torch, CUDA, NCCL.
ENV_LINE=$("$PY" - <<'PY'
import datetime, torch
gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-"
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
print(f"{date}\t{gpu} x{torch.cuda.device_count()}\t{torch.__version__}\t{torch.version.cuda}\t{nccl}")
PY
) || ENV_LINE=$(printf '%s\t?\t?\t?\t?' "$(date -u +%F)")
echo "date, gpu, torch, cuda, nccl: $ENV_LINE"
GPUS=$("$PY" -c "import torch; print(torch.cuda.device_count())" 2>/dev/null || echo 0)
WS=1; [ "$GPUS" -ge 2 ] && WS=1,2

SUMMARY=$OUT/summary.tsv
printf 'step\tstatus\texit\tseconds\tcovers\tdate\tgpu\ttorch\tcuda\tnccl\n' >"$SUMMARY"
failed=0
step() {  # step NAME COVERS COMMAND...: run within the cap, log, record in the summary
  local name=$1 covers=$2; shift 2
  local now left status code=0 began
  now=$(date +%s); left=$((DEADLINE - now))
  echo "== $name: $*"
  if [ "$left" -le 0 ]; then
    echo "   skipped: the ${CAP} s time cap is spent"
    status=skipped; code=-; began=$now
  else
    began=$now
    timeout --signal=TERM --kill-after=15 "$left" "$@" >"$OUT/$name.log" 2>&1 || code=$?
    if [ "$code" = 0 ]; then status=passed; echo "   ok"
    elif [ "$code" = 124 ] || [ "$code" = 137 ]; then
      status=timed-out; echo "   stopped at the ${CAP} s time cap, tail:"; tail -15 "$OUT/$name.log"
    else status=failed; echo "   FAILED (exit $code), tail:"; tail -15 "$OUT/$name.log"; fi
  fi
  [ "$status" = passed ] || failed=1
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$code" "$(( $(date +%s) - began ))" \
    "$covers" "$ENV_LINE" >>"$SUMMARY"
}

skip() {  # skip NAME COVERS REASON: record a step that cannot run here
  echo "== $1: skipped: $3"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" skipped - 0 "$2" "$ENV_LINE" >>"$SUMMARY"
}

# In order of importance: a later step runs only while time is left. COVERS names the rows of
# docs/verified-on.md that a passing step verifies.
SUBGROUPS=""; [ "$GPUS" -ge 2 ] && SUBGROUPS="; world-size sweeps on subgroups"
step allreduce-nccl "all_reduce; --check (bit-exact results); throughput and latency modes; CUDA-event timer$SUBGROUPS" \
  "${DB[@]}" allreduce --backend nccl --world-sizes "$WS" \
  --sizes 4K,1M,64M,1G --dtype float32,bfloat16 --mode both --check --out "$OUT/allreduce-nccl"
step sweep-nccl "broadcast; reduce; all_gather; reduce_scatter; all_to_all; sweep" \
  "${DB[@]}" sweep --backend nccl --world-sizes "$WS" \
  --primitives allreduce,broadcast,allgather,reducescatter,alltoall,reduce \
  --sizes 1M,64M --check --out "$OUT/sweep-nccl"
step placement-nccl "--placement in,out (all_gather, reduce_scatter, all_to_all in place)" \
  "${DB[@]}" sweep --backend nccl --world-sizes "$WS" --primitives allgather,reducescatter,alltoall \
  --placement in,out --sizes 1M,64M --check --out "$OUT/placement-nccl"
step alltoallv-nccl "alltoallv (skewed splits and MoE routing)" \
  "${DB[@]}" alltoallv --backend nccl --world-sizes "$WS" --sizes 1M,64M --skew zipf:1.2 \
  --check --out "$OUT/alltoallv-nccl"
step ddp-cuda "ddp strategies (all but ddp-fp16)" \
  "${DB[@]}" ddp --backend nccl --world-sizes "$WS" --model mlp \
  --strategies ddp,ddp-nocomm,ddp-nooverlap,ddp-bf16,grad-avg,grad-avg-flat,param-avg --steps 20 \
  --out "$OUT/ddp-cuda"
step fsdp-cuda "FSDP2 strategies (fsdp, fsdp-reshard-false); peak memory from cuda_max_allocated" \
  "${DB[@]}" ddp --backend nccl --world-sizes "$WS" --model transformer --width 512 --depth 4 \
  --strategies ddp,ddp-nocomm,fsdp,fsdp-reshard-false --steps 20 --out "$OUT/fsdp-cuda"
OVERLAP_WS=1; [ "$GPUS" -ge 2 ] && OVERLAP_WS=2
step overlap-nccl "overlap (collective on its own stream beside a matmul; --check in the overlapped phase)" \
  "${DB[@]}" overlap --backend nccl --world-sizes "$OVERLAP_WS" --sizes 1M,64M,256M \
  --primitives allreduce,allgather,reducescatter --compute 4096 --check --out "$OUT/overlap-nccl"
step cuda-graph-nccl "--cuda-graph N (graph capture and replay, timer cuda_event+graph)" \
  "${DB[@]}" sweep --backend nccl --world-sizes "$WS" \
  --primitives allreduce,broadcast,allgather,reducescatter,alltoall,alltoallv \
  --sizes 4K,1M,64M --iters 20 --cuda-graph 10 --check --out "$OUT/cuda-graph-nccl"
# Symmetric memory: a node whose torch, NCCL or GPUs cannot do it refuses it in one line before
# the first row; the step then counts as skipped, not failed.
before=$failed
step symmetric-nccl "--buffers symmetric (symmetric memory, NCCL's symmetric kernels)" \
  "${DB[@]}" sweep --backend nccl --world-sizes "$WS" --primitives allreduce,allgather,reducescatter \
  --sizes 4K,1M,64M --dtype bfloat16 --buffers symmetric --check --out "$OUT/symmetric-nccl"
UNSUPPORTED="buffers symmetric is not supported here"
if grep -rqs -- "$UNSUPPORTED" "$OUT/symmetric-nccl.log" "$OUT/symmetric-nccl/logs"; then
  failed=$before
  sed -i '$ s/\tfailed\t/\tskipped\t/' "$SUMMARY"
  echo "   counted as skipped: $(grep -rhos -m1 -- "$UNSUPPORTED[^;]*" "$OUT/symmetric-nccl.log" \
    "$OUT/symmetric-nccl/logs" | head -1)"
fi
step api-functional-nccl "--api functional on NCCL" \
  "${DB[@]}" sweep --backend nccl --world-sizes "$WS" \
  --primitives allreduce,broadcast,allgather,reducescatter,alltoall,alltoallv \
  --sizes 4K,1M --api functional --check --out "$OUT/api-functional-nccl"
step api-compiled-nccl "--api compiled on NCCL (inductor where a C++ compiler exists)" \
  "${DB[@]}" sweep --backend nccl --world-sizes "$WS" --primitives allreduce,allgather \
  --sizes 1M --api compiled --check --out "$OUT/api-compiled-nccl"
step pytest-gpu "gpu-marked tests" "$PY" -m pytest -q -m gpu tests
step allreduce-gloo-cuda "gloo on CUDA tensors" \
  "${DB[@]}" allreduce --backend gloo --device cuda --world-sizes 1 \
  --sizes 1M --check --out "$OUT/allreduce-gloo-cuda"
if [ "$GPUS" -ge 2 ]; then
  step sendrecv-nccl "send/recv patterns" \
    "${DB[@]}" sendrecv --backend nccl --world-sizes 2 --sizes 8,1M,64M --pattern all \
    --bidirectional --check --out "$OUT/sendrecv-nccl"
else
  skip sendrecv-nccl "send/recv patterns" "send/recv needs 2 GPUs, this node has $GPUS"
fi
if [ "$GPUS" -ge 2 ]; then
  step dp-cuda "ddp --strategies dp (nn.DataParallel over every GPU, beside ddp at one rank)" \
    "${DB[@]}" ddp --backend nccl --world-sizes 1 --strategies ddp,dp --batch-size 64 --steps 20 \
    --out "$OUT/dp-cuda"
  step pipeline-nccl "pipeline (sendrecv, pipelining, pipelining-1f1b) on NCCL" \
    "${DB[@]}" pipeline --backend nccl --world-sizes 2 --microbatches 2,4 --depth 5 \
    --out "$OUT/pipeline-nccl"
else
  skip dp-cuda "ddp --strategies dp" "nn.DataParallel needs 2 GPUs, this node has $GPUS"
  skip pipeline-nccl "pipeline on NCCL" "a pipeline needs 2 GPUs, this node has $GPUS"
fi

step node-facts "per-node manifest (nodes, ranks: GPU UUID, PCI bus id, NUMA)" \
  "$PY" - "$OUT/allreduce-nccl/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
nodes, ranks = m.get("nodes"), m.get("ranks")
assert nodes and ranks, f"manifest lacks nodes/ranks: {sorted(m)}"
print(json.dumps({"nodes": nodes, "ranks": ranks}, indent=1)[:4000])
text = json.dumps(nodes)
assert "GPU-" in text or "gpu" in text.lower(), "no GPU facts in nodes"
PY
TRACE_WS=1; [ "$GPUS" -ge 2 ] && TRACE_WS=2
step nccl-trace "--nccl-trace (runs)" \
  "${DB[@]}" allreduce --backend nccl --world-sizes "$TRACE_WS" --sizes 4K,1M,64M \
  --nccl-trace --out "$OUT/nccl-trace"
step nccl-trace-columns "--nccl-trace (nccl_algo, nccl_proto, nccl_nchannels parsed)" \
  "$PY" - "$OUT/nccl-trace/results.csv" "$TRACE_WS" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
filled = [r for r in rows if r.get("nccl_algo")]
print(f"{len(filled)} of {len(rows)} rows name an algorithm:",
      sorted({(r["nccl_algo"], r["nccl_proto"], r["nccl_nchannels"]) for r in filled}))
assert filled or sys.argv[2] == "1", "no row names an algorithm: the TUNING lines were not parsed"
PY
step precision-nccl "--iters auto --precision (CI columns, converged)" \
  "${DB[@]}" allreduce --backend nccl --world-sizes "$WS" --sizes 4K,1M,64M --iters auto \
  --precision 2% --out "$OUT/precision-nccl"
if [ "$GPUS" -ge 2 ]; then
  step pairs-nccl "pairs (circle method, ranks.csv, outliers)" \
    "${DB[@]}" pairs --backend nccl --world-sizes "$GPUS" --sizes 64M --out "$OUT/pairs-nccl"
else
  skip pairs-nccl "pairs (circle method, ranks.csv, outliers)" "pairs needs 2 GPUs, this node has $GPUS"
fi

echo
"$PY" - "$OUT" <<'PY'
import csv, sys
from pathlib import Path
out = Path(sys.argv[1])
print(f"{'run':<20}{'primitive':<16}{'ws':>3} {'dtype':<9}{'mode':<11}{'size/strategy':>14}"
      f"{'time_us':>11}{'busbw_GBps':>11} {'timer':<11}{'wrong':>6}")
for path in sorted(out.glob("*/results.csv")):
    for r in csv.DictReader(open(path)):
        if r["primitive"] in ("ddp", "pipeline"):
            print(f"{path.parent.name:<20}{'ddp':<16}{r['world_size']:>3} {r['dtype']:<9}{'step':<11}"
                  f"{r['strategy']:>14}{float(r['step_time_us_p50'] or 'nan'):>11.1f}{'':>11} "
                  f"{r['timer']:<11}{'':>6}")
        else:
            print(f"{path.parent.name:<20}{r['primitive']:<16}{r['world_size']:>3} {r['dtype']:<9}"
                  f"{r['mode']:<11}{r['size_bytes']:>14}{float(r['time_us_p50'] or 'nan'):>11.1f}"
                  f"{float(r['busbw_GBps'] or 'nan'):>11.2f} {r['timer']:<11}{r['wrong']:>6}")
PY
echo
column -t -s $'\t' "$SUMMARY" 2>/dev/null || cat "$SUMMARY"
echo "summary: $SUMMARY (update docs/verified-on.md from it)"
[ "$failed" = 0 ] && echo "gpu-smoke: all steps passed in $(( $(date +%s) - START )) s" ||
  echo "gpu-smoke: some steps did not pass (logs in $OUT)"
exit "$failed"
