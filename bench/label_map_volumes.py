"""The label maps both label-map benchmarks measure (bench/label_map_bench.py on the GPU,
bench/cpu_interleaved.py --label-maps on the CPU): the connectomics segmentation, an OASIS seg35
map, and random 512^3 maps of 2, 16 and 65536 values (0 among them, the background) at
granularity 1 and 4, drawn from one seed so that both see the same volumes."""

import gzip
import pathlib

import numpy as np


def random_label_map(rng, side, value_count, granularity):
    """A cube of `side` whose cells of granularity^3 voxels hold values drawn from 0..count-1."""
    coarse = -(-side // granularity)
    cells = rng.integers(0, value_count, size=(coarse,) * 3, dtype=np.uint32)
    for axis in range(3):
        cells = np.repeat(cells, granularity, axis=axis)
    return np.ascontiguousarray(cells[:side, :side, :side])


def label_map_volumes(connectomics, seg35, seed):
    """(name, C-contiguous array) of each map: connectomics (its .npy.gz) and seg35 (a .npy of
    its voxels, z y x) where the path is given and exists, then the random ones."""
    if connectomics is not None and pathlib.Path(connectomics).exists():
        with gzip.open(connectomics) as file:
            yield "connectomics-512", np.ascontiguousarray(np.load(file))
    if seg35 is not None and pathlib.Path(seg35).exists():
        yield "oasis-seg35", np.ascontiguousarray(np.load(seg35))
    rng = np.random.default_rng(seed)
    for value_count in (2, 16, 65536):
        for granularity in (1, 4):
            yield (f"random-512-v{value_count}-g{granularity}",
                   random_label_map(rng, 512, value_count, granularity))
