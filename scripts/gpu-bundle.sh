#!/usr/bin/env bash
# Gathers what scripts/gpu-check.sh needs on a GPU machine that has no ITK, GoogleTest or CLI11:
# the test programs, the command line (with `volccl bench`) and the ITK filter's benchmark with
# their shared libraries, and a subset of the real volumes, into .device/ (git-ignored). Carry .device to the GPU machine.
#
# The programs and libraries are stripped and, with VTK's libraries, come to ~85 MB: more than a
# single run on the GPU machine carries (64 MiB). So the bundle is also packed into
# .device-pack/device.tar.xz (~20 MB, git-ignored): carry that, and unpack it first on the GPU
# machine (`tar xJf .device-pack/device.tar.xz`).
#
# Usage: scripts/gpu-bundle.sh [BUILD_DIR]   (default: build, built with CUDA for the GPU)
# Environment: VOLCCL_DATA   the real volumes (default: ../shared/data/raw)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
data=${VOLCCL_DATA:-../shared/data/raw}
bundle_libs=../shared/tools/bundle-libs
[ -x "$bundle_libs" ] || { echo "gpu-bundle: $bundle_libs not found" >&2; exit 1; }

rm -rf .device
"$bundle_libs" .device/bin "$build/tests/volccl_tests" "$build/tests/volccl_itk_tests" \
  "$build/apps/volccl" "$build/bench/volccl-itk-bench" \
  "$build/apps/examples/label_pipeline" "$build/bench/volccl-slab-bench"

# The volumes the ITK oracle test reads (tests/itk_oracle_test.cpp) and `volccl bench`'s real
# datasets (OASIS 0455-0457, the mitochondria, the connectomics volume), about 20 MB.
for volume in brain_itk_example/KmeansTest_T1UCharRaw.nii.gz \
              brain_colin27_mricron/ch2bet.nii.gz \
              brain_oasis1_neurite/OASIS_OAS1_0455_MR1/aligned_norm.nii.gz \
              brain_oasis1_neurite/OASIS_OAS1_0456_MR1/aligned_norm.nii.gz \
              brain_oasis1_neurite/OASIS_OAS1_0457_MR1/aligned_norm.nii.gz \
              em_mitochondria_lucchi_pp/Lucchi++/Train_Out \
              em_connectomics_cc3d/connectomics.npy.gz; do
  if [ -e "$data/$volume" ]; then
    mkdir -p ".device/data/$(dirname "$volume")"
    cp -r "$data/$volume" ".device/data/$volume"
  else
    echo "gpu-bundle: $data/$volume is absent; its test will skip" >&2
  fi
done
strip --strip-unneeded .device/bin/* .device/bin/lib/*.so* 2>/dev/null || true
rm -rf .device-pack
mkdir -p .device-pack
tar cf - .device | xz -T2 -6 > .device-pack/device.tar.xz
du -sh .device .device-pack/device.tar.xz
