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
prints, per case, the median over the rounds of each build and each build's time over A's.
"""

import argparse
import collections
import pathlib
import statistics
import sys
import time

import numpy as np


def run(arguments):
    sys.path.insert(0, str(arguments.parent))
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    import cc3d
    import volccl
    from cpu_interleaved import images

    generated = dict(images())
    options = {} if arguments.as_given else {"binary_image": True}
    for case in arguments.cases:
        name, connectivity = case.rsplit(":", 1)
        connectivity = int(connectivity)
        volume = generated[name] if name in generated else np.load(arguments.dir / f"{name}.npy")

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


def summary(arguments):
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    builds = set()
    for line in arguments.rounds.read_text().splitlines():
        fields = line.split()
        if len(fields) != 7 or fields[3] != "2t":
            continue
        build = fields[0][0]
        builds.add(build)
        times[fields[1], fields[2]][build + "2"].append(float(fields[4]))
        times[fields[1], fields[2]][build + "1"].append(float(fields[6]))
    builds = sorted(builds)
    for (name, connectivity), columns in times.items():
        m = {column: statistics.median(values) for column, values in columns.items()}
        line = f"{name:22s} {connectivity:4s}"
        for threads in "21":
            base = m[builds[0] + threads]
            line += f"  {threads}t A {base:7.2f}"
            for build in builds[1:]:
                median = m[build + threads]
                line += f" {build} {median:7.2f} ({median / base:.2f})"
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
    totals = commands.add_parser("summary")
    totals.add_argument("rounds", type=pathlib.Path)
    arguments = parser.parse_args()
    (run if arguments.command == "run" else summary)(arguments)


if __name__ == "__main__":
    main()
