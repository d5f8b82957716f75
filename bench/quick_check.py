#!/usr/bin/env python3
"""Runs `volccl-bench --quick --device cpu` at one connectivity and checks its CSV and JSON.

    quick_check.py --bench build/bench/volccl-bench --connectivity 8 --workdir DIR

The CI test of the benchmark (ctest bench.quick.cC): the bench must exit 0 after checking every
algorithm's labels, and write a CSV whose header is bench/peers.py's columns and whose rows, one
per algorithm and volume, hold well-formed numbers (positive medians with min <= median <= max,
densities in 0..1, the connectivity asked for). Standard library only.
"""

import argparse
import csv
import json
import math
import pathlib
import subprocess
import sys

COLUMNS = [
    "volume", "voxels", "density", "granularity", "connectivity", "algorithm", "device", "runs",
    "median_ms", "min_ms", "max_ms", "components", "floor_ms", "x_floor", "allocation_ms",
    "initialization_ms", "merge_ms", "compression_ms", "relabel_ms", "final_labeling_ms",
    "statistics_ms",
]


def check_row(row, connectivity):
    """Returns what is wrong with one CSV row, or None."""
    numbers = {}
    for column in ("voxels", "density", "runs", "median_ms", "min_ms", "max_ms", "components",
                   "allocation_ms", "initialization_ms", "merge_ms", "compression_ms",
                   "relabel_ms", "final_labeling_ms"):
        try:
            numbers[column] = float(row[column])
        except (TypeError, ValueError):
            return f"{column} is {row[column]!r}, not a number"
        if not math.isfinite(numbers[column]) or numbers[column] < 0:
            return f"{column} is {row[column]!r}"
    if int(row["connectivity"]) != connectivity:
        return f"connectivity {row['connectivity']}, expected {connectivity}"
    if row["device"] != "cpu" or not row["algorithm"] or not row["volume"]:
        return "device, algorithm or volume missing"
    if not numbers["min_ms"] <= numbers["median_ms"] <= numbers["max_ms"]:
        return "median outside min..max"
    if numbers["median_ms"] <= 0 or numbers["runs"] < 1 or numbers["density"] > 1:
        return "median, runs or density out of range"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", required=True, help="the volccl-bench binary")
    parser.add_argument("--connectivity", type=int, required=True, choices=(4, 8, 6, 18, 26))
    parser.add_argument("--workdir", type=pathlib.Path, required=True)
    parser.add_argument("--statistics", action="store_true",
                        help="run the bench with --statistics (rows ALGORITHM+STRATEGY too)")
    arguments = parser.parse_args()
    arguments.workdir.mkdir(parents=True, exist_ok=True)
    stem = f"quick_c{arguments.connectivity}" + ("_statistics" if arguments.statistics else "")
    csv_path = arguments.workdir / f"{stem}.csv"
    json_path = arguments.workdir / f"{stem}.json"
    run = subprocess.run([arguments.bench, "--quick", "--device", "cpu", "--connectivity",
                          str(arguments.connectivity), "--csv", str(csv_path), "--json",
                          str(json_path)] + (["--statistics"] if arguments.statistics else []),
                         capture_output=True, text=True, timeout=600)
    print(run.stdout, end="")
    if run.returncode != 0:
        print(f"FAIL: volccl-bench exited {run.returncode}: {run.stderr.strip()}")
        return 1
    with open(csv_path, newline="") as file:
        reader = csv.DictReader(file)
        header, rows = reader.fieldnames, list(reader)
    if header != COLUMNS:
        print(f"FAIL: CSV header {header}, expected {COLUMNS}")
        return 1
    report = json.loads(json_path.read_text())
    expected_rows = len(report["volumes"]) * len({row["algorithm"] for row in rows})
    if not rows or len(rows) != expected_rows or len(report["results"]) != len(rows):
        print(f"FAIL: {len(rows)} CSV rows, {len(report['results'])} JSON results, "
              f"{len(report['volumes'])} volumes")
        return 1
    for number, row in enumerate(rows, start=2):
        problem = check_row(row, arguments.connectivity)
        if problem:
            print(f"FAIL: {csv_path} line {number}: {problem}")
            return 1
    if arguments.statistics and not any(row["algorithm"].endswith("+late") for row in rows):
        print("FAIL: no ALGORITHM+late rows with --statistics")
        return 1
    print(f"ok: {len(rows)} well-formed rows in {csv_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
