#!/usr/bin/env python3
"""volccl on a GPU whose memory another process holds: run on the GPU machine (gpu-check.sh).

    gpu_memory_check.py --volccl .device/bin/volccl --workdir DIR

CuPy takes all but --leave-mib of the GPU's free memory (enough for volccl's CUDA context and
a few slabs, not for the whole volume), then volccl labels a random 768x768x512 volume (1.5 GB
of mask and labels): with --device cuda and with --device auto it must label it on the GPU, in
slabs, and write the same labels as --device cpu. Exit status 0 pass, 1 fail, 77 without CuPy
or a GPU.
"""

import argparse
import os
import subprocess
import sys


def run(volccl, *arguments):
    return subprocess.run([volccl, *arguments], capture_output=True, text=True, timeout=600)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volccl", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--leave-mib", type=int, default=1536)
    arguments = parser.parse_args()
    try:
        import cupy  # pylint: disable=import-outside-toplevel
        free, _ = cupy.cuda.runtime.memGetInfo()
    except Exception as missing:  # pylint: disable=broad-except
        print(f"skipped: no CuPy or no GPU ({missing})")
        return 77
    os.makedirs(arguments.workdir, exist_ok=True)
    volume = os.path.join(arguments.workdir, "random768.nii")
    generated = run(arguments.volccl, "generate", "random", "--size", "768,768,512", "-o",
                    volume, "--force", "-q")
    if generated.returncode != 0:
        print("FAIL: volccl generate:", generated.stderr)
        return 1

    hog = cupy.empty(free - arguments.leave_mib * 2**20, dtype=cupy.uint8)
    failures = []
    for device in ("cuda", "auto"):
        result = run(arguments.volccl, "label", volume, "--device", device, "-o",
                     os.path.join(arguments.workdir, device + ".nii"))
        print(f"--device {device}:", result.returncode, result.stderr.strip(),
              result.stdout.strip())
        if result.returncode != 0 or result.stderr or "on CUDA" not in result.stdout:
            failures.append(f"--device {device} did not label on the GPU")
    del hog

    cpu = run(arguments.volccl, "label", volume, "--device", "cpu", "-o",
              os.path.join(arguments.workdir, "cpu.nii"))
    if cpu.returncode != 0:
        failures.append("--device cpu failed: " + cpu.stderr)
    else:
        with open(os.path.join(arguments.workdir, "cpu.nii"), "rb") as cpu_file:
            expected = cpu_file.read()
        for device in ("cuda", "auto"):
            path = os.path.join(arguments.workdir, device + ".nii")
            if os.path.exists(path):
                with open(path, "rb") as labels:
                    if labels.read() != expected:
                        failures.append(f"--device {device}'s labels differ from the CPU's")
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("ok: labeled on the GPU in slabs, as on the CPU")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
