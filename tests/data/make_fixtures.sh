#!/usr/bin/env bash
# Rewrite the fixture runs of tests/data with real gloo runs (see README.md there).
#     bash tests/data/make_fixtures.sh
# Two "clusters" are two labels on the same machine. Logs and spec.json are dropped to keep the
# fixtures small; results.csv, samples.csv and manifest.json are what distbench report reads.
set -euo pipefail
# cluster-a and cluster-b are FROZEN: they are the schema-v1 runs of distbench 0.1.0, and
# tests/collectors/test_schema_evolution.py proves they still load (checksums in v1-frozen.sha256). Never
# rewrite them: this script writes new fixtures under the folder given as $1 (default: new-fixtures).
cd "$(dirname "$0")"
out=${1:-new-fixtures}
case $out in cluster-a | cluster-b | */cluster-a | */cluster-b) echo "refusing to overwrite the frozen v1 fixtures" >&2; exit 2 ;; esac
export OMP_NUM_THREADS=1
common=(--backend gloo --iters 5 --warmup 2 --trials 5)
ladder=(--sizes 1K,16K,256K,1M,4M)
for label in cluster-a cluster-b; do
    cluster="$out/$label"
    rm -rf "$cluster"
    mkdir -p "$cluster"
    distbench allreduce "${common[@]}" "${ladder[@]}" --world-sizes 2,3 --mode both --check \
        --label "$label" --out "$cluster/allreduce"
    distbench broadcast "${common[@]}" "${ladder[@]}" --world-sizes 2,3 --label "$label" \
        --out "$cluster/broadcast"
    distbench allgather "${common[@]}" "${ladder[@]}" --world-sizes 2,3 --label "$label" \
        --out "$cluster/allgather"
    # pingpong over every ordered pair (the all-pairs matrix: 2 pairs at 2 ranks, 6 at 3) + ring
    distbench sendrecv "${common[@]}" --sizes 1K,64K,1M --world-sizes 2,3 --pattern pingpong,ring \
        --pairs all --label "$label" --out "$cluster/sendrecv"
    distbench ddp --backend gloo --world-sizes 1,2,3 --model mlp --width 128 --depth 3 --steps 6 \
        --warmup 2 --batch-size 16 --label "$label" --out "$cluster/ddp"
    rm -rf "$cluster"/*/logs "$cluster"/*/spec.json
done
