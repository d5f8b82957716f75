"""connected_components_batch against one connected_components call per item."""

import numpy as np
import pytest
from conftest import random_mask

import volccl


@pytest.mark.parametrize("item_shape,connectivity",
                         [((9, 10, 11), 26), ((9, 10, 11), 18), ((5, 7, 3), 6), ((33, 17), 8),
                          ((33, 17), 4), ((1, 1, 1), 26), ((1, 5), 8)], ids=str)
def test_batch_equals_items(rng, item_shape, connectivity):
    items = int(rng.integers(1, 6))
    masks = np.stack([random_mask(rng, item_shape, rng.uniform(0.1, 0.9)) for _ in range(items)])
    masks = (masks * rng.integers(1, 50, size=masks.shape)).astype(np.int32)
    labels, counts = volccl.connected_components_batch(masks, connectivity=connectivity)
    assert labels.shape == masks.shape and labels.dtype == np.uint32
    assert labels.flags.c_contiguous
    assert counts.dtype == np.uint64 and counts.shape == (items,)
    for item in range(items):
        expected, count = volccl.connected_components(masks[item], connectivity=connectivity,
                                                      binary_image=True,
                                                      return_N=True)
        np.testing.assert_array_equal(labels[item], expected)
        assert counts[item] == count


def test_batch_of_fortran_ordered_floats_and_out_dtype(rng):
    masks = np.asfortranarray(
        np.stack([random_mask(rng, (12, 13, 14), 0.4) for _ in range(3)]).astype(np.float64))
    masks[masks == 0] = -0.0
    masks[0, 0, 0, 0] = np.nan
    for out_dtype in (np.uint16, np.uint64):
        labels, counts = volccl.connected_components_batch(masks, out_dtype=out_dtype,
                                                           device="cpu", algorithm="uf")
        assert labels.dtype == out_dtype
        for item in range(3):
            np.testing.assert_array_equal(labels[item],
                                          volccl.connected_components(masks[item], binary_image=True))
