#!/usr/bin/env bash
# The CPU path under AddressSanitizer and UndefinedBehaviorSanitizer: builds volccl_tests and the
# command line with VOLCCL_CUDA off in a second build folder (default build-asan), then runs the
# unit tests and the input fuzzer (cli.fuzz_inputs) there. scripts/test.sh runs it after the
# main suite unless VOLCCL_SANITIZE=0.
#
# Usage: scripts/sanitize.sh [extra ctest arguments...]
# Environment:
#   VOLCCL_SANITIZE_BUILD_DIR  the build folder (default: build-asan)
#   VOLCCL_TEST_JOBS           parallel tests (default: 2)
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
# The unit tests: the GoogleTest cases of volccl_tests (the other ctests need targets or tools
# this folder does not build); then the fuzzer.
others='^(cli|repository|bench|python|paraview|package|scipy_crosscheck|label_map_crosscheck)'
ctest --test-dir "$build_dir" --output-on-failure -j "${VOLCCL_TEST_JOBS:-2}" -E "$others" "$@"
ctest --test-dir "$build_dir" --output-on-failure -R '^cli\.fuzz_inputs$' "$@"
