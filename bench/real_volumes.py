#!/usr/bin/env python3
"""Writes the real volumes of the benchmark as uint8 masks for `volccl-bench --npy`.

    python3 bench/real_volumes.py OUT_DIR [--data ../shared/data/raw]

- oasis-0455.npy: OASIS-1 subject 0455 (neurite-oasis, 160x192x224), Otsu-binarized as YACCLAB
  binarizes OASIS: voxels above the midpoint of the best of 256 histogram bins (scikit-image's
  threshold_otsu), which gives the README's 397 / 107 components at 6 / 26.
- mitochondria.npy: the Lucchi++ masks of the EPFL CA1 stack, 165 slices of 1024x768 stacked
  (non-zero pixels), 43 components.

Needs numpy and Pillow (Debian: python3-numpy, python3-pil); the volumes come from VOLCCL_DATA
or --data. Each is checked against its known component count with scipy when scipy is present.
"""

import argparse
import gzip
import os
import pathlib
import sys

import numpy as np

NIFTI_TYPES = {2: np.uint8, 4: np.int16, 8: np.int32, 16: np.float32, 64: np.float64,
               512: np.uint16}


def read_nifti(path):
    """The voxels of a little-endian NIfTI-1 file as a (z, y, x) array."""
    with gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb") as file:
        content = file.read()
    if int.from_bytes(content[0:4], "little") != 348:
        raise SystemExit(f"{path} is not a little-endian NIfTI-1 file")
    dims = np.frombuffer(content, "<i2", 8, 40)
    datatype = int(np.frombuffer(content, "<i2", 1, 70)[0])
    offset = int(np.frombuffer(content, "<f4", 1, 108)[0])
    slope, intercept = np.frombuffer(content, "<f4", 2, 112)
    shape = tuple(int(n) for n in dims[1:1 + dims[0]])
    voxels = np.frombuffer(content, np.dtype(NIFTI_TYPES[datatype]).newbyteorder("<"),
                           int(np.prod(shape)), offset)
    voxels = voxels.reshape(shape[::-1]).astype(np.float64)
    if slope not in (0.0, 1.0) or intercept != 0.0:
        voxels = voxels * (slope or 1.0) + intercept
    return voxels


def otsu_mask(voxels, bins=256):
    histogram, edges = np.histogram(voxels, bins=bins)
    centres = (edges[:-1] + edges[1:]) / 2
    weight_below = np.cumsum(histogram)
    weight_above = np.cumsum(histogram[::-1])[::-1]
    mean_below = np.cumsum(histogram * centres) / np.maximum(weight_below, 1)
    mean_above = (np.cumsum((histogram * centres)[::-1]) / np.maximum(weight_above[::-1], 1))[::-1]
    variance = weight_below[:-1] * weight_above[1:] * (mean_below[:-1] - mean_above[1:]) ** 2
    threshold = centres[int(np.argmax(variance))]
    return (voxels > threshold).astype(np.uint8)


def mitochondria(directory):
    from PIL import Image
    slices = [np.asarray(Image.open(directory / f"{z}.png").convert("L")) for z in range(165)]
    return (np.stack(slices) > 0).astype(np.uint8)


def check(name, mask, expected):
    try:
        import scipy.ndimage
    except ImportError:
        return
    for structure_rank, count in expected.items():
        structure = scipy.ndimage.generate_binary_structure(3, structure_rank)
        found = scipy.ndimage.label(mask, structure=structure)[1]
        connectivity = {1: 6, 3: 26}[structure_rank]
        print(f"  {name}: {found} components at {connectivity} (expected {count})")
        if found != count:
            raise SystemExit(f"{name}: {found} components at {connectivity}, expected {count}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--data", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("VOLCCL_DATA", "../shared/data/raw")))
    arguments = parser.parse_args()
    arguments.out_dir.mkdir(parents=True, exist_ok=True)
    oasis = otsu_mask(read_nifti(
        arguments.data / "brain_oasis1_neurite/OASIS_OAS1_0455_MR1/aligned_norm.nii.gz"))
    check("oasis-0455", oasis, {1: 397, 3: 107})
    np.save(arguments.out_dir / "oasis-0455.npy", oasis)
    cells = mitochondria(arguments.data / "em_mitochondria_lucchi_pp/Lucchi++/Train_Out")
    check("mitochondria", cells, {1: 43})
    np.save(arguments.out_dir / "mitochondria.npy", cells)
    for name, mask in (("oasis-0455", oasis), ("mitochondria", cells)):
        print(f"{name}.npy: {mask.shape[::-1]} (x, y, z), {mask.mean():.1%} foreground")
    return 0


if __name__ == "__main__":
    sys.exit(main())
