#!/usr/bin/env python3
"""Prints Markdown tables per connectivity from `volccl bench`'s and bench/peers.py's CSVs.

    python3 bench/summary.py bench_volccl_c26.csv bench_peers_c26.csv bench_volccl_c6.csv ...

The rows of every CSV are pooled: those with algorithm cupy-label are CuPy's; itk, scipy-label
and cc3d are the CPU peers; the others volccl's. Rows of labeling + statistics
(ALGORITHM+STRATEGY, cupy-label+moments) are left to bench/statistics_summary.py. For each
connectivity, in the order the CSVs first give it:

- one line per volume outside the granularity test: the median ms of each volccl algorithm, of
  CuPy and of each CPU peer present, CuPy's median over the best volccl median (with the
  algorithm that gave it), the best CPU peer's over it, the memory floor in ms and the best median
  as a multiple of it; then each algorithm's geometric-mean speed-up over CuPy;
- the granularity test (dataset "granularity"), one line per granularity: the geometric mean over
  the densities of each algorithm's and CuPy's median, and the best algorithm's speed-up over
  CuPy (geometric mean of the per-density ratios).

A value no CSV has is shown as "-".
"""

import argparse
import csv
import math
import pathlib
import sys

CUPY = "cupy-label"
CPU_PEERS = ["itk", "scipy-label", "cc3d"]
PEERS = [CUPY, *CPU_PEERS]


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


def geometric_mean(values):
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def print_table(rows):
    rows = [row for row in rows if "+" not in row["algorithm"]]
    granularity = [row for row in rows if row.get("dataset") == "granularity"]
    rows = [row for row in rows if row.get("dataset") != "granularity"]
    if rows:
        print_volumes(rows)
    if granularity:
        print("\ngranularity test\n")
        print_granularity(granularity)


def print_volumes(rows):
    ours = [row for row in rows if row["algorithm"] not in PEERS]
    peer = {(row["volume"], row["algorithm"]): float(row["median_ms"]) for row in rows
            if row["algorithm"] in PEERS}
    cpu_peers = [p for p in CPU_PEERS if any(key[1] == p for key in peer)]
    volumes = list(dict.fromkeys(row["volume"] for row in ours))
    algorithms = list(dict.fromkeys(row["algorithm"] for row in ours))
    median = {(row["volume"], row["algorithm"]): float(row["median_ms"]) for row in ours}
    floor = {row["volume"]: float(row["floor_ms"]) for row in ours if row["floor_ms"]}

    header = ["volume", *algorithms, "cupy", *cpu_peers, "best speed-up over cupy",
              "over the best CPU peer", "floor", "best x floor"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for volume in volumes:
        medians = {a: median[(volume, a)] for a in algorithms if (volume, a) in median}
        best = min(medians, key=medians.get)
        cupy = peer.get((volume, CUPY))
        speed_up = f"{cupy / medians[best]:.1f}x ({best})" if cupy else "-"
        cpu = [peer[(volume, p)] for p in cpu_peers if (volume, p) in peer]
        over_cpu = "-"
        if cpu:
            ratio = min(cpu) / medians[best]
            over_cpu = f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2g}x"
        x_floor = f"{medians[best] / floor[volume]:.1f}x" if volume in floor else "-"
        cells = [volume, *(ms(medians.get(a)) for a in algorithms), ms(cupy),
                 *(ms(peer.get((volume, p)), 1) for p in cpu_peers), speed_up, over_cpu,
                 ms(floor.get(volume), 4), x_floor]
        print("| " + " | ".join(cells) + " |")
    if any(key[1] == CUPY for key in peer):
        cells = ["geometric-mean speed-up over cupy"]
        for algorithm in algorithms:
            mean = geometric_mean(peer[(v, CUPY)] / median[(v, algorithm)] for v in volumes
                                  if (v, CUPY) in peer and (v, algorithm) in median)
            cells.append("-" if mean is None else f"{mean:.1f}x")
        cells += ["1.0x", *[""] * len(cpu_peers), "", "", "", ""]
        print("| " + " | ".join(cells) + " |")


def print_granularity(rows):
    ours = [row for row in rows if row["algorithm"] not in PEERS]
    algorithms = list(dict.fromkeys(row["algorithm"] for row in ours))
    median = {(row["volume"], row["algorithm"]): float(row["median_ms"]) for row in rows}
    by_granularity = {}
    for row in ours:
        by_granularity.setdefault(int(row["granularity"]), set()).add(row["volume"])
    shape = rows[0]["voxels"]
    header = ["granularity", "volumes", *algorithms, "cupy", "best speed-up over cupy"]
    print(f"geometric means over density 0-100 % ({shape} voxels each)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for granularity in sorted(by_granularity):
        volumes = sorted(by_granularity[granularity])
        means = {a: geometric_mean(median[(v, a)] for v in volumes if (v, a) in median)
                 for a in algorithms + [CUPY]}
        best = min(algorithms, key=lambda a: means[a])
        speed_up = geometric_mean(median[(v, CUPY)] / median[(v, best)] for v in volumes
                                  if (v, CUPY) in median)
        cells = [str(granularity), str(len(volumes)), *(ms(means[a]) for a in algorithms),
                 ms(means[CUPY]), "-" if speed_up is None else f"{speed_up:.1f}x ({best})"]
        print("| " + " | ".join(cells) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", type=pathlib.Path, nargs="+",
                        help="volccl bench --csv and bench/peers.py --csv outputs")
    arguments = parser.parse_args()

    print_per_connectivity(arguments.csv, print_table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
