#!/usr/bin/env python3
"""The Python package beside its peers, in one run on one machine (docs/python.md).

- GPU, CuPy arrays: volccl.connected_components against cupyx.scipy.ndimage.label and
  cucim.skimage.measure.label, and with statistics=True against cucim's label + regionprops
  (area, centroid, bbox); the Python call's overhead over the C++ call (the median wall time of
  the call minus the median of the library's own LabelResult total, which the module returns as
  total_ms).
- GPU, a batch of N volumes: one connected_components_batch call against N single calls and
  against N calls of cupyx.scipy.ndimage.label.
- CPU, NumPy arrays: volccl (device="cpu") against cc3d.connected_components and
  scipy.ndimage.label.

Labels are checked first: volccl's against scipy's on the host copy, byte for byte, and each
peer's component count against volccl's. Medians of --runs timed calls after --warmup, each
timed call synchronized. Peers that are not importable are skipped with a note.

Usage: python_bench.py [--runs 30] [--warmup 5] [--csv FILE] [--cpu-only] [--batch 64]
"""
import argparse
import csv
import statistics
import sys
import time

import numpy as np
import scipy.ndimage as ndimage

import volccl


def random_volume(shape, density, granularity, seed):
    """YACCLAB's random volume: cells of granularity^3 voxels, each foreground with `density`."""
    rng = np.random.default_rng(seed)
    cells = tuple(-(-n // granularity) for n in shape)
    grid = rng.random(cells) < density
    for axis in range(len(shape)):
        grid = np.repeat(grid, granularity, axis=axis)
    return np.ascontiguousarray(grid[tuple(slice(0, n) for n in shape)]).astype(np.uint8)


def median_ms(call, runs, warmup, sync=lambda: None):
    for _ in range(warmup):
        call()
    sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def structure(ndim, connectivity):
    rank = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}[connectivity]
    return ndimage.generate_binary_structure(ndim, rank)


def cpu_rows(volumes, connectivities, args):
    rows = []
    try:
        import cc3d
    except ImportError:
        cc3d = None
        print("note: cc3d is not importable; its rows are skipped")
    for name, volume in volumes:
        for connectivity in connectivities:
            expected, count = ndimage.label(volume, structure(volume.ndim, connectivity))
            labels = volccl.connected_components(volume, connectivity=connectivity, device="cpu")
            if not np.array_equal(labels, expected):
                sys.exit(f"volccl's labels differ from scipy's on {name} at {connectivity}")
            timed = {
                "volccl": lambda: volccl.connected_components(volume, connectivity=connectivity,
                                                              device="cpu"),
                "scipy": lambda: ndimage.label(volume, structure(volume.ndim, connectivity)),
            }
            if cc3d is not None:
                peer = cc3d.connected_components(volume, connectivity=connectivity,
                                                 binary_image=True)
                if not np.array_equal(peer, expected):
                    sys.exit(f"cc3d's labels differ from scipy's on {name} at {connectivity}")
                timed["cc3d"] = lambda: cc3d.connected_components(
                    volume, connectivity=connectivity, binary_image=True)
            for tool, call in timed.items():
                rows.append({"device": "cpu", "volume": name, "connectivity": connectivity,
                             "tool": tool, "components": count,
                             "median_ms": median_ms(call, args.runs, args.warmup)})
    return rows


def gpu_rows(volumes, connectivities, args):
    import cupy
    import cupyx.scipy.ndimage as cundimage
    try:
        import cucim.skimage.measure as cumeasure
    except ImportError as error:
        cumeasure = None
        print(f"note: cucim is not importable ({error}); its rows are skipped")
    sync = cupy.cuda.get_current_stream().synchronize
    rows = []
    for name, host in volumes:
        device_volume = cupy.asarray(host)
        for connectivity in connectivities:
            expected, count = ndimage.label(host, structure(host.ndim, connectivity))
            labels = volccl.connected_components(device_volume, connectivity=connectivity)
            if not isinstance(labels, cupy.ndarray) or not np.array_equal(labels.get(), expected):
                sys.exit(f"volccl's GPU labels differ from scipy's on {name} at {connectivity}")
            rank = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}[connectivity]
            cu_structure = cupy.asarray(structure(host.ndim, connectivity))
            timed = {
                "volccl": lambda: volccl.connected_components(device_volume,
                                                              connectivity=connectivity),
                "volccl+statistics": lambda: volccl.connected_components(
                    device_volume, connectivity=connectivity, statistics=True),
                "cupyx.label": lambda: cundimage.label(device_volume, cu_structure),
            }
            if cumeasure is not None:
                peer_count = int(cumeasure.label(device_volume, connectivity=rank).max())
                if peer_count != count:
                    sys.exit(f"cucim found {peer_count} components, scipy {count} ({name})")
                timed["cucim.label"] = lambda: cumeasure.label(device_volume,
                                                               connectivity=rank)

                def cucim_with_regionprops():
                    peer_labels = cumeasure.label(device_volume, connectivity=rank)
                    cumeasure.regionprops_table(peer_labels,
                                                properties=("label", "area", "centroid", "bbox"))

                # regionprops takes seconds per thousand components: only where they are few.
                if count <= args.regionprops_max_components:
                    timed["cucim.label+regionprops"] = cucim_with_regionprops
            for tool, call in timed.items():
                rows.append({"device": "cuda", "volume": name, "connectivity": connectivity,
                             "tool": tool, "components": count,
                             "median_ms": median_ms(call, args.runs, args.warmup, sync)})
            # The Python call's overhead: its wall time minus the library's own total for the
            # same labeling (LabelResult's total_ms, which the compiled module returns).
            mask = device_volume.view(cupy.uint8)
            out = cupy.empty(mask.shape, cupy.uint32)
            stream = cupy.cuda.get_current_stream().ptr
            library_ms = []
            for _ in range(args.runs):
                result = volccl._volccl.label_into(mask, out, connectivity, "auto", "auto", 0,
                                                   stream, False)
                library_ms.append(result["total_ms"])
            public_ms = median_ms(timed["volccl"], args.runs, args.warmup, sync)
            rows.append({"device": "cuda", "volume": name, "connectivity": connectivity,
                         "tool": "volccl overhead over C++", "components": count,
                         "median_ms": public_ms - statistics.median(library_ms)})
    return rows


def batch_rows(args):
    import cupy
    import cupyx.scipy.ndimage as cundimage
    sync = cupy.cuda.get_current_stream().synchronize
    shape = (args.batch, 96, 96, 96)
    host = np.stack([random_volume(shape[1:], 0.3, 4, seed) for seed in range(args.batch)])
    batch = cupy.asarray(host)
    labels, counts = volccl.connected_components_batch(batch, connectivity=26)
    for item in range(args.batch):
        expected, count = ndimage.label(host[item], structure(3, 26))
        if counts[item] != count or not np.array_equal(labels[item].get(), expected):
            sys.exit(f"the batch's item {item} differs from scipy's labels")
    cu_structure = cupy.asarray(structure(3, 26))
    timed = {
        "volccl batch call": lambda: volccl.connected_components_batch(batch, connectivity=26),
        "volccl single calls": lambda: [volccl.connected_components(batch[i], connectivity=26)
                                        for i in range(args.batch)],
        "cupyx.label single calls": lambda: [cundimage.label(batch[i], cu_structure)
                                             for i in range(args.batch)],
    }
    name = f"batch-{args.batch}x96^3-d30-g4"
    return [{"device": "cuda", "volume": name, "connectivity": 26, "tool": tool,
             "components": int(counts.sum()),
             "median_ms": median_ms(call, args.runs, args.warmup, sync)}
            for tool, call in timed.items()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--csv")
    parser.add_argument("--cpu-only", action="store_true")
    parser.add_argument("--gpu-only", action="store_true")
    parser.add_argument("--side", type=int, default=256, help="side of the random volumes")
    parser.add_argument("--regionprops-max-components", type=int, default=20000,
                        help="time cucim's regionprops only on volumes of at most this many")
    args = parser.parse_args()
    side = args.side
    volumes = [(f"random-{side}-d30-g1", random_volume((side,) * 3, 0.3, 1, 1)),
               (f"random-{side}-d30-g8", random_volume((side,) * 3, 0.3, 8, 2)),
               ("random-96-d30-g4", random_volume((96,) * 3, 0.3, 4, 3))]
    rows = [] if args.gpu_only else cpu_rows(volumes, (26, 6), args)
    if not args.cpu_only and volccl.cuda_available():
        rows += gpu_rows(volumes, (26, 6), args)
        rows += batch_rows(args)
    elif not args.cpu_only:
        print("note: no CUDA device; the GPU rows are skipped")
    print("device,volume,connectivity,tool,components,median_ms")
    for row in rows:
        print(f"{row['device']},{row['volume']},{row['connectivity']},{row['tool']},"
              f"{row['components']},{row['median_ms']:.4f}")
    if args.csv:
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
