#!/usr/bin/env bash
# The CPU benchmark of issue-style acceptance: volccl's CPU backend (RTS with THREADS threads and
# with one, and the GPU-style CPU labelers of --algorithms) beside ITK's filter, then cc3d,
# scipy and OpenCV on the same dumped volumes (bench/peers.py), labels checked first.
#
#   bench/run_cpu.sh BUILD OUT [connectivity...]      (default 26 18 6 8 4)
#
# Environment: THREADS (2), RUNS (5), WARMUP (1), PEER_RUNS (ITK's runs, 1), DATA
# (../shared/data/raw), PYTHON (.venv), VOLUMES3D (the datasets of volumes), OTHER_ALGORITHMS (""
# or e.g. "buf": also timed), KEEP_DUMP (1: keep OUT/dump-cC for bench/peak_memory.py).
set -euo pipefail

build=${1:?usage: bench/run_cpu.sh BUILD OUT [connectivity...]}
out=${2:?usage: bench/run_cpu.sh BUILD OUT [connectivity...]}
shift 2
connectivities=("$@")
if [ ${#connectivities[@]} -eq 0 ]; then connectivities=(26 18 6 8 4); fi
threads=${THREADS:-2}
runs=${RUNS:-5}
warmup=${WARMUP:-1}
peer_runs=${PEER_RUNS:-1}
data=${DATA:-../shared/data/raw}
python=${PYTHON:-.venv/bin/python}
datasets=${VOLUMES3D:-cpu,statistics,hilbert,oasis,mitochondria,connectomics}
volccl="$build/apps/volccl"
mkdir -p "$out"

for c in "${connectivities[@]}"; do
  dump="$out/dump-c$c"
  rm -rf "$dump"
  mkdir -p "$dump"
  peers=()
  if [ "$c" != 18 ]; then peers=(--peers itk); fi
  if [ "$c" = 4 ] || [ "$c" = 8 ]; then
    selection=(--tests granularity --granularities "1,4,16" --density-step 10)
  else
    selection=(--tests average --datasets "$datasets" --data "$data")
  fi
  algorithms=rts
  if [ -n "${OTHER_ALGORITHMS:-}" ]; then algorithms="rts,$OTHER_ALGORITHMS"; fi
  "$volccl" bench --device cpu --connectivity "$c" "${selection[@]}" --algorithms "$algorithms" \
    --threads "$threads" --runs "$runs" --warmup "$warmup" --peer-runs "$peer_runs" "${peers[@]}" \
    --dump-dir "$dump" --csv "$out/volccl-c$c-t$threads.csv" | tee "$out/volccl-c$c-t$threads.txt"
  "$volccl" bench --device cpu --connectivity "$c" "${selection[@]}" --algorithms rts \
    --threads 1 --runs "$runs" --warmup "$warmup" \
    --csv "$out/volccl-c$c-t1.csv" | tee "$out/volccl-c$c-t1.txt"
  "$python" bench/peers.py "$dump" --connectivity "$c" --cpu-runs "$runs" --cpu-warmup "$warmup" \
    --threads "$threads" --granularity-peers --volccl-csv "$out/volccl-c$c-t$threads.csv" \
    --csv "$out/peers-c$c.csv" | tee "$out/peers-c$c.txt"
  if [ "${KEEP_DUMP:-0}" != 1 ]; then rm -rf "$dump"; fi
done
