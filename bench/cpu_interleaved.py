#!/usr/bin/env python3
"""volccl's CPU labeling (the Python module, RTS) against cc3d and OpenCV, their runs interleaved
in one process, so that a machine shared with other work slows every peer alike.

    PYTHONPATH=build/python .venv/bin/python bench/cpu_interleaved.py DIR \
        [--connectivity 26 ...] [--runs 5] [--threads 2] [--images] [--csv out.csv]

For every DIR/NAME.npy (a volume `volccl bench --dump-dir` wrote) and, with --images, YACCLAB-
style 2048^2 images (density 10-90 %, granularity 1, 4 and 16, NumPy's MT19937): the labels of
volccl and cc3d are checked equal first. With --label-maps, label maps instead, each connected
region of equal non-zero value a component on both sides (cc3d's default): the connectomics
segmentation (--connectomics, its .npy.gz), an OASIS seg35 map (--seg35, a .npy) and random
512^3 maps of 2, 16 and 65536 values at granularity 1 and 4, the volumes of label_map_bench.py
(bench/label_map_volumes.py). Then each round times volccl with --threads threads, volccl with
one, cc3d.connected_components (one thread) and, on images, cv2.connectedComponents (--threads
threads), one run each in turn, after one untimed round. Each output is allocated
by its labeler (NumPy arrays), as users have them. Medians of --runs rounds.
"""

import argparse
import csv
import pathlib
import re
import statistics
import sys
import time

import cc3d
import numpy as np
import volccl
from label_map_volumes import label_map_volumes

try:
    import cv2
except ImportError:
    cv2 = None


def timed(function):
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1e3


def images():
    for granularity in (1, 4, 16):
        for density in (10, 30, 50, 70, 90):
            random = np.random.Generator(np.random.MT19937(1000 * granularity + density))
            cells = -(-2048 // granularity)
            grid = random.random((cells, cells)) < density / 100
            image = np.repeat(np.repeat(grid, granularity, 0), granularity, 1)[:2048, :2048]
            yield f"image-2048-d{density}-g{granularity}", np.ascontiguousarray(image, np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump_dir", type=pathlib.Path)
    parser.add_argument("--connectivity", type=int, nargs="+", default=[26, 18, 6])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--volumes", default=".*", help="regular expression on the names")
    parser.add_argument("--images", action="store_true", help="the 2048^2 images at 8 and 4")
    parser.add_argument("--label-maps", action="store_true",
                        help="label maps (every region of equal value) instead of DIR's volumes")
    parser.add_argument("--connectomics", type=pathlib.Path,
                        help="with --label-maps: connectomics.npy.gz")
    parser.add_argument("--seg35", type=pathlib.Path, help="with --label-maps: a seg35 .npy")
    parser.add_argument("--csv", type=pathlib.Path)
    arguments = parser.parse_args()
    if cv2 is not None:
        cv2.setNumThreads(arguments.threads)
    cases = []
    for path in sorted(arguments.dump_dir.glob("*.npy")) if not arguments.label_maps else []:
        name = path.name[:-len(".npy")]
        if name.endswith(".labels") or ".c" in name or not re.search(arguments.volumes, name):
            continue
        cases += [(name, path, c) for c in arguments.connectivity]
    if arguments.images:
        cases += [(name, image, c) for name, image in images() for c in (8, 4)]
    if arguments.label_maps:
        maps = label_map_volumes(arguments.connectomics, arguments.seg35, seed=1)
        cases += [(name, volume, c) for name, volume in maps
                  if re.search(arguments.volumes, name) for c in arguments.connectivity]
    rows = []
    print("| volume | connectivity | volccl 2 t | volccl 1 t | cc3d | OpenCV | cc3d / volccl 2 t "
          "| cc3d / volccl 1 t |", flush=True)
    for name, source, connectivity in cases:
        volume = np.load(source) if isinstance(source, pathlib.Path) else source

        def ours(threads):
            return volccl.connected_components(volume, connectivity=connectivity,
                                               binary_image=not arguments.label_maps,
                                               algorithm="rts",
                                               device="cpu", threads=threads, return_N=True)

        # cc3d 4.1.1's binary_image=True numbers the components of an 8-connected image in
        # another order than raster order (the partition is the same): images take its default.
        binary = not arguments.label_maps and volume.ndim == 3

        def theirs():
            return cc3d.connected_components(volume, connectivity=connectivity, return_N=True,
                                             binary_image=binary)

        peers = {"volccl": lambda: ours(arguments.threads), "volccl-1": lambda: ours(1),
                 "cc3d": theirs}
        if cv2 is not None and volume.ndim == 2:
            peers["opencv"] = lambda: cv2.connectedComponents(volume, connectivity=connectivity,
                                                              ltype=cv2.CV_32S)
        (labels, count), (expected, expected_count) = ours(arguments.threads), theirs()
        if count != expected_count or not np.array_equal(labels, expected):
            print(f"MISMATCH {name} c{connectivity}: volccl {count}, cc3d {expected_count}")
            return 1
        del labels, expected
        times = {peer: [] for peer in peers}
        for round_ in range(arguments.runs + 1):
            for peer, function in peers.items():
                ms = timed(function)
                if round_ > 0:
                    times[peer].append(ms)
        medians = {peer: statistics.median(values) for peer, values in times.items()}
        row = {"volume": name, "connectivity": connectivity, "components": count,
               **{f"{peer}_ms": f"{ms:.3f}" for peer, ms in medians.items()}}
        rows.append(row)
        opencv = f"{medians['opencv']:.1f}" if "opencv" in medians else "-"
        print(f"| {name} | {connectivity} | {medians['volccl']:.1f} | {medians['volccl-1']:.1f} | "
              f"{medians['cc3d']:.1f} | {opencv} | {medians['cc3d'] / medians['volccl']:.2f}× | "
              f"{medians['cc3d'] / medians['volccl-1']:.2f}× |", flush=True)
    if arguments.csv is not None:
        columns = sorted({key for row in rows for key in row},
                         key=lambda k: (k not in ("volume", "connectivity", "components"), k))
        with open(arguments.csv, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
