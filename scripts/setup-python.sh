#!/usr/bin/env bash
# Makes the project's Python environment, .venv at the repository root, with Debian's python3 and
# the packages of python/requirements-dev.txt from PyPI (nanobind and scikit-build-core build the
# volccl package; pytest, numpy, scipy and cc3d test it). Idempotent: when .venv already holds
# exactly those requirements it only says so (no network).
#
# Usage: scripts/setup-python.sh          (after scripts/setup-debian.sh, which installs python3-venv)
# Environment: VOLCCL_VENV   the environment's folder (default: .venv)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=${VOLCCL_VENV:-.venv}
requirements=python/requirements-dev.txt
stamp=$venv/.volccl-requirements
if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$requirements" "$stamp"; then
  echo "setup-python.sh: $venv already has the packages of $requirements."
  exit 0
fi
if [[ ! -x "$venv/bin/python" ]]; then
  echo "setup-python.sh: making $venv with /usr/bin/python3"
  /usr/bin/python3 -m venv "$venv"
fi
# Debian's venv brings an old pip, which does not take `pip install ./python -C ...`.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
echo "setup-python.sh: $venv has the packages of $requirements."
