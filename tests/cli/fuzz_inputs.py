#!/usr/bin/env python3
"""Mutation fuzzing of the files volccl reads (ctest cli.fuzz_inputs).

    fuzz_inputs.py --volccl build/apps/volccl [--mutants 1200] [--seed 37] [--jobs 2]

Small seed files of every format volccl reads (NIfTI plain and gzip, MetaImage plain and
compressed, NRRD raw and gzip, PNG, TIFF, a directory of PNG slices) are damaged byte by byte
with a fixed seed; each mutant goes through `info`, `label` or `stats` in turn. Every run must
end in exit 0 with nothing on stderr, or in exactly one `volccl: error: ` line and exit 1: never
a signal, a timeout, another status or a library's multi-line dump, and never a file left behind
in the run's folder. Mutants whose damage is provably harmless (bytes NIfTI's description field
holds, zero padding after a gzip stream, a PNG ancillary chunk of text with its CRC) must give
exactly the undamaged file's output. Standard library only; test_cli.py writes the seeds.
"""

import argparse
import concurrent.futures
import gzip
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402  (the writers of the seed files)

COMMANDS = ("info", "label", "stats")
TIMEOUT = 30


def write_tiff(path, width, height, pixels):
    """A little-endian baseline TIFF: 8-bit greyscale, uncompressed, one strip."""
    entries = [(256, 3, width), (257, 3, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
               (273, 4, 8), (277, 3, 1), (278, 3, height), (279, 4, width * height)]
    directory_offset = 8 + width * height
    content = struct.pack("<2sHI", b"II", 42, directory_offset) + bytes(pixels)
    content += struct.pack("<H", len(entries))
    for tag, kind, value in entries:
        content += struct.pack("<HHI", tag, kind, 1)
        content += struct.pack("<HH" if kind == 3 else "<I", *((value, 0) if kind == 3 else (value,)))
    content += struct.pack("<I", 0)
    with open(path, "wb") as file:
        file.write(content)


def write_nifti2(path, size, values, compress=False):
    """A little-endian single-file NIfTI-2 of uint8 voxels, unit spacing and identity sform and
    qform, voxels from byte 544 (volccl's own NIfTI-2 reader)."""
    header = bytearray(544)
    struct.pack_into("<i", header, 0, 540)
    header[4:12] = b"n+2\0\r\n\x1a\n"
    struct.pack_into("<hh", header, 12, 2, 8)  # uint8
    struct.pack_into("<8q", header, 16, len(size), *size, *[1] * (7 - len(size)))
    struct.pack_into("<8d", header, 104, 1, 1, 1, 1, 1, 1, 1, 1)
    struct.pack_into("<q", header, 168, 544)
    struct.pack_into("<d", header, 176, 1)  # scl_slope
    struct.pack_into("<ii", header, 344, 1, 1)  # qform_code, sform_code
    struct.pack_into("<4d", header, 400, -1, 0, 0, 0)
    struct.pack_into("<4d", header, 432, 0, -1, 0, 0)
    struct.pack_into("<4d", header, 464, 0, 0, 1, 0)
    content = bytes(header) + bytes(values)
    with open(path, "wb") as file:
        file.write(gzip.compress(content, mtime=0) if compress else content)


def seeds(folder):
    """Writes the seed files; returns {name: path} (a directory for the slices)."""
    generator = random.Random(1)
    size = (7, 6, 5)
    count = size[0] * size[1] * size[2]
    mask = [1 if generator.random() < 0.4 else 0 for _ in range(count)]
    labels = [generator.randint(0, 3) if v else 0 for v in mask]
    paths = {}

    def path(name):
        paths[name] = os.path.join(folder, name)
        return paths[name]

    test_cli.write_nifti(path("plain.nii"), size, labels)
    test_cli.write_nifti(path("gzip.nii.gz"), size, labels, compress=True)
    write_nifti2(path("plain2.nii"), size, labels)
    write_nifti2(path("gzip2.nii.gz"), size, labels, compress=True)
    test_cli.write_mha(path("plain.mha"), size, labels, "MET_UCHAR")
    test_cli.write_compressed_mha(path("compressed.mha"), size, labels)
    test_cli.write_nrrd(path("raw.nrrd"), size, labels)
    test_cli.write_nrrd(path("gzip.nrrd"), size, labels, gzipped=True)
    test_cli.write_png(path("image.png"), size[0], size[1], labels[:size[0] * size[1]])
    write_tiff(path("image.tif"), size[0], size[1], labels[:size[0] * size[1]])
    slices = path("slices")
    os.mkdir(slices)
    for z in range(3):
        plane = labels[z * size[0] * size[1]:(z + 1) * size[0] * size[1]]
        test_cli.write_png(os.path.join(slices, f"s{z}.png"), size[0], size[1], plane)
    return paths


def mutate(data, generator):
    """One to four byte-level changes: flips, set bytes, cuts, insertions, deletions, copies."""
    data = bytearray(data)
    for _ in range(generator.choice((1, 1, 1, 2, 4))):
        if not data:
            break
        kind = generator.randrange(7)
        at = generator.randrange(len(data))
        if kind == 0:
            data[at] ^= 1 << generator.randrange(8)
        elif kind == 1:
            data[at] = generator.choice((0, 0xFF, 0x7F, 0x80, generator.randrange(256)))
        elif kind == 2:
            del data[at:]
        elif kind == 3:
            data[at:at] = bytes(generator.randrange(256) for _ in range(generator.randint(1, 8)))
        elif kind == 4:
            del data[at:at + generator.randint(1, 16)]
        elif kind == 5:  # an interesting 32-bit value, as headers hold sizes and offsets
            value = generator.choice((0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 65536))
            data[at:at + 4] = struct.pack(generator.choice(("<I", ">I")), value)
        else:
            length = generator.randint(1, 32)
            data[at:at] = data[generator.randrange(len(data)):][:length]
    return bytes(data)


def harmless(name, data, generator):
    """A change the reader must ignore, or None when the format has none here."""
    if name == "plain.nii":  # the 80-byte descrip field
        return data[:148] + bytes(generator.randrange(32, 127) for _ in range(80)) + data[228:]
    if name == "plain2.nii":  # the 80-byte descrip field
        return data[:240] + bytes(generator.randrange(32, 127) for _ in range(80)) + data[320:]
    if name in ("gzip.nii.gz", "gzip2.nii.gz"):
        return data + bytes(generator.randint(1, 64))  # zero padding after the last member
    if name == "image.png":  # a tEXt chunk with its CRC, before IEND
        text = b"Comment\0" + bytes(generator.randrange(32, 127) for _ in range(12))
        chunk = (struct.pack(">I", len(text)) + b"tEXt" + text +
                 struct.pack(">I", zlib.crc32(b"tEXt" + text) & 0xFFFFFFFF))
        return data[:-12] + chunk + data[-12:]
    return None


def run(volccl, command, target, folder):
    arguments = [volccl, command, target]
    if command == "label":
        arguments += ["-o", "out.nii", "--stats", "out.csv", "--force"]
    elif command == "stats":
        arguments += ["-o", "out.csv", "--force"]
    try:
        result = subprocess.run(arguments, cwd=folder, capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""
    return result.returncode, result.stdout, result.stderr


def outputs(folder, stdout):
    """What a successful run produced: stdout without timings, and its output files."""
    lines = [line for line in stdout.decode(errors="replace").splitlines()
             if not line.startswith(("file:", "labeled ", "measured "))]
    produced = {}
    for name in ("out.nii", "out.csv"):
        file = os.path.join(folder, name)
        if os.path.exists(file):
            with open(file, "rb") as handle:
                produced[name] = handle.read()
    return lines, produced


def check(volccl, job):
    """Runs one mutant; returns None or a failure message."""
    number, name, command, files, expected = job
    folder = tempfile.mkdtemp(prefix=f"fuzz{number}-")
    try:
        for relative, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(folder, relative)), exist_ok=True)
            with open(os.path.join(folder, relative), "wb") as handle:
                handle.write(data)
        target = name.split("/")[0]
        status, stdout, stderr = run(volccl, command, target, folder)
        before = set(files) | {name.split("/")[0]}
        left = sorted(set(os.listdir(folder)) - before - {"out.nii", "out.csv"})
        where = f"mutant {number} ({name}, {command})"
        text = stderr.decode(errors="replace")
        if status == 0:
            if stderr:
                return f"{where}: exit 0 with stderr:\n{text}"
            if expected is not None and outputs(folder, stdout) != expected:
                return f"{where}: a harmless change changed the output"
        elif status == 1:
            lines = text.splitlines()
            if len(lines) != 1 or not lines[0].startswith("volccl: error: ") or stdout:
                return f"{where}: exit 1 without exactly one error line:\n{text}"
            if expected is not None:
                return f"{where}: a harmless change was refused: {lines[0]}"
        else:
            return f"{where}: exit {status}:\n{text[-2000:]}"
        if left:
            return f"{where}: left {left} behind"
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volccl", required=True)
    parser.add_argument("--mutants", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", help="a folder to copy failing mutants into")
    arguments = parser.parse_args()
    volccl = os.path.abspath(arguments.volccl)
    started = time.monotonic()
    generator = random.Random(arguments.seed)
    with tempfile.TemporaryDirectory(prefix="volccl-fuzz-") as folder:
        paths = seeds(folder)
        originals = {}
        for name, path in paths.items():
            if os.path.isdir(path):
                for slice_name in sorted(os.listdir(path)):
                    with open(os.path.join(path, slice_name), "rb") as handle:
                        originals[f"{name}/{slice_name}"] = handle.read()
            else:
                with open(path, "rb") as handle:
                    originals[name] = handle.read()
        # The undamaged outputs, which harmless mutants must reproduce.
        baseline = {}
        for name in paths:
            files = {key: value for key, value in originals.items()
                     if key == name or key.startswith(name + "/")}
            for command in COMMANDS:
                failure = check(volccl, (-1, name, command, files, None))
                if failure:
                    print(f"FAIL the undamaged seed: {failure}")
                    return 1
                work = tempfile.mkdtemp(prefix="fuzz-base-")
                for key, data in files.items():
                    os.makedirs(os.path.dirname(os.path.join(work, key)), exist_ok=True)
                    with open(os.path.join(work, key), "wb") as handle:
                        handle.write(data)
                status, stdout, _ = run(volccl, command, name, work)
                if status != 0:
                    print(f"FAIL the undamaged seed {name} ({command}): exit {status}")
                    return 1
                baseline[(name, command)] = outputs(work, stdout)
                shutil.rmtree(work, ignore_errors=True)

        jobs = []
        names = sorted(paths)
        for number in range(arguments.mutants):
            name = names[number % len(names)]
            command = COMMANDS[(number // len(names)) % len(COMMANDS)]
            files = {key: value for key, value in originals.items()
                     if key == name or key.startswith(name + "/")}
            victim = generator.choice(sorted(files))
            expected = None
            if generator.random() < 0.1:
                changed = harmless(victim, files[victim], generator)
                if changed is not None:
                    files[victim] = changed
                    expected = baseline[(name, command)]
            if expected is None:
                files[victim] = mutate(files[victim], generator)
            jobs.append((number, victim if "/" in victim else name, command, files, expected))
        failures = []
        with concurrent.futures.ThreadPoolExecutor(arguments.jobs) as pool:
            for job, failure in zip(jobs, pool.map(lambda job: check(volccl, job), jobs)):
                if failure:
                    failures.append(failure)
                    if arguments.keep:
                        os.makedirs(arguments.keep, exist_ok=True)
                        for key, data in job[3].items():
                            target = os.path.join(arguments.keep, f"{job[0]}-{key}")
                            os.makedirs(os.path.dirname(target), exist_ok=True)
                            with open(target, "wb") as handle:
                                handle.write(data)
    elapsed = time.monotonic() - started
    for failure in failures[:20]:
        print("FAIL " + failure)
    print(f"{arguments.mutants} mutants (seed {arguments.seed}), {len(failures)} failed, "
          f"{elapsed:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
