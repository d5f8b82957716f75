#!/usr/bin/env python3
"""Cross-checks the volccl command line against scipy.ndimage.label: volumes at 6-, 18- and
26-connectivity, 2D images at 4 and 8, among them the LE/TM paper's Ridge family images.

Writes random and structured binary masks as MetaImage (.mha) files, labels each with
`volccl label IN.mha -o OUT.mha --device DEVICE --connectivity C --algorithm A` for every
connectivity C and every algorithm A that supports it, and compares OUT.mha byte for byte with
scipy.ndimage.label(mask, structure=S), S being scipy.ndimage.generate_binary_structure(3, 1),
(3, 2) or (3, 3) for 6, 18 or 26 and (2, 1) or (2, 2) for 4 or 8: both number the components
1..N in raster order of their first voxel.

Needs only Python 3 with numpy and scipy, so it runs wherever the volccl binary is carried:

    scipy_crosscheck.py --volccl build/apps/volccl --device cuda

Exit status: 0 when everything agrees, 1 on a difference or a failed run, 77 (ctest's
"skipped") when numpy or scipy cannot be imported.
"""

import argparse
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import scipy.ndimage
except ImportError as error:
    print(f"skipped: {sys.executable} cannot import numpy and scipy ({error})")
    sys.exit(77)

ALGORITHMS = ["buf", "buf-ic", "bke", "bke-ic", "uf", "ufb", "ruf", "ke", "ha4", "ha4-64", "le",
              "tm", "auto"]
# The algorithms of each connectivity: the block-based ones need 26 or 8, ufb 6 or 18, ruf a
# volume; ke, ha4, le and tm are 2D; uf and rts take all five.
SUPPORTED = {26: ["buf", "buf-ic", "bke", "bke-ic", "uf", "ruf", "rts", "auto"],
             6: ["uf", "ufb", "ruf", "rts", "auto"], 18: ["uf", "ufb", "ruf", "rts", "auto"],
             8: ["buf", "buf-ic", "bke", "bke-ic", "uf", "ke", "ha4", "ha4-64", "le", "tm",
                 "rts", "auto"],
             4: ["uf", "ke", "ha4", "ha4-64", "le", "tm", "rts", "auto"]}
CONNECTIVITIES = [26, 6, 18, 8, 4]
# scipy's structure of each connectivity: the neighbours within city-block distance 1, 2 or 3.
STRUCTURES = {6: scipy.ndimage.generate_binary_structure(3, 1),
              18: scipy.ndimage.generate_binary_structure(3, 2),
              26: scipy.ndimage.generate_binary_structure(3, 3),
              4: scipy.ndimage.generate_binary_structure(2, 1),
              8: scipy.ndimage.generate_binary_structure(2, 2)}

# MetaImage element types and the numpy types of their voxels (little-endian unless the
# header says otherwise).
MET_TYPES = {
    "MET_CHAR": "i1", "MET_UCHAR": "u1", "MET_SHORT": "i2", "MET_USHORT": "u2",
    "MET_INT": "i4", "MET_UINT": "u4", "MET_LONG_LONG": "i8", "MET_ULONG_LONG": "u8",
    "MET_FLOAT": "f4", "MET_DOUBLE": "f8",
}


def write_mha(path, mask):
    """Writes a uint8 mask, numpy axes (z, y, x) or (y, x), as a MetaImage with the data
    inline."""
    sizes = " ".join(str(size) for size in reversed(mask.shape))
    header = (
        "ObjectType = Image\n"
        f"NDims = {mask.ndim}\n"
        "BinaryData = True\n"
        "BinaryDataByteOrderMSB = False\n"
        "CompressedData = False\n"
        f"DimSize = {sizes}\n"
        f"ElementSpacing = {' '.join(['1'] * mask.ndim)}\n"
        "ElementType = MET_UCHAR\n"
        "ElementDataFile = LOCAL\n"
    )
    with open(path, "wb") as out:
        out.write(header.encode("ascii"))
        out.write(np.ascontiguousarray(mask, dtype=np.uint8).tobytes())


def read_mha(path):
    """Reads a MetaImage as numpy axes (z, y, x), or (y, x) for a 2D one; returns (array,
    element type name)."""
    content = pathlib.Path(path).read_bytes()
    fields, position = {}, 0
    while "ElementDataFile" not in fields:
        end = content.index(b"\n", position)
        key, _, value = content[position:end].decode("ascii").partition("=")
        fields[key.strip()] = value.strip()
        position = end + 1
    element_type = fields["ElementType"]
    if fields["ElementDataFile"] == "LOCAL":
        data = content[position:]
    else:
        data = (pathlib.Path(path).parent / fields["ElementDataFile"]).read_bytes()
    if fields.get("CompressedData", "False") == "True":
        import zlib
        data = zlib.decompress(data)
    big_endian = "True" in (fields.get("BinaryDataByteOrderMSB"), fields.get("ElementByteOrderMSB"))
    dtype = np.dtype(MET_TYPES[element_type]).newbyteorder(">" if big_endian else "<")
    shape = tuple(int(size) for size in reversed(fields["DimSize"].split()))
    array = np.frombuffer(data, dtype=dtype, count=int(np.prod(shape)))
    return array.reshape(shape), element_type


def granular(rng, shape, density, granularity):
    """A random mask whose granularity^ndim cells are each foreground with probability
    density."""
    cells = [-(-size // granularity) for size in shape]
    cell_mask = rng.random(cells) < density
    for axis in range(len(shape)):
        cell_mask = cell_mask.repeat(granularity, axis=axis)
    return cell_mask[tuple(slice(0, size) for size in shape)].astype(np.uint8)


def masks(seed):
    """(name, mask) pairs; shapes are numpy's (z, y, x)."""
    rng = np.random.default_rng(seed)
    z, y, x = np.indices((17, 18, 19))
    yield "checkerboard_17x18x19", ((x + y + z) % 2 == 0).astype(np.uint8)
    yield "empty_7x6x5", np.zeros((5, 6, 7), np.uint8)
    yield "full_7x6x5", np.ones((5, 6, 7), np.uint8)
    yield "line_1x1x300", granular(rng, (300, 1, 1), 0.5, 1)
    yield "image_128x100x1", granular(rng, (1, 100, 128), 0.4, 1)
    for shape, density, granularity in [
        ((9, 17, 33), 0.3, 1),
        ((9, 17, 33), 0.7, 1),
        ((20, 45, 31), 0.6, 2),
        ((64, 64, 64), 0.3, 1),
        ((64, 64, 64), 0.5, 4),
        ((48, 96, 128), 0.3, 1),
    ]:
        name = "random_{}x{}x{}_d{}_g{}".format(*reversed(shape), density, granularity)
        yield name, granular(rng, shape, density, granularity)


def images(seed):
    """(name, mask) pairs of 2D images; shapes are numpy's (y, x). Widths straddle the 32 and
    64 pixels a warp of HA4 covers."""
    rng = np.random.default_rng(seed)
    y, x = np.indices((37, 41))
    yield "checkerboard_41x37", ((x + y) % 2 == 0).astype(np.uint8)
    yield "empty_9x5", np.zeros((5, 9), np.uint8)
    yield "full_9x5", np.ones((5, 9), np.uint8)
    yield "row_1000x1", granular(rng, (1, 1000), 0.6, 1)
    yield "column_1x700", granular(rng, (700, 1), 0.6, 1)
    for shape, density, granularity in [
        ((33, 65), 0.5, 1),
        ((100, 127), 0.3, 1),
        ((97, 130), 0.6, 2),
        ((512, 512), 0.5, 1),
        ((300, 1025), 0.4, 4),
        ((2048, 2048), 0.55, 1),
    ]:
        name = "random_{}x{}_d{}_g{}".format(*reversed(shape), density, granularity)
        yield name, granular(rng, shape, density, granularity)


RIDGE_FAMILIES = ["leveling", "scaling", "subdivision", "random-instancing", "random-merging",
                  "spiral"]


def ridge_images(volccl, workdir, seed):
    """(name, mask) pairs of the Ridge families at 256x256 (LE/TM paper Sec. IV-C), their first,
    middle and last members, drawn by `volccl generate ridge` (level 3; the random families from
    Subdivision member 2, with `seed`)."""
    for family in RIDGE_FAMILIES:
        extra = ["--subdivisions", "2", "--seed", str(seed % 2**31)] \
            if family.startswith("random") else []
        last, index = None, 0
        while True:
            path = workdir / f"ridge_{family}_{index}.mha"
            command = [volccl, "generate", "ridge", "--family", family, "--index", str(index),
                       "--size", "256", "-o", str(path)] + extra
            run = subprocess.run(command, capture_output=True, text=True, timeout=60,
                                 check=True)
            # "ridge FAMILY member I of 0..LAST: x = ..."
            last = int(run.stdout.split(" of 0..")[1].split(":")[0])
            mask, _ = read_mha(path)
            yield f"ridge_{family}_{index}", mask.reshape(mask.shape[-2:]).astype(np.uint8)
            following = [i for i in (last // 2, last) if i > index]
            if not following:
                break
            index = following[0]


def first_difference(expected, actual):
    index = int(np.flatnonzero(expected.ravel() != actual.ravel())[0])
    z, y, x = np.unravel_index(index, expected.shape)
    return (f"first at index {index} (x {x}, y {y}, z {z}): expected "
            f"{expected.ravel()[index]}, actual {actual.ravel()[index]}")


def check(volccl, device, connectivity, algorithm, name, mask, workdir):
    """Returns None when volccl agrees with scipy, else what went wrong."""
    input_path = workdir / f"{name}.mha"
    output_path = workdir / f"{name}_c{connectivity}_{algorithm}_labels.mha"
    if not input_path.exists():
        write_mha(input_path, mask)
    output_path.unlink(missing_ok=True)
    command = [volccl, "label", str(input_path), "-o", str(output_path), "--device", device,
               "--connectivity", str(connectivity), "--algorithm", algorithm, "--quiet"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return f"`{' '.join(command)}` failed with status {run.returncode}: {run.stderr.strip()}"
    labels, element_type = read_mha(output_path)
    expected, count = scipy.ndimage.label(mask, structure=STRUCTURES[connectivity])
    # --output-type auto: the narrowest unsigned type that holds every label.
    narrowest = "MET_UCHAR" if count <= 0xFF else "MET_USHORT" if count <= 0xFFFF else "MET_UINT"
    if element_type != narrowest:
        return f"{count} labels are {element_type}, expected {narrowest}"
    expected = expected.astype("<u4")
    if labels.shape != expected.shape:
        return f"labels have shape {labels.shape}, the mask {expected.shape}"
    if labels.astype("<u4").tobytes() != expected.tobytes():
        differing = int(np.count_nonzero(labels != expected))
        return (f"{differing} of {expected.size} voxels differ from scipy "
                f"({count} components); {first_difference(expected, labels)}")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--volccl", default=os.environ.get("VOLCCL_BIN", "volccl"),
                        help="the volccl binary (default: $VOLCCL_BIN, else volccl on PATH)")
    parser.add_argument("--device", default="cpu", choices=["auto", "cuda", "cpu"])
    parser.add_argument("--algorithms", nargs="+", default=ALGORITHMS, choices=ALGORITHMS,
                        help="each at the connectivities it supports (default: all)")
    parser.add_argument("--connectivities", nargs="+", type=int, default=CONNECTIVITIES,
                        choices=CONNECTIVITIES, help="(default: 26 6 18 8 4)")
    parser.add_argument("--seed", type=int,
                        default=int(os.environ.get("VOLCCL_TEST_SEED", random.randrange(2**32))),
                        help="seed of the random masks (default: $VOLCCL_TEST_SEED, else fresh)")
    parser.add_argument("--workdir", type=pathlib.Path,
                        help="where the .mha files go (default: a temporary folder, removed after)")
    args = parser.parse_args()

    volccl = shutil.which(args.volccl)
    if volccl is None:
        print(f"error: no volccl binary at {args.volccl!r}; pass --volccl or set VOLCCL_BIN")
        return 1
    print(f"volccl {volccl}, device {args.device}, seed {args.seed} "
          f"(--seed {args.seed} repeats this run), numpy {np.__version__}, "
          f"scipy {scipy.__version__}")

    workdir = args.workdir or pathlib.Path(tempfile.mkdtemp(prefix="volccl_scipy_"))
    if args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True, exist_ok=True)
    failures = 0
    try:
        cases = [(name, mask, [c for c in args.connectivities if c not in (4, 8)])
                 for name, mask in masks(args.seed)]
        cases += [(name, mask, [c for c in args.connectivities if c in (4, 8)])
                  for name, mask in images(args.seed)]
        cases += [(name, mask, [c for c in args.connectivities if c in (4, 8)])
                  for name, mask in ridge_images(volccl, workdir, args.seed)]
        for name, mask, connectivities in cases:
            for connectivity in connectivities:
                for algorithm in args.algorithms:
                    if algorithm not in SUPPORTED[connectivity]:
                        continue
                    problem = check(volccl, args.device, connectivity, algorithm, name, mask,
                                    workdir)
                    print(f"{'FAIL' if problem else 'ok  '} {name} c{connectivity} {algorithm}"
                          + (f": {problem}" if problem else ""))
                    failures += problem is not None
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{failures} failure(s)" if failures else "volccl agrees with scipy.ndimage.label")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
