#!/usr/bin/env bash
# The CPU path under AddressSanitizer and UndefinedBehaviorSanitizer: builds volccl_tests and the
# command line with VOLCCL_CUDA off in a second build folder (default build-asan), then runs the
# unit tests and the input fuzzer (cli.fuzz_inputs) there. scripts/test.sh runs it after the
# main suite unless VOLCCL_SANITIZE=0.
#
# Usage: scripts/sanitize.sh
# Environment:
#   VOLCCL_SANITIZE_BUILD_DIR  the build folder (default: build-asan)
#   VOLCCL_SANITIZE_FILTER     the GoogleTest cases of volccl_tests (default: all but *cuda*)
#   VOLCCL_SANITIZE_MUTANTS    mutants of the input fuzzer (default: 300; ctest's cli.fuzz_inputs
#                              runs 1200 in the main build)
#   VOLCCL_TEST_JOBS           parallel processes (default: 2)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${VOLCCL_SANITIZE_BUILD_DIR:-build-asan}
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# -O1 keeps the build and the runs short; without NDEBUG, so that assertions run too.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1" \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -g1" -DVOLCCL_CUDA=OFF -DVOLCCL_PYTHON=OFF \
  -DCMAKE_CXX_FLAGS="$sanitizers -fno-omit-frame-pointer" \
  -DCMAKE_C_FLAGS="$sanitizers -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" -DCMAKE_SHARED_LINKER_FLAGS="$sanitizers"
cmake --build "$build_dir" --target volccl_tests volccl_cli

# A finding ends the process with a status no test expects (volccl's are 0, 1 and 2). Leaks are
# not checked: ITK and VTK keep singletons until exit.
export ASAN_OPTIONS=detect_leaks=0:exitcode=86:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:exitcode=87
# The unit tests: volccl_tests itself, split into VOLCCL_TEST_JOBS shards run side by side (one
# process per shard rather than one per case: each start of an ASan process costs time). The
# other ctests need targets or tools this folder does not build.
jobs=${VOLCCL_TEST_JOBS:-2}
filter=${VOLCCL_SANITIZE_FILTER:--*cuda*:*Cuda*:*CUDA*}
pids=()
for ((shard = 0; shard < jobs; ++shard)); do
  GTEST_TOTAL_SHARDS=$jobs GTEST_SHARD_INDEX=$shard "$build_dir/tests/volccl_tests" \
    --gtest_filter="$filter" --gtest_brief=1 >"$build_dir/sanitize-shard-$shard.log" 2>&1 &
  pids+=($!)
done
status=0
for ((shard = 0; shard < jobs; ++shard)); do
  if ! wait "${pids[$shard]}"; then
    status=1
    echo "volccl_tests shard $shard of $jobs failed under ASan/UBSan:" >&2
    tail -n 100 "$build_dir/sanitize-shard-$shard.log" >&2
  fi
done
[[ $status == 0 ]] || exit 1
echo "volccl_tests under ASan/UBSan: passed ($jobs shards, filter $filter)"
# Then the input fuzzer over the sanitized command line.
python3 tests/cli/fuzz_inputs.py --volccl "$build_dir/apps/volccl" \
  --mutants "${VOLCCL_SANITIZE_MUTANTS:-300}" --seed 37 --jobs "$jobs"
