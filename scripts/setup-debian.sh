#!/usr/bin/env bash
# Installs the Debian packages volccl builds and tests with. Idempotent: when every package is
# already installed it only checks and says so (no apt-get, no network). Installs nothing from
# outside Debian's archive; in particular it does not install CUDA (see the end of this script).
#
# Usage: scripts/setup-debian.sh          (as root, or as a user who may sudo)
set -euo pipefail

packages=(
  cmake                   # build system (3.24 or newer)
  ninja-build             # generator used by scripts/build.sh
  g++                     # C++17 compiler; also nvcc's host compiler
  ccache                  # used automatically by CMakeLists.txt when present
  libinsighttoolkit5-dev  # ITK 5.2: image I/O of the CLI, ITK filters, the ITK oracle in tests
  libfftw3-dev            # recommended by libinsighttoolkit5-dev, whose CMake files use it
  uuid-dev                # recommended by libinsighttoolkit5-dev
  libgdcm-tools           # programs GDCM's CMake targets name; without them every configure
                          # warns about 15 missing /usr/bin/gdcm* files
  libvtk9-dev             # VTK 9.1: VTK/ParaView output
  libcli11-dev            # CLI11: command line of the volccl executable
  libgtest-dev            # GoogleTest
  python3                 # the scipy cross-check test
  python3-numpy
  python3-scipy
  python3-venv            # the project's Python environment (scripts/setup-python.sh)
  python3-dev             # the headers the Python module (python/) builds against
)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-debian.sh: this is not a Debian-like system (no dpkg-query/apt-get)." >&2
  echo "Install these packages (or their equivalents) by hand: ${packages[*]}" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
  if [[ "$status" != "installed" ]]; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup-debian.sh: all ${#packages[@]} Debian packages are already installed."
else
  echo "setup-debian.sh: installing ${missing[*]}"
  sudo_cmd=()
  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
      sudo_cmd=(sudo)
    else
      echo "setup-debian.sh: not root and sudo is not available; run as root:" >&2
      echo "  apt-get update && apt-get install --no-install-recommends ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# CUDA is not a Debian package of this project: volccl uses the NVIDIA CUDA Toolkit when nvcc
# is found, and builds the CPU backend alone otherwise.
nvcc_path=$(command -v nvcc 2>/dev/null || true)
if [[ -z "$nvcc_path" && -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc_path=/usr/local/cuda/bin/nvcc
fi
if [[ -n "$nvcc_path" ]]; then
  echo "setup-debian.sh: CUDA compiler: $nvcc_path ($("$nvcc_path" --version | tail -n 2 | head -n 1))"
else
  echo "setup-debian.sh: nvcc not found: scripts/build.sh will build without CUDA"
  echo "  (CPU backend only; the same as: cmake -S . -B build -DVOLCCL_CUDA=OFF)."
  echo "  For the GPU backend install the NVIDIA CUDA Toolkit (developed with 13.0) and put"
  echo "  nvcc on PATH (or in /usr/local/cuda/bin)."
fi
