#!/usr/bin/env python3
"""Draws the benchmark's figures from volccl-bench's and bench/peers.py's CSVs.

    python3 bench/plot.py --out bench/plots RESULTS_DIR/bench_volccl_c8.csv RESULTS_DIR/bench_cupy_c8.csv ...

- granularity_cC.png, for each connectivity C whose rows are YACCLAB's granularity images (a
  density and a granularity per row): median milliseconds against density, one panel per
  granularity, one line per algorithm and one for CuPy (the BUF/BKE paper's Fig. 15/17).
- steps_cC.png, for each connectivity: each volume's or image's step medians stacked per
  algorithm (the paper's Fig. 13/14); for the granularity images only density 50 %.

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
STEPS = ["allocation_ms", "initialization_ms", "merge_ms", "compression_ms", "relabel_ms",
         "final_labeling_ms"]


def read_rows(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as file:
            rows += list(csv.DictReader(file))
    return rows


def plot_granularity(rows, connectivity, out):
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
    figure.suptitle(f"{connectivity}-connectivity, 2048² images")
    figure.tight_layout()
    path = out / f"granularity_c{connectivity}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def plot_steps(rows, connectivity, out):
    ours = [row for row in rows if row["algorithm"] != CUPY]
    if any(row["granularity"] and row["volume"].startswith("image-") for row in ours):
        ours = [row for row in ours if "-d50-" in row["volume"]]
    volumes = list(dict.fromkeys(row["volume"] for row in ours))
    algorithms = list(dict.fromkeys(row["algorithm"] for row in ours))
    step_of = {(row["volume"], row["algorithm"]): row for row in ours}
    figure, axes = plt.subplots(1, len(volumes), figsize=(max(4, 1 + 0.6 * len(algorithms)) *
                                                           len(volumes) / 1.5, 4), squeeze=False)
    for axis, volume in zip(axes[0], volumes):
        bottoms = [0.0] * len(algorithms)
        for step in STEPS:
            heights = [float(step_of[(volume, a)][step]) for a in algorithms]
            axis.bar(algorithms, heights, bottom=bottoms, label=step[:-3].replace("_", " "))
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        axis.set_title(volume, fontsize=9)
        axis.tick_params(axis="x", labelrotation=60, labelsize=8)
    axes[0][0].set_ylabel("ms (step medians)")
    axes[0][-1].legend(fontsize=7)
    figure.suptitle(f"{connectivity}-connectivity: steps")
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
        if all(row["granularity"] for row in subset) and all(
                row["volume"].startswith("image-") for row in subset):
            print(plot_granularity(subset, connectivity, arguments.out))
        print(plot_steps(subset, connectivity, arguments.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
