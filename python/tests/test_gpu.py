"""CuPy, PyTorch and JAX arrays labeled on their GPU. Skipped unless one of them sees a CUDA
device and this build of volccl has CUDA."""

import functools

import numpy as np
import pytest
from conftest import random_mask, scipy_labels

import volccl
from volccl import _volccl


def _cupy():
    try:
        import cupy

        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # not installed, or no driver or device
        return None


def _torch():
    try:
        import torch

        return torch if torch.cuda.is_available() else None
    except ImportError:
        return None


def _jax_on_gpu():
    try:
        import jax
        import jax.numpy

        return jax.numpy if jax.devices()[0].platform == "gpu" else None
    except Exception:  # not installed, or no GPU backend
        return None


# These tests compare GPU arrays with scipy's binary labels; label maps: test_label_maps.py.
binary_components = functools.partial(volccl.connected_components, binary_image=True)

cupy = _cupy()
torch = _torch()

pytestmark = [
    pytest.mark.skipif(cupy is None and torch is None,
                       reason="neither CuPy nor PyTorch with a CUDA device is importable"),
    pytest.mark.skipif(not _volccl.has_cuda, reason="this volccl build has no CUDA"),
    pytest.mark.skipif(not volccl.cuda_available(), reason=volccl.cuda_device_description()),
]
requires_cupy = pytest.mark.skipif(cupy is None, reason="CuPy with a CUDA device is missing")
requires_torch = pytest.mark.skipif(torch is None, reason="PyTorch with CUDA is missing")

CASES = [((23, 19, 21), 6), ((23, 19, 21), 18), ((23, 19, 21), 26), ((67, 45), 4), ((67, 45), 8)]
NUMPY_DTYPES = [np.bool_, np.uint8, np.uint16, np.int32, np.float32]


def host_input(rng, shape, dtype):
    mask = random_mask(rng, shape, rng.uniform(0.2, 0.7), granularity=int(rng.integers(1, 3)))
    if dtype == np.bool_:
        return mask
    array = np.where(mask, rng.integers(1, 60, size=shape), 0).astype(dtype)
    if np.issubdtype(dtype, np.floating):
        array[mask & (rng.random(shape) < 0.1)] = np.nan
    return array


def rounded(nbytes, granule=512):
    return -(-nbytes // granule) * granule


def spy_on_label_into(monkeypatch):
    """Records the stream of every label_into call."""
    streams = []
    original = _volccl.label_into

    def spy(*args):
        streams.append(args[6])
        return original(*args)

    monkeypatch.setattr(_volccl, "label_into", spy)
    return streams


def expect_equal_statistics(ours, reference):
    assert ours.keys() == reference.keys()
    for key, value in ours.items():
        if key == "bounding_boxes":
            assert value == reference[key]
        else:
            np.testing.assert_array_equal(value, reference[key])


@requires_cupy
@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,connectivity", CASES, ids=str)
def test_cupy_labeled_in_place_without_a_host_copy(rng, monkeypatch, dtype, shape, connectivity):
    host = host_input(rng, shape, dtype)
    array = cupy.asarray(host)
    pool = cupy.get_default_memory_pool()
    cupy.cuda.Device().synchronize()
    used = pool.used_bytes()

    def no_transfer(*args, **kwargs):
        raise AssertionError("a device-to-host copy while labeling")

    monkeypatch.setattr(cupy, "asnumpy", no_transfer)
    labels, count = binary_components(array, connectivity=connectivity, return_N=True)
    monkeypatch.undo()
    assert isinstance(labels, cupy.ndarray) and labels.dtype == cupy.uint32
    assert labels.device.id == array.device.id and labels.flags.c_contiguous
    assert pool.used_bytes() - used <= rounded(labels.nbytes)
    expected, expected_count = scipy_labels(host, connectivity)
    assert count == expected_count
    np.testing.assert_array_equal(cupy.asnumpy(labels), expected)


@requires_cupy
def test_cupy_device_memory_stays_within_the_output(rng):
    host = random_mask(rng, (256, 256, 256), 0.3)
    array = cupy.asarray(host)
    binary_components(array)  # volccl's pool keeps its scratch for the next call
    cupy.cuda.Device().synchronize()
    free_before = cupy.cuda.runtime.memGetInfo()[0]
    labels = binary_components(array)
    cupy.cuda.Device().synchronize()
    dropped = free_before - cupy.cuda.runtime.memGetInfo()[0]
    assert dropped <= labels.nbytes + (64 << 20)
    np.testing.assert_array_equal(cupy.asnumpy(labels), scipy_labels(host, 26)[0])


@requires_cupy
def test_cupy_non_default_stream(rng, monkeypatch):
    host = host_input(rng, (40, 50, 60), np.float32)
    streams = spy_on_label_into(monkeypatch)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        array = cupy.asarray(host) * 2  # produced on the stream, not waited for
        labels = binary_components(array, connectivity=18)
        statistics = volccl.statistics(labels)
    stream.synchronize()
    assert streams == [stream.ptr]
    np.testing.assert_array_equal(cupy.asnumpy(labels), scipy_labels(host, 18)[0])
    expect_equal_statistics(statistics, volccl.statistics(cupy.asnumpy(labels)))


@requires_cupy
def test_cupy_fortran_order_misaligned_views_and_out_dtype(rng):
    host = host_input(rng, (17, 18, 19), np.uint8)
    fortran = cupy.asfortranarray(cupy.asarray(host))
    np.testing.assert_array_equal(cupy.asnumpy(binary_components(fortran)),
                                  scipy_labels(host, 26)[0])
    flat = cupy.zeros(host.size + 1, cupy.uint8)
    flat[1:] = cupy.asarray(host.ravel())
    misaligned = flat[1:].reshape(host.shape)
    np.testing.assert_array_equal(cupy.asnumpy(binary_components(misaligned)),
                                  scipy_labels(host, 26)[0])
    strided = cupy.asarray(host)[::2, :, 1::2]
    np.testing.assert_array_equal(cupy.asnumpy(binary_components(strided)),
                                  scipy_labels(host[::2, :, 1::2], 26)[0])
    for out_dtype in (np.uint16, np.uint64):
        labels = binary_components(cupy.asarray(host), out_dtype=out_dtype)
        assert labels.dtype == out_dtype


@requires_cupy
@pytest.mark.parametrize("item_shape,connectivity",
                         [((16, 16, 16), 26), ((7, 9, 11), 6), ((5, 3, 7), 18), ((64, 32), 8),
                          ((13, 7), 4)], ids=str)
def test_cupy_batch_equals_items(rng, item_shape, connectivity):
    host = np.stack([host_input(rng, item_shape, np.uint8) for _ in range(5)])
    labels, counts = volccl.connected_components_batch(cupy.asarray(host),
                                                       connectivity=connectivity)
    assert isinstance(labels, cupy.ndarray) and labels.shape == host.shape
    assert labels.flags.c_contiguous and counts.dtype == np.uint64
    for item in range(len(host)):
        expected, count = scipy_labels(host[item], connectivity)
        np.testing.assert_array_equal(cupy.asnumpy(labels[item]), expected)
        assert counts[item] == count


@requires_cupy
def test_cupy_statistics_dust_and_largest_k_equal_the_cpu(rng):
    host = host_input(rng, (30, 31, 32), np.uint16)
    array = cupy.asarray(host)
    labels, statistics = binary_components(array, statistics=True)
    host_labels, host_statistics = binary_components(host, statistics=True,
                                                               device="cpu")
    np.testing.assert_array_equal(cupy.asnumpy(labels), host_labels)
    expect_equal_statistics(statistics, host_statistics)
    expect_equal_statistics(volccl.statistics(labels, spacing=(1, 2, 3)),
                            volccl.statistics(host_labels, spacing=(1, 2, 3)))
    expect_equal_statistics(volccl.statistics(labels, device="cpu"), host_statistics)
    for k in (1, 3):
        np.testing.assert_array_equal(cupy.asnumpy(volccl.largest_k(array, k)),
                                      volccl.largest_k(host, k, device="cpu"))
    dusted_host = volccl.dust(host, 20, device="cpu")
    dusted = volccl.dust(array, 20)
    assert isinstance(dusted, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(dusted), dusted_host)
    assert volccl.dust(array, 20, in_place=True) is array
    np.testing.assert_array_equal(cupy.asnumpy(array), dusted_host)
    # The dusted volume keeps its large components: largest_k agrees there too.
    for k in (1, 3):
        np.testing.assert_array_equal(cupy.asnumpy(volccl.largest_k(array, k)),
                                      volccl.largest_k(dusted_host, k, device="cpu"))


@requires_cupy
def test_cupy_refusals(rng):
    array = cupy.asarray(host_input(rng, (5, 6, 7), np.uint8))
    with pytest.raises(ValueError, match="device"):
        binary_components(array, device="cpu")
    labels = binary_components(host_input(rng, (5, 6, 7), np.uint8), device="cuda")
    assert isinstance(labels, np.ndarray)


TORCH_DTYPES = ["bool", "uint8", "uint16", "uint32", "int64", "float32"]


@requires_torch
@pytest.mark.parametrize("dtype", TORCH_DTYPES)
@pytest.mark.parametrize("shape,connectivity", CASES, ids=str)
def test_torch_labeled_in_place_without_a_host_copy(rng, monkeypatch, dtype, shape,
                                                    connectivity):
    host = host_input(rng, shape, np.float32 if dtype == "float32" else np.int64)
    host = host != 0 if dtype == "bool" else host
    tensor = torch.from_numpy(host).to("cuda").to(getattr(torch, dtype))
    torch.cuda.synchronize()
    allocated = torch.cuda.memory_allocated()

    def no_transfer(*args, **kwargs):
        raise AssertionError("a device-to-host copy while labeling")

    monkeypatch.setattr(torch.Tensor, "cpu", no_transfer)
    monkeypatch.setattr(torch.Tensor, "numpy", no_transfer)
    labels, count = binary_components(tensor, connectivity=connectivity, return_N=True)
    monkeypatch.undo()
    assert isinstance(labels, torch.Tensor) and labels.dtype == torch.uint32
    assert labels.device == tensor.device and labels.is_contiguous()
    assert torch.cuda.memory_allocated() - allocated <= rounded(labels.numel() * 4)
    expected, expected_count = scipy_labels(host, connectivity)
    assert count == expected_count
    np.testing.assert_array_equal(labels.cpu().numpy(), expected)


@requires_torch
def test_torch_non_default_stream_batches_and_statistics(rng, monkeypatch):
    host = host_input(rng, (24, 25, 26), np.float32)
    streams = spy_on_label_into(monkeypatch)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tensor = torch.from_numpy(host).to("cuda") * 2
        labels, statistics = binary_components(tensor, statistics=True)
    stream.synchronize()
    assert streams == [stream.cuda_stream]
    host_labels, host_statistics = binary_components(host, statistics=True,
                                                               device="cpu")
    np.testing.assert_array_equal(labels.cpu().numpy(), host_labels)
    expect_equal_statistics(statistics, host_statistics)
    expect_equal_statistics(volccl.statistics(labels), host_statistics)
    mask = host != 0
    expect_equal_statistics(volccl.statistics(torch.from_numpy(mask).cuda()),
                            volccl.statistics(mask))

    batch = np.stack([host_input(rng, (9, 10, 11), np.uint8) for _ in range(4)])
    batch_labels, counts = volccl.connected_components_batch(torch.from_numpy(batch).cuda(),
                                                             out_dtype=np.uint16)
    assert isinstance(batch_labels, torch.Tensor) and batch_labels.dtype == torch.uint16
    for item in range(len(batch)):
        expected, count = scipy_labels(batch[item], 26)
        np.testing.assert_array_equal(batch_labels[item].cpu().numpy(), expected)
        assert counts[item] == count


@requires_torch
@pytest.mark.parametrize("dtype", ["uint32", "int16", "float64"])
def test_torch_dust_and_largest_k_equal_the_cpu(rng, dtype):
    host = host_input(rng, (20, 21, 22), np.int64).astype(dtype)
    tensor = torch.from_numpy(host).cuda()
    dusted = volccl.dust(tensor, 15)
    assert isinstance(dusted, torch.Tensor) and dusted.dtype == tensor.dtype
    np.testing.assert_array_equal(dusted.cpu().numpy(), volccl.dust(host, 15, device="cpu"))
    for k in (1, 4):
        kept = volccl.largest_k(tensor, k)
        np.testing.assert_array_equal(kept.cpu().numpy(), volccl.largest_k(host, k, device="cpu"))
    assert volccl.dust(tensor, 15, in_place=True) is tensor
    np.testing.assert_array_equal(tensor.cpu().numpy(), volccl.dust(host, 15, device="cpu"))


def test_jax_arrays_come_back_as_jax_arrays(rng):
    jnp = _jax_on_gpu()
    if jnp is None:
        pytest.skip("JAX with a GPU backend is missing")
    host = host_input(rng, (15, 16, 17), np.float32)
    labels, count = binary_components(jnp.asarray(host), return_N=True)
    assert type(labels).__module__.split(".")[0] in ("jax", "jaxlib")
    expected, expected_count = scipy_labels(host, 26)
    assert count == expected_count
    np.testing.assert_array_equal(np.asarray(labels), expected)
