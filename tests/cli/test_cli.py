#!/usr/bin/env python3
"""Tests of the volccl command line, one case per ctest test (tests/cli/CMakeLists.txt).

    test_cli.py --volccl build/apps/volccl --sample data/samples/brain_t1.nii.gz CASE
    test_cli.py --list

Standard library only. Inputs other than the bundled sample are small MetaImage (.mha) files
written here (and one PNG); outputs are read back from their NIfTI or MetaImage bytes, and labels
are checked against a breadth-first 4-, 8-, 6-, 18- or 26-connected labeling written here. Exit status: 0 pass, 1 fail,
77 skipped (ctest SKIP_RETURN_CODE).
"""

import argparse
import array
import gzip
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIPPED = 77
SAMPLE_SIZE = (128, 128, 62)
SAMPLE_OTSU_COMPONENTS = 17  # data/samples/README.md
# The same mask at 6- and 18-connectivity: ITK's ConnectedComponentImageFilter with
# FullyConnected off finds 344 (tests/itk_oracle_test.cpp, KmeansTest_T1UCharRaw is this volume),
# as do scipy.ndimage.label and label() below; scipy finds 39 at 18.
SAMPLE_OTSU_COMPONENTS_6 = 344
SAMPLE_OTSU_COMPONENTS_18 = 39
ALGORITHMS = ("buf", "buf-ic", "bke", "bke-ic", "uf")
# The algorithms of 2D images, and those of them that take 4-connectivity.
ALGORITHMS_2D = ("buf", "buf-ic", "bke", "bke-ic", "uf", "ke", "ha4", "ha4-64", "le", "tm")
ALGORITHMS_4 = ("uf", "ke", "ha4", "ha4-64", "le", "tm")
# The algorithms of 6 and 18.
ALGORITHMS_6_18 = ("uf", "ufb", "ruf")


def auto_choice(device, connectivity):
    """What auto picks at a connectivity on the device of a summary line ("CPU, N threads" or
    "CUDA: ...") or of --timings' JSON ("cpu" or "cuda")."""
    if device.lower().startswith("cpu"):
        return "rts"
    return {26: "buf", 18: "ufb", 6: "ruf", 8: "bke-ic", 4: "ha4-64"}[connectivity]

CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


class Skip(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


# ---- running volccl ------------------------------------------------------------------------


class Cli:
    def __init__(self, volccl, sample):
        self.volccl = volccl
        self.sample = sample

    def run(self, *arguments, cwd=None, timeout=300):
        return subprocess.run([self.volccl, *arguments], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)


def describe(result):
    return (f"exit {result.returncode}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}")


def expect_success(result):
    expect(result.returncode == 0, "volccl failed:\n" + describe(result))


def expect_error(result, exit_code, *fragments):
    """volccl failed with exit_code and said so on one 'volccl: error: ' line with fragments."""
    expect(result.returncode == exit_code,
           f"expected exit {exit_code}, got:\n" + describe(result))
    lines = result.stderr.splitlines()
    expect(len(lines) == 1 and lines[0].startswith("volccl: error: "),
           "expected one 'volccl: error: ' line on stderr:\n" + describe(result))
    for fragment in fragments:
        expect(fragment.lower() in lines[0].lower(),
               f"stderr lacks {fragment!r}:\n" + describe(result))
    expect(result.stdout == "", "expected nothing on stdout:\n" + describe(result))


def expect_files(directory, names):
    """directory holds exactly `names`: no partial output, no leftover temporary file."""
    present = sorted(os.listdir(directory))
    expect(present == sorted(names), f"{directory} holds {present}, expected {sorted(names)}")


SUMMARY = re.compile(r"^labeled (\d+(?:x\d+)+) (voxels|pixels): (\d+) components? "
                     r"\((buf|buf-ic|bke|bke-ic|uf|ufb|ruf|ke|ha4|ha4-64|le|tm|rts), "
                     r"(4|8|6|18|26)-connectivity, "
                     r"on (CPU, \d+ threads|CUDA: .+), [0-9.e+-]+ ms\)$")


def parse_summary(line):
    """(size, components, algorithm used, connectivity, device) of the summary line; the size
    has two numbers for a 2D image ("pixels") and three for a volume ("voxels")."""
    match = SUMMARY.match(line)
    expect(match is not None, f"unexpected summary line {line!r}")
    size = tuple(int(n) for n in match.group(1).split("x"))
    expect(len(size) == (2 if match.group(2) == "pixels" else 3), f"size in {line!r}")
    return size, int(match.group(3)), match.group(4), int(match.group(5)), match.group(6)


# ---- image files -----------------------------------------------------------------------------

META_TYPES = {"MET_UCHAR": "B", "MET_SHORT": "h", "MET_USHORT": "H", "MET_FLOAT": "f",
              "MET_UINT": "I", "MET_ULONG_LONG": "Q"}
# The label types of --output-type auto by the number of labels, and their names in MetaImage.
LABEL_META_TYPES = ((255, "MET_UCHAR"), (65535, "MET_USHORT"), (2**32 - 1, "MET_UINT"))


def label_meta_type(count):
    return next(name for largest, name in LABEL_META_TYPES if count <= largest)


def write_mha(path, size, values, element_type="MET_SHORT", spacing=None, origin=None,
              direction=None, channels=1):
    """A MetaImage with its voxels in the same file, x fastest."""
    header = ["ObjectType = Image", f"NDims = {len(size)}", "BinaryData = True",
              "BinaryDataByteOrderMSB = False", "DimSize = " + " ".join(map(str, size))]
    if spacing:
        header.append("ElementSpacing = " + " ".join(map(str, spacing)))
    if origin:
        header.append("Offset = " + " ".join(map(str, origin)))
    if direction:
        header.append("TransformMatrix = " + " ".join(map(str, direction)))
    if channels > 1:
        header.append(f"ElementNumberOfChannels = {channels}")
    header += [f"ElementType = {element_type}", "ElementDataFile = LOCAL"]
    voxels = array.array(META_TYPES[element_type], values)
    if sys.byteorder == "big":
        voxels.byteswap()
    with open(path, "wb") as file:
        file.write(("\n".join(header) + "\n").encode())
        file.write(voxels.tobytes())


def read_meta(path):
    """Header fields and voxels of a .mha, or of a .mhd and its data file."""
    with open(path, "rb") as file:
        content = file.read()
    fields = {}
    position = 0
    while "ElementDataFile" not in fields:
        end = content.index(b"\n", position)
        key, _, value = content[position:end].decode().partition("=")
        fields[key.strip()] = value.strip()
        position = end + 1
    if fields["ElementDataFile"] == "LOCAL":
        data = content[position:]
    else:
        with open(os.path.join(os.path.dirname(path), fields["ElementDataFile"]), "rb") as file:
            data = file.read()
    expect(fields.get("CompressedData", "False") == "False", f"{path} is compressed")
    voxels = array.array(META_TYPES[fields["ElementType"]])
    voxels.frombytes(data)
    if sys.byteorder == "big":
        voxels.byteswap()
    return fields, voxels


def numbers(text):
    return [float(value) for value in text.split()]


NIFTI_UINT8, NIFTI_UINT16, NIFTI_UINT32, NIFTI_UINT64 = 2, 512, 768, 1280
NIFTI_TYPES = {NIFTI_UINT8: "B", NIFTI_UINT16: "H", NIFTI_UINT32: "I", NIFTI_UINT64: "Q"}


def read_nifti(path):
    """The NIfTI-1 header fields volccl must keep, and the voxels when they are unsigned."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        content = file.read()
    expect(struct.unpack_from("<i", content, 0)[0] == 348, f"{path} is no little-endian NIfTI-1")
    header = {
        "dim": struct.unpack_from("<8h", content, 40),
        "datatype": struct.unpack_from("<h", content, 70)[0],
        "bitpix": struct.unpack_from("<h", content, 72)[0],
        "pixdim": struct.unpack_from("<8f", content, 76),
        "quatern": struct.unpack_from("<6f", content, 256),  # b, c, d, offsets x, y, z
        "srow": struct.unpack_from("<12f", content, 280),
    }
    voxels = array.array(NIFTI_TYPES.get(header["datatype"], "I"))
    if header["datatype"] in NIFTI_TYPES:
        offset = int(struct.unpack_from("<f", content, 108)[0])
        voxels.frombytes(content[offset:])
        if sys.byteorder == "big":
            voxels.byteswap()
    return header, voxels


def close(a, b, tolerance=1e-4):
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b))


# ---- the labels volccl must write --------------------------------------------------------------


def label(mask, size, connectivity=26):
    """Labels numbered in raster order of each component's first voxel; the neighbours are
    the voxels at city-block distance 1 (6-connectivity), up to 2 (18) or up to 3 (26), or in
    a 2D image (a size of two numbers) the pixels at distance 1 (4) or up to 2 (8)."""
    nx, ny, nz = (*size, 1) if len(size) == 2 else size
    labels = [0] * len(mask)
    count = 0
    reach = {4: 1, 8: 2, 6: 1, 18: 2, 26: 3}[connectivity]
    depths = (0,) if connectivity in (4, 8) else (-1, 0, 1)
    neighbours = [(dx, dy, dz) for dz in depths for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                  if 0 < abs(dx) + abs(dy) + abs(dz) <= reach]
    for start, foreground in enumerate(mask):
        if not foreground or labels[start]:
            continue
        count += 1
        labels[start] = count
        stack = [start]
        while stack:
            index = stack.pop()
            x, y, z = index % nx, index // nx % ny, index // (nx * ny)
            for dx, dy, dz in neighbours:
                u, v, w = x + dx, y + dy, z + dz
                if 0 <= u < nx and 0 <= v < ny and 0 <= w < nz:
                    neighbour = u + nx * (v + ny * w)
                    if mask[neighbour] and not labels[neighbour]:
                        labels[neighbour] = count
                        stack.append(neighbour)
    return labels, count


def expect_raster_numbering(labels, count):
    """Labels 1..count appear, each first seen after the one before it (raster order)."""
    next_label = 1
    for value in labels:
        if value == next_label:
            next_label += 1
        else:
            expect(value < next_label, f"label {value} appears before label {next_label}")
    expect(next_label == count + 1, f"labels go up to {next_label - 1}, expected {count}")


# ---- cases -------------------------------------------------------------------------------------


@case
def label_sample(cli, work):
    result = cli.run("label", cli.sample, "--otsu", "-o", "labels.nii.gz", cwd=work)
    expect_success(result)
    expect(result.stderr == "", "unexpected stderr:\n" + describe(result))
    size, count, algorithm, connectivity, device = parse_summary(result.stdout.rstrip("\n"))
    expect((size, count, algorithm, connectivity) == (SAMPLE_SIZE, SAMPLE_OTSU_COMPONENTS,
                                                       auto_choice(device, 26), 26),
           f"unexpected summary {result.stdout!r}")
    expect_files(work, ["labels.nii.gz"])

    source, _ = read_nifti(cli.sample)
    labels_header, labels = read_nifti(os.path.join(work, "labels.nii.gz"))
    # --output-type auto: 17 labels fit uint8.
    expect(labels_header["datatype"] == NIFTI_UINT8 and labels_header["bitpix"] == 8,
           f"labels are not uint8: {labels_header}")
    expect(labels_header["dim"][:4] == source["dim"][:4], f"dimensions {labels_header['dim']}")
    expect(close(labels_header["pixdim"][1:4], source["pixdim"][1:4]),
           f"spacing {labels_header['pixdim']} differs from {source['pixdim']}")
    expect(close(labels_header["quatern"], source["quatern"]),
           f"orientation/origin {labels_header['quatern']} differ from {source['quatern']}")
    expect(len(labels) == SAMPLE_SIZE[0] * SAMPLE_SIZE[1] * SAMPLE_SIZE[2],
           f"{len(labels)} label voxels")
    expect_raster_numbering(labels, SAMPLE_OTSU_COMPONENTS)


@case
def every_algorithm_same_labels(cli, work):
    written = {}
    for algorithm in ("auto", *ALGORITHMS):
        output = f"{algorithm}.mha"
        result = cli.run("label", cli.sample, "--otsu", "--algorithm", algorithm, "--device",
                         "cpu", "-o", output, cwd=work)
        expect_success(result)
        _, count, used, connectivity, device = parse_summary(result.stdout.rstrip("\n"))
        expected_used = auto_choice(device, 26) if algorithm == "auto" else algorithm
        expect((count, used, connectivity) == (SAMPLE_OTSU_COMPONENTS, expected_used, 26)
               and device.startswith("CPU"), f"unexpected summary {result.stdout!r}")
        written[algorithm] = read_meta(os.path.join(work, output))[1]
    for algorithm in written:
        expect(written[algorithm] == written["bke"], f"{algorithm} labels differ from bke's")


@case
def sample_at_6_and_18(cli, work):
    # The foreground of the sample's Otsu mask, from the 26-connected labels.
    expect_success(cli.run("label", cli.sample, "--otsu", "-o", "labels26.mha", cwd=work))
    mask = [value != 0 for value in read_meta(os.path.join(work, "labels26.mha"))[1]]
    for connectivity, components in ((6, SAMPLE_OTSU_COMPONENTS_6),
                                     (18, SAMPLE_OTSU_COMPONENTS_18)):
        expected, expected_count = label(mask, SAMPLE_SIZE, connectivity)
        expect(expected_count == components,
               f"the oracle finds {expected_count} components at {connectivity}")
        for algorithm in ("auto", *ALGORITHMS_6_18):
            output = f"labels{connectivity}_{algorithm}.mha"
            result = cli.run("label", cli.sample, "--otsu", "--connectivity", str(connectivity),
                             "--algorithm", algorithm, "--device", "cpu", "-o", output, cwd=work)
            expect_success(result)
            size, count, used, said_connectivity, device = parse_summary(
                result.stdout.rstrip("\n"))
            expected_used = auto_choice(device, connectivity) if algorithm == "auto" else algorithm
            expect((size, count, used, said_connectivity) ==
                   (SAMPLE_SIZE, components, expected_used, connectivity),
                   f"unexpected summary {result.stdout!r}")
            expect(list(read_meta(os.path.join(work, output))[1]) == expected,
                   f"{algorithm} labels at {connectivity}-connectivity differ from the oracle's")


@case
def connectivity_6_18_26(cli, work):
    # A random volume and a checkerboard, where the three connectivities give different counts.
    generator = random.Random(5)
    volumes = {
        "random": ((23, 19, 17), [generator.random() < 0.4 for _ in range(23 * 19 * 17)]),
        "checkerboard": ((7, 8, 9), [(x + y + z) % 2 == 0
                                     for z in range(9) for y in range(8) for x in range(7)]),
    }
    counts = {}
    for name, (size, mask) in volumes.items():
        write_mha(os.path.join(work, f"{name}.mha"), size, mask, "MET_UCHAR")
        for connectivity in (6, 18, 26):
            expected, counts[name, connectivity] = label(mask, size, connectivity)
            for algorithm in ("auto", "uf", "ruf", *(("ufb",) if connectivity != 26 else ())):
                result = cli.run("label", f"{name}.mha", "--connectivity", str(connectivity),
                                 "--algorithm", algorithm, "-o", "labels.mha", "--force",
                                 cwd=work)
                expect_success(result)
                _, count, used, said_connectivity, device = parse_summary(
                    result.stdout.rstrip("\n"))
                expected_used = algorithm
                if algorithm == "auto":
                    expected_used = auto_choice(device, connectivity)
                expect((count, used, said_connectivity) ==
                       (counts[name, connectivity], expected_used, connectivity),
                       f"{name}: unexpected summary {result.stdout!r}")
                expect(list(read_meta(os.path.join(work, "labels.mha"))[1]) == expected,
                       f"{name}: {algorithm} labels at {connectivity} differ from the oracle's")
    expect(counts["random", 6] > counts["random", 18] > counts["random", 26],
           f"the random volume does not tell the connectivities apart: {counts}")
    expect([counts["checkerboard", c] for c in (6, 18, 26)] ==
           [sum(volumes["checkerboard"][1]), 1, 1], f"checkerboard counts {counts}")


@case
def geometry_kept(cli, work):
    size = (7, 6, 5)
    spacing = (0.5, 1.25, 2.0)
    origin = (-3.0, 4.5, 10.0)
    direction = (0, 1, 0, -1, 0, 0, 0, 0, 1)
    write_mha(os.path.join(work, "input.mha"), size, [float(i % 3) for i in range(7 * 6 * 5)],
              "MET_FLOAT", spacing, origin, direction)
    for rule in ((), ("--threshold", "1"), ("--otsu",)):
        expect_success(cli.run("label", "input.mha", *rule, "-o", "labels.mha", "--force",
                               cwd=work))
        fields, labels = read_meta(os.path.join(work, "labels.mha"))
        expect(fields["ElementType"] == label_meta_type(max(labels)),
               f"{max(labels)} labels are {fields['ElementType']}")
        expect(numbers(fields["DimSize"]) == list(size), f"{rule}: size {fields['DimSize']}")
        expect(close(numbers(fields["ElementSpacing"]), spacing), f"{rule}: spacing {fields}")
        expect(close(numbers(fields["Offset"]), origin), f"{rule}: origin {fields}")
        expect(close(numbers(fields["TransformMatrix"]), direction),
               f"{rule}: direction {fields}")


@case
def foreground_rules(cli, work):
    size = (13, 11, 9)
    generator = random.Random(7)
    values = [generator.randint(-20, 20) for _ in range(13 * 11 * 9)]
    write_mha(os.path.join(work, "input.mha"), size, values)
    rules = {
        (): lambda v: v != 0,
        ("--threshold", "5"): lambda v: v >= 5,
        ("--threshold", "-5:3"): lambda v: -5 <= v <= 3,
        ("--threshold=-20:-10",): lambda v: -20 <= v <= -10,
        ("--threshold", "2.5:2.5"): lambda v: False,
    }
    for arguments, is_foreground in rules.items():
        result = cli.run("label", "input.mha", *arguments, "-o", "labels.mha", "--force",
                         cwd=work)
        expect_success(result)
        expected, count = label([is_foreground(v) for v in values], size)
        _, labels = read_meta(os.path.join(work, "labels.mha"))
        expect(list(labels) == expected, f"labels for {arguments} differ from the oracle's")
        expect(parse_summary(result.stdout.rstrip("\n"))[1] == count,
               f"count for {arguments}: {result.stdout!r}, expected {count}")


@case
def float_threshold(cli, work):
    size = (9, 8, 7)
    generator = random.Random(11)
    values = [generator.choice((0.0, 0.25, 0.5, 1.0, 1.5)) for _ in range(9 * 8 * 7)]
    write_mha(os.path.join(work, "input.mha"), size, values, "MET_FLOAT")
    expect_success(cli.run("label", "input.mha", "--threshold", "0.3:1.2", "-o", "labels.mha",
                           cwd=work))
    expected, _ = label([0.3 <= v <= 1.2 for v in values], size)
    expect(list(read_meta(os.path.join(work, "labels.mha"))[1]) == expected,
           "labels differ from the oracle's")


@case
def bad_threshold(cli, work):
    expect_error(cli.run("label", cli.sample, "--threshold", "abc", "-o", "l.nii", cwd=work), 2,
                 "--threshold", "not a number")
    expect_error(cli.run("label", cli.sample, "--threshold", "5:1", "-o", "l.nii", cwd=work), 2,
                 "--threshold", "above")
    expect_error(cli.run("label", cli.sample, "--otsu", "--threshold", "5", "-o", "l.nii",
                         cwd=work), 2, "excludes")
    expect_files(work, [])


@case
def missing_input(cli, work):
    expect_error(cli.run("label", "missing.nii.gz", "-o", "labels.nii.gz", cwd=work), 1,
                 "missing.nii.gz", "does not exist")
    expect_files(work, [])


@case
def corrupt_input(cli, work):
    with open(os.path.join(work, "noise.nii.gz"), "wb") as file:
        file.write(random.Random(3).randbytes(2000))
    expect_error(cli.run("label", "noise.nii.gz", "-o", "labels.nii.gz", cwd=work), 1,
                 "cannot read INPUT", "noise.nii.gz")
    expect_files(work, ["noise.nii.gz"])


@case
def existing_output_refused(cli, work):
    output = os.path.join(work, "labels.nii.gz")
    with open(output, "wb") as file:
        file.write(b"keep me")
    expect_error(cli.run("label", cli.sample, "-o", "labels.nii.gz", cwd=work), 1, "exists",
                 "--force")
    with open(output, "rb") as file:
        expect(file.read() == b"keep me", "the existing OUTPUT was changed")
    expect_files(work, ["labels.nii.gz"])


@case
def force_overwrites(cli, work):
    output = os.path.join(work, "labels.nii.gz")
    with open(output, "wb") as file:
        file.write(b"replace me")
    expect_success(cli.run("label", cli.sample, "--otsu", "-o", "labels.nii.gz", "--force",
                           cwd=work))
    header, labels = read_nifti(output)
    expect(header["datatype"] == NIFTI_UINT8 and max(labels) == SAMPLE_OTSU_COMPONENTS,
           "OUTPUT was not replaced by the labels")
    expect_files(work, ["labels.nii.gz"])


@case
def input_never_overwritten(cli, work):
    shutil.copy(cli.sample, os.path.join(work, "brain.nii.gz"))
    os.symlink("brain.nii.gz", os.path.join(work, "link.nii.gz"))
    with open(cli.sample, "rb") as file:
        original = file.read()
    for output in ("brain.nii.gz", "./brain.nii.gz", "link.nii.gz"):
        expect_error(cli.run("label", "brain.nii.gz", "-o", output, "--force", cwd=work), 1,
                     "is the INPUT")
    with open(os.path.join(work, "brain.nii.gz"), "rb") as file:
        expect(file.read() == original, "the INPUT was changed")
    expect_files(work, ["brain.nii.gz", "link.nii.gz"])


@case
def missing_output_directory(cli, work):
    expect_error(cli.run("label", cli.sample, "-o", "missing/labels.nii.gz", cwd=work), 1,
                 "'missing' does not exist")
    expect_files(work, [])


@case
def unwritable_output_directory(cli, work):
    if os.geteuid() != 0:
        directory = os.path.join(work, "read-only")
        os.mkdir(directory, 0o555)
    elif os.path.isdir("/sys"):
        directory = "/sys"  # root may write anywhere but in sysfs
    else:
        raise Skip("running as root, and no /sys to fail on")
    output = os.path.join(directory, "labels.nii.gz")
    expect_error(cli.run("label", cli.sample, "-o", output, cwd=work), 1,
                 "cannot write to directory")
    expect(not os.path.exists(output), f"{output} was written")
    if directory.startswith(work):
        expect_files(directory, [])


@case
def failed_write_leaves_nothing(cli, work):
    # ITK's MRC writer has no uint32 mode: the write itself fails, after the labeling.
    expect_error(cli.run("label", cli.sample, "-o", "labels.mrc", "--output-type", "uint32",
                         cwd=work), 1, "cannot write OUTPUT", "labels.mrc", "as uint32")
    expect_files(work, [])


@case
def unknown_output_format(cli, work):
    expect_error(cli.run("label", cli.sample, "-o", "labels.xyz", cwd=work), 1,
                 "cannot write OUTPUT", ".xyz")
    expect_files(work, [])


@case
def two_file_output(cli, work):
    expect_success(cli.run("label", cli.sample, "--otsu", "-o", "labels.mhd", cwd=work))
    expect_files(work, ["labels.mhd", "labels.raw"])
    fields, labels = read_meta(os.path.join(work, "labels.mhd"))
    expect(fields["ElementDataFile"] == "labels.raw", f"data file {fields['ElementDataFile']}")
    expect_raster_numbering(labels, SAMPLE_OTSU_COMPONENTS)


def write_png(path, width, height, pixels):
    """An 8-bit greyscale PNG, rows top to bottom, with the standard library's zlib."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + bytes(pixels[y * width:(y + 1) * width]) for y in range(height))
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n")
        file.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)))
        file.write(chunk(b"IDAT", zlib.compress(rows)))
        file.write(chunk(b"IEND", b""))


def read_png(path):
    """Width, height, bit depth and values (x fastest) of a non-interlaced greyscale PNG."""
    with open(path, "rb") as file:
        content = file.read()
    expect(content[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is no PNG")
    position, compressed = 8, b""
    while position < len(content):
        length, kind = struct.unpack_from(">I4s", content, position)
        data = content[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data)
            expect(colour == 0 and interlace == 0, f"{path}: colour type {colour}")
        elif kind == b"IDAT":
            compressed += data
        position += 12 + length
    raw = zlib.decompress(compressed)
    step = depth // 8  # bytes per pixel: the filters' distance to the left neighbour
    stride = width * step
    previous, values = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = row[i - step] if i >= step else 0
            up, up_left = previous[i], previous[i - step] if i >= step else 0
            if kind == 1:
                row[i] = (row[i] + left) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + up) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - up_left
                nearest = min((abs(estimate - left), 0, left), (abs(estimate - up), 1, up),
                              (abs(estimate - up_left), 2, up_left))[2]
                row[i] = (row[i] + nearest) & 0xFF
        values += list(row) if step == 1 else list(struct.unpack(f">{width}H", bytes(row)))
        previous = row
    return width, height, depth, values

@case
def label_2d_images(cli, work):
    # A random image (width across a warp's 64 pixels) and a checkerboard, where 4 and 8 differ.
    generator = random.Random(13)
    images = {
        "random": ((67, 29), [generator.random() < 0.5 for _ in range(67 * 29)]),
        "checkerboard": ((9, 7), [(x + y) % 2 == 0 for y in range(7) for x in range(9)]),
    }
    for name, (size, mask) in images.items():
        write_mha(os.path.join(work, f"{name}.mha"), size, mask, "MET_UCHAR")
        counts = {}
        for connectivity in (4, 8):
            expected, counts[connectivity] = label(mask, size, connectivity)
            algorithms = ALGORITHMS_4 if connectivity == 4 else ALGORITHMS_2D
            for algorithm in ("auto", *algorithms):
                result = cli.run("label", f"{name}.mha", "--connectivity", str(connectivity),
                                 "--algorithm", algorithm, "--device", "cpu", "-o",
                                 "labels.mha", "--force", cwd=work)
                expect_success(result)
                said_size, count, used, said_connectivity, device = parse_summary(
                    result.stdout.rstrip("\n"))
                expected_used = algorithm
                if algorithm == "auto":
                    expected_used = auto_choice(device, connectivity)
                expect((said_size, count, used, said_connectivity) ==
                       (size, counts[connectivity], expected_used, connectivity),
                       f"{name}: unexpected summary {result.stdout!r}")
                fields, labels = read_meta(os.path.join(work, "labels.mha"))
                expect(fields["NDims"] == "2" and
                       fields["ElementType"] == label_meta_type(counts[connectivity]),
                       f"{name}: labels are {fields['NDims']}D {fields['ElementType']}")
                expect(list(labels) == expected,
                       f"{name}: {algorithm} labels at {connectivity} differ from the oracle's")
        expect(counts[4] > counts[8], f"{name}: 4 and 8 give {counts}")
    # Without --connectivity a 2D image is labeled with 8.
    result = cli.run("label", "random.mha", "-o", "default.mha", cwd=work)
    expect_success(result)
    expect(parse_summary(result.stdout.rstrip("\n"))[3] == 8, f"default: {result.stdout!r}")


@case
def png_input(cli, work):
    width, height = 37, 23
    generator = random.Random(17)
    pixels = [generator.choice((0, 0, 90, 200)) for _ in range(width * height)]
    write_png(os.path.join(work, "cells.png"), width, height, pixels)
    for rule, is_foreground in (((), lambda v: v != 0), (("--threshold", "100"), lambda v: v >= 100)):
        result = cli.run("label", "cells.png", *rule, "--connectivity", "4", "-o", "labels.nrrd",
                         "--force", cwd=work)
        expect_success(result)
        expected, count = label([is_foreground(v) for v in pixels], (width, height), 4)
        said_size, said_count, used, _, device = parse_summary(result.stdout.rstrip("\n"))
        expect((said_size, said_count, used) == ((width, height), count, auto_choice(device, 4)),
               f"{rule}: unexpected summary {result.stdout!r}")
        expect_success(cli.run("label", "cells.png", *rule, "--connectivity", "4", "-o",
                               "labels.mha", "--force", cwd=work))
        expect(list(read_meta(os.path.join(work, "labels.mha"))[1]) == expected,
               f"{rule}: labels differ from the oracle's")
    # A PNG holds up to 65535 labels (uint8 or uint16), not uint32.
    expect_success(cli.run("label", "cells.png", "--connectivity", "4", "-o", "labels.png",
                           cwd=work))
    width_read, height_read, bit_depth, labels = read_png(os.path.join(work, "labels.png"))
    expected, count = label([v != 0 for v in pixels], (width, height), 4)
    expect((width_read, height_read, bit_depth) == (width, height, 8 if count < 256 else 16),
           f"labels.png is {width_read}x{height_read}, {bit_depth}-bit")
    expect(labels == expected, "the PNG's labels differ from the oracle's")
    expect_error(cli.run("label", "cells.png", "-o", "wide.png", "--output-type", "uint32",
                         cwd=work), 1, "PNG files cannot hold uint32", ".tif")
    expect_files(work, ["cells.png", "labels.mha", "labels.nrrd", "labels.png"])


@case
def one_slice_volume(cli, work):
    # A 3D file of one slice takes the 2D and the 3D connectivities: 6 labels as 4, 18 and
    # 26 as 8; without --connectivity it is labeled as an image, with 8.
    size = (41, 13, 1)
    generator = random.Random(19)
    mask = [generator.random() < 0.5 for _ in range(41 * 13)]
    write_mha(os.path.join(work, "slice.mha"), size, mask, "MET_UCHAR")
    expected = {c: label(mask, size[:2], c) for c in (4, 8)}
    for connectivity, same_as in ((4, 4), (8, 8), (6, 4), (18, 8), (26, 8), (None, 8)):
        arguments = () if connectivity is None else ("--connectivity", str(connectivity))
        result = cli.run("label", "slice.mha", *arguments, "-o", "labels.mha", "--force",
                         cwd=work)
        expect_success(result)
        said_size, count, _, said_connectivity, _ = parse_summary(result.stdout.rstrip("\n"))
        expect((said_size, count, said_connectivity) ==
               (size, expected[same_as][1], connectivity or 8),
               f"--connectivity {connectivity}: unexpected summary {result.stdout!r}")
        fields, labels = read_meta(os.path.join(work, "labels.mha"))
        expect(fields["NDims"] == "3", f"a one-slice volume came back {fields['NDims']}D")
        expect(list(labels) == expected[same_as][0],
               f"--connectivity {connectivity}: labels differ from the oracle's")


@case
def dimension_and_connectivity_mismatch(cli, work):
    write_mha(os.path.join(work, "image.mha"), (5, 4), [1, 0] * 10, "MET_UCHAR")
    for connectivity in ("6", "18", "26"):
        expect_error(cli.run("label", "image.mha", "--connectivity", connectivity, "-o",
                             "labels.mha", cwd=work), 1,
                     "is a 2D image of 5x4 pixels", "--connectivity 4 or 8")
    for connectivity in ("4", "8"):
        expect_error(cli.run("label", cli.sample, "--connectivity", connectivity, "-o",
                             "labels.mha", cwd=work), 1,
                     f"{connectivity}-connectivity labels 2D images", "128x128x62",
                     "6, 18 or 26")
    for algorithm in ("ke", "ha4", "ha4-64", "le", "tm"):
        expect_error(cli.run("label", cli.sample, "--algorithm", algorithm, "-o", "labels.mha",
                             cwd=work), 1, f"{algorithm} cannot label with 26-connectivity",
                     "2D images only")
    for algorithm in ("buf", "buf-ic", "bke", "bke-ic"):
        expect_error(cli.run("label", "image.mha", "--algorithm", algorithm, "--connectivity",
                             "4", "-o", "labels.mha", cwd=work), 2,
                     f"{algorithm} cannot label with 4-connectivity", "ha4")
    expect_files(work, ["image.mha"])


@case
def input_4d_refused(cli, work):
    write_mha(os.path.join(work, "series.mha"), (3, 3, 3, 2), [1] * 54, "MET_UCHAR")
    expect_error(cli.run("label", "series.mha", "-o", "labels.mha", cwd=work), 1,
                 "is a 4D image")
    expect_files(work, ["series.mha"])


@case
def input_4d_of_one_volume(cli, work):
    values = [1, 0, 0] * 9
    write_mha(os.path.join(work, "series.mha"), (3, 3, 3, 1), values, "MET_UCHAR")
    result = cli.run("label", "series.mha", "-o", "labels.mha", cwd=work)
    expect_success(result)
    expect(parse_summary(result.stdout.rstrip("\n"))[:2] == ((3, 3, 3), 1),
           f"unexpected summary {result.stdout!r}")


@case
def multi_component_input_refused(cli, work):
    write_mha(os.path.join(work, "rgb.mha"), (3, 3, 3), [1] * 81, "MET_UCHAR", channels=3)
    expect_error(cli.run("label", "rgb.mha", "-o", "labels.mha", cwd=work), 1,
                 "only images of scalar pixels")
    expect_files(work, ["rgb.mha"])


@case
def unsupported_connectivity(cli, work):
    for connectivity in ("27", "0", "5"):
        expect_error(cli.run("label", cli.sample, "--connectivity", connectivity, "-o",
                             "labels.nii.gz", cwd=work), 2,
                     "--connectivity", f"connectivity {connectivity} does not exist",
                     "4 or 8 for 2D images, 6, 18 or 26 for volumes")
    expect_error(cli.run("label", cli.sample, "--connectivity", "six", "-o", "labels.nii.gz",
                         cwd=work), 2, "--connectivity", "six")
    expect_files(work, [])
    for connectivity in ("6", "18", "26"):
        expect_success(cli.run("label", cli.sample, "--connectivity", connectivity, "-o",
                               "labels.nii.gz", "--force", cwd=work))


@case
def block_algorithm_needs_26(cli, work):
    for algorithm in ("buf", "buf-ic", "bke", "bke-ic"):
        for connectivity in ("6", "18"):
            expect_error(cli.run("label", cli.sample, "--algorithm", algorithm,
                                 "--connectivity", connectivity, "-o", "labels.nii.gz",
                                 cwd=work), 2,
                         f"{algorithm} cannot label with {connectivity}-connectivity", "uf")
    expect_files(work, [])


@case
def unknown_algorithm_or_device(cli, work):
    expect_error(cli.run("label", cli.sample, "--algorithm", "lsl", "-o", "l.nii", cwd=work), 2,
                 "--algorithm", "bke")
    expect_error(cli.run("label", cli.sample, "--device", "gpu", "-o", "l.nii", cwd=work), 2,
                 "--device", "cuda")
    expect_files(work, [])


@case
def device_cuda(cli, work):
    result = cli.run("label", cli.sample, "--otsu", "--device", "cuda", "-o", "labels.nii.gz",
                     cwd=work)
    if result.returncode == 0:  # a GPU is there: it must have been used
        _, count, _, _, device = parse_summary(result.stdout.rstrip("\n"))
        expect(count == SAMPLE_OTSU_COMPONENTS and device.startswith("CUDA: "),
               f"unexpected summary {result.stdout!r}")
        expect_files(work, ["labels.nii.gz"])
    else:
        expect_error(result, 1, "no CUDA device", "--device cpu")
        expect_files(work, [])


@case
def max_gpu_memory(cli, work):
    # A budget far below the sample's needs: on a GPU it is labeled in slabs, with the labels it
    # has whole; on the CPU the budget changes nothing.
    expect_success(cli.run("label", cli.sample, "--otsu", "-o", "whole.nii", cwd=work))
    result = cli.run("label", cli.sample, "--otsu", "--max-gpu-memory", "1M", "-o", "slabs.nii",
                     cwd=work)
    expect_success(result)
    _, count, _, _, _ = parse_summary(result.stdout.rstrip("\n"))
    expect(count == SAMPLE_OTSU_COMPONENTS, f"unexpected summary {result.stdout!r}")
    with open(os.path.join(work, "whole.nii"), "rb") as whole, \
            open(os.path.join(work, "slabs.nii"), "rb") as slabs:
        expect(whole.read() == slabs.read(), "the labels with a budget differ")
    expect_success(cli.run("label", cli.sample, "--otsu", "--max-gpu-memory", "16777216", "-o",
                           "bytes.nii", cwd=work))
    expect_error(cli.run("label", cli.sample, "--max-gpu-memory", "lots", "-o", "l.nii",
                         cwd=work), 2, "--max-gpu-memory")
    expect_files(work, ["whole.nii", "slabs.nii", "bytes.nii"])


@case
def device_auto_says_which(cli, work):
    result = cli.run("label", cli.sample, "--otsu", "-o", "labels.nii.gz", cwd=work)
    expect_success(result)
    _, count, _, _, device = parse_summary(result.stdout.rstrip("\n"))
    expect(count == SAMPLE_OTSU_COMPONENTS, f"unexpected summary {result.stdout!r}")
    expect(device.startswith("CPU, ") or device.startswith("CUDA: "), f"device {device!r}")


@case
def timings_json(cli, work):
    result = cli.run("label", cli.sample, "--otsu", "--timings", "-o", "labels.nii.gz",
                     cwd=work)
    expect_success(result)
    expect(len(result.stdout.splitlines()) == 1, "expected one line on stdout:\n" +
           describe(result))
    timings = json.loads(result.stdout)
    expect(timings["components"] == SAMPLE_OTSU_COMPONENTS, f"components in {timings}")
    expect(tuple(timings["size"]) == SAMPLE_SIZE, f"size in {timings}")
    expect(timings["device"] in ("cpu", "cuda"), f"device in {timings}")
    expect((timings["algorithm"], timings["connectivity"]) ==
           (auto_choice(timings["device"], 26), 26),
           f"algorithm and connectivity in {timings}")
    steps = ("allocation", "upload", "initialization", "merge", "compression", "relabel",
             "final_labeling", "statistics", "download", "total")
    expect(sorted(timings["label_ms"]) == sorted(steps), f"label steps in {timings}")
    expect(timings["label_ms"]["total"] > 0, f"no labeling time in {timings}")
    for key in ("read_ms", "binarize_ms", "write_ms", "stats_write_ms"):
        expect(timings[key] >= 0, f"{key} in {timings}")
    parse_summary(result.stderr.rstrip("\n"))

    quiet = cli.run("label", cli.sample, "--timings", "--quiet", "-o", "labels.nii.gz",
                    "--force", cwd=work)
    expect_success(quiet)
    expect(quiet.stderr == "" and json.loads(quiet.stdout)["components"] >= 1,
           "--timings --quiet:\n" + describe(quiet))

    six = cli.run("label", cli.sample, "--otsu", "--timings", "--connectivity", "6", "-o",
                  "labels6.nii.gz", cwd=work)
    expect_success(six)
    timings = json.loads(six.stdout)
    expect((timings["components"], timings["algorithm"], timings["connectivity"]) ==
           (SAMPLE_OTSU_COMPONENTS_6, auto_choice(timings["device"], 6), 6),
           f"--connectivity 6: {timings}")
    expect(parse_summary(six.stderr.rstrip("\n"))[2:4] == (auto_choice(timings["device"], 6), 6),
           describe(six))


@case
def quiet(cli, work):
    result = cli.run("label", cli.sample, "--quiet", "-o", "labels.nii.gz", cwd=work)
    expect_success(result)
    expect(result.stdout == "" and result.stderr == "", "--quiet printed:\n" + describe(result))
    expect_files(work, ["labels.nii.gz"])


@case
def help_and_version(cli, work):
    main_help = cli.run("--help")
    expect_success(main_help)
    expect("label" in main_help.stdout and "stats" in main_help.stdout,
           "volccl --help does not name label and stats:\n" + describe(main_help))
    label_help = cli.run("label", "--help")
    expect_success(label_help)
    for option in ("INPUT", "--output", "--connectivity", "--algorithm", "--device", "--otsu",
                   "--threshold", "--label", "--force", "--quiet", "--progress", "--timings",
                   "--stats", "--stats-strategy", "--min-size", "--largest", "--sort-by-size",
                   "--output-type", "--vtk", "--vtk-labels", "--surfaces"):
        expect(option in label_help.stdout, f"volccl label --help lacks {option}")
    for text in ("{4,8,6,18,26}", "FullyConnected", "auto", "uf", "ha4-64", "2D"):
        expect(text in label_help.stdout, f"volccl label --help lacks {text}")
    version = cli.run("--version")
    expect_success(version)
    expect(re.fullmatch(r"volccl \d+\.\d+\.\d+\n", version.stdout), f"version {version.stdout!r}")
    expect_error(cli.run(), 2, "subcommand")
    expect_error(cli.run("label", cli.sample, cwd=work), 1, "nothing to write", "-o OUTPUT",
                 "--stats", "--vtk")
    expect_files(work, [])


# ---- statistics ---------------------------------------------------------------------------------


def expected_statistics(labels, count, size, spacing, origin, direction):
    """Per label: count, physical centroid and covariance (two passes over physical points),
    bounding box; direction is row-major, physical = origin + direction * (spacing * index)."""
    dimension = len(size)
    nx, ny = size[0], size[1]
    points = [[] for _ in range(count)]
    indices = [[] for _ in range(count)]
    for index, value in enumerate(labels):
        if not value:
            continue
        position = (index % nx, index // nx % ny, index // (nx * ny))[:dimension]
        physical = [origin[i] + sum(direction[dimension * i + j] * spacing[j] * position[j]
                                    for j in range(dimension)) for i in range(dimension)]
        points[value - 1].append(physical)
        indices[value - 1].append(position)
    result = []
    for members, positions in zip(points, indices):
        n = len(members)
        mean = [sum(p[i] for p in members) / n for i in range(dimension)]
        covariance = [[sum((p[i] - mean[i]) * (p[j] - mean[j]) for p in members) / n
                       for j in range(dimension)] for i in range(dimension)]
        box = ([min(p[i] for p in positions) for i in range(dimension)],
               [max(p[i] for p in positions) for i in range(dimension)])
        result.append((n, mean, covariance, box))
    return result


def determinant(m):
    if len(m) == 2:
        return m[0][0] * m[1][1] - m[0][1] * m[1][0]
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
            m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
            m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def check_statistics_rows(rows, expected, dimension, voxel_size, where):
    """rows: dicts of --stats column name -> number, one per label in order."""
    expect(len(rows) == len(expected), f"{where}: {len(rows)} rows, expected {len(expected)}")
    axes = "xyz"[:dimension]
    terms = ("xx", "yy", "zz", "xy", "xz", "yz") if dimension == 3 else ("xx", "yy", "xy")
    for number, (row, (n, mean, covariance, box)) in enumerate(zip(rows, expected), 1):
        here = f"{where}, label {number}"
        expect(row["label"] == number and row["count"] == n, f"{here}: {row}")
        expect(abs(row["physical_size"] - n * voxel_size) <= 1e-9 * n * voxel_size, here)
        scale = max(1.0, max(abs(c) for c in mean))
        for i, axis in enumerate(axes):
            expect(abs(row[f"centroid_{axis}"] - mean[i]) <= 1e-9 * scale,
                   f"{here}: centroid_{axis} {row[f'centroid_{axis}']} != {mean[i]}")
            expect(row[f"bounding_box_min_{axis}"] == box[0][i] and
                   row[f"bounding_box_max_{axis}"] == box[1][i], f"{here}: bounding box")
        norm = max(1e-300, max(abs(v) for line in covariance for v in line))
        for term in terms:
            i, j = "xyz".index(term[0]), "xyz".index(term[1])
            expect(abs(row[f"covariance_{term}"] - covariance[i][j]) <= 1e-9 * norm + 1e-12,
                   f"{here}: covariance_{term} {row[f'covariance_{term}']} != {covariance[i][j]}")
        # The principal moments are the eigenvalues: their sum is the trace, their product
        # the determinant.
        moments = [row[f"principal_moment_{r + 1}"] for r in range(dimension)]
        expect(moments == sorted(moments), f"{here}: principal moments not ascending")
        trace = sum(covariance[i][i] for i in range(dimension))
        expect(abs(sum(moments) - trace) <= 1e-9 * norm + 1e-12, f"{here}: trace")
        product = 1.0
        for m in moments:
            product *= m
        expect(abs(product - determinant(covariance)) <= 1e-8 * norm ** dimension + 1e-12,
               f"{here}: determinant")


def read_stats_csv(path):
    with open(path) as file:
        lines = file.read().splitlines()
    columns = lines[0].split(",")
    return columns, [dict(zip(columns, map(float, line.split(",")))) for line in lines[1:]]


def read_stats_json(path):
    with open(path) as file:
        document = json.load(file)
    return document["columns"], [dict(zip(document["columns"], row)) for row in document["rows"]]


@case
def stats_csv_and_json(cli, work):
    random.seed(11)
    cases = (
        ((13, 11, 7), (0.5, 1.25, 2.0), (-3.0, 4.5, 10.0),
         (0.0, 1.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0), (6, 18, 26)),
        ((29, 17), (0.75, 1.5), (12.0, -7.0), (0.6, -0.8, 0.8, 0.6), (4, 8)),
    )
    for size, spacing, origin, direction, connectivities in cases:
        voxels = 1
        for n in size:
            voxels *= n
        mask = [1 if random.random() < 0.45 else 0 for _ in range(voxels)]
        write_mha(os.path.join(work, "input.mha"), size, mask, "MET_UCHAR", spacing, origin,
                  direction)
        voxel_size = 1.0
        for step in spacing:
            voxel_size *= step
        # MetaImage's TransformMatrix lists ITK's direction matrix column by column.
        d = len(size)
        direction_rows = [direction[d * j + i] for i in range(d) for j in range(d)]
        for connectivity in connectivities:
            labels, count = label(mask, size, connectivity)
            expected = expected_statistics(labels, count, size, spacing, origin,
                                           direction_rows)
            for name, reader in (("stats.csv", read_stats_csv), ("stats.json", read_stats_json)):
                where = f"{len(size)}D at {connectivity}, {name}"
                result = cli.run("label", "input.mha", "-o", "labels.mha", "--connectivity",
                                 str(connectivity), "--stats", name, "--force", cwd=work)
                expect_success(result)
                columns, rows = reader(os.path.join(work, name))
                expect("covariance_xy" in columns and "principal_axis_1_x" in columns and
                       ("centroid_z" in columns) == (len(size) == 3), f"{where}: {columns}")
                check_statistics_rows(rows, expected, len(size), voxel_size, where)
    expect_files(work, ["input.mha", "labels.mha", "stats.csv", "stats.json"])


@case
def stats_errors(cli, work):
    expect_error(cli.run("label", cli.sample, "-o", "labels.nii.gz", "--stats", "stats.txt",
                         cwd=work), 1, ".csv or .json")
    expect_files(work, [])
    expect_error(cli.run("label", cli.sample, "-o", "labels.nii.gz", "--stats", "labels.nii.gz",
                         cwd=work), 1, "stats")
    open(os.path.join(work, "stats.csv"), "w").close()
    expect_error(cli.run("label", cli.sample, "-o", "labels.nii.gz", "--stats", "stats.csv",
                         cwd=work), 1, "exists", "--force")
    expect_files(work, ["stats.csv"])
    expect_error(cli.run("label", cli.sample, "-o", "labels.nii.gz", "--stats", "stats.csv",
                         "--force", "--connectivity", "6", "--stats-strategy", "fused",
                         cwd=work), 1, "fused", "late")
    expect_error(cli.run("label", cli.sample, "-o", "labels.nii.gz", "--stats", "missing/s.csv",
                         cwd=work), 1, "does not exist")
    expect_files(work, ["stats.csv"])
    expect(os.path.getsize(os.path.join(work, "stats.csv")) == 0, "stats.csv was touched")
    # BUF has the early strategy on both backends; auto's CPU choice (RTS) measures late only.
    result = cli.run("label", cli.sample, "--otsu", "-o", "labels.nii.gz", "--stats",
                     "stats.csv", "--force", "--algorithm", "buf", "--stats-strategy", "early",
                     cwd=work)
    expect_success(result)
    _, rows = read_stats_csv(os.path.join(work, "stats.csv"))
    expect(len(rows) == SAMPLE_OTSU_COMPONENTS, f"{len(rows)} rows")


@case
def generate_and_info(cli, work):
    result = cli.run("generate", "random", "-o", "random.mha", "--size", "40,30,9",
                     "--density", "0.25", "--granularity", "2", "--seed", "11", cwd=work)
    expect_success(result)
    expect(result.stdout.startswith("generated random: 40x30x9 voxels, "), result.stdout)
    fields, voxels = read_meta(os.path.join(work, "random.mha"))
    expect(numbers(fields["DimSize"]) == [40, 30, 9] and set(voxels) <= {0, 1},
           f"random.mha: {fields}")
    expect(0.15 < sum(voxels) / len(voxels) < 0.35, "density far from 0.25")
    # The same seed gives the same volume.
    expect_success(cli.run("generate", "random", "-o", "again.mha", "--size", "40,30,9",
                           "--density", "0.25", "--granularity", "2", "--seed", "11", "-q",
                           cwd=work))
    expect(read_meta(os.path.join(work, "again.mha"))[1] == voxels, "seeded volumes differ")
    # A Hilbert curve is one 6-connected component; a spiral image one 4-connected one.
    expect_success(cli.run("generate", "hilbert", "-o", "hilbert.nii.gz", "--size", "32",
                           "--order", "3", "-q", cwd=work))
    labeled = cli.run("label", "hilbert.nii.gz", "-o", "hilbert_labels.nii.gz",
                      "--connectivity", "6", cwd=work)
    expect_success(labeled)
    expect(parse_summary(labeled.stdout.rstrip("\n"))[1] == 1, labeled.stdout)
    expect_success(cli.run("generate", "spiral", "-o", "spiral.png", "--size", "33,21", "-q",
                           cwd=work))
    labeled = cli.run("label", "spiral.png", "-o", "spiral_labels.mha", "--connectivity", "4",
                      cwd=work)
    expect_success(labeled)
    expect(parse_summary(labeled.stdout.rstrip("\n"))[1] == 1, labeled.stdout)

    info = cli.run("info", "random.mha", cwd=work)
    expect_success(info)
    for line in ("size: 40x30x9 voxels (3D)", "spacing: 1 1 1", "pixel type: unsigned_char",
                 f"foreground (non-zero): {sum(voxels)} of {len(voxels)} voxels", "GPU: "):
        expect(line in info.stdout, f"volccl info lacks {line!r}:\n{info.stdout}")
    expect_error(cli.run("generate", "hilbert", "-o", "bad.mha", "--size", "30", cwd=work), 1,
                 "power of two")
    expect_error(cli.run("generate", "random", "-o", "random.mha", cwd=work), 1, "exists")
    expect_error(cli.run("generate", "cubes", "-o", "cubes.mha", cwd=work), 2, "cubes")
    expect_error(cli.run("info", "missing.mha", cwd=work), 1, "does not exist")



@case
def generate_ridge(cli, work):
    """The Ridge patterns of the LE/TM paper (Sec. IV): R_2 and R_3 worked by hand from Eq. 6-16,
    a family member against the pattern it is made of, and the errors."""
    hand = {
        (2, 8): ["........",
                 ".#..#...",
                 ".#..#...",
                 ".#####..",
                 "..#####."],
        (3, 16): ["................",
                  ".#.....#........",
                  ".#..#..#........",
                  ".#..#..#........",
                  ".########.......",
                  "..########......",
                  "...########.....",
                  "....########...."],
    }
    for (level, side), rows in hand.items():
        name = f"ridge{level}.mha"
        result = cli.run("generate", "ridge", "--level", str(level), "--size", f"{side},{side}",
                         "-o", name, cwd=work)
        expect_success(result)
        expect(result.stdout.startswith(f"generated ridge: {side}x{side} pixels, "), result.stdout)
        fields, pixels = read_meta(os.path.join(work, name))
        expect(numbers(fields["DimSize"]) == [side, side], f"{name}: {fields}")
        rows = rows + ["." * side] * (side - len(rows))
        wanted = [1 if c == "#" else 0 for row in rows for c in row]
        expect(list(pixels) == wanted, f"{name} differs from R_{level} worked by hand")
    # Leveling member 2 (l = 3) at 64 x 64 is R^(n-l-1)_l = R^2_3; one 8-connected component.
    result = cli.run("generate", "ridge", "--family", "leveling", "--index", "2", "--size", "64",
                     "-o", "leveling.mha", cwd=work)
    expect_success(result)
    expect(result.stdout.startswith("ridge leveling member 2 of 0..4: x = 3\n"), result.stdout)
    expect_success(cli.run("generate", "ridge", "--level", "3", "--instance", "2", "--size", "64",
                           "-o", "instance.mha", "-q", cwd=work))
    expect(read_meta(os.path.join(work, "leveling.mha"))[1]
           == read_meta(os.path.join(work, "instance.mha"))[1], "leveling 2 is not R^2_3")
    labeled = cli.run("label", "leveling.mha", "-o", "leveling_labels.mha", "--connectivity",
                      "8", cwd=work)
    expect_success(labeled)
    expect(parse_summary(labeled.stdout.rstrip("\n"))[1] == 1, labeled.stdout)
    # Two subdivisions: 16 patterns, 16 components.
    expect_success(cli.run("generate", "ridge", "--family", "subdivision", "--level", "2",
                           "--index", "2", "--size", "64", "-o", "subdivision.png", "-q",
                           cwd=work))
    labeled = cli.run("label", "subdivision.png", "-o", "subdivision_labels.mha",
                      "--connectivity", "8", cwd=work)
    expect_success(labeled)
    expect(parse_summary(labeled.stdout.rstrip("\n"))[1] == 16, labeled.stdout)
    # The random families: the same seed gives the same image, another seed another one.
    images = []
    for output, seed in (("a.mha", "3"), ("b.mha", "3"), ("c.mha", "4")):
        expect_success(cli.run("generate", "ridge", "--family", "random-instancing", "--level",
                               "2", "--subdivisions", "3", "--index", "10", "--seed", seed,
                               "--size", "64", "-o", output, "-q", cwd=work))
        images.append(read_meta(os.path.join(work, output))[1])
    expect(images[0] == images[1], "seeded ridge images differ")
    expect(images[0] != images[2], "seeds 3 and 4 give the same ridge image")
    expect_error(cli.run("generate", "ridge", "--size", "100", "-o", "bad.mha", cwd=work), 1,
                 "power of two")
    expect_error(cli.run("generate", "ridge", "--level", "6", "--size", "64", "-o", "bad.mha",
                         cwd=work), 1, "level 6")
    expect_error(cli.run("generate", "ridge", "--size", "64,32", "-o", "bad.mha", cwd=work), 1,
                 "square")
    expect_error(cli.run("generate", "ridge", "--family", "leveling", "--index", "5", "--size",
                         "64", "-o", "bad.mha", cwd=work), 1, "member 5")
    expect_error(cli.run("generate", "ridge", "--family", "spiral", "--level", "2", "-o",
                         "bad.mha", cwd=work), 1, "no level")
    expect_error(cli.run("generate", "ridge", "--family", "ridges", "-o", "bad.mha", cwd=work),
                 2, "ridges")
    expect_error(cli.run("generate", "ridge", "--family", "scaling", "--instance", "1", "-o",
                         "bad.mha", cwd=work), 2, "instance")
    expect_error(cli.run("generate", "random", "--level", "2", "-o", "bad.mha", cwd=work), 1,
                 "only for ridge")
    expect_files(work, ["a.mha", "b.mha", "c.mha", "instance.mha", "leveling.mha",
                        "leveling_labels.mha", "ridge2.mha", "ridge3.mha", "subdivision.png",
                        "subdivision_labels.mha"])

def relabeled(labels, count, minimum=0, largest=0, by_size=False):
    """RelabelComponentImageFilter's numbering: small components removed, the largest kept,
    largest first when by_size (ties by label)."""
    sizes = [0] * (count + 1)
    for value in labels:
        sizes[value] += 1
    kept = [label for label in range(1, count + 1) if sizes[label] >= minimum]
    order = sorted(kept, key=lambda label: (-sizes[label], label))
    if largest:
        kept = [label for label in kept if label in order[:largest]]
    if by_size:
        kept = sorted(kept, key=lambda label: (-sizes[label], label))
    number = {label: k + 1 for k, label in enumerate(kept)}
    return [number.get(value, 0) for value in labels], len(kept)


@case
def relabel_options(cli, work):
    random.seed(5)
    size = (23, 19, 7)
    mask = [1 if random.random() < 0.3 else 0 for _ in range(23 * 19 * 7)]
    write_mha(os.path.join(work, "input.mha"), size, mask, "MET_UCHAR")
    labels, count = label(mask, size, 6)
    for options, (minimum, largest, by_size) in (
            (("--min-size", "3"), (3, 0, False)),
            (("--sort-by-size",), (0, 0, True)),
            (("--largest", "4"), (0, 4, False)),
            (("--min-size", "2", "--largest", "5", "--sort-by-size"), (2, 5, True))):
        result = cli.run("label", "input.mha", "-o", "labels.mha", "--connectivity", "6",
                         "--force", *options, cwd=work)
        expect_success(result)
        expected, kept = relabeled(labels, count, minimum, largest, by_size)
        _, written = read_meta(os.path.join(work, "labels.mha"))
        expect(list(written) == expected, f"{options}: labels differ")
        expect(parse_summary(result.stdout.rstrip("\n"))[1] == kept,
               f"{options}: summary {result.stdout!r}, expected {kept} components")


@case
def stats_subcommand(cli, work):
    """volccl stats on volccl's own labels writes what volccl label --stats wrote; on labels
    from elsewhere (gaps, any order) one row per label present; refuses non-labels."""
    expect_success(cli.run("label", cli.sample, "--otsu", "-o", "labels.nii.gz", "--stats",
                           "from_label.csv", "-q", cwd=work))
    result = cli.run("stats", "labels.nii.gz", "-o", "from_stats.csv", cwd=work)
    expect_success(result)
    expect(re.fullmatch(r"measured 128x128x62 voxels: 17 labels \(on CPU, [0-9.e+-]+ ms\)\n",
                        result.stdout), f"unexpected summary {result.stdout!r}")
    with open(os.path.join(work, "from_label.csv")) as a, \
            open(os.path.join(work, "from_stats.csv")) as b:
        expect(a.read() == b.read(), "volccl stats and volccl label --stats differ")
    expect_success(cli.run("stats", "labels.nii.gz", "-o", "from_stats.json", "-q", cwd=work))
    columns, rows = read_stats_json(os.path.join(work, "from_stats.json"))
    expect(len(rows) == SAMPLE_OTSU_COMPONENTS and "bounding_box_max_z" in columns,
           f"{len(rows)} JSON rows")

    # Labels 7 and 3 only, in a 2D image with a geometry: rows for 3 and 7, in label order.
    size = (6, 4)
    labels = [0] * 24
    for index in (1, 2, 8):
        labels[index] = 7
    labels[20] = 3
    write_mha(os.path.join(work, "gaps.mha"), size, labels, "MET_UINT", (2.0, 0.5), (1.0, 1.0))
    expect_success(cli.run("stats", "gaps.mha", "-o", "gaps.csv", "-q", cwd=work))
    _, rows = read_stats_csv(os.path.join(work, "gaps.csv"))
    expect([(row["label"], row["count"]) for row in rows] == [(3, 1), (7, 3)], f"rows {rows}")
    seven = rows[1]
    # Pixels (1, 0), (2, 0), (2, 1): index centroid (5/3, 1/3), physical 1 + 2 x, 1 + 0.5 y.
    expect(abs(seven["centroid_index_x"] - 5 / 3) < 1e-12 and
           abs(seven["centroid_x"] - (1 + 2 * 5 / 3)) < 1e-12 and
           abs(seven["centroid_y"] - (1 + 0.5 / 3)) < 1e-12, f"label 7: {seven}")

    write_mha(os.path.join(work, "negative.mha"), (3, 2), [0, 1, -2, 0, 1, 1], "MET_SHORT")
    expect_error(cli.run("stats", "negative.mha", "-o", "negative.csv", cwd=work), 1,
                 "not a label")
    write_mha(os.path.join(work, "fraction.mha"), (3, 2), [0, 1.5, 0, 0, 1, 1], "MET_FLOAT")
    expect_error(cli.run("stats", "fraction.mha", "-o", "fraction.csv", cwd=work), 1,
                 "not a label")
    expect_error(cli.run("stats", "gaps.mha", "-o", "gaps.csv", cwd=work), 1, "exists",
                 "--force")
    expect_error(cli.run("stats", "gaps.mha", "-o", "gaps.txt", cwd=work), 1, ".csv or .json")
    expect_error(cli.run("stats", "missing.mha", "-o", "x.csv", cwd=work), 1, "does not exist")
    expect_files(work, ["from_label.csv", "from_stats.csv", "from_stats.json", "labels.nii.gz",
                        "gaps.mha", "gaps.csv", "negative.mha", "fraction.mha"])


# ---- foreground by value, output types, slice directories, progress -----------------------------


@case
def label_value(cli, work):
    # A segmentation of values 0..3: --label V labels the structure of value V alone.
    size = (23, 17, 9)
    generator = random.Random(29)
    values = [generator.choice((0, 0, 1, 2, 3)) for _ in range(23 * 17 * 9)]
    write_mha(os.path.join(work, "segmentation.mha"), size, values, "MET_SHORT")
    for value in (1, 3):
        result = cli.run("label", "segmentation.mha", "--label", str(value), "-o", "labels.mha",
                         "--force", cwd=work)
        expect_success(result)
        expected, count = label([v == value for v in values], size, 26)
        expect(parse_summary(result.stdout.rstrip("\n"))[1] == count,
               f"--label {value}: {result.stdout!r}, expected {count} components")
        expect(list(read_meta(os.path.join(work, "labels.mha"))[1]) == expected,
               f"--label {value}: labels differ from the oracle's")
    expect_error(cli.run("label", "segmentation.mha", "--label", "two", "-o", "x.mha", cwd=work),
                 2, "--label", "not a number")
    expect_error(cli.run("label", "segmentation.mha", "--label", "1", "--otsu", "-o", "x.mha",
                         cwd=work), 2, "excludes")
    expect_error(cli.run("label", "segmentation.mha", "--label", "1", "--threshold", "1", "-o",
                         "x.mha", cwd=work), 2, "excludes")
    expect_files(work, ["segmentation.mha", "labels.mha"])


@case
def output_types(cli, work):
    # A 64x64x33 checkerboard at 6-connectivity: every foreground voxel alone, 67584 labels,
    # more than uint16 holds.
    expect_success(cli.run("generate", "checkerboard", "--size", "64,64,33", "-o", "board.mha",
                           "-q", cwd=work))
    result = cli.run("label", "board.mha", "--connectivity", "6", "-o", "auto.nii.gz", cwd=work)
    expect_success(result)
    expect(parse_summary(result.stdout.rstrip("\n"))[1] == 67584, result.stdout)
    header, labels = read_nifti(os.path.join(work, "auto.nii.gz"))
    expect(header["datatype"] == NIFTI_UINT32, f"auto: datatype {header['datatype']}")
    expect_raster_numbering(labels, 67584)
    expect_error(cli.run("label", "board.mha", "--connectivity", "6", "--output-type", "uint16",
                         "-o", "narrow.nii.gz", cwd=work), 1, "67584 labels do not fit",
                 "65535", "--output-type auto")
    expect_success(cli.run("label", "board.mha", "--connectivity", "6", "--output-type",
                           "uint64", "-o", "wide.nii.gz", "-q", cwd=work))
    header, wide = read_nifti(os.path.join(work, "wide.nii.gz"))
    expect(header["datatype"] == NIFTI_UINT64 and list(wide) == list(labels),
           f"uint64: datatype {header['datatype']}, same labels: {list(wide) == list(labels)}")
    # The bundled sample's 17 labels: uint8 by default, uint16 and uint32 when asked.
    for forced, datatype in (("uint16", NIFTI_UINT16), ("uint32", NIFTI_UINT32)):
        expect_success(cli.run("label", cli.sample, "--otsu", "--output-type", forced, "-o",
                               f"{forced}.nii.gz", "-q", cwd=work))
        header, labels = read_nifti(os.path.join(work, f"{forced}.nii.gz"))
        expect(header["datatype"] == datatype, f"{forced}: datatype {header['datatype']}")
        expect_raster_numbering(labels, SAMPLE_OTSU_COMPONENTS)
    expect_error(cli.run("label", cli.sample, "--output-type", "int7", "-o", "x.nii.gz",
                         cwd=work), 2, "--output-type")
    # A 2D checkerboard at 4-connectivity: 131072 labels, which need uint32, which PNG lacks.
    expect_success(cli.run("generate", "checkerboard", "--size", "512,512", "-o", "board.png",
                           "-q", cwd=work))
    expect_error(cli.run("label", "board.png", "--connectivity", "4", "-o", "labels.png",
                         cwd=work), 1, "PNG files cannot hold uint32", "131072 labels")
    expect_files(work, ["board.mha", "auto.nii.gz", "wide.nii.gz", "uint16.nii.gz",
                        "uint32.nii.gz", "board.png"])


@case
def slice_directory(cli, work):
    # An EM-style stack: one PNG per slice, numbered without zero padding, so that name order
    # (0, 1, 10, 11, 2, ...) is not slice order; a hidden file and a text file are ignored.
    width, height, depth = 19, 11, 12
    generator = random.Random(31)
    mask = [generator.random() < 0.4 for _ in range(width * height * depth)]
    slices = os.path.join(work, "stack")
    os.mkdir(slices)
    for z in range(depth):
        plane = mask[z * width * height:(z + 1) * width * height]
        write_png(os.path.join(slices, f"slice{z}.png"), width, height,
                  [255 if v else 0 for v in plane])
    with open(os.path.join(slices, "notes.txt"), "w") as file:
        file.write("not a slice\n")
    write_png(os.path.join(slices, ".hidden.png"), width, height, [255] * (width * height))
    for connectivity in (6, 26):
        result = cli.run("label", "stack", "--connectivity", str(connectivity), "-o",
                         "labels.mha", "--force", cwd=work)
        expect_success(result)
        expected, count = label(mask, (width, height, depth), connectivity)
        said_size, said_count, _, _, _ = parse_summary(result.stdout.rstrip("\n"))
        expect((said_size, said_count) == ((width, height, depth), count),
               f"{connectivity}: {result.stdout!r}, expected {count} components")
        expect(list(read_meta(os.path.join(work, "labels.mha"))[1]) == expected,
               f"{connectivity}: the stack's labels differ from the oracle's")
    info = cli.run("info", "stack", cwd=work)
    expect_success(info)
    expect("(12 slices)" in info.stdout and "19x11x12 voxels" in info.stdout, info.stdout)
    os.mkdir(os.path.join(work, "empty"))
    expect_error(cli.run("label", "empty", "-o", "x.mha", cwd=work), 1,
                 "without image slices")
    volumes = os.path.join(work, "volumes")
    os.mkdir(volumes)
    for z in range(2):
        write_mha(os.path.join(volumes, f"{z}.mha"), (3, 3, 3), [1] * 27, "MET_UCHAR")
    expect_error(cli.run("label", "volumes", "-o", "x.mha", cwd=work), 1, "3D files",
                 "stack of 2D slices")
    expect_error(cli.run("label", "stack", "-o", "stack", "--force", cwd=work), 1,
                 "is the INPUT")
    expect_files(work, ["stack", "labels.mha", "empty", "volumes"])


@case
def progress(cli, work):
    result = cli.run("label", cli.sample, "--otsu", "--stats", "stats.csv", "-o",
                     "labels.nii.gz", "--progress", cwd=work)
    expect_success(result)
    steps = result.stderr.splitlines()
    expected = ("reading", "thresholding (Otsu)", "labeling and measuring", "writing 'labels",
                "writing 'stats.csv'")
    expect(len(steps) == len(expected), "stderr:\n" + result.stderr)
    for line, step in zip(steps, expected):
        expect(re.fullmatch(r"volccl: " + re.escape(step) + r".* \.\.\. [0-9.e+-]+ ms", line),
               f"progress line {line!r} is not step {step!r}")
    parse_summary(result.stdout.rstrip("\n"))
    # Not a terminal: no progress without --progress; --quiet and --progress contradict.
    quiet = cli.run("label", cli.sample, "-o", "again.nii.gz", cwd=work)
    expect_success(quiet)
    expect(quiet.stderr == "", "progress without a terminal:\n" + describe(quiet))
    expect_error(cli.run("label", cli.sample, "-o", "x.nii.gz", "--progress", "--quiet",
                         cwd=work), 2, "excludes")
    expect_files(work, ["labels.nii.gz", "stats.csv", "again.nii.gz"])


# ---- damaged, empty and huge inputs -------------------------------------------------------------


@case
def truncated_input(cli, work):
    with open(cli.sample, "rb") as file:
        content = file.read()
    with open(os.path.join(work, "half.nii.gz"), "wb") as file:
        file.write(content[:len(content) // 2])
    # An uncompressed NIfTI whose voxels stop early, and a MetaImage that promises more voxels
    # than it holds.
    with gzip.open(cli.sample, "rb") as file:
        raw = file.read()
    with open(os.path.join(work, "short.nii"), "wb") as file:
        file.write(raw[:len(raw) - 1000])
    write_mha(os.path.join(work, "short.mha"), (10, 10, 10), [1] * 900, "MET_UCHAR")
    for name in ("half.nii.gz", "short.nii", "short.mha"):
        expect_error(cli.run("label", name, "-o", "labels.nii.gz", "--stats", "stats.csv",
                             "--vtk", "scene", cwd=work), 1, "cannot read INPUT", name)
    expect_files(work, ["half.nii.gz", "short.nii", "short.mha"])


def write_mha_header(path, size, element_type="MET_UCHAR"):
    """A MetaImage header whose voxels are in a data file that does not exist."""
    with open(path, "w") as file:
        file.write(f"ObjectType = Image\nNDims = {len(size)}\nBinaryData = True\n"
                   f"DimSize = {' '.join(map(str, size))}\nElementType = {element_type}\n"
                   "ElementDataFile = missing.raw\n")


def available_memory():
    with open("/proc/meminfo") as file:
        for line in file:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


@case
def empty_and_huge_inputs(cli, work):
    write_mha_header(os.path.join(work, "empty.mha"), (0, 5, 5))
    result = cli.run("label", "empty.mha", "-o", "labels.nii.gz", cwd=work)
    expect(result.returncode == 1 and "empty.mha" in result.stderr, describe(result))
    write_mha_header(os.path.join(work, "huge.mha"), (100000, 100000, 100000))
    expect_error(cli.run("label", "huge.mha", "-o", "labels.nii.gz", cwd=work), 1,
                 "100000x100000x100000", "at most 1099511627776 voxels (2^40)")
    # Within 2^40 voxels, but an x*y slice past what one slab holds.
    write_mha_header(os.path.join(work, "wide.mha"), (70000, 70000, 2))
    expect_error(cli.run("label", "wide.mha", "-o", "labels.nii.gz", cwd=work), 1,
                 "70000x70000x2", "at most 4294967294 (2^32 - 2) in each side and in each x*y")
    # What the ParaView scene and the exact moments cannot hold, refused from the header: a side
    # past VTK's int, and a 65536 x 65537 image whose moment sums could pass 2^64.
    write_mha_header(os.path.join(work, "line.mha"), (2147483647, 1, 1))
    expect_error(cli.run("label", "line.mha", "--vtk", "scene", cwd=work), 1,
                 "--vtk", "2147483647 voxels, more than VTK's image data holds")
    write_mha_header(os.path.join(work, "image.mha"), (65536, 65537))
    expect_error(cli.run("label", "image.mha", "--stats", "stats.csv", cwd=work), 1,
                 "--stats", "could overflow")
    # Within every limit but this machine's memory (about 77 GB, uint8 voxels, labels and
    # mask): refused from the header.
    write_mha_header(os.path.join(work, "past32.mha"), (4096, 4096, 1024))
    memory = available_memory()
    if memory is not None and memory < 4096 * 4096 * 1024 * 6:
        expect_error(cli.run("label", "past32.mha", "-o", "labels.nii.gz", cwd=work), 1,
                     "4096x4096x1024", "needs about", "GiB of memory")
    # Not within this machine's memory: refused from the header, before any voxel is read (the
    # data file does not even exist).
    size, bytes_per_voxel = (2048, 2048, 1000), 8 + 5  # double voxels, labels and mask
    write_mha_header(os.path.join(work, "large.mha"), size, "MET_DOUBLE")
    with open(os.path.join(work, "missing.raw"), "wb") as file:
        file.truncate(size[0] * size[1] * size[2] * 8)  # sparse: takes no disk space
    memory = available_memory()
    if memory is not None and memory < size[0] * size[1] * size[2] * bytes_per_voxel:
        expect_error(cli.run("label", "large.mha", "-o", "labels.nii.gz", cwd=work), 1,
                     "2048x2048x1000", "needs about", "GiB of memory", "available")
        expect_error(cli.run("stats", "large.mha", "-o", "stats.csv", cwd=work), 1,
                     "large.mha", "needs about")
    expect_error(cli.run("stats", "huge.mha", "-o", "stats.csv", cwd=work), 1, "huge.mha",
                 "at most 1099511627776 voxels")
    expect_files(work, ["empty.mha", "huge.mha", "image.mha", "large.mha", "line.mha",
                        "missing.raw", "past32.mha", "wide.mha"])


@case
def nothing_to_write(cli, work):
    expect_error(cli.run("label", cli.sample, "--otsu", cwd=work), 1, "nothing to write")
    # --stats alone: statistics without a label image.
    expect_success(cli.run("label", cli.sample, "--otsu", "--stats", "stats.csv", "-q",
                           cwd=work))
    with open(os.path.join(work, "stats.csv")) as file:
        expect(len(file.read().splitlines()) == 1 + SAMPLE_OTSU_COMPONENTS, "rows of stats.csv")
    expect_files(work, ["stats.csv"])


# ---- the ParaView scene -----------------------------------------------------------------------


def read_vtk(path):
    """The data set of a VTK XML file, through VTK's Python (Debian's python3-vtk9)."""
    import vtk  # pylint: disable=import-outside-toplevel
    reader = vtk.vtkXMLImageDataReader() if path.endswith(".vti") else vtk.vtkXMLPolyDataReader()
    reader.SetFileName(path)
    reader.Update()
    expect(reader.GetErrorCode() == 0, f"VTK cannot read {path}")
    return reader.GetOutput()


def array_values(data, name, components=1):
    array = data.GetArray(name)
    expect(array is not None, f"no array {name!r}")
    expect(array.GetNumberOfComponents() == components, f"{name}: components")
    return [array.GetTuple(i) if components > 1 else array.GetTuple1(i)
            for i in range(array.GetNumberOfTuples())]


@case
def vtk_scene(cli, work):
    try:
        import vtk  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as missing:
        raise Skip(f"VTK's Python is missing ({missing}); Debian's python3-vtk9 has it")
    result = cli.run("label", cli.sample, "--otsu", "-o", "labels.nii.gz", "--stats", "stats.csv",
                     "--vtk", "scene", "--surfaces", cwd=work)
    expect_success(result)
    expect_files(os.path.join(work, "scene"),
                 ["labels.vti", "components.vtp", "surfaces.vtp", "volccl.pvd"])
    info = dict(line.split(": ", 1) for line in cli.run("info", cli.sample).stdout.splitlines())
    _, labels = read_nifti(os.path.join(work, "labels.nii.gz"))

    image = read_vtk(os.path.join(work, "scene", "labels.vti"))
    expect(image.GetDimensions() == SAMPLE_SIZE, f"labels.vti is {image.GetDimensions()}")
    expect(close(image.GetSpacing(), numbers(info["spacing"]), 1e-9), "labels.vti spacing")
    expect(close(image.GetOrigin(), numbers(info["origin"]), 1e-9), "labels.vti origin")
    direction = image.GetDirectionMatrix()
    expect(close([direction.GetElement(i, j) for i in range(3) for j in range(3)],
                 numbers(info["direction"]), 1e-9), "labels.vti direction")
    expect([int(v) for v in array_values(image.GetPointData(), "labels")] == list(labels),
           "labels.vti differs from OUTPUT")

    components = read_vtk(os.path.join(work, "scene", "components.vtp"))
    expect(components.GetNumberOfPoints() == SAMPLE_OTSU_COMPONENTS,
           f"{components.GetNumberOfPoints()} points in components.vtp")
    _, table = read_stats_csv(os.path.join(work, "stats.csv"))
    rows = {int(row["label"]): row for row in table}
    point_data = components.GetPointData()
    for point, (label_value, count) in enumerate(zip(array_values(point_data, "label"),
                                                     array_values(point_data, "count"))):
        row = rows[int(label_value)]
        centroid = [float(row[f"centroid_{axis}"]) for axis in "xyz"]
        expect(int(count) == int(row["count"]), f"label {label_value}: count {count}")
        expect(close(components.GetPoint(point), centroid, 1e-9 * max(map(abs, centroid))),
               f"label {label_value}: centroid {components.GetPoint(point)}, not {centroid}")
    expect(point_data.GetTensors() is not None and point_data.GetTensors().GetName() ==
           "ellipsoid", "components.vtp has no ellipsoid tensors")

    surfaces = read_vtk(os.path.join(work, "scene", "surfaces.vtp"))
    surface_labels = set(int(v) for v in array_values(surfaces.GetCellData(), "label"))
    expect(surface_labels == set(range(1, SAMPLE_OTSU_COMPONENTS + 1)),
           f"surfaces.vtp labels {sorted(surface_labels)}")
    with open(os.path.join(work, "scene", "volccl.pvd")) as file:
        collection = file.read()
    for name in ("labels.vti", "components.vtp", "surfaces.vtp"):
        expect(f'file="{name}"' in collection, f"volccl.pvd lacks {name}")

    # Labels as cell data: one cell per voxel, the points at the voxels' corners.
    expect_success(cli.run("label", cli.sample, "--otsu", "--vtk", "cells", "--vtk-labels",
                           "cell", "-q", cwd=work))
    cells = read_vtk(os.path.join(work, "cells", "labels.vti"))
    expect(cells.GetDimensions() == tuple(n + 1 for n in SAMPLE_SIZE), "cell data dimensions")
    expect([int(v) for v in array_values(cells.GetCellData(), "labels")] == list(labels),
           "labels.vti cell data differ from OUTPUT")
    expect_files(os.path.join(work, "cells"), ["labels.vti", "components.vtp", "volccl.pvd"])


@case
def vtk_errors(cli, work):
    with open(os.path.join(work, "file"), "w") as file:
        file.write("x")
    expect_error(cli.run("label", cli.sample, "--vtk", "file", cwd=work), 1, "not a directory")
    expect_success(cli.run("label", cli.sample, "--vtk", "scene", "-q", cwd=work))
    expect_error(cli.run("label", cli.sample, "--vtk", "scene", cwd=work), 1, "labels.vti",
                 "exists", "--force")
    expect_success(cli.run("label", cli.sample, "--vtk", "scene", "--force", "-q", cwd=work))
    expect_error(cli.run("label", cli.sample, "--surfaces", "-o", "x.nii.gz", cwd=work), 2,
                 "--surfaces", "--vtk")
    expect_error(cli.run("label", cli.sample, "--vtk", "missing/scene", cwd=work), 1,
                 "'missing' does not exist")
    # A run that fails after the labeling leaves no directory it made.
    expect_error(cli.run("label", cli.sample, "--otsu", "-o", "labels.mrc", "--output-type",
                         "uint32", "--vtk", "new", cwd=work), 1, "cannot write OUTPUT")
    expect_files(work, ["file", "scene"])
    expect_files(os.path.join(work, "scene"), ["labels.vti", "components.vtp", "volccl.pvd"])


# ---- hostile and damaged headers, outputs that are inputs, numeric ranges ------------------------


def write_meta_header(path, fields, data_file, trailer=""):
    """A MetaImage header of `fields` (name, value) whose last field is ElementDataFile."""
    with open(path, "w") as file:
        file.write("".join(f"{key} = {value}\n" for key, value in fields))
        file.write(f"ElementDataFile = {data_file}\n{trailer}")


def meta_fields(size, element_type="MET_UCHAR"):
    return [("ObjectType", "Image"), ("NDims", len(size)), ("BinaryData", "True"),
            ("BinaryDataByteOrderMSB", "False"), ("DimSize", " ".join(map(str, size))),
            ("ElementType", element_type)]


def write_nrrd_header(path, size, data_file_line):
    with open(path, "w") as file:
        file.write(f"NRRD0004\ntype: uint8\ndimension: {len(size)}\n"
                   f"sizes: {' '.join(map(str, size))}\nencoding: raw\n{data_file_line}\n")


def expect_refused_everywhere(cli, work, header, *fragments):
    """info, label and stats refuse `header` quickly on one error line and write nothing."""
    before = sorted(os.listdir(work))
    for arguments in (("info", header), ("label", header, "-o", "out.nii.gz", "--stats",
                                          "out.csv", "--vtk", "scene"),
                      ("stats", header, "-o", "out.csv")):
        expect_error(cli.run(*arguments, cwd=work, timeout=20), 1, *fragments)
    expect(sorted(os.listdir(work)) == before, f"{header}: files were written")


@case
def data_file_outside_refused(cli, work):
    """Headers that name data files outside their folder, or no regular file, are refused
    before ITK reads them."""
    folder = os.path.join(work, "in")
    os.mkdir(folder)
    os.mkdir(os.path.join(folder, "sub"))
    with open(os.path.join(work, "outside.raw"), "wb") as file:
        file.write(bytes(27))
    os.symlink(os.path.join(work, "outside.raw"), os.path.join(folder, "link.raw"))
    os.mkfifo(os.path.join(folder, "fifo"))
    fields = meta_fields((3, 3, 3))
    outside = "outside the header's folder"
    for name, data_file, fragments in (
            ("absolute.mhd", "/etc/passwd", ("'/etc/passwd'", outside)),
            ("up.mhd", "../../../../../../../../etc/passwd", ("etc/passwd", outside)),
            ("parent.mhd", "../outside.raw", ("../outside.raw", outside)),
            ("symlink.mhd", "link.raw", ("link.raw", outside)),
            ("directory.mhd", "sub", ("'sub'", "not a regular file")),
            ("fifo.mhd", "fifo", ("'fifo'", "not a regular file")),
            ("list.mhd", "LIST", ("outside.raw", outside)),
            ("pattern.mhd", "../outside%d.raw 0 2 1", ("../outside0.raw", outside)),
            ("bad_pattern.mhd", "x%s%n.raw 0 2 1", ("pattern", "one %d conversion"))):
        trailer = "sub/../../outside.raw\n" if data_file == "LIST" else ""
        write_meta_header(os.path.join(folder, name), fields, data_file, trailer)
        expect_refused_everywhere(cli, work, os.path.join("in", name), name, *fragments)
    # MetaIO also takes "Key: value".
    with open(os.path.join(folder, "colon.mhd"), "w") as file:
        file.write("ObjectType: Image\nNDims: 2\nDimSize: 4 4\nElementType: MET_UCHAR\n"
                   "ElementDataFile: /etc/passwd\n")
    expect_refused_everywhere(cli, work, "in/colon.mhd", "'/etc/passwd'", outside)
    with open(os.path.join(folder, "colon_ndims.mha"), "w") as file:
        file.write("NDims: -1\nDimSize: 4 4\nElementType: MET_UCHAR\nElementDataFile: LOCAL\n")
    expect_refused_everywhere(cli, work, "in/colon_ndims.mha", "NDims", "'-1'")
    # An .mha whose data file is not LOCAL is a header like any other.
    write_meta_header(os.path.join(folder, "absolute.mha"), fields, "/etc/passwd")
    expect_refused_everywhere(cli, work, "in/absolute.mha", "'/etc/passwd'", outside)
    for name, line, fragments in (
            ("zero.nhdr", "data file: /dev/zero", ("'/dev/zero'", outside)),
            ("zero.nrrd", "datafile: ../../../../../../../dev/zero", ("dev/zero", outside)),
            ("fifo.nhdr", "data file: fifo", ("'fifo'", "not a regular file")),
            ("list.nhdr", "data file: LIST\nsub/x.raw\n/etc/passwd", ("/etc/passwd", outside)),
            ("pattern.nhdr", "data file: /tmp/slice%03d.raw 1 3 1", ("/tmp/slice001.raw",
                                                                     outside))):
        write_nrrd_header(os.path.join(folder, name), (3, 3, 3), line)
        expect_refused_everywhere(cli, work, os.path.join("in", name), name, *fragments)
    # A directory of slices with a hostile header among them.
    os.mkdir(os.path.join(work, "slices"))
    write_meta_header(os.path.join(work, "slices", "0.mhd"), meta_fields((3, 3)), "/etc/passwd")
    expect_refused_everywhere(cli, work, "slices", "'/etc/passwd'", outside)


@case
def data_file_inside_works(cli, work):
    """Data files in the header's folder or below it are read as before."""
    random.seed(11)
    size = (7, 6, 5)
    mask = [1 if random.random() < 0.4 else 0 for _ in range(7 * 6 * 5)]
    expected, count = label(mask, size, 26)
    os.mkdir(os.path.join(work, "voxels"))
    with open(os.path.join(work, "same.raw"), "wb") as file:
        file.write(bytes(mask))
    shutil.copy(os.path.join(work, "same.raw"), os.path.join(work, "voxels", "below.raw"))
    os.symlink("voxels/below.raw", os.path.join(work, "inner_link.raw"))
    fields = meta_fields(size)
    write_meta_header(os.path.join(work, "same.mhd"), fields, "same.raw")
    write_meta_header(os.path.join(work, "below.mhd"), fields, "voxels/below.raw")
    write_meta_header(os.path.join(work, "detour.mhd"), fields, "voxels/../same.raw")
    write_meta_header(os.path.join(work, "link.mhd"), fields, "inner_link.raw")
    write_nrrd_header(os.path.join(work, "same.nhdr"), size, "data file: same.raw")
    write_nrrd_header(os.path.join(work, "below.nhdr"), size, "datafile: ./voxels/below.raw")
    slice_bytes = size[0] * size[1]
    for z in range(size[2]):
        with open(os.path.join(work, "voxels", f"slice{z}.raw"), "wb") as file:
            file.write(bytes(mask[z * slice_bytes:(z + 1) * slice_bytes]))
    write_meta_header(os.path.join(work, "pattern.mhd"), fields,
                      f"voxels/slice%d.raw 0 {size[2] - 1} 1")
    for header in ("same.mhd", "below.mhd", "detour.mhd", "link.mhd", "same.nhdr", "below.nhdr",
                   "pattern.mhd"):
        result = cli.run("label", header, "-o", "labels.mha", "--force", cwd=work, timeout=60)
        expect_success(result)
        expect(list(read_meta(os.path.join(work, "labels.mha"))[1]) == expected,
               f"{header}: labels differ from the oracle's")
        expect(parse_summary(result.stdout.rstrip("\n"))[1] == count, f"{header}: summary")
        expect_success(cli.run("info", header, cwd=work, timeout=60))


@case
def metaimage_fields_checked(cli, work):
    """NDims, DimSize, ElementNumberOfChannels and CompressedDataSize that made MetaIO spin or
    overflow are refused at once."""
    base = dict(meta_fields((3, 3, 3)))
    with open(os.path.join(work, "data.raw"), "wb") as file:
        file.write(bytes(27))
    for index, (changes, fragments) in enumerate((
            ({"NDims": "-1"}, ("NDims", "'-1'")),
            ({"NDims": "2147483647"}, ("NDims", "2147483647")),
            ({"NDims": "1e308"}, ("NDims", "1e308")),
            ({"NDims": "0"}, ("NDims", "from 1 to 4")),
            ({"NDims": "5"}, ("NDims", "from 1 to 4")),
            ({"DimSize": "3 3"}, ("DimSize", "NDims = 3")),
            ({"DimSize": "3 -3 3"}, ("DimSize",)),
            ({"DimSize": "3 3 1e9"}, ("DimSize",)),
            ({"DimSize": "4294967296 4294967296 4294967296"}, ("DimSize", "product")),
            ({"ElementNumberOfChannels": "-1"}, ("ElementNumberOfChannels",)),
            ({"ElementNumberOfChannels": "2147483647"}, ("ElementNumberOfChannels",)),
            ({"CompressedData": "True", "CompressedDataSize": "-1"}, ("CompressedDataSize",)))):
        fields = dict(base)
        fields.update(changes)
        name = f"header{index}.mhd"
        write_meta_header(os.path.join(work, name), list(fields.items()), "data.raw")
        expect_refused_everywhere(cli, work, name, name, *fragments)


def file_bytes(path):
    with open(path, "rb") as file:
        return file.read()


@case
def outputs_never_input_files(cli, work):
    """No output, --force or not, may be the header, a data file or a slice of the input."""
    size = (4, 4, 3)
    mask = [1, 0] * 24
    with open(os.path.join(work, "labels.raw"), "wb") as file:
        file.write(bytes(mask))
    with open(os.path.join(work, "voxels.csv"), "wb") as file:
        file.write(bytes(mask))
    write_meta_header(os.path.join(work, "input.mhd"), meta_fields(size), "labels.raw")
    write_meta_header(os.path.join(work, "csv.mhd"), meta_fields(size), "voxels.csv")
    os.mkdir(os.path.join(work, "scene"))
    with open(os.path.join(work, "scene", "labels.vti"), "wb") as file:
        file.write(bytes(mask))
    write_meta_header(os.path.join(work, "vti.mhd"), meta_fields(size), "scene/labels.vti")
    os.mkdir(os.path.join(work, "slices"))
    write_png(os.path.join(work, "slices", "0.png"), 4, 4, [0, 255] * 8)
    write_png(os.path.join(work, "slices", "1.png"), 4, 4, [255, 0] * 8)
    originals = {name: file_bytes(os.path.join(work, name))
                 for name in ("labels.raw", "voxels.csv", "input.mhd", "csv.mhd", "slices/0.png",
                              "scene/labels.vti")}
    for arguments, fragments in (
            (("label", "input.mhd", "-o", "labels.raw"), ("'labels.raw'", "a file of the INPUT")),
            (("label", "input.mhd", "-o", "input.mhd"), ("is the INPUT",)),
            (("label", "input.mhd", "-o", "./input.mhd"), ("is the INPUT",)),
            # labels.mhd is new, but its voxels would go to labels.raw, the input's data file.
            (("label", "input.mhd", "-o", "labels.mhd"), ("labels.raw", "the INPUT")),
            (("label", "csv.mhd", "--stats", "voxels.csv"), ("voxels.csv", "a file of the INPUT")),
            (("stats", "csv.mhd", "-o", "voxels.csv"), ("voxels.csv", "a file of the INPUT")),
            (("label", "slices", "-o", "slices/0.png"), ("0.png", "a file of the INPUT")),
            (("label", "vti.mhd", "--vtk", "scene"), ("labels.vti", "a file of the INPUT"))):
        expect_error(cli.run(*arguments, "--force", cwd=work, timeout=60), 1, *fragments,
                     "--force")
    for name, content in originals.items():
        expect(file_bytes(os.path.join(work, name)) == content, f"{name} was changed")
    expect_files(work, ["labels.raw", "voxels.csv", "input.mhd", "csv.mhd", "vti.mhd", "scene",
                        "slices"])
    expect_files(os.path.join(work, "scene"), ["labels.vti"])
    expect_files(os.path.join(work, "slices"), ["0.png", "1.png"])


@case
def numeric_options_range_checked(cli, work):
    """Negative and overflowing numbers are a command line that does not parse (exit 2), not a
    wrapped value."""
    huge = "99999999999999999999"
    for arguments, option in (
            (("label", cli.sample, "--min-size", "-1", "-o", "l.nii.gz"), "--min-size"),
            (("label", cli.sample, "--min-size", huge, "-o", "l.nii.gz"), "--min-size"),
            (("label", cli.sample, "--min-size", "0x10", "-o", "l.nii.gz"), "--min-size"),
            (("label", cli.sample, "--min-size", "1.5", "-o", "l.nii.gz"), "--min-size"),
            (("label", cli.sample, "--largest", "-1", "-o", "l.nii.gz"), "--largest"),
            (("label", cli.sample, "--largest", "4294967296", "-o", "l.nii.gz"), "--largest"),
            (("label", cli.sample, "--connectivity", "-26", "-o", "l.nii.gz"), "connectivity"),
            (("label", cli.sample, "--connectivity", huge, "-o", "l.nii.gz"), "connectivity"),
            (("generate", "random", "--size", "-1,8,8", "-o", "g.nii.gz"), "--size"),
            (("generate", "random", "--size", f"8,{huge},8", "-o", "g.nii.gz"), "--size"),
            (("generate", "random", "--density", "nan", "-o", "g.nii.gz"), "--density"),
            (("generate", "random", "--density", "-0.5", "-o", "g.nii.gz"), "--density"),
            (("generate", "random", "--granularity", "-1", "-o", "g.nii.gz"), "--granularity"),
            (("generate", "random", "--seed", "-1", "-o", "g.nii.gz"), "--seed"),
            (("generate", "random", "--seed", "4294967296", "-o", "g.nii.gz"), "--seed"),
            (("generate", "hilbert", "--order", "-1", "-o", "g.nii.gz"), "--order"),
            (("generate", "shells", "--gap", huge, "-o", "g.nii.gz"), "--gap"),
            (("generate", "ridge", "--level", "-1", "-o", "g.nii.gz"), "--level"),
            (("generate", "ridge", "--instance", "-1", "-o", "g.nii.gz"), "--instance"),
            (("generate", "ridge", "--family", "leveling", "--index", "-1", "-o", "g.nii.gz"),
             "--index"),
            (("generate", "ridge", "--family", "scaling", "--steps", "-1", "-o", "g.nii.gz"),
             "--steps"),
            (("generate", "ridge", "--family", "random-merging", "--subdivisions", huge, "-o",
              "g.nii.gz"), "--subdivisions"),
            (("bench", "--runs", "-1"), "--runs"),
            (("bench", "--warmup", huge), "--warmup"),
            (("bench", "--step-runs", "-5"), "--step-runs"),
            (("bench", "--peer-runs", huge), "--peer-runs"),
            (("bench", "--density-step", "-1"), "--density-step"),
            (("bench", "--granularities", "1,-2"), "--granularities"),
            (("bench", "--ridge-side", "-512"), "--ridge-side")):
        expect_error(cli.run(*arguments, cwd=work, timeout=20), 2, option)
    expect_files(work, [])


@case
def bench_refuses_cpu_only_algorithms_on_cuda(cli, work):
    """RTS has no CUDA labeler: naming it for the CUDA device is refused before anything is
    timed, on a machine with or without a GPU."""
    expect_error(cli.run("bench", "--device", "cuda", "--algorithms", "rts", "--quick", cwd=work,
                         timeout=20), 1, "rts", "CPU only", "--device cpu")
    expect_files(work, [])


# ---- hostile and damaged files ---------------------------------------------------------------


def write_nifti(path, size, values, datatype=NIFTI_UINT8, compress=False):
    """A little-endian single-file NIfTI-1 of unit spacing, voxels from byte 352."""
    codes = {NIFTI_UINT8: ("B", 8), NIFTI_UINT16: ("H", 16), 16: ("f", 32)}
    code, bits = codes[datatype]
    dim = [len(size), *size] + [1] * (7 - len(size))
    header = bytearray(352)
    struct.pack_into("<i", header, 0, 348)
    struct.pack_into("<8h", header, 40, *dim)
    struct.pack_into("<hh", header, 70, datatype, bits)
    struct.pack_into("<8f", header, 76, 1, 1, 1, 1, 1, 1, 1, 1)
    struct.pack_into("<f", header, 108, 352)
    struct.pack_into("<f", header, 112, 1)  # scl_slope
    header[344:348] = b"n+1\0"
    content = bytes(header) + struct.pack(f"<{len(values)}{code}", *values)
    with open(path, "wb") as file:
        file.write(gzip.compress(content, mtime=0) if compress else content)


def write_compressed_mha(path, size, values, stream=None, declared=None):
    """A MetaImage of uint8 voxels deflated by zlib in the same file; `stream` replaces the
    deflated bytes, `declared` the CompressedDataSize (None: their length, False: none)."""
    if stream is None:
        stream = zlib.compress(bytes(values))
    fields = ["ObjectType = Image", f"NDims = {len(size)}", "BinaryData = True",
              "BinaryDataByteOrderMSB = False", "CompressedData = True"]
    if declared is not False:
        fields.append(f"CompressedDataSize = {len(stream) if declared is None else declared}")
    fields += ["DimSize = " + " ".join(map(str, size)), "ElementType = MET_UCHAR",
               "ElementDataFile = LOCAL"]
    with open(path, "wb") as file:
        file.write(("\n".join(fields) + "\n").encode() + stream)


def write_nrrd(path, size, values, gzipped=False, stream=None):
    """An NRRD of uint8 voxels after its header, raw or gzip (`stream` replaces the data)."""
    data = bytes(values)
    if stream is None:
        stream = gzip.compress(data, mtime=0) if gzipped else data
    with open(path, "wb") as file:
        file.write((f"NRRD0004\ntype: uint8\ndimension: {len(size)}\n"
                    f"sizes: {' '.join(map(str, size))}\n"
                    f"encoding: {'gzip' if gzipped else 'raw'}\n\n").encode() + stream)


def random_mask(size, seed, density=0.4):
    generator = random.Random(seed)
    count = 1
    for side in size:
        count *= side
    return [1 if generator.random() < density else 0 for _ in range(count)]


def labeled_count(cli, work, name):
    """The number of components `volccl label` finds in `name` (26-connectivity)."""
    result = cli.run("label", name, "-o", "labels.mha", "--force", cwd=work)
    expect_success(result)
    expect(result.stderr == "", f"{name}: stderr is not empty:\n" + describe(result))
    return parse_summary(result.stdout.rstrip("\n"))[1]


@case
def damaged_png_refused(cli, work):
    """A PNG cut inside its header or first chunks aborted the program inside libpng; a chunk
    that fails its CRC, or image data that do not fill the image, were read."""
    width, height = 13, 7
    write_png(os.path.join(work, "good.png"), width, height,
              [255 * v for v in random_mask((width, height), 5)])
    with open(os.path.join(work, "good.png"), "rb") as file:
        content = file.read()
    expect_success(cli.run("info", "good.png", cwd=work))
    damaged = {f"cut{n}.png": content[:n] for n in (8, 12, 20, 29, 33, 37, 40, 45)}
    damaged["cut_end.png"] = content[:-12]  # no IEND
    flipped = bytearray(content)
    flipped[20] ^= 0x01  # inside IHDR: its CRC fails
    damaged["ihdr.png"] = bytes(flipped)
    flipped = bytearray(content)
    flipped[-20] ^= 0x40  # inside IDAT
    damaged["idat.png"] = bytes(flipped)
    for name, data in damaged.items():
        with open(os.path.join(work, name), "wb") as file:
            file.write(data)
        expect_refused_everywhere(cli, work, name, name, "PNG")
    # A slice directory with one damaged slice: refused naming the slice, before any output
    # (the hidden staging folders and the --vtk folder) is made.
    stack = os.path.join(work, "stack")
    os.mkdir(stack)
    for z in range(4):
        shutil.copy(os.path.join(work, "good.png"), os.path.join(stack, f"s{z}.png"))
    shutil.copy(os.path.join(work, "cut40.png"), os.path.join(stack, "s2.png"))
    expect_refused_everywhere(cli, work, "stack", "slice 's2.png'")


@case
def compressed_metaimage_checked(cli, work):
    """MetaIO printed 'Uncompress failed' and labeled what a short stream left, exit 0."""
    size = (9, 8, 7)
    mask = random_mask(size, 11)
    expected = label(mask, size)[1]
    write_compressed_mha(os.path.join(work, "good.mha"), size, mask)
    expect(labeled_count(cli, work, "good.mha") == expected, "good.mha: wrong count")
    stream = zlib.compress(bytes(mask))
    write_compressed_mha(os.path.join(work, "half.mha"), size, mask, stream[:len(stream) // 2])
    write_compressed_mha(os.path.join(work, "declared_short.mha"), size, mask, stream[:-9],
                         declared=len(stream))
    write_compressed_mha(os.path.join(work, "short_stream.mha"), size, mask,
                         zlib.compress(bytes(mask[:-50])))
    flipped = bytearray(stream)
    flipped[len(flipped) // 2] ^= 0xFF
    write_compressed_mha(os.path.join(work, "flipped.mha"), size, mask, bytes(flipped))
    write_compressed_mha(os.path.join(work, "unsized.mha"), size, mask, declared=False)
    for name in ("half.mha", "declared_short.mha", "short_stream.mha", "flipped.mha",
                 "unsized.mha"):
        expect_refused_everywhere(cli, work, name, name)


@case
def gzip_streams_checked(cli, work):
    """A gzip member whose CRC or length fails is refused (.nii.gz and NRRD); several members
    and zero padding after the stream, which gzip and zlib read, are read."""
    size = (9, 8, 7)
    mask = random_mask(size, 12)
    expected = label(mask, size)[1]
    write_nifti(os.path.join(work, "plain.nii"), size, mask)
    with open(os.path.join(work, "plain.nii"), "rb") as file:
        raw = file.read()
    good = gzip.compress(raw, mtime=0)
    half = len(raw) // 2
    variants = {
        "members.nii.gz": gzip.compress(raw[:half], mtime=0) + gzip.compress(raw[half:], mtime=0),
        "padded.nii.gz": good + bytes(512),
    }
    for name, data in variants.items():
        with open(os.path.join(work, name), "wb") as file:
            file.write(data)
        expect(labeled_count(cli, work, name) == expected, f"{name}: wrong count")
    for name, position in (("crc.nii.gz", -6), ("length.nii.gz", -2)):
        damaged = bytearray(good)
        damaged[position] ^= 0x01
        with open(os.path.join(work, name), "wb") as file:
            file.write(bytes(damaged))
        expect_refused_everywhere(cli, work, name, name, "gzip")
    write_nrrd(os.path.join(work, "good.nrrd"), size, mask, gzipped=True)
    expect(labeled_count(cli, work, "good.nrrd") == expected, "good.nrrd: wrong count")
    stream = bytearray(gzip.compress(bytes(mask), mtime=0))
    stream[-7] ^= 0x01
    write_nrrd(os.path.join(work, "crc.nrrd"), size, mask, True, bytes(stream))
    write_nrrd(os.path.join(work, "cut.nrrd"), size, mask, True, bytes(stream[:-20]))
    write_nrrd(os.path.join(work, "short.nrrd"), size, mask, False, bytes(mask[:-20]))
    for name in ("crc.nrrd", "cut.nrrd", "short.nrrd"):
        expect_refused_everywhere(cli, work, name, name)


@case
def slices_of_different_types(cli, work):
    """A directory of 8- and 16-bit slices is read in 16 bits: the value 256 of a later slice
    stays foreground, and --label 256 finds it (the first slice's type turned it into 0)."""
    width, height = 6, 5
    stack = os.path.join(work, "stack")
    os.mkdir(stack)
    write_mha(os.path.join(stack, "s0.mha"), (width, height), [1] + [0] * 29, "MET_UCHAR")
    write_mha(os.path.join(stack, "s1.mha"), (width, height), [0] * 29 + [256], "MET_USHORT")
    info = cli.run("info", "stack", cwd=work)
    expect_success(info)
    expect("pixel type: unsigned_short" in info.stdout and "values: 0 to 256" in info.stdout,
           info.stdout)
    result = cli.run("label", "stack", "--label", "256", "-o", "labels.mha", cwd=work)
    expect_success(result)
    expect(parse_summary(result.stdout.rstrip("\n"))[1] == 1, result.stdout)
    write_mha(os.path.join(stack, "s2.mha"), (width, height + 1), [0] * 36, "MET_UCHAR")
    expect_refused_everywhere(cli, work, "stack", "slice 's2.mha'", "6x6")


@case
def volume_never_cut_to_2d(cli, work):
    """ITK's PNG writer keeps the first slice of a volume: refused, as for generate."""
    write_mha(os.path.join(work, "volume.mha"), (4, 4, 3), [1] * 48, "MET_UCHAR")
    expect_error(cli.run("label", "volume.mha", "-o", "labels.png", cwd=work), 1, "labels.png",
                 "2D images", "3 slices")
    expect_error(cli.run("generate", "random", "--size", "4,4,3", "-o", "mask.png", cwd=work), 1,
                 "mask.png", "2D images")
    write_mha(os.path.join(work, "one_slice.mha"), (4, 4, 1), [1] * 16, "MET_UCHAR")
    expect_success(cli.run("label", "one_slice.mha", "-o", "one.png", cwd=work))
    expect_files(work, ["volume.mha", "one_slice.mha", "one.png"])


@case
def nifti_dimension_zero_refused(cli, work):
    write_nifti(os.path.join(work, "good.nii"), (4, 3, 2), [1] * 24)
    with open(os.path.join(work, "good.nii"), "rb") as file:
        content = bytearray(file.read())
    for name, offset, value in (("zero.nii", 44, 0), ("negative.nii", 42, -3),
                                ("rank.nii", 40, 0), ("rank8.nii", 40, 8)):
        damaged = bytearray(content)
        struct.pack_into("<h", damaged, offset, value)
        with open(os.path.join(work, name), "wb") as file:
            file.write(bytes(damaged))
        expect_refused_everywhere(cli, work, name, name, "NIfTI header")


@case
def nan_and_inf_are_background(cli, work):
    """NaN and +-Inf read as 0 from every format (ITK's NIfTI reader made them 0, MetaImage kept
    them as foreground)."""
    size = (5, 4, 3)
    values = [0.0] * 60
    values[0], values[2], values[4], values[30] = float("nan"), float("inf"), float("-inf"), 2.0
    write_nifti(os.path.join(work, "float.nii"), size, values, datatype=16)
    write_mha(os.path.join(work, "float.mha"), size, values, "MET_FLOAT")
    for name in ("float.nii", "float.mha"):
        info = cli.run("info", name, cwd=work)
        expect_success(info)
        expect("values: 0 to 2\n" in info.stdout and "foreground (non-zero): 1 of 60" in
               info.stdout, info.stdout)
        expect(labeled_count(cli, work, name) == 1, f"{name}: NaN or Inf labeled")
        expect_success(cli.run("stats", name, "-o", "stats.csv", "--force", cwd=work))
        with open(os.path.join(work, "stats.csv")) as file:
            expect(len(file.read().splitlines()) == 2, f"{name}: NaN or Inf measured")


def limit_address_space():
    """preexec_fn of a volccl that must fit in 1 GiB of address space."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@case
def stats_large_label_values(cli, work):
    """volccl stats takes memory in proportion to the labels present, not to the largest label
    value: labels 10,000,000 and 4,000,000,000 in a 64-voxel image are measured within 1 GiB
    of address space, in rows carrying those numbers."""
    size = (4, 4, 4)
    labels = [0] * 64
    for index in (0, 1, 5):
        labels[index] = 10_000_000
    for index in (63, 62):
        labels[index] = 4_000_000_000
    labels[20] = 2
    write_mha(os.path.join(work, "large.mha"), size, labels, "MET_UINT")
    for name in ("large.csv", "large.json"):
        result = subprocess.run([cli.volccl, "stats", "large.mha", "-o", name], cwd=work,
                                capture_output=True, text=True, timeout=60,
                                preexec_fn=limit_address_space)
        expect_success(result)
        expect(result.stdout.startswith("measured 4x4x4 voxels: 3 labels"), result.stdout)
    _, rows = read_stats_csv(os.path.join(work, "large.csv"))
    expect([(int(row["label"]), int(row["count"])) for row in rows] ==
           [(2, 1), (10_000_000, 3), (4_000_000_000, 2)], f"rows {rows}")
    expect(abs(rows[1]["centroid_index_x"] - 2 / 3) < 1e-12 and
           abs(rows[1]["centroid_index_y"] - 1 / 3) < 1e-12 and
           rows[2]["bounding_box_min_x"] == 2 and rows[2]["bounding_box_max_z"] == 3,
           f"rows {rows}")
    _, json_rows = read_stats_json(os.path.join(work, "large.json"))
    expect([row["label"] for row in json_rows] == [2, 10_000_000, 4_000_000_000],
           f"JSON rows {json_rows}")
    # Measured as their renumbered image would be, and as volccl label --stats writes it.
    small = [{0: 0, 2: 1, 10_000_000: 2, 4_000_000_000: 3}[value] for value in labels]
    write_mha(os.path.join(work, "small.mha"), size, small, "MET_UCHAR")
    expect_success(cli.run("stats", "small.mha", "-o", "small.csv", "-q", cwd=work))
    _, small_rows = read_stats_csv(os.path.join(work, "small.csv"))
    for row, small_row in zip(rows, small_rows):
        expect({**row, "label": 0} == {**small_row, "label": 0}, f"{row} != {small_row}")
    # One above volccl's largest label is still refused.
    labels[7] = 2**32 - 1
    write_mha(os.path.join(work, "above.mha"), size, labels, "MET_UINT")
    expect_error(cli.run("stats", "above.mha", "-o", "above.csv", cwd=work), 1, "not a label")
    expect_files(work, ["large.mha", "large.csv", "large.json", "small.mha", "small.csv",
                        "above.mha"])


@case
def generate_too_large(cli, work):
    expect_error(cli.run("generate", "random", "--size", "3000,3000,3000", "-o", "big.nii",
                         cwd=work), 1, "3000x3000x3000", "at most")
    expect_files(work, [])



@case
def interrupted_run_leaves_nothing(cli, work):
    """SIGINT and SIGTERM during a run remove its hidden staging folders and the --vtk folder
    it made, and end volccl by the signal."""
    import signal
    import time
    expect_success(cli.run("generate", "random", "--size", "256,256,200", "-o", "in.nii",
                           "--seed", "3", cwd=work))
    for number in (signal.SIGINT, signal.SIGTERM):
        process = subprocess.Popen([cli.volccl, "label", "in.nii", "-o", "labels.nii.gz",
                                    "--stats", "stats.csv", "--vtk", "scene"], cwd=work,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while (time.monotonic() < deadline and process.poll() is None and
               not any(".tmp-" in name for name in os.listdir(work))):
            time.sleep(0.01)
        time.sleep(0.2)
        process.send_signal(number)
        process.communicate(timeout=120)
        expect(process.returncode == -number,
               f"signal {number}: volccl ended with {process.returncode}")
        expect_files(work, ["in.nii"])


# ---- a Zarr INPUT: volccl.dask ---------------------------------------------------------------

ZARR_SETUP = """
import sys, numpy as np, zarr
from scipy import ndimage
rng = np.random.default_rng(34)
mask = (rng.random((20, 18, 16)) < 0.35).astype(np.uint8)
zarr.create_array(sys.argv[1], shape=mask.shape, chunks=(8, 8, 8), dtype=mask.dtype)[...] = mask
labels, count = ndimage.label(mask, structure=np.ones((3, 3, 3), bool))
np.save(sys.argv[2], labels.astype(np.uint64))
print(count)
"""

ZARR_COMPARE = """
import sys, numpy as np, zarr
out = zarr.open_array(sys.argv[1], mode="r")
expected = np.load(sys.argv[2])
assert out.dtype == sys.argv[3], out.dtype
assert out.chunks == (8, 8, 8), out.chunks
np.testing.assert_array_equal(out[...], expected)
"""


def dask_python():
    """The project's Python environment (VOLCCL_PYTHON, else .venv at the repository root) when
    it has volccl (with volccl.dask's command line), dask, distributed, zarr and scipy; else the
    reason to skip. PYTHONPATH, inherited by volccl and its Python, may point at a build's
    module."""
    python = os.environ.get("VOLCCL_PYTHON") or os.path.normpath(os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", ".venv", "bin", "python"))
    if not os.access(python, os.X_OK):
        raise Skip(f"no Python environment at {python} (set VOLCCL_PYTHON)")
    found = subprocess.run([python, "-c", "import volccl.dask, dask.array, distributed, zarr, "
                            "scipy"], capture_output=True, text=True, timeout=120)
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["?"])[-1]
        raise Skip(f"{python} lacks volccl.dask's packages: {last}")
    usage = subprocess.run([python, "-m", "volccl.dask", "--help"], capture_output=True,
                           text=True, timeout=120)
    if "label" not in usage.stdout:
        raise Skip(f"the volccl of {python} has no volccl.dask command line (an older install; "
                   "pip install ./python, or PYTHONPATH to a build's python folder)")
    return os.path.abspath(python)


@case
def zarr_input_via_dask(cli, work):
    """A Zarr INPUT goes to python -m volccl.dask label on a local cluster of 2 workers; the
    labels equal scipy.ndimage.label's, as uint64 or (--output-type uint32) uint32. The options
    volccl.dask lacks are refused with a Zarr INPUT, and the cluster options without one."""
    python = dask_python()
    made = subprocess.run([python, "-c", ZARR_SETUP, "in.zarr", "expected.npy"], cwd=work,
                          capture_output=True, text=True, timeout=120)
    expect(made.returncode == 0, "making in.zarr failed:\n" + describe(made))
    count = int(made.stdout)
    environment = dict(os.environ, VOLCCL_PYTHON=python)
    labeled = subprocess.run([cli.volccl, "label", "in.zarr", "-o", "out.zarr", "--workers", "2",
                              "-q"], cwd=work, capture_output=True, text=True, timeout=600,
                             env=environment)
    expect_success(labeled)
    expect(labeled.stdout.strip() == f"{count} components", describe(labeled))
    compared = subprocess.run([python, "-c", ZARR_COMPARE, "out.zarr", "expected.npy", "uint64"],
                              cwd=work, capture_output=True, text=True, timeout=120)
    expect(compared.returncode == 0, "out.zarr differs from scipy:\n" + describe(compared))
    # --output-type uint32 halves the labels' bytes (volccl.dask's --dtype); --force replaces.
    narrow = subprocess.run([cli.volccl, "label", "in.zarr", "-o", "out.zarr", "--workers", "2",
                             "--output-type", "uint32", "--force", "-q"], cwd=work,
                            capture_output=True, text=True, timeout=600, env=environment)
    expect_success(narrow)
    compared = subprocess.run([python, "-c", ZARR_COMPARE, "out.zarr", "expected.npy", "uint32"],
                              cwd=work, capture_output=True, text=True, timeout=120)
    expect(compared.returncode == 0, "uint32 out.zarr differs from scipy:\n" + describe(compared))
    # volccl.dask refuses an existing output without --force: its exit status and error line.
    again = subprocess.run([cli.volccl, "label", "in.zarr", "-o", "out.zarr", "--workers", "1",
                            "-q"], cwd=work, capture_output=True, text=True, timeout=600,
                           env=environment)
    expect(again.returncode == 1 and "exists" in again.stderr, describe(again))
    for option in (["--otsu"], ["--threshold", "1"], ["--label", "1"], ["--vtk", "scene"],
                   ["--min-size", "2"], ["--multi-label"], ["--output-type", "uint16"]):
        expect_error(cli.run("label", "in.zarr", "-o", "x.zarr", *option, cwd=work), 2,
                     option[0], "Zarr")
    expect_error(cli.run("label", "in.zarr", "--stats", "s.json", cwd=work), 2, "--stats", "csv")
    expect_error(cli.run("label", "in.zarr", "-o", "x.zarr", "--chunks", "4,0", cwd=work), 2,
                 "--chunks")
    expect_error(cli.run("label", "in.zarr", "-o", "x.zarr", "--workers", "2", "--scheduler",
                         "tcp://127.0.0.1:1", cwd=work), 2, "--workers")
    for option in (["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:1"],
                   ["--chunks", "4,4,4"]):
        expect_error(cli.run("label", cli.sample, "-o", "x.nii.gz", *option, cwd=work), 2,
                     option[0], "Zarr")
    missing = subprocess.run([cli.volccl, "label", "in.zarr", "-o", "y.zarr", "-q"], cwd=work,
                             capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, VOLCCL_PYTHON=os.path.join(work, "none")))
    expect_error(missing, 1, "VOLCCL_PYTHON")
    expect_files(work, ["expected.npy", "in.zarr", "out.zarr"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volccl", help="the volccl executable")
    parser.add_argument("--sample", help="data/samples/brain_t1.nii.gz")
    parser.add_argument("--list", action="store_true", help="print the case names")
    parser.add_argument("case", nargs="?", choices=sorted(CASES))
    arguments = parser.parse_args()
    if arguments.list:
        print("\n".join(CASES))
        return 0
    if not (arguments.volccl and arguments.sample and arguments.case):
        parser.error("--volccl, --sample and a case are required")
    cli = Cli(os.path.abspath(arguments.volccl), os.path.abspath(arguments.sample))
    with tempfile.TemporaryDirectory(prefix="volccl-cli-") as work:
        try:
            CASES[arguments.case](cli, work)
        except Skip as reason:
            print(f"skipped: {reason}")
            return SKIPPED
        except AssertionError as failure:
            print(f"FAIL {arguments.case}: {failure}")
            return 1
    print(f"ok {arguments.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
