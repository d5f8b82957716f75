#!/usr/bin/env bash
# run_gpu.sh BIN_DIR: the GPU benchmark, run from the repository root on the GPU machine.
#   BIN_DIR  folder with volccl-bench and its libraries in BIN_DIR/lib (tools/bundle-libs)
#   OUT      environment variable: folder for the results (created if missing)
# For each connectivity, 26 (every algorithm) then 6 and 18 (UF) on the acceptance volumes
# (random 256^3 and 512^3, density 30 %, granularity 1 and 8; Hilbert order 6 at 128^3), then 8
# and 4 on the 2D granularity images (2048^2, density 0-100 % step 10, granularity 1, 4, 16) with
# every 2D algorithm: runs volccl-bench (labels checked on the device, volumes and labels dumped)
# and bench/peers.py (CuPy timed on the same volumes with the matching structure, our labels
# checked against scipy's), then prints one table per connectivity. Writes
# OUT/bench_volccl_cC.{csv,json,txt}, OUT/bench_cupy_cC.{csv,txt} for C in 26, 6, 18, 8, 4 and
# OUT/bench_summary.md. Exits non-zero when a check fails; the tables are printed anyway.
# CONNECTIVITIES (environment, default "26 6 18 8 4") picks some of them. STATISTICS=1 adds
# --statistics to both (labeling + component statistics by each strategy, and CuPy's route to
# the same numbers, STATISTICS_RUNS timed runs of it, default 10) and writes
# OUT/statistics_summary.md; VOLUMES, NPY and ALGORITHMS (environment) pass --volumes, --npy and
# --algorithms to volccl-bench.
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

status=0
csvs=()
for connectivity in ${CONNECTIVITIES:-26 6 18 8 4}; do
  echo "== $connectivity-connectivity"
  results=$out/bench_volccl_c$connectivity
  cupy=$out/bench_cupy_c$connectivity
  mkdir "$dump/c$connectivity"
  extra=()
  [ "${STATISTICS:-0}" = 1 ] && extra+=(--statistics)
  [ -n "${VOLUMES:-}" ] && extra+=(--volumes "$VOLUMES")
  [ -n "${NPY:-}" ] && extra+=(--npy "$NPY")
  [ -n "${ALGORITHMS:-}" ] && extra+=(--algorithms "$ALGORITHMS")
  "$bin/volccl-bench" --device cuda --connectivity "$connectivity" \
    --dump-dir "$dump/c$connectivity" --csv "$results.csv" --json "$results.json" \
    "${extra[@]}" | tee "$results.txt"
  csvs+=("$results.csv")

  bandwidth=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["copy_bandwidth_gbps"])' \
    < "$results.json")
  rm -f "$cupy.csv"
  peer_extra=()
  [ "${STATISTICS:-0}" = 1 ] && peer_extra+=(--statistics --statistics-runs "${STATISTICS_RUNS:-10}")
  python3 -u "$here/peers.py" "$dump/c$connectivity" --connectivity "$connectivity" \
    --csv "$cupy.csv" --bandwidth "$bandwidth" "${peer_extra[@]}" | tee "$cupy.txt" \
    || status=$?
  [ -f "$cupy.csv" ] && csvs+=("$cupy.csv")
  rm -rf "${dump:?}/c$connectivity"  # up to 1.5 GB of volumes and labels
done

echo
python3 "$here/summary.py" "${csvs[@]}" | tee "$out/bench_summary.md"
if [ "${STATISTICS:-0}" = 1 ]; then
  python3 "$here/statistics_summary.py" "${csvs[@]}" | tee "$out/statistics_summary.md"
fi
exit "$status"
