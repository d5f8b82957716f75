"""Shared fixtures of the volccl package's tests: seeded random volumes and scipy's labels.

Random cases draw a fresh seed every run; a failing test prints it, and VOLCCL_TEST_SEED replays
it (as the C++ tests do).
"""

import os
import secrets

import numpy as np
import pytest
from scipy import ndimage

# scipy.ndimage's structure rank of each connectivity.
STRUCTURE_RANK = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}
CONNECTIVITIES = {2: (4, 8), 3: (6, 18, 26)}


@pytest.fixture
def rng(request):
    seed = int(os.environ.get("VOLCCL_TEST_SEED", secrets.randbits(63)))
    request.node.volccl_seed = seed
    return np.random.default_rng(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    seed = getattr(item, "volccl_seed", None)
    if report.failed and seed is not None:
        report.sections.append(("volccl seed", f"replay with VOLCCL_TEST_SEED={seed}"))


def random_mask(rng, shape, density, granularity=1):
    """YACCLAB's random images: cubes of `granularity` voxels a side, each foreground with
    probability `density`."""
    coarse = tuple(-(-side // granularity) for side in shape)
    cells = rng.random(coarse) < density
    for axis in range(len(shape)):
        cells = np.repeat(cells, granularity, axis=axis)
    return cells[tuple(slice(0, side) for side in shape)]


def scipy_labels(mask, connectivity):
    """scipy.ndimage.label's labels (as uint32) and count; foreground is non-zero."""
    structure = ndimage.generate_binary_structure(mask.ndim, STRUCTURE_RANK[connectivity])
    labels, count = ndimage.label(mask, structure=structure)
    return labels.astype(np.uint32), count
