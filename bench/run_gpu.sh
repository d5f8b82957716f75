#!/usr/bin/env bash
# run_gpu.sh BIN_DIR: the GPU benchmark (issue 8), run from the repository root on the GPU machine.
#   BIN_DIR  folder with volccl and its libraries in BIN_DIR/lib (tools/bundle-libs)
#   OUT      environment variable: folder for the results (created if missing)
#   DATA     environment variable: the real volumes (data/fetch's layout), for --data
# For each connectivity of CONNECTIVITIES (default "26 6 18 8 4"): `volccl bench` with every
# algorithm that has it, YACCLAB's tests TESTS (default: average, steps and granularity; the 2D
# connectivities 8 and 4 have the granularity test only) on the datasets DATASETS (default all:
# random, hilbert, oasis, mitochondria, connectomics), ITK's filter timed beside it on the CPU
# (PEER_RUNS runs, default 1), labels checked and dumped; then bench/peers.py: CuPy timed on the
# same volumes with the matching structure, scipy (and cc3d where installed) on the CPU, volccl's
# labels checked against scipy's. Writes OUT/bench_volccl_cC.{csv,json,txt} and
# OUT/bench_peers_cC.{csv,txt} for each C, then OUT/bench_summary.md (bench/summary.py) and the
# plots in OUT/plots (bench/plot.py, when matplotlib is there). Exits non-zero when a check
# fails; the tables are printed anyway. GRANULARITY_CONNECTIVITIES (default "26 6 8 4") limits
# the granularity test and GRANULARITIES (default 1,2,4,8,16) its granularities; STATISTICS=1
# adds --statistics to both (labeling + statistics by each
# strategy, CuPy's route to the same numbers, left out above STATISTICS_MAX_COMPONENTS
# components) and writes OUT/statistics_summary.md; VOLUMES and
# ALGORITHMS pass --volumes and --algorithms. RIDGE_SIDES (e.g. "1024 2048 4096 8192") adds the
# LE/TM paper's Ridge families at 8-connectivity at each side (RIDGE_RUNS runs, default 10; no
# peers) and bench/ridge_model.py's plots and Eq. 18 fit in OUT/ridge; CONNECTIVITIES="" runs
# only those.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: OUT=DIR [DATA=DIR] bench/run_gpu.sh BIN_DIR" >&2; exit 2; }
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
for connectivity in ${CONNECTIVITIES-26 6 18 8 4}; do
  echo "== $connectivity-connectivity"
  results=$out/bench_volccl_c$connectivity
  peers=$out/bench_peers_c$connectivity
  mkdir "$dump/c$connectivity"
  extra=(--peers itk --peer-runs "${PEER_RUNS:-1}" --granularities "${GRANULARITIES:-1,2,4,8,16}")
  case $connectivity in
    8 | 4) extra+=(--tests granularity) ;;
    *)
      tests=${TESTS:-average,steps,granularity}
      case " ${GRANULARITY_CONNECTIVITIES:-26 6 8 4} " in
        *" $connectivity "*) ;;
        *) tests=${tests//granularity/} ;;
      esac
      tests=$(echo "$tests" | tr -s ',' | sed 's/^,//; s/,$//')
      extra+=(--tests "$tests" --datasets "${DATASETS:-random,hilbert,oasis,mitochondria,connectomics}")
      [ -n "${DATA:-}" ] && extra+=(--data "$DATA")
      ;;
  esac
  [ "${STATISTICS:-0}" = 1 ] && extra+=(--statistics)
  [ -n "${VOLUMES:-}" ] && extra+=(--volumes "$VOLUMES")
  [ -n "${ALGORITHMS:-}" ] && extra+=(--algorithms "$ALGORITHMS")
  "$bin/volccl" bench --device cuda --connectivity "$connectivity" \
    --dump-dir "$dump/c$connectivity" --csv "$results.csv" --json "$results.json" \
    "${extra[@]}" | tee "$results.txt"
  csvs+=("$results.csv")

  bandwidth=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["copy_bandwidth_gbps"])' \
    < "$results.json")
  rm -f "$peers.csv"
  peer_extra=()
  [ "${STATISTICS:-0}" = 1 ] && peer_extra+=(--statistics --statistics-runs "${STATISTICS_RUNS:-10}")
  [ -n "${STATISTICS_MAX_COMPONENTS:-}" ] &&
    peer_extra+=(--statistics-max-components "$STATISTICS_MAX_COMPONENTS")
  python3 -u "$here/peers.py" "$dump/c$connectivity" --connectivity "$connectivity" \
    --csv "$peers.csv" --volccl-csv "$results.csv" --bandwidth "$bandwidth" \
    --cpu-runs "${PEER_RUNS:-1}" "${peer_extra[@]}" | tee "$peers.txt" || status=$?
  [ -f "$peers.csv" ] && csvs+=("$peers.csv")
  rm -rf "${dump:?}/c$connectivity"  # up to 5 GB of volumes and labels
done

ridge_csvs=()
for side in ${RIDGE_SIDES:-}; do
  echo "== Ridge families, ${side}x$side, 8-connectivity"
  "$bin/volccl" bench --device cuda --connectivity 8 --datasets ridge --ridge-side "$side" \
    --runs "${RIDGE_RUNS:-10}" --warmup 2 --step-runs 5 --csv "$out/ridge_$side.csv" \
    --json "$out/ridge_$side.json" > "$out/ridge_$side.txt" || status=$?
  tail -n 3 "$out/ridge_$side.txt"
  ridge_csvs+=("$out/ridge_$side.csv")
done

echo
plots=0
python3 -c 'import matplotlib' 2> /dev/null && plots=1
[ "$plots" = 1 ] || echo "matplotlib not found: no plots (run bench/plot.py on the CSVs elsewhere)"
if [ ${#csvs[@]} -gt 0 ]; then
  python3 "$here/summary.py" "${csvs[@]}" | tee "$out/bench_summary.md"
  if [ "${STATISTICS:-0}" = 1 ]; then
    python3 "$here/statistics_summary.py" "${csvs[@]}" | tee "$out/statistics_summary.md"
  fi
  [ "$plots" = 0 ] || python3 "$here/plot.py" --out "$out/plots" "${csvs[@]}"
fi
if [ ${#ridge_csvs[@]} -gt 0 ] && [ "$plots" = 1 ]; then
  python3 "$here/ridge_model.py" --out "$out/ridge" "${ridge_csvs[@]}"
fi
exit "$status"
