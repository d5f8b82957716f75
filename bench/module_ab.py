#!/usr/bin/env python3
"""Two builds of the Python module compared on the CPU, case by case: one process per build
and round, the builds alternating, so that both see the same machine.

    bench/module_ab.py run PARENT DIR --cases connectomics:6 image-2048-d90-g1:4 ... >> ROUNDS
    bench/module_ab.py summary ROUNDS

`run` imports volccl from PARENT (a folder holding a `volccl` package), labels every case after
checking its labels against cc3d's, and prints "CASE cC 2t MS 1t MS": the median of --runs runs
with 2 threads and with 1. A case is NAME:CONNECTIVITY, NAME a DIR/NAME.npy volume or one of
cpu_interleaved.py's 2048² images. Masks are labeled with binary_image=True; --as-given keeps
the package's default (uint8 0/1 arrays are then label maps). Prefix each round's lines with
the build's letter and the round (A1, B1, A2, ...), e.g. with `sed "s/^/A1 /"`. `summary`
prints, per case, the median over the rounds of each build, each build's median over A's, and
the geometric mean over the rounds of its time over A's in the same round ("r"). On the GPU
machine the build run first in a round runs 3-5 % faster than the one after it, so that the
rounds must alternate which build goes first, an even number of them, and "r" is the figure to
read.

With --device cuda (on the GPU machine, CuPy and cuCIM installed) each case is labeled on the GPU
from a device array, its labels checked against cuCIM's `measure.label` (the peer of the GPU's
label-map targets) and timed by CUDA events; it prints "CASE cC cuda MS".
"""

import argparse
import collections
import functools
import pathlib
import statistics
import sys
import time

import numpy as np


@functools.lru_cache(maxsize=None)
def generated_images():
    """cpu_interleaved.py's 2048² images by name, made once a process."""
    from cpu_interleaved import images  # imports cc3d, which the GPU machine lacks

    return dict(images())


def load_case(arguments, case):
    """(name, connectivity, volume) of NAME:CONNECTIVITY: DIR/NAME.npy, else a 2048² image."""
    name, connectivity = case.rsplit(":", 1)
    path = arguments.dir / f"{name}.npy"
    volume = np.load(path) if path.exists() else generated_images()[name]
    return name, int(connectivity), volume


def run(arguments):
    sys.path.insert(0, str(arguments.parent))
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    import volccl

    if arguments.device == "cuda":
        run_cuda(arguments, volccl)
        return
    import cc3d

    options = {} if arguments.as_given else {"binary_image": True}
    for case in arguments.cases:
        name, connectivity, volume = load_case(arguments, case)

        def label(threads):
            return volccl.connected_components(volume, connectivity=connectivity, device="cpu",
                                               threads=threads, **options)

        expected = cc3d.connected_components(volume, connectivity=connectivity,
                                             binary_image=bool(options) and volume.ndim == 3)
        if not np.array_equal(label(2), expected):
            sys.exit(f"{case}: labels differ from cc3d's")
        medians = []
        for threads in (2, 1):
            label(threads)
            times = []
            for _ in range(arguments.runs):
                start = time.perf_counter()
                label(threads)
                times.append((time.perf_counter() - start) * 1e3)
            medians.append(statistics.median(times))
        print(f"{name} c{connectivity} 2t {medians[0]:.2f} 1t {medians[1]:.2f}", flush=True)


def run_cuda(arguments, volccl):
    import cupy
    from cucim.skimage import measure

    # skimage's connectivity is the number of axes a step may change.
    skimage_connectivity = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}
    options = {} if arguments.as_given else {"binary_image": True}
    for case in arguments.cases:
        name, connectivity, host = load_case(arguments, case)
        volume = cupy.asarray(host)

        def label():
            return volccl.connected_components(volume, connectivity=connectivity, **options)

        theirs = volume if arguments.as_given else volume != 0
        expected = measure.label(theirs, background=0,
                                 connectivity=skimage_connectivity[connectivity])
        if not bool((label() == expected).all()):
            sys.exit(f"{case}: labels differ from cuCIM's")
        del theirs, expected
        label()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        times = []
        for _ in range(arguments.runs):
            start.record()
            label()
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop))
        print(f"{name} c{connectivity} cuda {statistics.median(times):.3f}", flush=True)
        del volume
        cupy.get_default_memory_pool().free_all_blocks()


def summary(arguments):
    # (case, connectivity) -> (column, build) -> round -> ms
    times = collections.defaultdict(lambda: collections.defaultdict(dict))
    builds = set()
    # "B1 CASE cC 2t MS 1t MS" from the CPU, "B1 CASE cC cuda MS" from the GPU.
    for line in arguments.rounds.read_text().splitlines():
        fields = line.split()
        if len(fields) == 7 and fields[3] == "2t":
            columns = {"2t": fields[4], "1t": fields[6]}
        elif len(fields) == 5 and fields[3] == "cuda":
            columns = {"cuda": fields[4]}
        else:
            continue
        build, round_ = fields[0][0], fields[0][1:]
        builds.add(build)
        for column, ms in columns.items():
            times[fields[1], fields[2]][column, build][round_] = float(ms)
    builds = sorted(builds)
    for (name, connectivity), cells in times.items():
        line = f"{name:22s} {connectivity:4s}"
        for column in dict.fromkeys(column for column, _ in cells):
            base = cells.get((column, builds[0]))
            if base is None:
                continue
            base_median = statistics.median(base.values())
            line += f"  {column} {builds[0]} {base_median:7.2f}"
            for build in builds[1:]:
                rounds = cells.get((column, build))
                if rounds is None:
                    continue
                median = statistics.median(rounds.values())
                ratio = statistics.geometric_mean(
                    ms / base[r] for r, ms in rounds.items() if r in base)
                line += f" {build} {median:7.2f} ({median / base_median:.2f}, r {ratio:.3f})"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    timing = commands.add_parser("run")
    timing.add_argument("parent", type=pathlib.Path)
    timing.add_argument("dir", type=pathlib.Path)
    timing.add_argument("--cases", nargs="+", required=True)
    timing.add_argument("--runs", type=int, default=9)
    timing.add_argument("--as-given", action="store_true")
    timing.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    totals = commands.add_parser("summary")
    totals.add_argument("rounds", type=pathlib.Path)
    arguments = parser.parse_args()
    (run if arguments.command == "run" else summary)(arguments)


if __name__ == "__main__":
    main()
