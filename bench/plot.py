#!/usr/bin/env python3
"""Draws the benchmark's figures from `volccl bench`'s and bench/peers.py's CSVs.

    python3 bench/plot.py --out bench/plots OUT/bench_volccl_c8.csv OUT/bench_peers_c8.csv ...

- granularity_cC.png, for each connectivity C with rows of YACCLAB's granularity test (dataset
  "granularity"): median milliseconds against density, one panel per granularity, one line per
  algorithm and one for CuPy (the BUF/BKE paper's Fig. 15/17).
- steps_cC.png, for each connectivity with other datasets: per dataset, the mean over its
  volumes of each step's median, stacked per algorithm (the paper's Fig. 13/14, where YACCLAB
  averages over each dataset's images), with CuPy's mean total as a line where it was timed.

Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import collections
import csv
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

CUPY = "cupy-label"
CPU_PEERS = ["itk", "scipy-label", "cc3d"]
STEPS = ["allocation_ms", "initialization_ms", "merge_ms", "compression_ms", "relabel_ms",
         "final_labeling_ms"]


def read_rows(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as file:
            rows += list(csv.DictReader(file))
    return rows


def plot_granularity(rows, connectivity, out):
    rows = [row for row in rows if row["algorithm"] not in CPU_PEERS and "+" not in row["algorithm"]]
    by_granularity = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in rows:
        density = round(float(row["density"]) * 100)
        by_granularity[int(row["granularity"])][row["algorithm"]].append(
            (density, float(row["median_ms"])))
    granularities = sorted(by_granularity)
    figure, axes = plt.subplots(1, len(granularities), figsize=(5 * len(granularities), 4),
                                sharey=True, squeeze=False)
    for axis, granularity in zip(axes[0], granularities):
        for algorithm, points in sorted(by_granularity[granularity].items()):
            points.sort()
            axis.plot([d for d, _ in points], [ms for _, ms in points], marker="o",
                      markersize=3, label="CuPy" if algorithm == CUPY else algorithm,
                      linestyle="--" if algorithm == CUPY else "-")
        axis.set_title(f"granularity {granularity}")
        axis.set_xlabel("density (%)")
        axis.set_yscale("log")
        axis.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("median ms (log)")
    axes[0][-1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1))
    voxels = int(rows[0]["voxels"])
    shape = "2048² images" if voxels == 2048 * 2048 else f"{round(voxels ** (1 / 3))}³ volumes"
    figure.suptitle(f"{connectivity}-connectivity, granularity test, {shape}")
    figure.tight_layout()
    path = out / f"granularity_c{connectivity}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_steps(rows, connectivity, out):
    ours = [row for row in rows if row["algorithm"] not in [CUPY, *CPU_PEERS]
            and "+" not in row["algorithm"] and row["allocation_ms"]]
    cupy = [row for row in rows if row["algorithm"] == CUPY]
    datasets = list(dict.fromkeys(row["dataset"] for row in ours))
    algorithms = list(dict.fromkeys(row["algorithm"] for row in ours))
    figure, axes = plt.subplots(1, len(datasets), squeeze=False,
                                figsize=(max(3.5, 0.5 * len(algorithms) + 1.5) * len(datasets), 4))
    for axis, dataset in zip(axes[0], datasets):
        volumes = {row["volume"] for row in ours if row["dataset"] == dataset}

        def mean(column, algorithm):
            values = [float(row[column]) for row in ours
                      if row["dataset"] == dataset and row["algorithm"] == algorithm]
            return sum(values) / len(values)
        bottoms = [0.0] * len(algorithms)
        for step in STEPS:
            heights = [mean(step, a) for a in algorithms]
            axis.bar(algorithms, heights, bottom=bottoms, label=step[:-3].replace("_", " "))
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        cupy_times = [float(row["median_ms"]) for row in cupy if row["volume"] in volumes]
        if cupy_times:
            axis.axhline(sum(cupy_times) / len(cupy_times), color="black", linestyle="--",
                         label="CuPy (mean)")
        axis.set_title(f"{dataset} ({len(volumes)} volume{'s' if len(volumes) > 1 else ''})",
                       fontsize=9)
        axis.tick_params(axis="x", labelrotation=60, labelsize=8)
    axes[0][0].set_ylabel("ms (mean of the step medians)")
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    figure.suptitle(f"{connectivity}-connectivity: steps per dataset")
    figure.tight_layout()
    path = out / f"steps_c{connectivity}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", type=pathlib.Path, nargs="+")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for the PNGs")
    arguments = parser.parse_args()
    arguments.out.mkdir(parents=True, exist_ok=True)
    rows = read_rows(arguments.csv)
    for connectivity in dict.fromkeys(row["connectivity"] for row in rows):
        subset = [row for row in rows if row["connectivity"] == connectivity]
        granularity = [row for row in subset if row["dataset"] == "granularity"]
        others = [row for row in subset if row["dataset"] != "granularity"]
        if granularity:
            print(plot_granularity(granularity, connectivity, arguments.out))
        if any(row["allocation_ms"] for row in others):
            print(plot_steps(others, connectivity, arguments.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
