#!/usr/bin/env python3
"""volccl.dask against dask-image's ndmeasure.label on one LocalCluster, with the same chunks.

Before timing, volccl.dask's labels are compared with scipy.ndimage.label of the whole volume
(byte for byte) and dask-image's with scipy's as a partition (the same components, numbered
differently). Each run computes the labels to the client; the medians of --runs runs are
printed as a Markdown table (and written to --csv).

    .venv/bin/python bench/dask_bench.py --side 256 --chunk 64 --workers 2 --runs 5
    .venv/bin/python bench/dask_bench.py --scaling     # tree costs against chunk and component counts
"""

import argparse
import csv
import statistics
import sys
import time

import numpy as np


def random_volume(side, density, granularity, seed):
    rng = np.random.default_rng(seed)
    coarse = -(-side // granularity)
    cells = rng.random((coarse,) * 3) < density
    for axis in range(3):
        cells = np.repeat(cells, granularity, axis=axis)
    return np.ascontiguousarray(cells[:side, :side, :side])


def same_partition(labels, expected):
    """Whether two label images have the same components (any numbering)."""
    if not np.array_equal(labels != 0, expected != 0):
        return False
    pairs = np.unique(np.stack([labels[expected != 0].astype(np.int64),
                                expected[expected != 0].astype(np.int64)]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def timed(client, make, runs):
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = client.compute(make(), sync=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--volumes", default="0.3:1,0.5:4,0.2:16",
                        help="density:granularity of each random volume")
    parser.add_argument("--connectivity", type=int, default=26, choices=(6, 18, 26))
    parser.add_argument("--skip-dask-image", action="store_true")
    parser.add_argument("--scaling", action="store_true",
                        help="time volccl.dask's phases over chunk counts and component counts")
    parser.add_argument("--csv")
    arguments = parser.parse_args()

    import dask.array as da
    import distributed
    from scipy import ndimage

    import volccl.dask as vdask

    cluster = distributed.LocalCluster(n_workers=arguments.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    structure = ndimage.generate_binary_structure(3, {6: 1, 18: 2, 26: 3}[arguments.connectivity])
    rows = []
    print(f"# volccl.dask against dask-image: {arguments.side}^3, chunks "
          f"{arguments.chunk}^3, {arguments.workers} worker processes x 1 thread, "
          f"median of {arguments.runs} runs", flush=True)
    if arguments.scaling:
        return scaling(client, arguments)
    for spec in arguments.volumes.split(","):
        density, granularity = float(spec.split(":")[0]), int(spec.split(":")[1])
        mask = random_volume(arguments.side, density, granularity, seed=1)
        expected, count = ndimage.label(mask, structure=structure)
        darr = da.from_array(mask, chunks=arguments.chunk)
        # A persisted input, so that both sides time the labeling and not the copy to workers.
        darr = client.persist(darr)
        distributed.wait(darr)

        def ours():
            return vdask.connected_components(darr, connectivity=arguments.connectivity)

        labels = client.compute(ours(), sync=True)
        if not np.array_equal(labels, expected):
            sys.exit(f"volccl.dask's labels differ from scipy's (density {density}, "
                     f"granularity {granularity})")
        ours_median, ours_times, _ = timed(client, ours, arguments.runs)
        row = {"volume": f"{arguments.side}^3 d{density} g{granularity}",
               "components": count, "chunks": darr.npartitions,
               "volccl_dask_s": round(ours_median, 3),
               "volccl_dask_runs": " ".join(f"{t:.3f}" for t in ours_times)}
        if not arguments.skip_dask_image:
            from dask_image import ndmeasure

            def theirs():
                return ndmeasure.label(darr, structure=structure)[0]

            labels = client.compute(theirs(), sync=True)
            if not same_partition(labels, expected):
                sys.exit("dask-image's components differ from scipy's")
            theirs_median, theirs_times, _ = timed(client, theirs, arguments.runs)
            row.update({"dask_image_s": round(theirs_median, 3),
                        "dask_image_runs": " ".join(f"{t:.3f}" for t in theirs_times),
                        "speedup": round(theirs_median / ours_median, 2)})
        rows.append(row)
        print(row, flush=True)
        client.cancel(darr)
    print_table(rows)
    write_csv(arguments.csv, rows)
    client.close()
    cluster.close()


def write_csv(path, rows):
    if path:
        with open(path, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def print_table(rows):
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(key, "")) for key in keys) + " |")


def scaling(client, arguments):
    """volccl.dask's time against the number of chunks (fixed volume) and of components, the
    labels checked against scipy's."""
    import dask.array as da
    from distributed.diagnostics import MemorySampler
    from scipy import ndimage

    import volccl.dask as vdask

    rows = []
    side = arguments.side
    for chunk in (side, side // 2, side // 4, side // 8):
        for spec in arguments.volumes.split(","):
            density, granularity = float(spec.split(":")[0]), int(spec.split(":")[1])
            mask = random_volume(side, density, granularity, seed=2)
            darr = client.persist(da.from_array(mask, chunks=chunk))
            distributed_wait(darr)
            connectivity = arguments.connectivity
            labels, count = vdask.connected_components(darr, connectivity, return_N=True)
            tasks = len(dict(labels.__dask_graph__()))
            sampler = MemorySampler()
            with sampler.sample("run", measure="managed", interval=0.05):
                median, times, result = timed(client, lambda: vdask.connected_components(
                    darr, connectivity, return_N=True)[1], arguments.runs)
            # What Dask holds on the workers at the peak (the persisted input included): the
            # chunks' labels, summaries and tree states, not the processes' allocator slack.
            peak = max(sampler.samples["run"], key=lambda sample: sample[1])[1]
            # Checked after the timed runs, so that the check's memory is not in the peak.
            expected, _ = ndimage.label(mask, structure=ndimage.generate_binary_structure(
                3, {6: 1, 18: 2, 26: 3}[connectivity]))
            if not np.array_equal(client.compute(labels, sync=True), expected):
                sys.exit(f"volccl.dask's labels differ from scipy's ({spec}, chunks {chunk})")
            row = {"chunk": chunk, "chunks": darr.npartitions,
                   "volume": f"d{density} g{granularity}", "connectivity": connectivity,
                   "components": int(result),
                   "tasks": tasks, "median_s": round(median, 3),
                   "input_mb": round(mask.nbytes / 2**20, 1),
                   "peak_cluster_memory_mb": round(peak / 2**20, 1)}
            rows.append(row)
            print(row, flush=True)
            client.cancel(darr)
    print_table(rows)
    write_csv(arguments.csv, rows)


def distributed_wait(collection):
    import distributed
    distributed.wait(collection)


if __name__ == "__main__":
    main()
