#!/usr/bin/env python3
"""Prints one Markdown table from volccl-bench's CSV and bench/peers.py's CSV.

    python3 bench/summary.py bench_volccl.csv [bench_cupy.csv]

One line per volume: the median ms of each volccl algorithm and of CuPy, CuPy's median over the
best volccl median (with the algorithm that gave it), the memory floor in ms and the best median
as a multiple of it. A value neither CSV has is shown as "-".
"""

import argparse
import csv
import pathlib
import sys


def read_rows(path):
    with open(path, newline="") as rows:
        return list(csv.DictReader(rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("volccl_csv", type=pathlib.Path, help="volccl-bench --csv output")
    parser.add_argument("cupy_csv", type=pathlib.Path, nargs="?",
                        help="bench/peers.py --csv output, when it ran")
    arguments = parser.parse_args()

    ours = read_rows(arguments.volccl_csv)
    cupy_rows = read_rows(arguments.cupy_csv) if arguments.cupy_csv else []
    cupy = {row["volume"]: float(row["median_ms"]) for row in cupy_rows}
    volumes = list(dict.fromkeys(row["volume"] for row in ours))
    algorithms = list(dict.fromkeys(row["algorithm"] for row in ours))
    median = {(row["volume"], row["algorithm"]): float(row["median_ms"]) for row in ours}
    floor = {row["volume"]: float(row["floor_ms"]) for row in ours if row["floor_ms"]}

    def ms(value, decimals=3):
        return "-" if value is None else f"{value:.{decimals}f}"

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
