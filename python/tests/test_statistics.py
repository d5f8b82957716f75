"""statistics against cc3d.statistics and against sums taken with NumPy from the labels."""

import cc3d
import numpy as np
import pytest
from conftest import random_mask

import volccl


def numpy_statistics(labels, spacing, origin):
    """Per label 0..max: count, bounding box, centroid, covariance and physical size, voxel by
    voxel (no closed forms shared with the library); None for a label without voxels."""
    rows = []
    for label in range(int(labels.max()) + 1):
        coordinates = np.argwhere(labels == label)
        if len(coordinates) == 0:
            rows.append(None)
            continue
        physical = origin + spacing * coordinates
        rows.append({
            "count": len(coordinates),
            "min": coordinates.min(axis=0),
            "max": coordinates.max(axis=0),
            "centroid": physical.mean(axis=0),
            "covariance": np.cov(physical, rowvar=False, bias=True).reshape(labels.ndim,
                                                                           labels.ndim),
            "physical_size": len(coordinates) * np.prod(spacing),
        })
    return rows


def expect_numpy_statistics(stats, labels, spacing=None, origin=None):
    ndim = labels.ndim
    spacing = np.ones(ndim) if spacing is None else np.asarray(spacing, float)
    origin = np.zeros(ndim) if origin is None else np.asarray(origin, float)
    expected = numpy_statistics(labels, spacing, origin)
    assert len(stats["voxel_counts"]) == len(expected)
    scale = float(np.max(np.abs(origin)) + np.max(spacing * labels.shape))
    for label, row in enumerate(expected):
        if row is None:
            assert stats["voxel_counts"][label] == 0
            assert stats["bounding_boxes"][label] is None
            assert np.isnan(stats["centroids"][label]).all()
            assert np.isnan(stats["covariance"][label]).all()
            continue
        assert stats["voxel_counts"][label] == row["count"]
        assert stats["bounding_boxes"][label] == tuple(
            slice(int(low), int(high) + 1) for low, high in zip(row["min"], row["max"]))
        np.testing.assert_allclose(stats["centroids"][label], row["centroid"], rtol=0,
                                   atol=1e-9 * scale)
        covariance = stats["covariance"][label]
        np.testing.assert_allclose(covariance, row["covariance"], rtol=0, atol=1e-9 * scale**2)
        assert stats["physical_size"][label] == pytest.approx(row["physical_size"], rel=1e-12)
        # Principal moments: the covariance's eigenvalues, ascending; the axes its unit
        # eigenvectors as rows, forming a rotation.
        moments, axes = stats["principal_moments"][label], stats["principal_axes"][label]
        np.testing.assert_allclose(moments, np.linalg.eigvalsh(row["covariance"]), rtol=0,
                                   atol=1e-9 * scale**2)
        assert (np.diff(moments) >= 0).all()
        np.testing.assert_allclose(axes @ axes.T, np.eye(ndim), atol=1e-9)
        assert np.linalg.det(axes) == pytest.approx(1.0, abs=1e-9)
        np.testing.assert_allclose(covariance @ axes.T, axes.T * moments, atol=1e-9 * scale**2)


def expect_cc3d_statistics(stats, labels):
    theirs = cc3d.statistics(labels)
    np.testing.assert_array_equal(stats["voxel_counts"], theirs["voxel_counts"])
    assert stats["voxel_counts"].dtype == theirs["voxel_counts"].dtype
    assert stats["bounding_boxes"] == theirs["bounding_boxes"]
    np.testing.assert_allclose(stats["centroids"], theirs["centroids"], rtol=1e-13, atol=0)
    arrays = volccl.statistics(labels, no_slice_conversion=True)["bounding_boxes"]
    theirs = cc3d.statistics(labels, no_slice_conversion=True)["bounding_boxes"]
    assert arrays.dtype == theirs.dtype
    np.testing.assert_array_equal(arrays, theirs)


@pytest.mark.parametrize("shape", [(13, 17, 19), (1, 9, 8), (45, 38), (1, 1), (7, 1, 1)], ids=str)
@pytest.mark.parametrize("density", [0.0, 0.2, 0.5, 0.8, 1.0])
def test_against_cc3d_and_numpy(rng, shape, density):
    mask = random_mask(rng, shape, density, granularity=int(rng.integers(1, 4)))
    labels, stats = volccl.connected_components(mask, statistics=True)
    expect_cc3d_statistics(stats, labels)
    expect_numpy_statistics(stats, labels)
    again = volccl.statistics(labels)
    for key in ("voxel_counts", "centroids", "covariance", "principal_moments",
                "principal_axes", "physical_size"):
        np.testing.assert_array_equal(again[key], stats[key])
    assert again["bounding_boxes"] == stats["bounding_boxes"]


def test_spacing_and_origin(rng):
    mask = random_mask(rng, (11, 14, 17), 0.5, granularity=2)
    labels = volccl.connected_components(mask, connectivity=6)
    spacing, origin = (2.5, 0.3, 1.25), (-1000.0, 250.5, 7.0)
    stats = volccl.statistics(labels, spacing=spacing, origin=origin)
    expect_numpy_statistics(stats, labels, spacing, origin)
    image = volccl.connected_components(mask[4])
    expect_numpy_statistics(volccl.statistics(image, spacing=(0.5, 3.0), origin=(1.0, -2.0)),
                            image, (0.5, 3.0), (1.0, -2.0))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.uint16, np.uint64, np.int32, np.int64])
def test_label_dtypes_and_labels_without_voxels(rng, dtype):
    labels = rng.integers(0, 7, size=(6, 7, 8)).astype(np.uint32)
    labels[labels == 4] = 0  # a label without voxels, below the largest
    labels = (labels > 0) if dtype == np.bool_ else labels.astype(dtype)
    stats = volccl.statistics(labels)
    expect_cc3d_statistics(stats, labels)
    expect_numpy_statistics(stats, labels.astype(np.int64))
    if dtype != np.bool_:
        assert stats["bounding_boxes"][4] is None


@pytest.mark.parametrize("case", ["solid borders", "one hole", "last planes", "image hole"])
def test_background_box_where_the_borders_are_foreground(rng, case):
    """The background's box where a border plane holds no background, which the whole image is
    scanned for, against cc3d."""
    shape = (9, 10, 11) if case != "image hole" else (12, 13)
    mask = random_mask(rng, shape, 0.3, granularity=1)
    if case == "solid borders":  # the background starts 1-3 planes in on each side
        for axis in range(mask.ndim):
            for depth, side in ((int(rng.integers(1, 4)), 0), (int(rng.integers(1, 4)), -1)):
                index = [slice(None)] * mask.ndim
                index[axis] = slice(0, depth) if side == 0 else slice(mask.shape[axis] - depth,
                                                                      None)
                mask[tuple(index)] = True
    elif case == "last planes":  # background in one row of the far corner, deep from the front
        mask[...] = True
        mask[-1, -1] = False
    else:  # one background voxel deep inside: the whole image is scanned
        mask[...] = True
        mask[tuple(n // 2 for n in shape)] = False
    labels, stats = volccl.connected_components(mask, statistics=True)
    expect_cc3d_statistics(stats, labels)
    expect_cc3d_statistics(volccl.statistics(labels), labels)


def test_labeling_statistics_with_array_bounding_boxes(rng):
    mask = random_mask(rng, (14, 11, 9), 0.4, granularity=2)
    labels, stats = volccl.connected_components(mask, statistics=True, no_slice_conversion=True)
    theirs = cc3d.statistics(labels, no_slice_conversion=True)["bounding_boxes"]
    assert stats["bounding_boxes"].dtype == theirs.dtype
    np.testing.assert_array_equal(stats["bounding_boxes"], theirs)


def test_full_volume_has_an_empty_background_row():
    stats = volccl.statistics(np.ones((3, 4, 5), np.uint32))
    assert stats["voxel_counts"].tolist() == [0, 60]
    assert stats["bounding_boxes"][0] is None
    assert np.isnan(stats["centroids"][0]).all()
    np.testing.assert_array_equal(stats["centroids"][1], [1.0, 1.5, 2.0])


def test_statistics_of_fortran_ordered_and_strided_labels(rng):
    labels = volccl.connected_components(random_mask(rng, (12, 13, 14), 0.4))
    for view in (np.asfortranarray(labels), labels[::2, :, 1::2]):
        stats = volccl.statistics(view)
        expect_numpy_statistics(stats, np.ascontiguousarray(view))
        expect_cc3d_statistics(stats, np.ascontiguousarray(view))


def test_covariance_far_from_the_origin_keeps_its_precision():
    # A thin diagonal line at the far corner of a large, mostly empty volume: exact integer
    # sums keep the covariance exact where sums of squares in double would cancel.
    labels = np.zeros((3, 3, 60000), np.uint8)
    labels[0, 0, 59990:60000] = 1
    stats = volccl.statistics(labels)
    x = np.arange(59990, 60000, dtype=np.float64)
    assert stats["covariance"][1][2, 2] == pytest.approx(np.var(x), rel=1e-12)
    assert stats["centroids"][1][2] == pytest.approx(x.mean(), rel=1e-15)
