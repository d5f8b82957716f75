#!/usr/bin/env python3
"""Cross-checks `volccl label --multi-label` on label maps against an oracle built from
scipy.ndimage.label: each value's mask labeled on its own, the pieces of all values numbered
together in raster order of their first voxel (what cc3d and skimage.measure.label do).

Label maps of uint8, int16, uint32, uint64 and int64 values (extremes, -1, many values side by
side, two-value checkerboards) are written as MetaImage files and labeled at every connectivity,
with a background other than 0, with --min-size, --largest and --sort-by-size, and with --stats
and --vtk --surfaces, whose "value" column and arrays must hold each component's value; the OASIS
seg35 label maps of ../shared/data/raw (NIfTI, as FreeSurfer writes them) are labeled too.

    label_map_crosscheck.py --volccl build/apps/volccl --device cpu

Exit status: 0 when everything agrees, 1 on a difference, 77 when numpy or scipy are missing.
"""

import argparse
import csv
import pathlib
import random
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.ndimage
except ImportError as error:
    print(f"skipped: {sys.executable} cannot import numpy and scipy ({error})")
    sys.exit(77)

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from scipy_crosscheck import STRUCTURES, read_mha  # noqa: E402

MET_NAMES = {"u1": "MET_UCHAR", "i1": "MET_CHAR", "u2": "MET_USHORT", "i2": "MET_SHORT",
             "u4": "MET_UINT", "i4": "MET_INT", "u8": "MET_ULONG_LONG", "i8": "MET_LONG_LONG"}


def write_mha(path, values):
    dtype = np.dtype(values.dtype).newbyteorder("<")
    sizes = " ".join(str(size) for size in reversed(values.shape))
    header = (f"ObjectType = Image\nNDims = {values.ndim}\nBinaryData = True\n"
              "BinaryDataByteOrderMSB = False\nCompressedData = False\n"
              f"DimSize = {sizes}\nElementSpacing = {' '.join(['1'] * values.ndim)}\n"
              f"ElementType = {MET_NAMES[dtype.str[1:]]}\nElementDataFile = LOCAL\n")
    with open(path, "wb") as out:
        out.write(header.encode("ascii"))
        out.write(np.ascontiguousarray(values, dtype=dtype).tobytes())


def oracle(values, connectivity, background):
    """Labels of every connected region of equal value, numbered in raster order."""
    pieces = np.zeros(values.shape, np.int64)
    next_label = 0
    for value in np.unique(values):
        if value == background:
            continue
        labels, count = scipy.ndimage.label(values == value, structure=STRUCTURES[connectivity])
        pieces[labels != 0] = labels[labels != 0] + next_label
        next_label += count
    flat = pieces.ravel()
    order = np.unique(flat[flat != 0], return_index=True)
    first_voxel = np.full(next_label + 1, flat.size)
    first_voxel[order[0]] = order[1]
    renumber = np.zeros(next_label + 1, np.int64)
    renumber[np.argsort(first_voxel[1:], kind="stable") + 1] = np.arange(1, next_label + 1)
    return renumber[pieces]


def relabeled(labels, min_size=0, largest=None, sort_by_size=False):
    """--min-size, --largest and --sort-by-size applied to raster-ordered labels."""
    counts = np.bincount(labels.ravel())
    counts[0] = 0
    keep = np.flatnonzero(counts >= max(min_size, 1))
    if largest is not None or sort_by_size:
        keep = keep[np.argsort(-counts[keep], kind="stable")]
    if largest is not None:
        keep = keep[:largest]
    if not sort_by_size:
        keep = np.sort(keep)
    renumber = np.zeros(counts.size, np.int64)
    renumber[keep] = np.arange(1, keep.size + 1)
    return renumber[labels]


def label_maps(seed):
    rng = np.random.default_rng(seed)
    for dtype in ("u1", "i2", "u4", "u8", "i8"):
        info = np.iinfo(dtype)
        drawn = [int(v) for v in rng.integers(info.min // 2, info.max // 2, 40)]
        extremes = [int(info.max), int(info.min), -1 if info.min < 0 else 1, 1]
        pool = np.array(sorted({v for v in extremes + drawn if v != 0}), dtype=dtype)
        for shape, granularity in (((19, 23, 17), 1), ((21, 18, 25), 3), ((67, 45), 2)):
            coarse = tuple(-(-side // granularity) for side in shape)
            cells = rng.choice(pool, size=coarse)
            cells[rng.random(coarse) < 0.2] = 0
            for axis in range(len(shape)):
                cells = np.repeat(cells, granularity, axis=axis)
            yield f"random-{dtype}-{'x'.join(map(str, shape))}", cells[
                tuple(slice(0, side) for side in shape)]
    parity = np.indices((9, 10, 11)).sum(axis=0) % 2
    yield "checkerboard", np.where(parity == 0, 5, -7).astype("i2")


class Checker:
    def __init__(self, volccl, device, workdir):
        self.volccl, self.device, self.workdir = volccl, device, workdir
        self.failures = 0
        self.cases = 0

    def run(self, *arguments):
        result = subprocess.run([self.volccl, "label", *arguments, "--device", self.device,
                                 "--force"], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"volccl label {' '.join(arguments)}: {result.stderr.strip()}")

    def expect(self, name, condition, why):
        self.cases += 1
        if not condition:
            self.failures += 1
            print(f"FAIL {name}: {why}")

    def check(self, name, values, path, connectivity, background=0, extra=(), expected=None):
        output = self.workdir / f"{name}-out.mha"
        self.run(str(path), "-o", str(output), "--multi-label", "--connectivity",
                 str(connectivity), "--background", str(background), "--output-type", "uint32",
                 *extra)
        labels, _ = read_mha(output)
        if expected is None:
            expected = oracle(values, connectivity, background)
        differ = int(np.count_nonzero(labels != expected))
        self.expect(f"{name} at {connectivity}", differ == 0, f"{differ} voxels differ")
        return expected

    def check_statistics(self, name, values, path, connectivity):
        stats = self.workdir / f"{name}.csv"
        scene = self.workdir / f"{name}-vtk"
        self.run(str(path), "--multi-label", "--connectivity", str(connectivity), "--stats",
                 str(stats), "--vtk", str(scene), "--surfaces")
        expected = oracle(values, connectivity, 0)
        rows = list(csv.DictReader(open(stats)))
        flat_values, flat_labels = values.ravel(), expected.ravel()
        first = np.unique(flat_labels, return_index=True)
        value_of = {int(label): int(flat_values[index])
                    for label, index in zip(*first) if label != 0}
        counts = np.bincount(flat_labels)
        self.expect(f"{name} stats rows", len(rows) == len(value_of),
                    f"{len(rows)} rows for {len(value_of)} components")
        wrong = [row["label"] for row in rows
                 if int(row["value"]) != value_of.get(int(row["label"]))
                 or int(row["count"]) != counts[int(row["label"])]]
        self.expect(f"{name} stats values and counts", not wrong, f"labels {wrong[:5]} differ")
        for file in ("components.vtp", "surfaces.vtp"):
            text = (scene / file).read_bytes()
            self.expect(f"{name} {file}", b'Name="value"' in text, "no array named value")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volccl", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--data", default=str(pathlib.Path(__file__).parents[2] / "shared" /
                                              "data" / "raw"))
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(2**31))
    arguments = parser.parse_args()
    print(f"seed {arguments.seed} (replay with --seed)")
    with tempfile.TemporaryDirectory() as scratch:
        workdir = pathlib.Path(scratch)
        checker = Checker(arguments.volccl, arguments.device, workdir)
        for name, values in label_maps(arguments.seed):
            path = workdir / f"{name}.mha"
            write_mha(path, values)
            for connectivity in ((4, 8) if values.ndim == 2 else (6, 18, 26)):
                labels = checker.check(name, values, path, connectivity)
                if connectivity in (8, 26):
                    checker.check(f"{name}-min-size", values, path, connectivity,
                                  extra=("--min-size", "5"), expected=relabeled(labels, 5))
                    checker.check(f"{name}-largest", values, path, connectivity,
                                  extra=("--largest", "3"), expected=relabeled(labels, largest=3))
                    checker.check(f"{name}-sorted", values, path, connectivity,
                                  extra=("--sort-by-size",),
                                  expected=relabeled(labels, sort_by_size=True))
            background = int(values.flat[0])
            checker.check(f"{name}-background", values, path, 6 if values.ndim == 3 else 4,
                          background=background,
                          expected=oracle(values, 6 if values.ndim == 3 else 4, background))
            if values.ndim == 3 and values.dtype == np.int16:
                checker.check_statistics(name, values, path, 26)
        for segmentation in sorted(pathlib.Path(arguments.data).glob(
                "brain_oasis1_neurite/*/aligned_seg35.nii.gz"))[:1]:
            output = workdir / "seg35-out.mha"
            checker.run(str(segmentation), "-o", str(output), "--multi-label",
                        "--output-type", "uint32", "--connectivity", "6")
            labels, _ = read_mha(output)
            values = read_values(segmentation)
            if values is None:
                print("skipped the seg35 map: nibabel is missing")
            else:
                expected = oracle(values, 6, 0)
                checker.expect("seg35", np.array_equal(labels, expected), "labels differ")
    print(f"{checker.cases} checks, {checker.failures} failed")
    return 1 if checker.failures else 0


def read_values(path):
    try:
        import nibabel
    except ImportError:
        return None
    return np.asarray(nibabel.load(path).dataobj).transpose()


if __name__ == "__main__":
    sys.exit(main())
