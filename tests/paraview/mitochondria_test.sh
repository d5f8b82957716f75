#!/usr/bin/env bash
# The ParaView test of issue 7: labels the EPFL mitochondria masks (165 PNG slices of
# 1024x768, a directory read as one volume) with their statistics and a ParaView scene with
# surfaces, then opens the scene in pvpython, checks the component count (43, data/README.md)
# and the centroid of label 1 (from --stats), and renders it to WORKDIR/mitochondria.png.
#
#   mitochondria_test.sh VOLCCL DATA WORKDIR
#
# DATA holds em_mitochondria_lucchi_pp/ (data/fetch mitochondria). Exit status 77 (skipped)
# without the masks or without pvpython (run_pvpython.sh says why).
set -euo pipefail

volccl=$1
masks=$2/em_mitochondria_lucchi_pp/Lucchi++/Train_Out
work=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
components=43

if [[ ! -d "$masks" ]]; then
  echo "SKIPPED: $masks is absent (data/fetch mitochondria fetches it)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
summary=$("$volccl" label "$masks" --stats "$work/stats.csv" --vtk "$work/scene" --surfaces)
echo "$summary"
if [[ "$summary" != *": $components components ("* ]]; then
  echo "FAILED: expected $components components"
  exit 1
fi
# label,count,physical_size,centroid_x,centroid_y,centroid_z,...: the row of label 1.
IFS=, read -r label _ _ x y z _ < <(sed -n 2p "$work/stats.csv")
"$here/run_pvpython.sh" "$here/check_vtk_output.py" --dir "$work/scene" \
  --components "$components" --centroid "$label" "$x" "$y" "$z" --png "$work/mitochondria.png"
