#!/usr/bin/env bash
# Times two builds of volccl on the same GPU in one run, interleaved (A B, then B A), so that a
# change can be judged against the build before it: every algorithm at every connectivity, on
# the average test's volumes (6, 18, 26) and the granularity images (4, 8). Then
# bench/compare_builds.py prints the ratio of the medians, B over A, per algorithm and volume.
#
# Usage: OUT=DIR [DATA=DIR] [CONNECTIVITIES="26 18 6 8 4"] [RUNS=30] [ROUNDS=2] \
#          [DATASETS=random,hilbert,oasis,mitochondria,connectomics] [GRANULARITIES=1,4,16] \
#          [DENSITY_STEP=20] bench/compare_builds.sh BIN_A BIN_B
#   BIN_A, BIN_B: folders holding `volccl` and its lib/ (scripts/gpu-bundle.sh's .device/bin)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: OUT=DIR [DATA=DIR] bench/compare_builds.sh BIN_A BIN_B" >&2; exit 2; }
bins=("$(cd "$1" && pwd)" "$(cd "$2" && pwd)")
names=(A B)
out=${OUT:?set OUT to the folder for the results}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"

run_build() {  # index connectivity round
  local bin=${bins[$1]} connectivity=$2 round=$3 extra=()
  case $connectivity in
    8 | 4)
      extra=(--tests granularity --granularities "${GRANULARITIES:-1,4,16}"
        --density-step "${DENSITY_STEP:-20}")
      ;;
    *)
      extra=(--tests average --datasets "${DATASETS:-random,hilbert,oasis,mitochondria,connectomics}")
      [ -n "${DATA:-}" ] && extra+=(--data "$DATA")
      ;;
  esac
  LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$bin/volccl" bench --device cuda \
    --connectivity "$connectivity" --runs "${RUNS:-30}" --warmup 5 "${extra[@]}" \
    --csv "$out/${names[$1]}-c$connectivity-r$round.csv" > "$out/${names[$1]}-c$connectivity-r$round.log"
}

for round in $(seq 1 "${ROUNDS:-2}"); do
  for connectivity in ${CONNECTIVITIES:-26 18 6 8 4}; do
    if ((round % 2 == 1)); then order=(0 1); else order=(1 0); fi
    for index in "${order[@]}"; do
      echo "== round $round, $connectivity-connectivity, build ${names[$index]}"
      run_build "$index" "$connectivity" "$round"
    done
  done
done
python3 "$here/compare_builds.py" "$out"
