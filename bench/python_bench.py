#!/usr/bin/env python3
"""The Python package beside its peers, in one run on one machine (docs/python.md).

- GPU, CuPy arrays: volccl.connected_components against cupyx.scipy.ndimage.label and
  cucim.skimage.measure.label, and with statistics=True (bounding boxes as cc3d's slices, and as
  arrays) against cucim's label + regionprops_table (area, centroid, bbox: arrays).
- GPU, the Python call's overhead over the C++ call: the median over many calls of
  volccl.connected_components' wall time less the wall time of the C++ call inside it
  (volccl::cuda::label, timed around the call by the compiled module, which returns it as
  call_ms), on small and large volumes; with --overhead-breakdown also each step of the Python
  call timed alone.
- GPU, a batch of N volumes: one connected_components_batch call against N single calls and
  against N calls of cupyx.scipy.ndimage.label.
- CPU, NumPy arrays: volccl (device="cpu") against cc3d.connected_components and
  scipy.ndimage.label.

Labels are checked first: volccl's against scipy's on the host copy, byte for byte, and each
peer's component count against volccl's. Medians of --runs timed calls after --warmup, each
timed call synchronized. Peers that are not importable are skipped with a note.

Usage: python_bench.py [--runs 30] [--warmup 5] [--csv FILE] [--cpu-only] [--batch 64]
                       [--overhead-only] [--overhead-breakdown]
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
            labels = volccl.connected_components(device_volume, connectivity=connectivity,
                                                 binary_image=True)
            if not isinstance(labels, cupy.ndarray) or not np.array_equal(labels.get(), expected):
                sys.exit(f"volccl's GPU labels differ from scipy's on {name} at {connectivity}")
            rank = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}[connectivity]
            cu_structure = cupy.asarray(structure(host.ndim, connectivity))
            timed = {
                "volccl": lambda: volccl.connected_components(
                    device_volume, connectivity=connectivity, binary_image=True),
                "volccl+statistics": lambda: volccl.connected_components(
                    device_volume, connectivity=connectivity, binary_image=True,
                    statistics=True),
                "volccl+statistics, boxes as arrays": lambda: volccl.connected_components(
                    device_volume, connectivity=connectivity, binary_image=True,
                    statistics=True, no_slice_conversion=True),
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
    return rows


def microseconds(call, runs, sync):
    """The median over `runs` batches of the mean time of one call in a batch of 200, in µs."""
    for _ in range(200):
        call()
    sync()
    batches = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(200):
            call()
        sync()
        batches.append((time.perf_counter() - start) / 200 * 1e6)
    return statistics.median(batches)


class _CallClock:
    """Stands in for the compiled module and keeps the C++ call's own time (call_ms) of every
    labeling made through it, so that each Python call is paired with the C++ call inside it.
    Its own indirection is counted as Python's overhead."""

    def __init__(self, module):
        self._module = module
        self.call_ms = []
        for name in ("label_into", "label_map_into"):
            setattr(self, name, self._timed(getattr(module, name)))

    def _timed(self, function):
        def timed(*arguments):
            result = function(*arguments)
            self.call_ms.append(result["call_ms"])
            return result

        return timed

    def __getattr__(self, name):  # what is not timed
        return getattr(self._module, name)


def paired_overhead_us(call, clock, calls):
    """The median over `calls` calls of each call's wall time less its C++ call's, in µs."""
    for _ in range(200):
        call()
    clock.call_ms.clear()
    walls = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        walls.append((time.perf_counter() - start) * 1e3)
    return statistics.median(wall - inner for wall, inner in zip(walls, clock.call_ms)) * 1e3


def overhead_rows(args):
    """The Python call's overhead over the C++ call, on CuPy masks of a few sizes: each call's
    wall time less the wall time of the C++ call it makes (both synchronous: the count is read
    back), median of 2000 calls."""
    import cupy
    from volccl import _arrays, _volccl

    sync = cupy.cuda.get_current_stream().synchronize
    rows = []
    for side in (8, 64, 256):
        volume = cupy.asarray(random_volume((side,) * 3, 0.3, 4, side).astype(bool))
        name = f"random-{side}-d30-g4"
        mask = volume.view(cupy.uint8)
        out = cupy.empty(volume.shape, cupy.uint32)
        stream = cupy.cuda.get_current_stream().ptr
        count = volccl.connected_components(volume, return_N=True)[1]
        clock = _CallClock(_volccl)
        volccl._volccl = clock
        try:
            python_us = paired_overhead_us(lambda: volccl.connected_components(volume), clock,
                                           2000)
            binding_us = paired_overhead_us(
                lambda: clock.label_into(mask, out, 26, "auto", "auto", 0, stream, False),
                clock, 2000)
        finally:
            volccl._volccl = _volccl
        call_ms = [_volccl.label_into(mask, out, 26, "auto", "auto", 0, stream,
                                      False)["call_ms"] for _ in range(200)]
        timed = {"C++ call": statistics.median(call_ms) * 1e3,
                 "python over C++": python_us, "binding over C++": binding_us}
        if args.overhead_breakdown:
            arrays = _arrays.arrays_for(volume)[1]

            def enter_and_leave():
                with arrays.device_scope():
                    pass

            steps = {
                "step: arrays_for": lambda: _arrays.arrays_for(volume),
                "step: device scope": enter_and_leave,
                "step: empty labels": lambda: arrays.empty(volume.shape, np.uint32),
                "step: mask view": lambda: arrays.mask(volume),
                "step: current stream": arrays.stream,
                "step: __dlpack__ of the mask": lambda: mask.__dlpack__(),
                "step: argument checks": lambda: (volccl._check_device("auto"),
                                                  volccl._check_threads(0),
                                                  volccl._connectivity(3, 26),
                                                  volccl._out_dtype(None)),
            }
            for step, call in steps.items():
                timed[step] = microseconds(call, args.runs, sync)
        for tool, us in timed.items():
            rows.append({"device": "cuda", "volume": name, "connectivity": 26, "tool": tool,
                         "components": count, "median_ms": us / 1e3})
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
    parser.add_argument("--overhead-only", action="store_true",
                        help="only the Python call's overhead over the C++ call (GPU)")
    parser.add_argument("--overhead-breakdown", action="store_true",
                        help="with the overhead, time each step of the Python call alone")
    parser.add_argument("--side", type=int, default=256, help="side of the random volumes")
    parser.add_argument("--regionprops-max-components", type=int, default=20000,
                        help="time cucim's regionprops only on volumes of at most this many")
    args = parser.parse_args()
    side = args.side
    volumes = [(f"random-{side}-d30-g1", random_volume((side,) * 3, 0.3, 1, 1)),
               (f"random-{side}-d30-g8", random_volume((side,) * 3, 0.3, 8, 2)),
               ("random-96-d30-g4", random_volume((96,) * 3, 0.3, 4, 3))]
    if args.overhead_only:
        if not volccl.cuda_available():
            sys.exit("the overhead is measured on a CUDA device; none is usable")
        rows = overhead_rows(args)
    else:
        rows = [] if args.gpu_only else cpu_rows(volumes, (26, 6), args)
    if not args.cpu_only and not args.overhead_only and volccl.cuda_available():
        rows += gpu_rows(volumes, (26, 6), args)
        rows += overhead_rows(args)
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
