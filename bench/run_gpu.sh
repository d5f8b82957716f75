#!/usr/bin/env bash
# run_gpu.sh BIN_DIR: the GPU benchmark, run from the repository root on the GPU machine.
#   BIN_DIR  folder with volccl-bench and its libraries in BIN_DIR/lib (tools/bundle-libs)
#   OUT      environment variable: folder for the results (created if missing)
# Runs volccl-bench on the acceptance volumes (labels checked on the device, volumes and labels
# dumped), bench/peers.py (CuPy timed on the same volumes, our labels checked against scipy),
# and prints one table. Writes OUT/bench_volccl.{csv,json,txt}, OUT/bench_cupy.{csv,txt} and
# OUT/bench_summary.md. Exits non-zero when a check fails; the table is printed anyway.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: OUT=DIR bench/run_gpu.sh BIN_DIR" >&2; exit 2; }
bin=$(cd "$1" && pwd)
out=${OUT:?set OUT to the folder for the results}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT

if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
    --format=csv
fi

"$bin/volccl-bench" --device cuda --dump-dir "$dump" --csv "$out/bench_volccl.csv" \
  --json "$out/bench_volccl.json" | tee "$out/bench_volccl.txt"

bandwidth=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["copy_bandwidth_gbps"])' \
  < "$out/bench_volccl.json")
rm -f "$out/bench_cupy.csv"
status=0
python3 -u "$here/peers.py" "$dump" --csv "$out/bench_cupy.csv" --bandwidth "$bandwidth" \
  | tee "$out/bench_cupy.txt" || status=$?

echo
cupy_csv=()
[ -f "$out/bench_cupy.csv" ] && cupy_csv=("$out/bench_cupy.csv")
python3 "$here/summary.py" "$out/bench_volccl.csv" "${cupy_csv[@]}" | tee "$out/bench_summary.md"
exit "$status"
