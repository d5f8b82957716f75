#!/usr/bin/env python3
"""Prints the statistics benchmark as Markdown: labeling alone against labeling + statistics.

    python3 bench/statistics_summary.py bench_volccl_c26.csv bench_peers_c26.csv ...

From volccl bench --statistics and bench/peers.py --statistics CSVs (rows ALGORITHM,
ALGORITHM+late|fused|early and cupy-label+moments), one table per connectivity, one line per
volume and algorithm: the median ms of labeling alone, of labeling + statistics by each strategy
with its ratio to labeling alone, CuPy's label + moments, and CuPy's median over volccl's fastest
labeling + statistics on that volume. A CuPy time that is a lower bound (peers.py
--statistics-timeout stopped the route) is shown as "> ms", and the speed-up as "> N x".
"""

import argparse
import pathlib
import sys

from summary import print_per_connectivity

CUPY_STATISTICS = "cupy-label+moments"
STRATEGIES = ("late", "fused", "early")


def print_table(rows):
    median = {(row["volume"], row["algorithm"]): float(row["median_ms"]) for row in rows}
    at_least = {row["volume"] for row in rows
                if row["algorithm"] == CUPY_STATISTICS and row.get("lower_bound") == "1"}
    volumes = list(dict.fromkeys(row["volume"] for row in rows))
    algorithms = list(dict.fromkeys(row["algorithm"] for row in rows
                                    if "+" not in row["algorithm"]
                                    and not row["algorithm"].startswith("cupy")))
    header = ["volume", "algorithm", "labeling", *(f"+ {s}" for s in STRATEGIES),
              "CuPy label + moments", "speed-up over CuPy"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for volume in volumes:
        measured = {key[1]: value for key, value in median.items()
                    if key[0] == volume and "+" in key[1] and not key[1].startswith("cupy")}
        if not measured:
            continue
        fastest = min(measured, key=measured.get)
        cupy = median.get((volume, CUPY_STATISTICS))
        more = "> " if volume in at_least else ""
        for algorithm in algorithms:
            alone = median.get((volume, algorithm))
            if alone is None or not any(f"{algorithm}+{s}" in measured for s in STRATEGIES):
                continue
            cells = [volume, algorithm, f"{alone:.3f}"]
            for strategy in STRATEGIES:
                value = measured.get(f"{algorithm}+{strategy}")
                cells.append("-" if value is None else f"{value:.3f} ({value / alone:.2f}x)")
            cells.append("-" if cupy is None else f"{more}{cupy:.2f}")
            value = measured.get(f"{algorithm}+late")
            cells.append("-" if cupy is None or value is None
                         else f"{more}{cupy / value:.1f}x (late)")
            print("| " + " | ".join(cells) + " |")
        if cupy is not None:
            print(f"| {volume} | fastest: {fastest} | | | | | {more}{cupy:.2f} | "
                  f"**{more}{cupy / measured[fastest]:.1f}x** |")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", type=pathlib.Path, nargs="+")
    arguments = parser.parse_args()
    print_per_connectivity(arguments.csv, print_table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
