#!/usr/bin/env python3
"""volccl.dask end to end on generated Zarr volumes: Zarr in, Zarr of uint64 (or uint32) labels
out, with one Dask worker per GPU (or CPU workers), and the single-GPU in-core labeling beside
it.

For each GPU count of --workers (1,2,4: --processes worker processes per GPU, each seeing only
its own card through CUDA_VISIBLE_DEVICES, with --threads threads), each volume and each
connectivity, it times volccl.dask.label_zarr (read the input's Zarr chunks into Dask chunks of
--chunk, label, merge, relabel, write the labels in the input's Zarr chunks) and splits the
tasks' time into phases from Dask's task stream, after a warm-up labeling on every worker, and
prints the median run's steps (the tasks of each name: when the first and last started, when the
last ended, their seconds) to show the merge's chain and each phase's waves.
With --cpus-per-gpu each GPU's worker processes keep to cores of their own, as dask-cuda's CPU
affinity does. Every case is run --runs times after --warm-up-runs untimed ones (the median is
reported, the slower middle run of an even count); the first timed run's output is read back
and hashed per Zarr chunk as uint64, untimed, and the hashes must equal the first GPU count's
(the CSV's labels_digest sums them up, to compare builds and --dtype). A --check-side corner of each
volume is labeled by volccl.dask and compared byte for byte with the in-core labeling (and
scipy's with --scipy), and timed in core on one GPU for the throughput per GPU.

    python bench/dask_zarr_bench.py --side 2048 --chunk 512 --zarr-chunk 128 --workers 1,2,4 \
        --processes 4 --threads 4 --cpus-per-gpu 16 --volumes random:0.3:4,connectomics \
        --connectomics data/connectomics.npy.gz --store /tmp/zarr-bench --csv results.csv
    python bench/dask_zarr_bench.py --device cpu --side 256 --chunk 64 --zarr-chunk 32 \
        --workers 1,2 --threads 1
"""

import argparse
import csv
import functools
import gzip
import hashlib
import os
import shutil
import statistics
import sys
import time

import distributed
import numpy as np

# The tasks of volccl.dask's graph by the phase they belong to (the key's name before its token).
# Dask fuses a chunk's read into its labeling task where it can, so the two are one phase;
# label_zarr relabels and writes a chunk in one task.
_PHASES = {"volccl-chunk": "read + label", "from-zarr-volccl-chunk": "read + label",
           "from-zarr": "read + label", "original-from-zarr": "read + label",
           "volccl-labels": "relabel + write", "finalize-hlgfinalizecompute": "gather",
           "volccl-count-finalize-hlgfinalizecompute": "gather"}


def key_name(key):
    """A task key's name less its token."""
    name = key[0] if isinstance(key, tuple) else str(key)
    return name.rsplit("-", 1)[0]


def phase_of(key):
    name = key_name(key)
    if name in _PHASES:
        return _PHASES[name]
    if name.startswith("volccl-"):
        return "merge"
    return "other"


def random_chunk(block_info=None, *, density, granularity, seed):
    """One chunk of a random volume: cells of granularity^3 voxels, foreground with probability
    density, drawn from a generator seeded by the chunk's place (the chunk side is a multiple of
    the granularity, so the volume is the same whatever computes it)."""
    info = block_info[None]
    shape = info["chunk-shape"]
    rng = np.random.default_rng([seed, *info["chunk-location"]])
    cells = rng.random(tuple(-(-side // granularity) for side in shape)) < density
    for axis in range(3):
        cells = np.repeat(cells, granularity, axis=axis)
    return np.ascontiguousarray(cells[tuple(slice(0, side) for side in shape)])


@functools.cache
def _connectomics_mask(path):
    with gzip.open(path, "rb") as stream:
        return np.load(stream) != 0


def tiled_chunk(block_info=None, *, path):
    """One chunk of the connectomics segmentation's non-zero mask repeated along every axis."""
    info = block_info[None]
    tile = _connectomics_mask(path)
    ranges = [range(start, stop) for start, stop in info["array-location"]]
    index = np.ix_(*[np.arange(r.start, r.stop) % side for r, side in zip(ranges, tile.shape)])
    return np.ascontiguousarray(tile[index])


def make_volume(client, spec, side, chunk, store, connectomics, keep):
    """Writes the volume named by spec to a Zarr array at store, in Zarr chunks of `chunk`;
    returns its description and the seconds it took. With keep, a store that an earlier run
    made of the same spec, side and chunk is taken as it is (None seconds)."""
    import dask.array as da
    import zarr

    if spec.startswith("random:"):
        _, density, granularity = spec.split(":")
        function = functools.partial(random_chunk, density=float(density),
                                     granularity=int(granularity), seed=7)
        name = f"random {side}^3 d{float(density):g} g{granularity}"
    elif spec == "connectomics":
        function = functools.partial(tiled_chunk, path=os.path.abspath(connectomics))
        name = f"connectomics tiled to {side}^3 (non-zero)"
    else:
        sys.exit(f"unknown volume {spec!r}: random:DENSITY:GRANULARITY or connectomics")
    darr = da.map_blocks(function, dtype=bool, chunks=tuple((chunk,) * (side // chunk)
                                                            + ((side % chunk,) if side % chunk
                                                               else ()) for _ in range(3)))
    stamp = {"volccl_bench_volume": spec, "side": side, "zarr_chunk": chunk}
    if keep:
        try:
            if dict(zarr.open_array(store, mode="r").attrs) == stamp:
                return name, None
        except (FileNotFoundError, ValueError, KeyError):
            pass
    shutil.rmtree(store, ignore_errors=True)
    start = time.perf_counter()
    client.compute(da.to_zarr(darr, store, compute=False), sync=True)
    if keep:
        zarr.open_array(store, mode="r+").attrs.update(stamp)
    return name, time.perf_counter() - start


def _digest(block):
    # Of the labels as uint64, so that uint32 and uint64 outputs compare.
    digest = hashlib.sha256(memoryview(np.ascontiguousarray(block, np.uint64))).digest()
    return np.full((1,) * block.ndim, int.from_bytes(digest[:8], "little"), np.uint64)


def label_run(client, in_store, out_store, connectivity, device, chunk, dtype, codec):
    """One run of volccl.dask.label_zarr, Dask chunks of `chunk` over the store's Zarr chunks:
    (wall seconds, N, per phase the tasks' seconds and the span from its first task's start to
    its last task's end, and the same per step: the tasks of one name, a tree level or a pass
    of the merge)."""
    import distributed

    import volccl.dask as vdask

    with distributed.get_task_stream(client) as stream:
        start = time.perf_counter()
        n = vdask.label_zarr(in_store, out_store, connectivity=connectivity, chunks=chunk,
                             overwrite=True, client=client, device=device, dtype=dtype,
                             compressors=() if codec == "none" else None)
        wall = time.perf_counter() - start
    phases, steps = {}, {}
    for record in stream.data:
        phase = phase_of(record["key"])
        for part in record["startstops"]:
            if part["action"] == "compute":
                busy, first, last = phases.get(phase, (0.0, np.inf, -np.inf))
                phases[phase] = (busy + part["stop"] - part["start"], min(first, part["start"]),
                                 max(last, part["stop"]))
                steps.setdefault(step_of(record["key"]), []).append((part["start"],
                                                                     part["stop"]))
    return wall, int(n), phases, steps


def step_of(key):
    """A task's step: its key's name (less the read of a chunk fused into its labeling)."""
    return key_name(key).replace("from-zarr-", "")


def print_steps(steps):
    """The steps of one run in the order they started: when their first task started, their
    last one started and their last one ended (seconds from the run's first task), how many
    tasks, and their tasks' seconds in all, the median and the longest."""
    origin = min(start for parts in steps.values() for start, _ in parts)
    print("# step: first start, last start, last end s, tasks, task s: all, median, longest",
          flush=True)
    for name, parts in sorted(steps.items(), key=lambda item: min(item[1])):
        starts = [start - origin for start, _ in parts]
        took = [stop - start for start, stop in parts]
        print(f"#   {name:<30} {min(starts):7.3f} {max(starts):7.3f} "
              f"{max(stop for _, stop in parts) - origin:7.3f} {len(parts):5d} {sum(took):8.2f} "
              f"{statistics.median(took):7.3f} {max(took):7.3f}", flush=True)


def store_digests(client, store):
    """A hash of every Zarr chunk of the labels written at store (read back, not timed)."""
    import dask.array as da

    labels = da.from_zarr(store)
    digests = labels.map_blocks(_digest, chunks=tuple((1,) * len(s) for s in labels.chunks),
                                dtype=np.uint64)
    return np.asarray(client.compute(digests, sync=True))


def physical_cores():
    """The CPUs this process may use, grouped by physical core (hyperthreads together), in
    order."""
    allowed = os.sched_getaffinity(0)
    cores = {}
    for cpu in sorted(allowed):
        topology = f"/sys/devices/system/cpu/cpu{cpu}/topology"
        try:
            with open(f"{topology}/physical_package_id") as package, \
                    open(f"{topology}/core_id") as core:
                place = (int(package.read()), int(core.read()))
        except OSError:
            place = (0, cpu)
        cores.setdefault(place, []).append(cpu)
    return [cores[place] for place in sorted(cores)]


def cpu_shares(gpus, cpus_per_gpu):
    """Disjoint CPU sets of cpus_per_gpu CPUs, whole physical cores, one per GPU."""
    cores = physical_cores()
    per_core = len(cores[0])
    wanted = -(-cpus_per_gpu // per_core)
    if wanted * gpus > len(cores):
        sys.exit(f"{gpus} GPUs x {cpus_per_gpu} CPUs need {wanted * gpus} cores; this process "
                 f"may use {len(cores)}")
    return [sorted(cpu for core in cores[g * wanted:(g + 1) * wanted] for cpu in core)
            for g in range(gpus)]


class PinToCpus(distributed.WorkerPlugin):
    """A worker plugin that confines every thread of its worker process (those running and
    those to come) to the CPUs of its GPU's share, as dask-cuda's CPU affinity does."""

    def __init__(self, cpus_by_worker):
        self.cpus_by_worker = cpus_by_worker

    def setup(self, worker):
        cpus = self.cpus_by_worker[worker.name]
        for thread in os.listdir("/proc/self/task"):
            os.sched_setaffinity(int(thread), cpus)


def warm_up(device):
    """A small labeling on a worker, so that no timed run pays for its CUDA context, the
    library's first load or the first use of the codecs."""
    import volccl

    mask = np.random.default_rng(0).random((64, 64, 64)) < 0.3
    volccl.connected_components(mask, device=device)


def start_cluster(gpus, processes, threads, device, cpus_per_gpu, memory_limit):
    """`processes` worker processes per GPU (each seeing only its card), `threads` each; with
    cpus_per_gpu, each GPU's processes confined to their own share of the host's CPUs."""
    specification = {}
    for index in range(gpus * processes):
        env = {"CUDA_VISIBLE_DEVICES": str(index // processes)} if device == "cuda" else {}
        specification[f"worker-{index}"] = {
            "cls": distributed.Nanny,
            "options": {"nthreads": threads, "env": env, "dashboard_address": None,
                        "memory_limit": memory_limit}}
    cluster = distributed.SpecCluster(
        workers=specification, asynchronous=False,
        scheduler={"cls": distributed.Scheduler, "options": {"dashboard_address": None}})
    client = distributed.Client(cluster)
    client.wait_for_workers(gpus * processes)
    if cpus_per_gpu:
        shares = cpu_shares(gpus, cpus_per_gpu)
        client.register_plugin(PinToCpus({f"worker-{index}": shares[index // processes]
                                          for index in range(gpus * processes)}))
        print(f"# CPUs per GPU: {shares}", flush=True)
    client.run(warm_up, device)
    return cluster, client


def in_core(corner, connectivity, device, runs, check_scipy):
    """The corner labeled in core on one device: (median seconds host to host, median seconds of
    the device-resident call or None, uint32 labels)."""
    import volccl

    labels = volccl.connected_components(corner, connectivity=connectivity, device=device)
    if check_scipy:
        from scipy import ndimage
        structure = ndimage.generate_binary_structure(3, {6: 1, 18: 2, 26: 3}[connectivity])
        expected, _ = ndimage.label(corner, structure=structure)
        if not np.array_equal(labels, expected):
            sys.exit(f"volccl's in-core labels of the corner differ from scipy's at "
                     f"{connectivity}")
    host_times = []
    for _ in range(runs):
        start = time.perf_counter()
        volccl.connected_components(corner, connectivity=connectivity, device=device)
        host_times.append(time.perf_counter() - start)
    device_median = None
    if device == "cuda":
        import cupy

        resident = cupy.asarray(corner)
        volccl.connected_components(resident, connectivity=connectivity)
        device_times = []
        for _ in range(runs):
            cupy.cuda.runtime.deviceSynchronize()
            start = time.perf_counter()
            volccl.connected_components(resident, connectivity=connectivity)
            cupy.cuda.runtime.deviceSynchronize()
            device_times.append(time.perf_counter() - start)
        device_median = statistics.median(device_times)
        del resident
    return statistics.median(host_times), device_median, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=2048)
    parser.add_argument("--chunk", type=int, default=512, help="Dask chunk side")
    parser.add_argument("--zarr-chunk", type=int, default=128,
                        help="Zarr chunk side of the input and of the labels")
    parser.add_argument("--workers", default="1",
                        help="GPU counts (CPU: groups of worker processes), e.g. 1,2,4")
    parser.add_argument("--processes", type=int, default=1,
                        help="worker processes per GPU (or group)")
    parser.add_argument("--threads", type=int, default=16, help="threads per worker process")
    parser.add_argument("--cpus-per-gpu", type=int, default=0,
                        help="confine each GPU's (group's) worker processes to this many CPUs "
                             "of their own, whole physical cores (0: any CPU)")
    parser.add_argument("--memory-limit", default="auto",
                        help="each worker process's Dask memory limit (0: none, so nothing is "
                             "spilled to disk)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--volumes", default="random:0.3:4")
    parser.add_argument("--connectivity", default="26,6")
    parser.add_argument("--dtype", default="uint64", choices=("uint64", "uint32"),
                        help="the labels' type (label_zarr's dtype)")
    parser.add_argument("--label-codec", default="blosc-lz4", choices=("blosc-lz4", "none"),
                        help="the labels' Zarr codec: label_zarr's default, or none (stored raw, "
                             "to see what compressing costs)")
    parser.add_argument("--connectomics", default="data/connectomics.npy.gz")
    parser.add_argument("--store", default="/tmp/volccl-zarr-bench")
    parser.add_argument("--keep-input", action="store_true",
                        help="keep the generated input stores under --store, and take one that "
                             "an earlier run left there for the same volume, side and chunk")
    parser.add_argument("--check-side", type=int, default=1024,
                        help="the corner labeled in core and compared (0: none)")
    parser.add_argument("--scipy", action="store_true", help="also compare the corner to scipy")
    parser.add_argument("--in-core-runs", type=int, default=5)
    parser.add_argument("--warm-up-runs", type=int, default=1,
                        help="untimed runs of each case before the timed ones")
    parser.add_argument("--runs", type=int, default=1,
                        help="timed runs of each case (the median is reported, the slower middle "
                             "run of an even count; the first run's labels are hashed)")
    parser.add_argument("--csv")
    arguments = parser.parse_args()

    counts = [int(n) for n in arguments.workers.split(",")]
    connectivities = [int(c) for c in arguments.connectivity.split(",")]
    rows = []
    reference = {}
    made = {}
    for workers in counts:
        cluster, client = start_cluster(workers, arguments.processes, arguments.threads,
                                        arguments.device, arguments.cpus_per_gpu,
                                        arguments.memory_limit)
        print(f"# {workers} GPU(s) (or groups) x {arguments.processes} worker process(es) x "
              f"{arguments.threads} threads, device {arguments.device}", flush=True)
        for spec in arguments.volumes.split(","):
            in_store = os.path.join(arguments.store, spec.replace(":", "_") + ".zarr")
            if spec not in made:
                made[spec] = make_volume(client, spec, arguments.side, arguments.zarr_chunk,
                                         in_store, arguments.connectomics, arguments.keep_input)
                name, seconds = made[spec]
                print(f"kept {name}" if seconds is None else f"made {name} in {seconds:.1f} s",
                      flush=True)
                if arguments.check_side:
                    check_corner(client, in_store, arguments, spec, connectivities, rows)
            name = made[spec][0]
            for connectivity in connectivities:
                out_store = os.path.join(arguments.store, "labels.zarr")
                # Untimed: the first run at full size on fresh workers pays for their CuPy
                # pools, pinned buffers and output pages.
                for _ in range(arguments.warm_up_runs):
                    label_run(client, in_store, out_store, connectivity, arguments.device,
                              arguments.chunk, arguments.dtype, arguments.label_codec)
                    shutil.rmtree(out_store, ignore_errors=True)
                runs = []
                for run in range(arguments.runs):
                    runs.append(label_run(client, in_store, out_store, connectivity,
                                          arguments.device, arguments.chunk, arguments.dtype,
                                          arguments.label_codec))
                    if run == 0:
                        hashes = store_digests(client, out_store)
                    shutil.rmtree(out_store, ignore_errors=True)
                walls = [wall for wall, _, _, _ in runs]
                wall, n, phases, steps = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
                same = reference.setdefault((spec, connectivity), (n, hashes))
                identical = same[0] == n and np.array_equal(same[1], hashes)
                if not identical:
                    sys.exit(f"{name} at {connectivity}: {workers} worker(s) gave other labels "
                             f"than {counts[0]} (N {n} against {same[0]})")
                busy = sum(busy for busy, _, _ in phases.values())
                row = {"volume": name, "connectivity": connectivity, "workers": workers,
                       "dtype": arguments.dtype, "label_codec": arguments.label_codec,
                       "processes": arguments.processes, "threads": arguments.threads,
                       "cpus_per_gpu": arguments.cpus_per_gpu or "any",
                       "components": n, "wall_s": round(wall, 2),
                       "runs_s": " ".join(f"{w:.2f}" for w in walls),
                       "gvoxels_per_s_per_worker": round(arguments.side ** 3 / wall / workers
                                                         / 1e9, 3),
                       "identical_to_first": identical,
                       "labels_digest": hashlib.sha256(hashes.tobytes()).hexdigest()[:16],
                       "task_s": round(busy, 1)}
                for phase in ("read + label", "merge", "relabel + write", "gather", "other"):
                    busy_s, first, last = phases.get(phase, (0.0, 0.0, 0.0))
                    row[f"{phase} %"] = round(100 * busy_s / busy, 1)
                    row[f"{phase} span s"] = round(last - first, 2)
                rows.append(row)
                print(row, flush=True)
                print_steps(steps)
        client.close()
        cluster.close()
    if not arguments.keep_input:
        for spec in made:
            shutil.rmtree(os.path.join(arguments.store, spec.replace(":", "_") + ".zarr"),
                          ignore_errors=True)
    print_table(rows)
    if arguments.csv:
        with open(arguments.csv, "w", newline="") as out:
            keys = list(dict.fromkeys(key for row in rows for key in row))
            writer = csv.DictWriter(out, fieldnames=keys)
            writer.writeheader()
            writer.writerows(rows)


def check_corner(client, in_store, arguments, spec, connectivities, rows):
    """The volume's corner of --check-side: volccl.dask's labels against the in-core labeling,
    and the in-core time on one device."""
    import dask.array as da
    import zarr

    import volccl.dask as vdask

    side = arguments.check_side
    corner = np.asarray(zarr.open_array(in_store, mode="r")[:side, :side, :side])
    for connectivity in connectivities:
        host_s, device_s, expected = in_core(corner, connectivity, arguments.device,
                                             arguments.in_core_runs, arguments.scipy)
        darr = da.from_zarr(in_store, chunks=arguments.chunk)[:side, :side, :side]
        labels = client.compute(vdask.connected_components(darr, connectivity=connectivity,
                                                           device=arguments.device), sync=True)
        if not np.array_equal(labels, expected):
            sys.exit(f"{spec} corner {side}^3 at {connectivity}: volccl.dask's labels differ "
                     "from the in-core labeling")
        row = {"volume": f"{spec} corner {side}^3 in core", "connectivity": connectivity,
               "workers": 1, "components": int(expected.max()), "wall_s": round(host_s, 3),
               "gvoxels_per_s_per_worker": round(side ** 3 / host_s / 1e9, 3),
               "identical_to_first": True,
               "device_resident_s": None if device_s is None else round(device_s, 4),
               "scipy_checked": arguments.scipy}
        rows.append(row)
        print(row, flush=True)


def print_table(rows):
    keys = list(dict.fromkeys(key for row in rows for key in row))
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(key, "")) for key in keys) + " |")


if __name__ == "__main__":
    main()
