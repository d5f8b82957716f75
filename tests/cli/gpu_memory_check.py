#!/usr/bin/env python3
"""volccl on a GPU whose memory another process holds: run on the GPU machine (gpu-check.sh).

    gpu_memory_check.py --volccl .device/bin/volccl --workdir DIR

CuPy takes all but --leave-mib of the GPU's free memory (enough for volccl's CUDA context,
not for its buffers), then volccl labels a random 768x768x512 volume (1.5 GB of mask and
labels): with --device cuda it must fail with exit 1 and one error line naming the bytes it
needed and --device cpu, leaving no output; with --device auto it must say that it labels on
the CPU instead and write the same labels as --device cpu. Exit status 0 pass, 1 fail, 77
without CuPy or a GPU.
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
    cuda = run(arguments.volccl, "label", volume, "--device", "cuda", "-o",
               os.path.join(arguments.workdir, "cuda.nii"))
    lines = cuda.stderr.splitlines()
    print("--device cuda:", cuda.returncode, cuda.stderr.strip())
    if not (cuda.returncode == 1 and len(lines) == 1 and "out of GPU memory" in lines[0] and
            "bytes" in lines[0] and "--device cpu" in lines[0]):
        failures.append("--device cuda did not fail with one out-of-memory line")
    if os.path.exists(os.path.join(arguments.workdir, "cuda.nii")):
        failures.append("--device cuda left its output")
    auto = run(arguments.volccl, "label", volume, "-o", os.path.join(arguments.workdir, "auto.nii"))
    print("--device auto:", auto.returncode, auto.stderr.strip(), auto.stdout.strip())
    if auto.returncode != 0 or "labeling on the CPU instead" not in auto.stderr or \
            "on CPU" not in auto.stdout:
        failures.append("--device auto did not fall back to the CPU")
    del hog

    cpu = run(arguments.volccl, "label", volume, "--device", "cpu", "-o",
              os.path.join(arguments.workdir, "cpu.nii"))
    if cpu.returncode != 0:
        failures.append("--device cpu failed: " + cpu.stderr)
    else:
        with open(os.path.join(arguments.workdir, "auto.nii"), "rb") as auto_file, \
                open(os.path.join(arguments.workdir, "cpu.nii"), "rb") as cpu_file:
            if auto_file.read() != cpu_file.read():
                failures.append("the fallback's labels differ from --device cpu's")
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("ok: out of GPU memory reported, and auto fell back to the CPU")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
