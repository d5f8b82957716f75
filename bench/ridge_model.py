#!/usr/bin/env python3
"""The LE/TM paper's evaluation on its Ridge families (Sec. IV-C, V-C and Eq. 18), from the CSVs
of `volccl bench --connectivity 8 --datasets ridge --ridge-side N` at several sides N.

    python3 bench/ridge_model.py --out OUT OUT/ridge_1024.csv OUT/ridge_2048.csv ...

Writes to OUT:
- ridge_families_N.png for each of the two largest sides N: one panel per family (Leveling, Scaling,
  Subdivision, RandomInstancing, RandomMerging, Spiral), the median milliseconds of each
  algorithm against the member's free parameter x (the paper's Fig. 7-8);
- ridge_model.png: per algorithm, the mean and the standard deviation over all family images of
  a side against the side's pixel count, with the fitted f(x) = a + b x^c (Eq. 18, least squares
  over every image of every side, as the paper fits its 60780 images);
- ridge_model.md: the fitted a, b, c per algorithm for the mean (x in megapixels, f in ms) and
  the means and standard deviations per side (the paper's Tables VI-VIII).

Needs numpy, scipy and matplotlib (Debian: python3-numpy, python3-scipy, python3-matplotlib).
"""

import argparse
import collections
import csv
import pathlib
import statistics
import sys
import warnings

import matplotlib
import numpy as np
import scipy.optimize

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

FAMILIES = ["leveling", "scaling", "subdivision", "random-instancing", "random-merging",
            "spiral"]
X_LABELS = {"leveling": "level l", "scaling": "scale λ", "subdivision": "subdivisions s",
            "random-instancing": "probability p", "random-merging": "probability p",
            "spiral": "scale λ"}


def read_rows(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as file:
            rows += [row for row in csv.DictReader(file)
                     if row["dataset"].startswith("ridge-") and "+" not in row["algorithm"]]
    if not rows:
        raise SystemExit("ridge_model.py: no ridge-* rows in the CSVs")
    return rows


def side_of(row):
    return round(int(row["voxels"]) ** 0.5)


def plot_families(rows, side, out):
    rows = [row for row in rows if side_of(row) == side]
    algorithms = list(dict.fromkeys(row["algorithm"] for row in rows))
    figure, axes = plt.subplots(2, 3, figsize=(15, 8))
    for axis, family in zip(axes.flat, FAMILIES):
        for algorithm in algorithms:
            points = sorted((float(row["x"]), float(row["median_ms"])) for row in rows
                            if row["dataset"] == f"ridge-{family}"
                            and row["algorithm"] == algorithm)
            axis.plot([x for x, _ in points], [ms for _, ms in points], marker="o",
                      markersize=3, label=algorithm)
        axis.set_title(family)
        axis.set_xlabel(X_LABELS[family])
        axis.set_ylabel("median ms")
        axis.grid(True, alpha=0.3)
    axes.flat[2].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1))
    figure.suptitle(f"Ridge families at {side}x{side}, 8-connectivity")
    figure.tight_layout()
    path = out / f"ridge_families_{side}.png"
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def model(x, a, b, c):
    return a + b * np.power(x, c)


def fit(xs, ys):
    """a, b, c of Eq. 18 by least squares; None when the fit does not converge."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    # With as many points as parameters the covariance is undefined; the fit itself is not.
    warnings.simplefilter("ignore", scipy.optimize.OptimizeWarning)
    try:
        parameters, _ = scipy.optimize.curve_fit(model, xs, ys, p0=(ys.min(), 1.0, 1.0),
                                                 maxfev=20000)
    except (RuntimeError, scipy.optimize.OptimizeWarning):
        return None
    return parameters


def model_tables(rows, out):
    """Fits the model per algorithm, draws ridge_model.png and returns the Markdown."""
    algorithms = list(dict.fromkeys(row["algorithm"] for row in rows))
    sides = sorted({side_of(row) for row in rows})
    times = collections.defaultdict(list)  # (algorithm, side) -> medians of every image
    for row in rows:
        times[row["algorithm"], side_of(row)].append(float(row["median_ms"]))
    lines = ["| algorithm | " + " | ".join(f"{s}² mean ms | σ" for s in sides)
             + " | a (ms) | b | c |",
             "|---|" + "---|---|" * len(sides) + "---|---|---|"]
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for algorithm in algorithms:
        means = [statistics.mean(times[algorithm, s]) for s in sides]
        deviations = [statistics.pstdev(times[algorithm, s]) for s in sides]
        xs = [s * s / 1e6 for s in sides for _ in times[algorithm, s]]
        ys = [t for s in sides for t in times[algorithm, s]]
        parameters = fit(xs, ys) if len(sides) >= 2 else None
        deviation_fit = fit([s * s / 1e6 for s in sides], deviations) if len(sides) >= 3 else None
        cells = [f"{m:.3f} | {d:.3f}" for m, d in zip(means, deviations)]
        fitted = ["-", "-", "-"] if parameters is None else [f"{p:.4g}" for p in parameters]
        lines.append(f"| {algorithm} | " + " | ".join(cells) + " | " + " | ".join(fitted) + " |")
        megapixels = np.array([s * s / 1e6 for s in sides])
        line = axes[0].plot(megapixels, means, marker="o", linestyle="none", label=algorithm)[0]
        axes[1].plot(megapixels, deviations, marker="o", linestyle="none",
                     color=line.get_color(), label=algorithm)
        dense = np.linspace(megapixels.min(), megapixels.max(), 100)
        if parameters is not None:
            axes[0].plot(dense, model(dense, *parameters), color=line.get_color())
        if deviation_fit is not None:
            axes[1].plot(dense, model(dense, *deviation_fit), color=line.get_color())
    for axis, what in zip(axes, ["mean", "standard deviation"]):
        axis.set_xlabel("megapixels")
        axis.set_ylabel(f"{what} of the medians (ms)")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1))
    figure.suptitle("Ridge families: time against resolution, and f(x) = a + b x^c (Eq. 18)")
    figure.tight_layout()
    figure.savefig(out / "ridge_model.png", dpi=100)
    plt.close(figure)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", type=pathlib.Path, nargs="+")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for the results")
    arguments = parser.parse_args()
    arguments.out.mkdir(parents=True, exist_ok=True)
    rows = read_rows(arguments.csv)
    for side in sorted({side_of(row) for row in rows})[-2:]:
        print(plot_families(rows, side, arguments.out))
    images = len({(row["volume"]) for row in rows})
    table = model_tables(rows, arguments.out)
    text = (f"Ridge families, 8-connectivity: {images} images; per side the mean and standard "
            "deviation over the images of each image's median ms, and f(x) = a + b x^c "
            "fitted to every image's median (x in megapixels, f in ms).\n\n" + table + "\n")
    (arguments.out / "ridge_model.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
