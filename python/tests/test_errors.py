"""The errors of the package: what is refused, and as which Python exception."""

import importlib.metadata

import numpy as np
import pytest

import volccl


@pytest.fixture
def volume():
    mask = np.zeros((4, 5, 6), np.uint8)
    mask[1:3, 2:4, 1:5] = 1
    return mask


def test_four_dimensional_input_needs_the_batch_function(volume):
    with pytest.raises(ValueError, match="connected_components_batch"):
        volccl.connected_components(np.stack([volume, volume]))
    with pytest.raises(ValueError):
        volccl.connected_components(np.ones(7, np.uint8))


@pytest.mark.parametrize("connectivity", [0, 1, 5, 4, 8, 27, True, "26", None])
def test_bad_connectivity_for_a_volume(volume, connectivity):
    with pytest.raises(ValueError, match="connectivity"):
        volccl.connected_components(volume, connectivity=connectivity)


@pytest.mark.parametrize("connectivity", [0, 2, 10, 27])
def test_bad_connectivity_for_an_image(connectivity):
    with pytest.raises(ValueError, match="connectivity"):
        volccl.connected_components(np.ones((3, 3), bool), connectivity=connectivity)


@pytest.mark.parametrize("out_dtype", [np.int32, np.uint8, np.float64, "label", bool])
def test_bad_out_dtype(volume, out_dtype):
    with pytest.raises(ValueError, match="out_dtype"):
        volccl.connected_components(volume, out_dtype=out_dtype)


def test_label_maps_refuse_nan_complex_and_mask_only_algorithms():
    floats = np.ones((4, 5, 6), np.float32)
    floats[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        volccl.connected_components(floats)
    assert volccl.connected_components(floats, binary_image=True).max() == 1
    with pytest.raises(TypeError, match="label map"):
        volccl.connected_components(np.ones((4, 5, 6), np.complex64), binary_image=False)
    with pytest.raises(ValueError, match="label map"):
        volccl.connected_components(np.ones((4, 5, 6), np.int32), algorithm="buf")


@pytest.mark.skipif(volccl.cuda_available(), reason="a usable CUDA device is present")
def test_cuda_without_a_gpu_is_a_runtime_error(volume):
    with pytest.raises(RuntimeError):
        volccl.connected_components(volume, device="cuda")
    with pytest.raises(RuntimeError):
        volccl.connected_components_batch(np.stack([volume, volume]), device="cuda")


def test_bad_device_algorithm_and_threads(volume):
    with pytest.raises(ValueError, match="device"):
        volccl.connected_components(volume, device="gpu")
    with pytest.raises(ValueError, match="nope"):
        volccl.connected_components(volume, algorithm="nope")
    # An algorithm that does not take the connectivity: the library's message says which do.
    with pytest.raises(ValueError, match="buf cannot label with 6-connectivity"):
        volccl.connected_components(volume, connectivity=6, algorithm="buf")
    with pytest.raises(ValueError, match="threads"):
        volccl.connected_components(volume, threads=-1)


@pytest.mark.parametrize("shape", [(0, 3, 4), (3, 0), (2, 2, 0)])
def test_empty_arrays(shape):
    with pytest.raises(ValueError, match="empty"):
        volccl.connected_components(np.zeros(shape, np.uint8))
    with pytest.raises(ValueError, match="empty"):
        volccl.statistics(np.zeros(shape, np.uint32))


def test_unsupported_dtypes(volume):
    with pytest.raises(TypeError):
        volccl.connected_components(volume.astype(np.complex64))
    with pytest.raises(TypeError):
        volccl.connected_components(volume.astype(str))
    with pytest.raises(TypeError):
        volccl.statistics(volume.astype(np.float32))


def test_statistics_refuses_labels_it_cannot_measure(volume):
    with pytest.raises(ValueError, match="0 or more"):
        volccl.statistics(-volume.astype(np.int32))
    with pytest.raises(ValueError, match="above the voxel count"):
        volccl.statistics(volume.astype(np.uint32) * 1000)
    with pytest.raises(ValueError, match="one value per axis"):
        volccl.statistics(volume, spacing=(1, 2))
    with pytest.raises(ValueError, match="positive"):
        volccl.statistics(volume, spacing=(1, 0, 1))
    with pytest.raises(ValueError, match="host memory"):
        volccl.statistics(volume, device="cuda")


def test_batch_shapes(volume):
    with pytest.raises(ValueError, match="batch"):
        volccl.connected_components_batch(volume[0])
    with pytest.raises(ValueError, match="batch"):
        volccl.connected_components_batch(volume[np.newaxis, np.newaxis, np.newaxis])
    with pytest.raises(ValueError, match="connectivity"):
        volccl.connected_components_batch(volume, connectivity=26 + 1)


def test_dust_and_largest_k_refusals(volume):
    with pytest.raises(NotImplementedError, match="range"):
        volccl.dust(volume, (2, 10))
    with pytest.raises(ValueError, match="in_place"):
        volccl.dust(volume.tolist(), 2, in_place=True)
    with pytest.raises(NotImplementedError, match="delta"):
        volccl.largest_k(volume, 2, delta=1)
    with pytest.raises(ValueError, match="k must be"):
        volccl.largest_k(volume, -1)


def test_version_matches_the_distribution():
    try:
        installed = importlib.metadata.version("volccl")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("volccl is imported from a build folder, not an installed distribution")
    assert volccl.__version__ == installed
