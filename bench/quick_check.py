#!/usr/bin/env python3
"""Runs `volccl bench --quick --device cpu --peers itk` at one connectivity and checks its CSV
and JSON.

    quick_check.py --volccl build/apps/volccl --connectivity 8 --workdir DIR

The CI test of the benchmark (ctest bench.quick.cC): the bench must exit 0 after checking every
algorithm's labels, and write a CSV whose header is bench/peers.py's columns and whose rows, one
per algorithm (and ITK, where it has the connectivity) and volume, hold well-formed numbers
(positive medians with min <= median <= max, densities in 0..1, the connectivity asked for, step
medians on volccl's rows). Then it times a uint32 Fortran-order .npy.gz mask written here (as
cc3d's connectomics volume is stored) and checks the extent and component count the bench
reads from it, and that a dataset of the other dimension is refused. Standard library only.
"""

import argparse
import csv
import gzip
import json
import math
import pathlib
import struct
import subprocess
import sys

COLUMNS = [
    "volume", "dataset", "voxels", "density", "granularity", "x", "connectivity", "algorithm",
    "device", "runs", "median_ms", "min_ms", "max_ms", "components", "iterations", "floor_ms",
    "x_floor", "upload_ms", "download_ms", "allocation_ms", "initialization_ms", "merge_ms",
    "compression_ms", "relabel_ms", "final_labeling_ms", "statistics_ms",
]
STEPS = ["allocation_ms", "initialization_ms", "merge_ms", "compression_ms", "relabel_ms",
         "final_labeling_ms"]


def check_row(row, connectivity):
    """Returns what is wrong with one CSV row, or None."""
    numbers = {}
    columns = ["voxels", "density", "runs", "median_ms", "min_ms", "max_ms", "components"]
    if row["algorithm"] != "itk":
        columns += STEPS
    elif any(row[column] for column in STEPS):
        return "steps on ITK's row"
    for column in columns:
        try:
            numbers[column] = float(row[column])
        except (TypeError, ValueError):
            return f"{column} is {row[column]!r}, not a number"
        if not math.isfinite(numbers[column]) or numbers[column] < 0:
            return f"{column} is {row[column]!r}"
    if int(row["connectivity"]) != connectivity:
        return f"connectivity {row['connectivity']}, expected {connectivity}"
    if row["device"] != "cpu" or not row["algorithm"] or not row["volume"] or not row["dataset"]:
        return "device, algorithm, volume or dataset missing"
    if not numbers["min_ms"] <= numbers["median_ms"] <= numbers["max_ms"]:
        return "median outside min..max"
    if numbers["median_ms"] <= 0 or numbers["runs"] < 1 or numbers["density"] > 1:
        return "median, runs or density out of range"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--volccl", required=True, help="the volccl binary")
    parser.add_argument("--connectivity", type=int, required=True, choices=(4, 8, 6, 18, 26))
    parser.add_argument("--workdir", type=pathlib.Path, required=True)
    parser.add_argument("--statistics", action="store_true",
                        help="run the bench with --statistics (rows ALGORITHM+STRATEGY too)")
    arguments = parser.parse_args()
    arguments.workdir.mkdir(parents=True, exist_ok=True)
    stem = f"quick_c{arguments.connectivity}" + ("_statistics" if arguments.statistics else "")
    csv_path = arguments.workdir / f"{stem}.csv"
    json_path = arguments.workdir / f"{stem}.json"
    run = subprocess.run([arguments.volccl, "bench", "--quick", "--device", "cpu", "--peers",
                          "itk", "--connectivity", str(arguments.connectivity), "--csv",
                          str(csv_path), "--json", str(json_path)]
                         + (["--statistics"] if arguments.statistics else []),
                         capture_output=True, text=True, timeout=600)
    print(run.stdout, end="")
    if run.returncode != 0:
        print(f"FAIL: volccl bench exited {run.returncode}: {run.stderr.strip()}")
        return 1
    with open(csv_path, newline="") as file:
        reader = csv.DictReader(file)
        header, rows = reader.fieldnames, list(reader)
    if header != COLUMNS:
        print(f"FAIL: CSV header {header}, expected {COLUMNS}")
        return 1
    report = json.loads(json_path.read_text())
    if arguments.connectivity != 18 and not any(row["algorithm"] == "itk" for row in rows):
        print("FAIL: no ITK rows with --peers itk")
        return 1
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
    if check_refusal(arguments) != 0:
        return 1
    if arguments.connectivity in (6, 18, 26):
        return check_npy(arguments)
    return 0


def check_refusal(arguments):
    """A dataset of the other dimension is refused before any work: exit 1, one error line that
    names it, and no CSV left behind."""
    dataset = "oasis" if arguments.connectivity in (4, 8) else "ridge"
    csv_path = arguments.workdir / f"refused_c{arguments.connectivity}.csv"
    csv_path.unlink(missing_ok=True)
    run = subprocess.run([arguments.volccl, "bench", "--device", "cpu", "--connectivity",
                          str(arguments.connectivity), "--datasets", dataset, "--csv",
                          str(csv_path)], capture_output=True, text=True, timeout=60)
    expected = f"volccl: error: --datasets {dataset} holds"
    if run.returncode != 1 or not run.stderr.startswith(expected) or csv_path.exists():
        print(f"FAIL: --datasets {dataset} at {arguments.connectivity}: exit {run.returncode}, "
              f"stderr {run.stderr.strip()!r}, CSV left: {csv_path.exists()}")
        return 1
    print(f"ok: --datasets {dataset} refused at {arguments.connectivity}-connectivity")
    return 0


def write_npy_gz(path, shape, values):
    """A gzip-compressed uint32 .npy in Fortran order; `values` maps (x, y, z) to a value."""
    header = ("{'descr': '<u4', 'fortran_order': True, 'shape': %s, }" % (tuple(shape),))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    body = bytearray(4 * shape[0] * shape[1] * shape[2])
    for (x, y, z), value in values.items():
        struct.pack_into("<I", body, 4 * (x + shape[0] * (y + shape[1] * z)), value)
    with gzip.open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
                  + bytes(body))


def check_npy(arguments):
    """A 5 x 4 x 3 multi-label volume: a run along x at (0..4, 0, 0) of two labels, and the
    corner (4, 3, 2): two components at every connectivity, when read in Fortran order."""
    path = arguments.workdir / "fortran.npy.gz"
    values = {(x, 0, 0): 7 if x < 3 else 70000 for x in range(5)}
    values[4, 3, 2] = 123456
    write_npy_gz(path, (5, 4, 3), values)
    json_path = arguments.workdir / f"fortran_c{arguments.connectivity}.json"
    run = subprocess.run([arguments.volccl, "bench", "--device", "cpu", "--connectivity",
                          str(arguments.connectivity), "--npy", f"fortran={path}", "--volumes",
                          "fortran", "--runs", "1", "--warmup", "0", "--step-runs", "1",
                          "--json", str(json_path)], capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        print(f"FAIL: volccl bench --npy exited {run.returncode}: {run.stderr.strip()}")
        return 1
    report = json.loads(json_path.read_text())
    volume = report["volumes"][0]
    counts = {result["components"] for result in report["results"]}
    if volume["extent"] != [5, 4, 3] or counts != {2} or abs(volume["density"] - 6 / 60) > 1e-9:
        print(f"FAIL: the Fortran-order .npy.gz read as {volume}, components {counts}; "
              "expected extent [5, 4, 3], density 0.1, 2 components")
        return 1
    print(f"ok: {path.name}: extent {volume['extent']}, {counts.pop()} components")
    return 0


if __name__ == "__main__":
    sys.exit(main())
