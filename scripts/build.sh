#!/usr/bin/env bash
# Configures and builds volccl (Release, Ninja) in build/ at the repository root.
#
# Usage: scripts/build.sh [extra cmake configure arguments...]
# Environment:
#   VOLCCL_BUILD_DIR           build folder (default: build)
#   VOLCCL_BUILD_TYPE          CMAKE_BUILD_TYPE (default: Release)
#   VOLCCL_CUDA_ARCHITECTURES  CMAKE_CUDA_ARCHITECTURES, e.g. 90, "80;90" or native
#                              (default: the GPU of this machine, or a list of major ones)
#   VOLCCL_CUDA                ON or OFF; default ON when nvcc is found, OFF otherwise
#   VOLCCL_BUILD_JOBS          parallel build jobs (default: Ninja's choice)
#   VOLCCL_VENV                the project's Python environment (default: .venv); when it has
#                              nanobind, the Python module is built too (VOLCCL_PYTHON=ON)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

build_dir=${VOLCCL_BUILD_DIR:-build}
args=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${VOLCCL_BUILD_TYPE:-Release}")

# Keep the generator of an existing build folder (CMake refuses to switch it).
if [[ -f "$build_dir/CMakeCache.txt" ]]; then
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build_dir/CMakeCache.txt")
  if [[ -n "$generator" && "$generator" != "Ninja" ]]; then
    args=(-S . -B "$build_dir" -DCMAKE_BUILD_TYPE="${VOLCCL_BUILD_TYPE:-Release}")
  fi
fi

# CUDA: the NVIDIA toolkit is not a Debian package; use it when nvcc is there.
nvcc_path=${CUDACXX:-}
if [[ -z "$nvcc_path" ]]; then
  nvcc_path=$(command -v nvcc 2>/dev/null || true)
fi
if [[ -z "$nvcc_path" && -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc_path=/usr/local/cuda/bin/nvcc
fi
cuda=${VOLCCL_CUDA:-}
if [[ -z "$cuda" ]]; then
  if [[ -n "$nvcc_path" ]]; then cuda=ON; else cuda=OFF; fi
fi
case "$cuda" in
  ON | on | 1 | TRUE | true | YES | yes)
    if [[ -z "$nvcc_path" ]]; then
      echo "build.sh: VOLCCL_CUDA=$cuda but nvcc was not found (set CUDACXX or PATH)" >&2
      exit 1
    fi
    args+=(-DVOLCCL_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_path")
    if [[ -n "${VOLCCL_CUDA_ARCHITECTURES:-}" ]]; then
      args+=(-DCMAKE_CUDA_ARCHITECTURES="$VOLCCL_CUDA_ARCHITECTURES")
    fi
    echo "build.sh: building with CUDA ($nvcc_path)"
    ;;
  *)
    args+=(-DVOLCCL_CUDA=OFF)
    if [[ -z "$nvcc_path" ]]; then
      echo "build.sh: nvcc not found: building WITHOUT CUDA (-DVOLCCL_CUDA=OFF; CPU backend only)."
      echo "  Install the NVIDIA CUDA Toolkit and put nvcc on PATH for the GPU backend."
    else
      echo "build.sh: building WITHOUT CUDA (VOLCCL_CUDA=$cuda; CPU backend only)"
    fi
    ;;
esac

# The Python module, with the project's environment (scripts/setup-python.sh) when it exists.
venv=${VOLCCL_VENV:-.venv}
[[ "$venv" == /* ]] || venv=$PWD/$venv
if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "import nanobind" 2>/dev/null; then
  args+=(-DVOLCCL_PYTHON=ON -DPython_EXECUTABLE="$venv/bin/python")
  echo "build.sh: building the Python module with $venv/bin/python"
fi

cmake "${args[@]}" "$@"

build_args=(--build "$build_dir")
if [[ -n "${VOLCCL_BUILD_JOBS:-}" ]]; then
  build_args+=(--parallel "$VOLCCL_BUILD_JOBS")
fi
cmake "${build_args[@]}"
echo "build.sh: built in $build_dir/"
