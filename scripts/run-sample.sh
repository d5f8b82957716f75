#!/usr/bin/env bash
# Labels the bundled brain MRI (Otsu threshold, 26-connectivity) with the volccl command line
# built by scripts/build.sh, and writes the labels to out/brain_labels.nii.gz, their statistics
# to out/brain_components.csv and a ParaView scene to out/brain_scene/.
#
# Usage: scripts/run-sample.sh [extra volccl label options...]   e.g. --device cpu --timings
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

mkdir -p out
"${VOLCCL_BUILD_DIR:-build}"/apps/volccl label data/samples/brain_t1.nii.gz --otsu \
  -o out/brain_labels.nii.gz --stats out/brain_components.csv --vtk out/brain_scene --surfaces \
  --force "$@"
