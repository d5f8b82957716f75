#!/usr/bin/env bash
# Run on the GPU machine from the repository root, after scripts/gpu-bundle.sh here: the GPU
# tests (the volumes past 2^32 voxels among them), the command line against scipy, the slab
# benchmark, compute-sanitizer on a random 64^3 volume at 26-, 6- and
# 18-connectivity and on a random 512^2 image at 8 and 4 (labeling, and statistics by every
# strategy), and the benchmark beside CuPy. Results go to $OUT (default: gpu-results/):
# gpu-check.log (all of the output), sanitizer.log and the benchmark's files. Exits non-zero on
# a failure.
#
# Usage: OUT=DIR scripts/gpu-check.sh [--no-bench]
# Environment: SANITIZE_CONNECTIVITIES (default "26 6 18 8 4"), SANITIZE_TOOLS (default
# "memcheck racecheck initcheck synccheck"), CONNECTIVITIES (the benchmark's, bench/run_gpu.sh).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
bin=$PWD/.device/bin
out=${OUT:-gpu-results}
mkdir -p "$out"
exec > >(tee "$out/gpu-check.log") 2>&1
export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failures=0
step() {
  echo "== $1"
  shift
  "$@" || { echo "FAILED: $*"; failures=$((failures + 1)); }
}

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# GoogleTest in 8 shards side by side: the reference labeler and the random volumes take CPU time.
google_tests() {
  local shards=8 shard pid status=0 pids=()
  for shard in $(seq 0 $((shards - 1))); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard "$bin/volccl_tests" --gtest_brief=1 \
      > "$out/gtest-shard$shard.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  grep -h -E "^\[  (PASSED|SKIPPED|FAILED) |tests? from .* ran" "$out"/gtest-shard*.log
  grep -h -B5 -E "^\[  FAILED  \]" "$out"/gtest-shard*.log | head -60
  return $status
}
step "GoogleTest, CUDA cases included" google_tests
step "ITK oracle and real volumes" env VOLCCL_DATA="$PWD/.device/data" \
  "$bin/volccl_itk_tests" --gtest_brief=1
step "command line against scipy.ndimage.label" \
  python3 tests/scipy_crosscheck.py --volccl "$bin/volccl" --device cuda
cli_cases() {
  local case status=0 case_status
  for case in $(python3 tests/cli/test_cli.py --list); do
    case_status=0
    python3 tests/cli/test_cli.py --volccl "$bin/volccl" --sample data/samples/brain_t1.nii.gz \
      "$case" || case_status=$?
    # 77: skipped with its reason (vtk_scene where the machine has no VTK for Python)
    [ "$case_status" -eq 0 ] || [ "$case_status" -eq 77 ] || status=1
  done
  return $status
}
step "command-line cases, GPU present (device auto labels on it)" cli_cases
step "GPU memory held by another process: slabs, with the CPU's labels" \
  python3 tests/cli/gpu_memory_check.py --volccl "$bin/volccl" --workdir "$out/memory"
step "volumes past 2^32 voxels and 2^32 components (about 80 GB of host memory)" \
  env VOLCCL_LARGE_TESTS=1 "$bin/volccl_tests" --gtest_brief=1 --gtest_filter='LargeVolumes.*'
# nibabel and cc3d: the GPU machine has neither; DEVELOPERS.md says how to carry their wheels.
step "command line: NIfTI-2 files against nibabel, files past 4 GiB against scipy" \
  bash -c "python3 tests/cli/file_sizes_check.py --volccl '$bin/volccl' --device cuda nifti2 &&
           python3 tests/cli/file_sizes_check.py --volccl '$bin/volccl' --device cuda past-4gib"
# A case that exits 77 was skipped, with its reason printed (too little memory or disk).
file_sizes_case() {
  python3 tests/cli/file_sizes_check.py --volccl "$bin/volccl" --device cuda "$1"
  local case_status=$?
  [ "$case_status" -eq 0 ] || [ "$case_status" -eq 77 ]
}
step "command line: a volume past 2^32 voxels against cc3d (about 80 GB of memory, 44 GB of disk)" \
  file_sizes_case past-2to32
step "command line: more than 2^32 components written as uint64 by --output-type auto (160 GB, 80 GB of disk)" \
  file_sizes_case past-2to32-components
step "slabs under a memory budget against the copy floor" "$bin/volccl-slab-bench" \
  --volumes random-512-d30-g4,random-2048-d30-g4 --connectivity 26,6 --runs 3 \
  --budget 17179869184
step "ParaView scene of the bundled sample, labeled on the GPU" "$bin/volccl" label \
  data/samples/brain_t1.nii.gz --otsu --device cuda --stats "$out/brain.csv" \
  --vtk "$out/brain_scene" --surfaces --force
step "bundled sample on the GPU" "$bin/volccl" label data/samples/brain_t1.nii.gz --otsu \
  -o "$out/brain_labels.nii.gz" --force --device cuda

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for connectivity in ${SANITIZE_CONNECTIVITIES:-26 6 18 8 4}; do
  volume=random-64-d30-g1
  case $connectivity in 8 | 4) volume=image-512-d50-g1 ;; esac
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
    echo "== compute-sanitizer $tool, $volume, $connectivity-connectivity, every algorithm" \
      "and statistics strategy"
    "$sanitizer" --tool "$tool" --error-exitcode 3 "$bin/volccl" bench --device cuda \
      --connectivity "$connectivity" --quick --volumes "$volume" --runs 2 --warmup 0 \
      --step-runs 1 --statistics > "$out/sanitizer-run.txt" 2>&1
    status=$?
    grep -E "SUMMARY|labels OK|moments identical" "$out/sanitizer-run.txt"
    cat "$out/sanitizer-run.txt" >> "$out/sanitizer.log" && rm "$out/sanitizer-run.txt"
    [ "$status" -eq 0 ] || { echo "FAILED: compute-sanitizer $tool"; failures=$((failures + 1)); }
  done
done

if [ "${1:-}" != "--no-bench" ]; then
  step "benchmark beside CuPy, scipy and ITK" env OUT="$out" DATA="$PWD/.device/data" \
    bash bench/run_gpu.sh "$bin"
fi
echo "gpu-check: $failures failure(s)"
[ "$failures" -eq 0 ]
