#!/usr/bin/env python3
"""The command line on files NIfTI-1 cannot describe and on files past 4 GiB, against oracles
independent of volccl: nibabel (NIfTI-2 headers, affines and voxels), ITK's own NIfTI-1 reader
(the geometry volccl gives a NIfTI-2 file), scipy.ndimage.label and cc3d (the labels).

    file_sizes_check.py --volccl build/apps/volccl nifti2
    file_sizes_check.py --volccl build/apps/volccl past-4gib [--device cuda]
    file_sizes_check.py --volccl .device/bin/volccl past-2to32 --device cuda   # about 60 GB
    file_sizes_check.py --volccl .device/bin/volccl past-2to32-components --device cuda  # 160 GB

nifti2: images with a side over 32767 voxels, of every integer width, both byte orders, scaled
voxels, plain and gzip-compressed, read and written. past-4gib: a volume whose uint32 labels take
more than 4 GiB, written as NIfTI, MetaImage and NRRD and read back. past-2to32: a volume of more
than 2^32 voxels labeled into the narrowest label file and into uint64 labels.
past-2to32-components: a checkerboard with more than 2^32 components at 6-connectivity, whose
labels `--output-type auto` must write as uint64 (their values follow from the pattern). Random inputs take a fresh seed,
printed. Exit status: 0 pass, 1 fail, 77 skipped (too little memory or disk, said why).
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

FAILURES = []
SKIPPED = 77


def expect(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message)


def run(cli, *arguments, expect_status=0):
    result = subprocess.run([cli, *map(str, arguments)], capture_output=True, text=True)
    if result.returncode != expect_status:
        FAILURES.append(f"volccl {' '.join(map(str, arguments))}: exit {result.returncode}, "
                        f"expected {expect_status}: {result.stderr.strip()}")
        print("FAIL:", FAILURES[-1])
    return result


def scipy_labels(mask_zyx):
    """scipy.ndimage.label at full connectivity of an array in z, y, x order: raster order of
    each component's first voxel, x fastest, as volccl numbers them."""
    import scipy.ndimage as ndimage

    labels, _ = ndimage.label(mask_zyx, np.ones((3,) * mask_zyx.ndim, dtype=int))
    return labels


def oblique_affine(rng, dimension):
    """A RAS affine with a rotation, unequal spacings and an origin off zero."""
    angle = rng.uniform(0.1, 1.2)
    c, s = np.cos(angle), np.sin(angle)
    rotation = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) if dimension == 2 else np.array(
        [[c, 0, s], [0, 1, 0], [-s, 0, c]]) @ np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    spacing = np.array([rng.uniform(0.3, 2.0) for _ in range(3)])
    affine = np.eye(4)
    affine[:3, :3] = rotation * spacing
    affine[:3, 3] = [rng.uniform(-90, 90) for _ in range(3)]
    if dimension == 2:  # a 2D image has no z to keep
        affine[2, :] = [0, 0, 1, 0]
    return affine


def mha_header(path):
    fields = {}
    with open(path, "rb") as file:
        for line in file:
            key, _, value = line.decode().partition(" = ")
            fields[key.strip()] = value.strip()
            if key.strip() == "ElementDataFile":
                break
    return fields


def expect_same_numbers(text_a, text_b, what, tolerance=1e-9):
    a = np.array([float(v) for v in text_a.split()])
    b = np.array([float(v) for v in text_b.split()])
    expect(a.shape == b.shape and np.allclose(a, b, rtol=0, atol=tolerance),
           f"{what}: {text_a} against {text_b}")


# ---- nifti2 ---------------------------------------------------------------------------------

def save_nifti2(path, data_xyz, affine, byte_order="<", slope=None, sform=True):
    """With the affine as qform and, unless not `sform`, as sform."""
    import nibabel

    header = nibabel.Nifti2Header(endianness=byte_order)
    image = nibabel.Nifti2Image(data_xyz, affine, header=header)
    image.set_data_dtype(data_xyz.dtype)  # as it is: nibabel would store int8 and int64 as float
    image.set_qform(affine, code=1)
    image.set_sform(affine, code=1 if sform else 0)
    if slope is not None:
        image.header.set_slope_inter(*slope)
    nibabel.save(image, path)


def check_written_nifti2(path, affine, expected_xyz, what):
    import nibabel

    image = nibabel.load(path)
    expect(isinstance(image, nibabel.Nifti2Image), f"{what}: {path} is not NIfTI-2")
    for form, written in (("sform", image.get_sform()), ("qform", image.get_qform())):
        expect(np.allclose(written, affine, rtol=0, atol=1e-9),
               f"{what}: {form}\n{written}\nagainst the input's affine\n{affine}")
    data = np.asarray(image.dataobj)
    expect(data.shape == expected_xyz.shape, f"{what}: shape {data.shape}, {expected_xyz.shape}")
    expect(np.array_equal(data, expected_xyz), f"{what}: labels differ from the oracle's")
    return image


def nifti2_case(cli, work, rng):
    import cc3d
    import nibabel

    # Masks of every integer width and float, both byte orders, plain and compressed: the
    # foreground is every non-zero voxel, labeled as scipy labels it; a side of 40001 pixels.
    kinds = [(np.uint8, "<", ".nii"), (np.int16, ">", ".nii.gz"), (np.uint16, "<", ".nii.gz"),
             (np.int32, ">", ".nii"), (np.uint32, "<", ".nii"), (np.int64, "<", ".nii.gz"),
             (np.uint64, ">", ".nii"), (np.float32, ">", ".nii"), (np.float64, "<", ".nii.gz"),
             (np.int8, "<", ".nii")]
    for index, (dtype, order, suffix) in enumerate(kinds):
        name = np.dtype(dtype).name
        size_x, size_y = 40001, int(rng.integers(2, 6))
        affine = oblique_affine(rng, 2)
        if index % 2:
            affine[:, 1] *= -1  # a reflection: the qform's qfac is -1
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            palette = np.array([info.min, info.max, 1, 2, 0, 0, 0], dtype=dtype)
        else:
            palette = np.array([-1.5, 3.25, 0, 0, 0], dtype=dtype)
        values_yx = rng.choice(palette, size=(size_y, size_x))
        source = os.path.join(work, f"in-{name}{suffix}")
        save_nifti2(source, values_yx.T.copy(), affine, byte_order=order, sform=index % 3 != 0)
        output = os.path.join(work, f"out-{name}{suffix}")
        run(cli, "label", source, "-o", output, "-q")
        expected = scipy_labels(values_yx != 0)
        if os.path.exists(output):
            check_written_nifti2(output, affine, expected.T, f"{name} mask ({order}{suffix})")
        if np.issubdtype(dtype, np.integer):
            # A label map of extreme values side by side, against cc3d (unsigned views keep the
            # values apart and 0 background).
            output = os.path.join(work, f"map-{name}{suffix}")
            run(cli, "label", source, "--multi-label", "-o", output, "-q", "--output-type",
                "uint64")
            unsigned = values_yx.view(np.dtype(f"u{values_yx.dtype.itemsize}"))
            expected = cc3d.connected_components(unsigned, connectivity=8, out_dtype=np.uint64)
            if os.path.exists(output):
                image = check_written_nifti2(output, affine, expected.T,
                                             f"{name} label map ({order}{suffix})")
                expect(image.get_data_dtype() == np.uint64,
                       f"{name} label map: --output-type uint64 wrote {image.get_data_dtype()}")

    # A volume with scaled voxels (scl_slope, scl_inter), read as their scaled values.
    size = (33001, 3, 4)
    raw = rng.integers(0, 4, size=size[::-1], dtype=np.uint8)
    affine = oblique_affine(rng, 3)
    affine[:, 0] *= -1
    source = os.path.join(work, "scaled.nii")
    save_nifti2(source, raw.T.copy(), affine, slope=(2.0, 1.0))
    output = os.path.join(work, "scaled-out.nii.gz")
    run(cli, "label", source, "--threshold", "5", "-o", output, "-q")  # 2 raw + 1 >= 5
    if os.path.exists(output):
        check_written_nifti2(output, affine, scipy_labels(raw >= 2).T, "scaled volume")

    # The geometry volccl reads from NIfTI-2 is the geometry ITK's NIfTI-1 reader gives the same
    # affine: both written to MetaImage by ITK.
    for dimension in (2, 3):
        affine = oblique_affine(rng, dimension)
        shape = (33000, 2) if dimension == 2 else (33000, 2, 2)
        small = np.ones((3,) * dimension, dtype=np.uint8)
        nifti1 = os.path.join(work, f"geometry{dimension}-1.nii")
        image = nibabel.Nifti1Image(small, affine)
        image.set_qform(affine, code=1)
        image.set_sform(affine, code=1)
        nibabel.save(image, nifti1)
        nifti2 = os.path.join(work, f"geometry{dimension}-2.nii")
        save_nifti2(nifti2, np.ones(shape, dtype=np.uint8), affine)
        for source in (nifti1, nifti2):
            run(cli, "label", source, "-o", source + ".mha", "-q")
        if os.path.exists(nifti1 + ".mha") and os.path.exists(nifti2 + ".mha"):
            itk, ours = mha_header(nifti1 + ".mha"), mha_header(nifti2 + ".mha")
            # NIfTI-1 keeps the affine and the quaternion in float32: equal to its precision.
            for key in ("Offset", "ElementSpacing", "TransformMatrix"):
                expect_same_numbers(ours.get(key, ""), itk.get(key, ""),
                                    f"{dimension}D NIfTI-2 {key} against ITK's NIfTI-1 reader",
                                    tolerance=2e-5)

    # volccl generate writes NIfTI-2 where NIfTI-1 cannot hold the image.
    generated = os.path.join(work, "generated.nii")
    run(cli, "generate", "random", "--size", "40000,3", "--seed", rng.integers(1, 2**31),
        "-o", generated, "-q")
    if os.path.exists(generated):
        image = nibabel.load(generated)
        expect(isinstance(image, nibabel.Nifti2Image) and image.shape == (40000, 3),
               f"generate: {type(image).__name__} of {image.shape}")

    # Refused with one clear error, nothing written: complex voxels, a truncated file, a pair
    # of .hdr/.img headers named .nii.
    complex_file = os.path.join(work, "complex.nii")
    nibabel.save(nibabel.Nifti2Image(np.ones((33000, 2), dtype=np.complex64), np.eye(4)),
                 complex_file)
    truncated = os.path.join(work, "truncated.nii")
    save_nifti2(truncated, np.ones((33000, 2), dtype=np.uint16), np.eye(4))
    with open(truncated, "r+b") as file:
        file.truncate(os.path.getsize(truncated) - 1000)
    for source, fragment in ((complex_file, "datatype 32"), (truncated, "truncated")):
        output = os.path.join(work, "refused.nii")
        result = run(cli, "label", source, "-o", output, expect_status=1)
        lines = result.stderr.strip().splitlines()
        expect(len(lines) == 1 and lines[0].startswith("volccl: error: ") and fragment in lines[0],
               f"{source}: expected one error line with {fragment!r}, got {result.stderr!r}")
        expect(not os.path.exists(output), f"{source}: OUTPUT written although refused")


# ---- past 4 GiB -------------------------------------------------------------------------------

def data_of(path):
    """The voxels of an uncompressed .nii, .mha or .nrrd as a memory map in z, y, x order."""
    with open(path, "rb") as file:
        head = file.read(1 << 16)
    if path.endswith(".nii"):  # little-endian, as volccl writes them
        types = {2: np.uint8, 512: np.uint16, 768: np.uint32, 1280: np.uint64}
        if np.frombuffer(head[:4], "<i4")[0] == 348:
            dims = np.frombuffer(head[40:56], "<i2")
            dtype = types[int(np.frombuffer(head[70:72], "<i2")[0])]
            offset = int(np.frombuffer(head[108:112], "<f4")[0])
        else:
            dims = np.frombuffer(head[16:80], "<i8")
            dtype = types[int(np.frombuffer(head[12:14], "<i2")[0])]
            offset = int(np.frombuffer(head[168:176], "<i8")[0])
        shape = tuple(int(side) for side in dims[1 : dims[0] + 1])[::-1]
    elif path.endswith(".mha"):
        end = head.index(b"ElementDataFile = LOCAL\n") + len(b"ElementDataFile = LOCAL\n")
        fields = dict(line.split(" = ", 1) for line in head[:end].decode().splitlines())
        shape = tuple(int(v) for v in fields["DimSize"].split())[::-1]
        dtype = {"MET_UCHAR": np.uint8, "MET_USHORT": np.uint16, "MET_UINT": np.uint32,
                 "MET_ULONG_LONG": np.uint64, "MET_ULONG": np.uint64}[fields["ElementType"]]
        offset = end
    else:
        end = head.index(b"\n\n") + 2
        fields = dict(line.split(": ", 1) for line in head[:end].decode().splitlines()[1:]
                      if ": " in line)
        expect(fields.get("encoding") == "raw", f"{path}: encoding {fields.get('encoding')}")
        shape = tuple(int(v) for v in fields["sizes"].split())[::-1]
        dtype = {"unsigned char": np.uint8, "unsigned short": np.uint16,
                 "unsigned int": np.uint32, "uint": np.uint32,
                 "unsigned long long int": np.uint64}[fields["type"]]
        offset = end
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape)


def enough(work, memory_bytes, disk_bytes):
    """Why this machine cannot run the case, or None."""
    available = 0
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    free = shutil.disk_usage(work).free
    if available < memory_bytes:
        return f"needs {memory_bytes / 2**30:.0f} GiB of memory, {available / 2**30:.1f} available"
    if free < disk_bytes:
        return f"needs {disk_bytes / 2**30:.0f} GiB of disk in {work}, {free / 2**30:.1f} free"
    return None


def past_4gib_case(cli, work, rng, device):
    why = enough(work, 13 << 30, 8 << 30)
    if why:
        return why
    size = (1024, 1024, 1025)  # uint32 labels: 4.3 GB
    seed = int(rng.integers(1, 2**31))
    source = os.path.join(work, "mask.mha")
    run(cli, "generate", "random", "--size", ",".join(map(str, size)), "--density", "0.3",
        "--granularity", "8", "--seed", seed, "-o", source, "-q")
    mask = data_of(source)
    expected = scipy_labels(mask)
    count = int(expected.max())
    for suffix in (".nii", ".mha", ".nrrd"):
        output = os.path.join(work, "labels" + suffix)
        run(cli, "label", source, "-o", output, "--output-type", "uint32", "--device", device,
            "-q")
        if not os.path.exists(output):
            continue
        expect(os.path.getsize(output) > 4 << 30, f"{output}: {os.path.getsize(output)} bytes")
        labels = data_of(output)
        same = labels.dtype == np.uint32 and np.array_equal(labels, expected)
        expect(same, f"{suffix}: labels past 4 GiB differ from scipy's")
        del labels
        if not same:
            continue  # kept for a look
        # Read back: a label map whose regions are the components gives the same labels, in
        # the narrowest type (uint8 for fewer than 256).
        back = os.path.join(work, "back" + suffix)
        run(cli, "label", output, "--multi-label", "-o", back, "--device", device, "-q")
        os.remove(output)
        if os.path.exists(back):
            relabeled = data_of(back)
            narrowest = np.uint8 if count < 256 else np.uint16 if count < 65536 else np.uint32
            expect(relabeled.dtype == narrowest,
                   f"{suffix}: read back into {relabeled.dtype} for {count} labels")
            expect(np.array_equal(relabeled, expected),
                   f"{suffix}: the file past 4 GiB read back gives other labels")
            del relabeled
            os.remove(back)
    return None


# ---- past 2^32 voxels (the GPU machine) -------------------------------------------------------

def past_2to32_case(cli, work, rng, device):
    import cc3d

    why = enough(work, 80 << 30, 44 << 30)
    if why:
        return why
    size = (2049, 2048, 1024)  # 4.30e9 voxels
    # Random cells of 4 voxels a side at density 0.3, made from a smaller random grid.
    cells = rng.random((size[2] // 4, size[1] // 4, -(-size[0] // 4))) < 0.3
    mask = np.repeat(np.repeat(np.repeat(cells, 4, 0), 4, 1), 4, 2)[:, :, : size[0]]
    mask = np.ascontiguousarray(mask, dtype=np.uint8)
    source = os.path.join(work, "mask.mha")
    with open(source, "wb") as file:
        file.write(("ObjectType = Image\nNDims = 3\nBinaryData = True\n"
                    "BinaryDataByteOrderMSB = False\nElementSpacing = 1 1 1\n"
                    f"DimSize = {size[0]} {size[1]} {size[2]}\nElementType = MET_UCHAR\n"
                    "ElementDataFile = LOCAL\n").encode())
        mask.tofile(file)
    expected = cc3d.connected_components(mask, connectivity=26, out_dtype=np.uint64)
    count = int(expected.max())
    print(f"past-2to32: {mask.size} voxels, {count} components (cc3d)")
    del mask
    for output, extra in (("labels.nii", []), ("labels64.mha", ["--output-type", "uint64"])):
        path = os.path.join(work, output)
        result = run(cli, "label", source, "-o", path, "--device", device, *extra)
        print(result.stdout.strip())
        if os.path.exists(path):
            labels = data_of(path)
            wanted = np.uint64 if extra else np.uint8 if count < 256 else (
                np.uint16 if count < 65536 else np.uint32)
            expect(labels.dtype == wanted, f"{output}: {labels.dtype}, expected {wanted}")
            expect(np.array_equal(labels, expected), f"{output}: labels differ from cc3d's")
            del labels
            os.remove(path)
    return None


def past_2to32_components_case(cli, work, rng, device):
    why = enough(work, 160 << 30, 80 << 30)
    if why:
        return why
    nx, ny, nz = 2048, 2048, 2049  # 2^32 + 2^21 foreground voxels, each its own component at 6
    # The foreground's parity is drawn: the checkerboard whose first voxel is background or not.
    parity = int(rng.integers(0, 2))
    source = os.path.join(work, "checkerboard.mha")
    row = np.arange(nx, dtype=np.uint8)
    with open(source, "wb") as file:
        file.write(("ObjectType = Image\nNDims = 3\nBinaryData = True\n"
                    "BinaryDataByteOrderMSB = False\nElementSpacing = 1 1 1\n"
                    f"DimSize = {nx} {ny} {nz}\nElementType = MET_UCHAR\n"
                    "ElementDataFile = LOCAL\n").encode())
        slices = [((row[None, :] + np.arange(ny, dtype=np.uint8)[:, None] + z + parity) % 2 == 0)
                  .astype(np.uint8) for z in range(2)]
        for z in range(nz):
            slices[z % 2].tofile(file)
    count = nx * ny * nz // 2
    print(f"past-2to32-components: {nx * ny * nz} voxels, {count} components (by the pattern)")
    output = os.path.join(work, "labels.nii")
    result = run(cli, "label", source, "-o", output, "--connectivity", "6", "--device", device)
    print(result.stdout.strip())
    print(result.stderr.strip())
    os.remove(source)
    if not os.path.exists(output):
        return None
    labels = data_of(output)
    expect(labels.dtype == np.uint64, f"{output}: {labels.dtype}, expected uint64")
    # Foreground voxel (x, y, z), x + y + z + parity even, is the (z ny + y) nx / 2 + x / 2 + 1-th
    # in raster order: each row holds nx / 2 of them.
    x = np.arange(nx, dtype=np.uint64)[None, None, :]
    y = np.arange(ny, dtype=np.uint64)[None, :, None]
    depth = 32
    for z0 in range(0, nz, depth):
        z = np.arange(z0, min(nz, z0 + depth), dtype=np.uint64)[:, None, None]
        rank = (z * ny + y) * (nx // 2) + x // 2 + 1
        wanted = np.where((x + y + z + parity) % 2 == 0, rank, np.uint64(0))
        if not np.array_equal(labels[z0 : z0 + depth], wanted):
            expect(False, f"{output}: labels differ from the pattern's in slices from {z0}")
            break
    expect(int(labels[-1, -1, -1 - ((nx - 1 + ny - 1 + nz - 1 + parity) % 2)]) == count,
           f"{output}: the last component is not {count}")
    del labels
    os.remove(output)
    return None


CASES = {"nifti2": nifti2_case, "past-4gib": past_4gib_case, "past-2to32": past_2to32_case,
         "past-2to32-components": past_2to32_components_case}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volccl", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--workdir", help="where the files go (default: a temporary directory)")
    parser.add_argument("case", choices=sorted(CASES))
    arguments = parser.parse_args()
    seed = random.SystemRandom().randrange(2**32)
    print(f"{arguments.case}: seed {seed}")
    rng = np.random.default_rng(seed)
    work = arguments.workdir or tempfile.mkdtemp(prefix="volccl-sizes-")
    os.makedirs(work, exist_ok=True)
    try:
        if arguments.case == "nifti2":
            skipped = nifti2_case(arguments.volccl, work, rng)
        else:
            skipped = CASES[arguments.case](arguments.volccl, work, rng, arguments.device)
    finally:
        if not arguments.workdir:
            shutil.rmtree(work, ignore_errors=True)
    if skipped:
        print(f"skipped: {skipped}")
        return SKIPPED
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
