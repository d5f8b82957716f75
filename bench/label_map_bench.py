#!/usr/bin/env python3
"""Label maps on the GPU: volccl.connected_components of a CuPy label map beside
cucim.skimage.measure.label of the same array and volccl's labeling of its non-zero mask, in one
run on one device. Labels are checked against cuCIM's first; then the median of --runs timed
calls after a warm-up, each call synchronised (CUDA events around it).

    python bench/label_map_bench.py --data .device/data --out results.csv

Volumes: the connectomics 512^3 uint32 segmentation, an OASIS seg35 map (--seg35, a .npy of
its voxels, z y x), and random label maps of 512^3 with 2, 16 and 65536 values (0 among them, the
background) at granularity 1 and 4. Connectivities 26, 18 and 6 (--connectivities); at each, every
algorithm that takes label maps there (--algorithms), the mask by `auto`.
"""

import argparse
import csv
import pathlib
import statistics
import sys

import cupy

import volccl
from label_map_volumes import label_map_volumes


def timed(call, runs):
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    call()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(runs):
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--seg35")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--peer-runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--connectivities", default="26,18,6")
    parser.add_argument("--algorithms", default="auto,uf,ruf",
                        help="the label map's algorithms, each where it takes the connectivity")
    parser.add_argument("--out", required=True)
    arguments = parser.parse_args()
    from cucim.skimage import measure

    skimage_connectivities = {26: 3, 18: 2, 6: 1}
    connectivities = [int(c) for c in arguments.connectivities.split(",")]
    rows = []
    connectomics = pathlib.Path(arguments.data) / "em_connectomics_cc3d" / "connectomics.npy.gz"
    for name, host in label_map_volumes(connectomics, arguments.seg35, arguments.seed):
        device_map = cupy.asarray(host)
        mask = device_map != 0
        for connectivity in connectivities:
            skimage_connectivity = skimage_connectivities[connectivity]
            theirs = measure.label(device_map, background=0, connectivity=skimage_connectivity)
            mask_ms = timed(lambda: volccl.connected_components(mask, connectivity=connectivity),
                            arguments.runs)
            cucim_ms = timed(lambda: measure.label(device_map, background=0,
                                                   connectivity=skimage_connectivity),
                             arguments.peer_runs)
            for algorithm in arguments.algorithms.split(","):
                try:
                    ours = volccl.connected_components(device_map, connectivity=connectivity,
                                                       algorithm=algorithm)
                except ValueError:  # the algorithm does not take this connectivity
                    continue
                same = bool(cupy.array_equal(ours, theirs.astype(cupy.uint32)))
                label_map_ms = timed(
                    lambda: volccl.connected_components(device_map, connectivity=connectivity,
                                                        algorithm=algorithm),
                    arguments.runs)
                row = {"volume": name, "dtype": str(host.dtype), "connectivity": connectivity,
                       "algorithm": algorithm, "components": int(ours.max()),
                       "labels_equal_cucim": same,
                       "volccl_label_map_ms": round(label_map_ms, 3),
                       "volccl_mask_ms": round(mask_ms, 3), "cucim_ms": round(cucim_ms, 3),
                       "over_cucim": round(cucim_ms / label_map_ms, 1),
                       "label_map_over_mask": round(label_map_ms / mask_ms, 2)}
                rows.append(row)
                print(row, flush=True)
                del ours
            del theirs
        del device_map, mask
        cupy.get_default_memory_pool().free_all_blocks()
    with open(arguments.out, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return 0 if all(row["labels_equal_cucim"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
