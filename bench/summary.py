#!/usr/bin/env python3
"""Prints one Markdown table per connectivity from volccl-bench's and bench/peers.py's CSVs.

    python3 bench/summary.py bench_volccl_c26.csv bench_cupy_c26.csv bench_volccl_c6.csv ...

The rows of every CSV are pooled: those with algorithm cupy-label are CuPy's, the others
volccl's; rows of labeling + statistics (ALGORITHM+STRATEGY, cupy-label+moments) are left to
bench/statistics_summary.py. For each connectivity, in the order the CSVs first give it, one line per volume: the
median ms of each volccl algorithm and of CuPy, CuPy's median over the best volccl median (with
the algorithm that gave it), the memory floor in ms and the best median as a multiple of it; then
a last line with each algorithm's geometric-mean speed-up over CuPy across the volumes. A value
no CSV has is shown as "-".
"""

import argparse
import csv
import math
import pathlib
import sys

CUPY = "cupy-label"


def read_rows(path):
    with open(path, newline="") as rows:
        return list(csv.DictReader(rows))


def print_per_connectivity(paths, print_table):
    """Pools the rows of the CSVs at `paths` and calls print_table once per connectivity, in
    the order the CSVs first give it, under a heading."""
    rows = [row for path in paths for row in read_rows(path)]
    connectivities = list(dict.fromkeys(row["connectivity"] for row in rows))
    for index, connectivity in enumerate(connectivities):
        print(("\n" if index else "") + f"{connectivity}-connectivity\n")
        print_table([row for row in rows if row["connectivity"] == connectivity])


def ms(value, decimals=3):
    return "-" if value is None else f"{value:.{decimals}f}"


def print_table(rows):
    rows = [row for row in rows if "+" not in row["algorithm"]]
    ours = [row for row in rows if row["algorithm"] != CUPY]
    cupy = {row["volume"]: float(row["median_ms"]) for row in rows if row["algorithm"] == CUPY}
    volumes = list(dict.fromkeys(row["volume"] for row in ours))
    algorithms = list(dict.fromkeys(row["algorithm"] for row in ours))
    median = {(row["volume"], row["algorithm"]): float(row["median_ms"]) for row in ours}
    floor = {row["volume"]: float(row["floor_ms"]) for row in ours if row["floor_ms"]}

    header = ["volume", *algorithms, "cupy", "best speed-up over cupy", "floor",
              "best x floor"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for volume in volumes:
        medians = {a: median[(volume, a)] for a in algorithms if (volume, a) in median}
        best = min(medians, key=medians.get)
        speed_up = (f"{cupy[volume] / medians[best]:.1f}x ({best})" if volume in cupy else "-")
        x_floor = f"{medians[best] / floor[volume]:.1f}x" if volume in floor else "-"
        cells = [volume, *(ms(medians.get(a)) for a in algorithms), ms(cupy.get(volume)),
                 speed_up, ms(floor.get(volume), 4), x_floor]
        print("| " + " | ".join(cells) + " |")
    if cupy:
        cells = ["geometric-mean speed-up over cupy"]
        for algorithm in algorithms:
            ratios = [cupy[v] / median[(v, algorithm)] for v in volumes
                      if v in cupy and (v, algorithm) in median]
            mean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
            cells.append("-" if mean is None else f"{mean:.1f}x")
        cells += ["1.0x", "", "", ""]
        print("| " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", type=pathlib.Path, nargs="+",
                        help="volccl-bench --csv and bench/peers.py --csv outputs")
    arguments = parser.parse_args()

    print_per_connectivity(arguments.csv, print_table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
