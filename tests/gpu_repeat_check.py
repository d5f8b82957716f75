#!/usr/bin/env python3
"""Repeats every GPU algorithm at every connectivity it takes, on a random 512^3 volume and the
connectomics volume (its non-zero mask, and the segmentation itself as a label map with every
algorithm that takes label maps), and checks that every repetition gives the same labels and
statistics (bit for bit) as the first: the GPU's union-find races must never change an answer.

    python tests/gpu_repeat_check.py --data .device/data --repeats 100 [--volume random|connectomics]
        [--algorithms ruf ufb ...]

Needs CuPy and volccl built with CUDA. Exit status 0 when every repetition agrees, 1 otherwise.
"""

import argparse
import gzip
import pathlib
import sys
import time

import cupy
import numpy as np

import volccl


def volumes(data, seed, which):
    """(name, uint8 mask or integer label map on the GPU, is a label map)."""
    if which in ("all", "random"):
        rng = np.random.default_rng(seed)
        yield "random-512-d30-g1", cupy.asarray((rng.random((512, 512, 512)) < 0.3)
                                                .view(np.uint8)), False
    path = pathlib.Path(data) / "em_connectomics_cc3d" / "connectomics.npy.gz"
    if which in ("all", "connectomics"):
        if not path.exists():
            sys.exit(f"{path} is absent")
        with gzip.open(path) as file:
            segmentation = cupy.asarray(np.ascontiguousarray(np.load(file)))
        yield "connectomics", (segmentation != 0).view(cupy.uint8), False
        yield "connectomics (label map)", segmentation, True


def label_once(volume, label_map, connectivity, algorithm, stream):
    labels = cupy.full(volume.shape, 0xFFFFFFFF, cupy.uint32)  # poisoned: every voxel written
    if label_map:
        result = volccl._volccl.label_map_into(volume, labels, 0, connectivity, algorithm, "cuda",
                                               0, stream, True)
    else:
        result = volccl._volccl.label_into(volume, labels, connectivity, algorithm, "cuda", 0,
                                           stream, True)
    return labels, result["moments"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--seed", type=int, default=512)
    parser.add_argument("--volume", choices=("all", "random", "connectomics"), default="all")
    parser.add_argument("--algorithms", nargs="+", default=volccl.algorithms(),
                        help="the algorithms to repeat (default: all)")
    arguments = parser.parse_args()
    stream = cupy.cuda.get_current_stream().ptr
    failures = 0
    for name, volume, label_map in volumes(arguments.data, arguments.seed, arguments.volume):
        for algorithm in arguments.algorithms:
            for connectivity in volccl._volccl.algorithm_connectivities(algorithm):
                if connectivity in (4, 8) or algorithm == "rts":  # images; the CPU's labeler
                    continue
                try:
                    first_labels, first_moments = label_once(volume, label_map, connectivity,
                                                             algorithm, stream)
                except ValueError:
                    if label_map:  # an algorithm for masks only
                        continue
                    raise
                start = time.perf_counter()
                differing = None
                for repeat in range(1, arguments.repeats):
                    labels, moments = label_once(volume, label_map, connectivity, algorithm,
                                                 stream)
                    if not (bool(cupy.array_equal(labels, first_labels)) and
                            np.array_equal(moments.view(np.uint8),
                                           first_moments.view(np.uint8))):
                        differing = repeat
                        break
                if differing is not None:
                    failures += 1
                    print(f"FAIL {name} {algorithm} at {connectivity}: repetition {differing} "
                          "differs from the first")
                print(f"{name} {algorithm} at {connectivity}: {len(first_moments)} components, "
                      f"{arguments.repeats} repetitions "
                      f"{'identical' if differing is None else 'DIFFER'} "
                      f"({time.perf_counter() - start:.1f} s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
