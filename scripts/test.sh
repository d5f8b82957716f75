#!/usr/bin/env bash
# Installs what is missing (Debian packages, the Python environment .venv), builds, and runs every
# test with ctest, the Python package's pytest suite included.
# GPU tests skip with a reason when no CUDA device is present.
#
# Usage: scripts/test.sh [extra ctest arguments...]   e.g. scripts/test.sh -R package
# Environment: as scripts/build.sh (VOLCCL_BUILD_DIR, VOLCCL_CUDA_ARCHITECTURES, ...), and
#   VOLCCL_TEST_JOBS   parallel tests (default: 2)
#   VOLCCL_SANITIZE    0: skip scripts/sanitize.sh (the CPU path under ASan and UBSan in a second
#                      build folder, build-asan), which runs after the main suite
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup-debian.sh
scripts/setup-python.sh
scripts/build.sh
ctest --test-dir "${VOLCCL_BUILD_DIR:-build}" --output-on-failure -j "${VOLCCL_TEST_JOBS:-2}" "$@"
if [[ ${VOLCCL_SANITIZE:-1} != 0 ]]; then
  scripts/sanitize.sh
fi
