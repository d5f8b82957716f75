#!/usr/bin/env python3
"""Repeats every GPU algorithm at every connectivity it takes, on a random 512^3 volume and the
connectomics volume, and checks that every repetition gives the same labels and statistics
(bit for bit) as the first: the GPU's union-find races must never change an answer.

    python tests/gpu_repeat_check.py --data .device/data --repeats 100

Needs CuPy and volccl built with CUDA. Exit status 0 when every repetition agrees, 1 otherwise.
"""

import argparse
import gzip
import pathlib
import sys

import cupy
import numpy as np

import volccl


def volumes(data, seed):
    rng = np.random.default_rng(seed)
    yield "random-512-d30-g1", rng.random((512, 512, 512)) < 0.3
    path = pathlib.Path(data) / "em_connectomics_cc3d" / "connectomics.npy.gz"
    if path.exists():
        with gzip.open(path) as file:
            yield "connectomics", np.load(file) != 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--seed", type=int, default=512)
    arguments = parser.parse_args()
    failures = 0
    for name, host in volumes(arguments.data, arguments.seed):
        mask = cupy.asarray(host.astype(np.uint8))
        stream = cupy.cuda.get_current_stream().ptr
        for algorithm in volccl.algorithms():
            for connectivity in volccl._volccl.algorithm_connectivities(algorithm):
                if connectivity in (4, 8) or algorithm == "rts":  # images; the CPU's labeler
                    continue
                first_labels, first_moments = None, None
                agree = True
                for repeat in range(arguments.repeats):
                    labels = cupy.empty(mask.shape, cupy.uint32)
                    result = volccl._volccl.label_into(mask, labels, connectivity, algorithm,
                                                       "cuda", 0, stream, True)
                    if first_labels is None:
                        first_labels, first_moments = labels, result["moments"]
                        continue
                    agree = (bool(cupy.array_equal(labels, first_labels)) and
                             result["moments"].tobytes() == first_moments.tobytes())
                    if not agree:
                        failures += 1
                        print(f"FAIL {name} {algorithm} at {connectivity}: repetition {repeat} "
                              "differs from the first")
                        break
                print(f"{name} {algorithm} at {connectivity}: {len(first_moments)} components, "
                      f"{arguments.repeats} repetitions {'identical' if agree else 'DIFFER'}",
                      flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
