#!/usr/bin/env python3
"""Compares the CSVs of bench/compare_builds.sh: for every connectivity, algorithm and volume,
the median time of build B over build A (each build's median of its rounds' medians), then per
algorithm and connectivity the geometric mean and the largest of those ratios.

Usage: compare_builds.py DIR [--limit 1.02]   exits 1 when a geometric mean exceeds the limit.
"""
import argparse
import collections
import csv
import math
import pathlib
import re
import statistics
import sys


def read(folder: pathlib.Path):
    medians = collections.defaultdict(list)  # (build, connectivity, algorithm, volume) -> [ms]
    for path in sorted(folder.glob("*-c*-r*.csv")):
        match = re.fullmatch(r"([AB])-c(\d+)-r(\d+)\.csv", path.name)
        if not match:
            continue
        build, connectivity = match.group(1), int(match.group(2))
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                if row.get("device") != "cuda" or not row.get("median_ms"):
                    continue
                key = (build, connectivity, row["algorithm"], row["volume"])
                medians[key].append(float(row["median_ms"]))
    return medians


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--limit", type=float, default=1.02)
    args = parser.parse_args()
    medians = read(args.folder)
    ratios = collections.defaultdict(list)  # (connectivity, algorithm) -> [(ratio, volume)]
    for (build, connectivity, algorithm, volume), times in medians.items():
        if build != "A":
            continue
        other = medians.get(("B", connectivity, algorithm, volume))
        if not other:
            continue
        ratios[(connectivity, algorithm)].append(
            (statistics.median(other) / statistics.median(times), volume))
    if not ratios:
        print("compare_builds.py: no pairs of results found in", args.folder)
        return 1
    worst = 1.0
    print("connectivity,algorithm,volumes,geomean_B_over_A,max_B_over_A,max_volume")
    for (connectivity, algorithm), pairs in sorted(ratios.items()):
        geomean = math.exp(sum(math.log(r) for r, _ in pairs) / len(pairs))
        largest, volume = max(pairs)
        worst = max(worst, geomean)
        print(f"{connectivity},{algorithm},{len(pairs)},{geomean:.4f},{largest:.4f},{volume}")
    print(f"compare_builds.py: the largest geometric mean of B over A is {worst:.4f} "
          f"(limit {args.limit})")
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
