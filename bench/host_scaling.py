#!/usr/bin/env python3
"""How fast one core does the host work of a volccl.dask run when N cores do it at once.

On a machine of several GPUs every GPU's workers compress, decompress and copy on their own
cores, yet those cores share the package: its clock, its caches, its memory system and whatever
the hypervisor shares beneath its virtual CPUs. This starts N processes, each confined to a
physical core of its own, releases them together, and counts what each completes in --seconds
of one workload:

- compress: Blosc LZ4 with byte shuffle (volccl.dask's label codec) of 128^3 uint32 labels;
- decompress: the same codec's 128^3 uint8 masks back to bytes (the input's read);
- copy: 64 MiB copied from one array into another (bandwidth to memory, beyond the caches);
- spin: an integer recurrence in the interpreter (the core alone: no memory traffic).

It prints, for every N, the median process's rate and its ratio to the rate of one process
alone. A ratio that falls for spin says the cores themselves slow (a lower all-core clock, or
virtual CPUs that are hyperthreads of one physical core); one that falls for copy alone says
memory bandwidth.

    python bench/host_scaling.py --counts 1,16,32,64 --seconds 2 --csv host.csv
"""

import argparse
import csv
import multiprocessing
import os
import statistics
import sys
import time

import numpy as np


def label_chunks():
    """128^3 uint32 labels of random boxes of 4 voxels a side, a 30 % density, as the bench's
    volumes have, and the uint8 masks they came from."""
    random = np.random.default_rng(7)
    cells = random.random((32, 32, 32)) < 0.3
    mask = np.repeat(np.repeat(np.repeat(cells, 4, 0), 4, 1), 4, 2).astype(np.uint8)
    labels = np.zeros(mask.shape, np.uint32)
    labels[mask != 0] = np.arange(1, int(mask.sum()) + 1, dtype=np.uint32) // 37 + 1
    return labels, mask


def workload(name):
    """A function doing one unit of the named work, and the bytes that unit covers."""
    import numcodecs

    numcodecs.blosc.use_threads = False
    codec = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
    labels, mask = label_chunks()
    if name == "compress":
        return lambda: codec.encode(labels), labels.nbytes
    if name == "decompress":
        encoded = codec.encode(mask)
        return lambda: codec.decode(encoded), mask.nbytes
    if name == "copy":
        source = np.ones(64 << 20, np.uint8)
        target = np.empty_like(source)
        return lambda: np.copyto(target, source), source.nbytes

    def spin():
        value = 1
        for _ in range(100_000):
            value = (value * 1103515245 + 12345) & 0xFFFFFFFF
        return value

    return spin, 100_000


def worker(cpu, name, seconds, barrier, results):
    os.sched_setaffinity(0, {cpu})
    unit, size = workload(name)
    unit()
    barrier.wait()
    start = time.perf_counter()
    done = 0
    while time.perf_counter() - start < seconds:
        unit()
        done += 1
    results.put(done * size / (time.perf_counter() - start))


def physical_cores():
    """One CPU of each physical core this process may use."""
    first = {}
    for cpu in sorted(os.sched_getaffinity(0)):
        topology = f"/sys/devices/system/cpu/cpu{cpu}/topology"
        try:
            with open(f"{topology}/physical_package_id") as package, \
                    open(f"{topology}/core_id") as core:
                first.setdefault((int(package.read()), int(core.read())), cpu)
        except OSError:
            first.setdefault((0, cpu), cpu)
    return [first[place] for place in sorted(first)]


def rates(cpus, name, seconds):
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(len(cpus))
    results = context.Queue()
    processes = [context.Process(target=worker, args=(cpu, name, seconds, barrier, results))
                 for cpu in cpus]
    for process in processes:
        process.start()
    measured = [results.get() for _ in processes]
    for process in processes:
        process.join()
        if process.exitcode != 0:
            sys.exit(f"a {name} process on {len(cpus)} cores failed")
    return measured


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--counts", default="1,16,32,64",
                        help="comma-separated numbers of busy cores (default 1,16,32,64)")
    parser.add_argument("--workloads", default="compress,decompress,copy,spin")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--csv", help="write one row per workload and count")
    arguments = parser.parse_args()

    cores = physical_cores()
    counts = [int(count) for count in arguments.counts.split(",")]
    if max(counts) > len(cores):
        sys.exit(f"--counts asks for {max(counts)} cores; this process may use {len(cores)}")
    rows = []
    print(f"# {len(cores)} physical cores; the rate of one process (MB/s; spin: million steps/s), "
          "median (slowest) of N at once, and the median's ratio to the first count's")
    for name in arguments.workloads.split(","):
        alone = None
        for count in counts:
            measured = rates(cores[:count], name, arguments.seconds)
            median = statistics.median(measured)
            alone = alone or median
            rows.append({"workload": name, "busy_cores": count, "median_mb_s": median / 1e6,
                         "slowest_mb_s": min(measured) / 1e6, "ratio_to_first": median / alone})
            print(f"{name:<10} {count:3d} cores  {median / 1e6:9.1f} ({min(measured) / 1e6:9.1f})"
                  f"  {median / alone:5.2f}", flush=True)
    if arguments.csv:
        with open(arguments.csv, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
