"""dust and largest_k against cc3d's."""

import cc3d
import numpy as np
import pytest
from conftest import CONNECTIVITIES, random_mask

import volccl


def components_of_distinct_sizes(rng, ndim):
    """Runs of distinct lengths along the last axis, two rows (and slices) apart, in shuffled
    order, so that size order and raster order differ and no two sizes tie."""
    sizes = rng.permutation(np.arange(1, 25))
    image = np.zeros((48, 30) if ndim == 2 else (8, 12, 30), np.uint8)
    for slot, size in enumerate(sizes):
        row = (2 * slot,) if ndim == 2 else (2 * (slot // 6), 2 * (slot % 6))
        start = int(rng.integers(0, 30 - size + 1))
        image[row][start:start + size] = rng.integers(1, 255)
    return image


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.uint32, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("ndim,connectivity",
                         [(ndim, c) for ndim, cs in CONNECTIVITIES.items() for c in cs])
def test_dust_matches_cc3d(rng, dtype, order, ndim, connectivity):
    shape = (14, 15, 16) if ndim == 3 else (50, 41)
    # One value for the whole foreground: cc3d's binary_image=True separates unequal neighbours
    # at 4-connectivity.
    image = np.asarray(random_mask(rng, shape, 0.3) * int(rng.integers(1, 100)), dtype=dtype,
                       order=order)
    for threshold in (0, 1, 2, 5, 30, 10**6):
        ours = volccl.dust(image, threshold, connectivity=connectivity)
        theirs = cc3d.dust(image, threshold, connectivity=connectivity, binary_image=True)
        assert ours.dtype == image.dtype and ours is not image
        np.testing.assert_array_equal(ours, theirs)


def test_dust_in_place(rng):
    image = (random_mask(rng, (20, 21, 22), 0.25) * 7).astype(np.uint16)
    expected = cc3d.dust(image, 4, binary_image=True)
    assert volccl.dust(image, 4, in_place=True) is image
    np.testing.assert_array_equal(image, expected)
    view = image[:, ::2]
    expected_view = cc3d.dust(np.ascontiguousarray(view), 4, binary_image=True)
    before = image.copy()
    assert volccl.dust(view, 4, in_place=True) is view
    np.testing.assert_array_equal(view, expected_view)
    np.testing.assert_array_equal(image[:, 1::2], before[:, 1::2])


@pytest.mark.parametrize("ndim", [2, 3])
def test_largest_k_matches_cc3d(rng, ndim):
    image = components_of_distinct_sizes(rng, ndim)
    count = volccl.connected_components(image, return_N=True)[1]
    assert count == 24
    for k in (0, 1, 2, 3, 7, 23, 24, 25, 100):
        ours, kept = volccl.largest_k(image, k, return_N=True)
        theirs = cc3d.largest_k(image, k, binary_image=True)
        assert kept == min(k, count)
        assert ours.dtype == (np.bool_ if k == 1 else np.uint32)
        np.testing.assert_array_equal(ours, theirs)
        np.testing.assert_array_equal(volccl.largest_k(image, k), ours)


def test_largest_k_ties_keep_and_number_in_raster_order():
    image = np.zeros((3, 16), np.uint8)
    image[0, 0:2] = image[0, 4:7] = image[0, 9:11] = image[2, 0:3] = image[2, 5:7] = 1
    # Sizes in raster order: 2, 3, 2, 3, 2. Kept: both 3s and the first 2; numbered by
    # ascending size, ties in raster order.
    kept = volccl.largest_k(image, 3, connectivity=4)
    assert kept[0, 0] == 1 and kept[0, 4] == 2 and kept[2, 0] == 3
    assert kept[0, 9] == 0 and kept[2, 5] == 0
    largest = volccl.largest_k(image, 1, connectivity=4)
    assert largest.dtype == np.bool_ and largest[0, 4:7].all() and largest.sum() == 3
