#!/usr/bin/env python3
"""Times CuPy host to host, as volccl-slab-bench times volccl: the mask copied to the device,
cupyx.scipy.ndimage.label, and the labels copied back into a host array, for the random volumes
of the slab benchmark's names (random-SIDE-dD-gG, density D %, cells of G voxels a side).

    python3 bench/host_peers.py --volumes random-512-d30-g4,random-1024-d30-g4 \
        --connectivity 26,6 --runs 5

The volumes come from numpy's generator, not volccl's MT19937: the same density and granularity,
other voxels. CuPy labels into int32, so volumes of 2^31 voxels and more are skipped, as are
those the device cannot hold. Prints CSV: volume, connectivity, peer, components, median_ms,
min_ms, ns_per_voxel.
"""

import argparse
import statistics
import sys
import time

import numpy as np


def random_volume(name, seed=1):
    _, side, density, granularity = name.split("-")
    side, density, granularity = int(side), int(density[1:]) / 100, int(granularity[1:])
    cells = -(-side // granularity)
    grid = np.random.default_rng(seed).random((cells,) * 3) < density
    for axis in range(3):
        grid = np.repeat(grid, granularity, axis=axis)
    return np.ascontiguousarray(grid[:side, :side, :side], dtype=np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volumes", default="random-512-d30-g4")
    parser.add_argument("--connectivity", default="26,6")
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    import cupy
    import cupyx.scipy.ndimage as ndimage
    import scipy.ndimage

    print("volume,connectivity,peer,components,median_ms,min_ms,ns_per_voxel")
    for name in arguments.volumes.split(","):
        mask = random_volume(name)
        if mask.size >= 2**31:
            print(f"{name}: {mask.size} voxels, past CuPy's int32 labels; skipped", file=sys.stderr)
            continue
        host_labels = np.empty(mask.shape, dtype=np.int32)
        for connectivity in map(int, arguments.connectivity.split(",")):
            rank = {6: 1, 18: 2, 26: 3}[connectivity]
            structure = scipy.ndimage.generate_binary_structure(3, rank)
            times = []
            try:
                for run in range(arguments.runs + 1):  # the first one untimed
                    cupy.cuda.Device().synchronize()
                    start = time.perf_counter()
                    labels, count = ndimage.label(cupy.asarray(mask), structure)
                    labels.get(out=host_labels)
                    cupy.cuda.Device().synchronize()
                    if run > 0:
                        times.append((time.perf_counter() - start) * 1e3)
                    del labels
            except cupy.cuda.memory.OutOfMemoryError:
                print(f"{name} at {connectivity}: out of device memory; skipped", file=sys.stderr)
                continue
            median = statistics.median(times)
            print(f"{name},{connectivity},cupy-host-to-host,{int(count)},{median:.3f},"
                  f"{min(times):.3f},{median * 1e6 / mask.size:.4f}", flush=True)


if __name__ == "__main__":
    main()
