#!/usr/bin/env python3
"""Times CuPy, scipy and cc3d on the volumes `volccl bench` dumped, and checks volccl's labels
with scipy.

    volccl bench --device cuda --connectivity 6 --dump-dir DIR --csv bench_volccl.csv
    python3 bench/peers.py DIR --connectivity 6 --csv bench_peers.csv \
        [--volccl-csv bench_volccl.csv] [--bandwidth GB/s]

Timing (docs/design.md, Performance): for every DIR/NAME.npy, the volume is copied to the device
once, then cupyx.scipy.ndimage.label with the structure of --connectivity (6, 18 or 26:
scipy.ndimage.generate_binary_structure(3, 1), (3, 2) or (3, 3); 26 by default; or 4 or 8 for
the 2D images: (2, 1) or (2, 2)) runs --warmup
untimed and --runs timed times between two CUDA events on the current stream. Its output is
allocated inside label from CuPy's default memory pool, as users have it. The CSV has the
columns of volccl bench's; with --bandwidth (the device-to-device copy bandwidth, read +
written, that volccl bench measured) the floor columns are filled as well.

Correctness: for every DIR/NAME.cC.labels.npy (volccl's labels at connectivity C, uint32),
scipy.ndimage.label with the structure of C runs on the CPU and both must be identical voxel for
voxel; where C is --connectivity, CuPy's component count must equal scipy's. Exit status 1 on
any mismatch, 2 on bad arguments or an empty DIR. Without CuPy only the scipy check runs.

CPU peers (rows "scipy-label", "cc3d" and "opencv", device "cpu", --cpu-runs runs after
--cpu-warmup untimed ones): the check's scipy.ndimage.label is its first run (output allocation
included, as volccl bench's runs); cc3d.connected_components (connectivity 6, 18 or 26, or 4, 8,
one thread) is timed when the cc3d module is installed, and on 2D images OpenCV's
cv2.connectedComponents (its default algorithm, 32-bit labels, --threads threads) when cv2 is;
each peer's component count is checked against scipy's. The volumes of volccl bench's
granularity test (dataset "granularity" in --volccl-csv) are checked but their CPU peers are not
timed, as volccl bench's ITK peer, unless --granularity-peers.

--volccl-csv (volccl bench's CSV of the same run) gives each row the volume's dataset, as
volccl's rows have it.

With --statistics, each volume is also timed the CuPy way of getting volccl's statistics (rows
"cupy-label+moments", --statistics-runs runs): label, then bincount for the voxel counts,
cupyx.scipy.ndimage.center_of_mass for the centroids and sum_labels of the coordinate products
for the second moments, all on float64 weights (CuPy's fast path). Without bounding boxes:
ndimage.minimum / maximum of the coordinates took far longer than everything else on large
volumes of many components, so the route is timed without them (a lower bound of CuPy's cost
for volccl's numbers). On volumes over --statistics-max-components, --statistics-timeout S
times one run of the route in a child process (its kernels compiled first on a small volume)
and stops it after S seconds: the row then has lower_bound 1 and S as its time, a lower bound
of the route's.
"""

import argparse
import csv
import pathlib
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy.ndimage

COLUMNS = [
    "volume", "dataset", "voxels", "density", "granularity", "x", "connectivity", "algorithm",
    "device", "runs", "median_ms", "min_ms", "max_ms", "components", "iterations", "floor_ms",
    "x_floor", "upload_ms", "download_ms", "allocation_ms", "initialization_ms", "merge_ms",
    "compression_ms", "relabel_ms", "final_labeling_ms", "statistics_ms", "lower_bound",
]
# The memory floor reads the uint8 mask once and writes the uint32 labels once.
FLOOR_BYTES_PER_VOXEL = 1 + 4
# The neighbours within city-block distance 1, 2 or 3. NumPy arrays: CuPy converts a CuPy
# structure to NumPy on every call, a device-to-host copy that is not part of labeling.
# In 2D (volccl bench's images), the pixels within distance 1 or 2.
STRUCTURES = {6: scipy.ndimage.generate_binary_structure(3, 1),
              18: scipy.ndimage.generate_binary_structure(3, 2),
              26: scipy.ndimage.generate_binary_structure(3, 3),
              4: scipy.ndimage.generate_binary_structure(2, 1),
              8: scipy.ndimage.generate_binary_structure(2, 2)}
# volccl bench's labels: NAME.cCONNECTIVITY.labels.npy.
LABELS_FILE = re.compile(r"^(?P<name>.+)\.c(?P<connectivity>4|8|6|18|26)\.labels\.npy$")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump_dir", type=pathlib.Path, help="volccl bench --dump-dir folder")
    parser.add_argument("--connectivity", type=int, default=26, choices=sorted(STRUCTURES),
                        help="the structure CuPy labels with (26)")
    parser.add_argument("--runs", type=int, default=50, help="timed runs per volume (50)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs before them (5)")
    parser.add_argument("--csv", type=pathlib.Path, help="write CuPy's timings as CSV")
    parser.add_argument("--statistics", action="store_true",
                        help="also time label + the statistics (see above)")
    parser.add_argument("--statistics-max-components", type=int,
                        help="leave out CuPy's statistics route on volumes of more components "
                             "(its center_of_mass and sum_labels did not finish 2 runs on 3 M "
                             "components in 7 minutes)")
    parser.add_argument("--statistics-timeout", type=float,
                        help="on volumes over --statistics-max-components, time one run of the "
                             "route, stopped after this many seconds (see above)")
    parser.add_argument("--statistics-runs", type=int, default=10,
                        help="timed runs of label + statistics per volume (10)")
    parser.add_argument("--cpu-runs", type=int, default=1,
                        help="timed runs of scipy, cc3d and OpenCV per volume (1: the check's)")
    parser.add_argument("--cpu-warmup", type=int, default=0,
                        help="untimed runs of each CPU peer before them (0)")
    parser.add_argument("--threads", type=int, default=1,
                        help="OpenCV's threads (cv2.setNumThreads), volccl bench's --threads (1)")
    parser.add_argument("--granularity-peers", action="store_true",
                        help="time the CPU peers on the granularity test's volumes too")
    parser.add_argument("--volccl-csv", type=pathlib.Path,
                        help="volccl bench's CSV: the dataset of each volume")
    parser.add_argument("--bandwidth", type=float,
                        help="copy bandwidth in GB/s (read + written) for the floor columns")
    arguments = parser.parse_args()
    if (arguments.runs < 1 or arguments.warmup < 0 or arguments.cpu_runs < 1
            or arguments.cpu_warmup < 0 or arguments.threads < 1):
        parser.error("--runs, --cpu-runs and --threads must be at least 1, --warmup and "
                     "--cpu-warmup at least 0")
    if arguments.bandwidth is not None and arguments.bandwidth <= 0:
        parser.error("--bandwidth must be positive")
    if arguments.statistics_timeout is not None and (
            arguments.statistics_max_components is None or arguments.statistics_timeout <= 0):
        parser.error("--statistics-timeout must be positive and needs --statistics-max-components")
    return arguments


def load_cupy():
    """Returns (cupy, cupyx.scipy.ndimage.label, None) or (None, None, why not)."""
    try:
        import cupy
        import cupyx.scipy.ndimage
    except ImportError as error:
        return None, None, f"CuPy not found ({error})"
    try:
        device_count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as error:
        return None, None, f"CuPy found but CUDA is not usable ({error})"
    if device_count == 0:
        return None, None, "CuPy found but there is no CUDA device"
    return cupy, cupyx.scipy.ndimage.label, None


def volume_names(dump_dir):
    return sorted(path.name[:-len(".npy")] for path in dump_dir.glob("*.npy")
                  if not path.name.endswith(".labels.npy"))


def granularity_of(name):
    match = re.search(r"-g(\d+)$", name)
    return match.group(1) if match else ""


def labels_files(dump_dir):
    """(name, connectivity, path) of each of volccl's labels files in dump_dir."""
    found = []
    for path in sorted(dump_dir.glob("*.labels.npy")):
        match = LABELS_FILE.match(path.name)
        if match is None:
            raise SystemExit(f"peers.py: {path} is not NAME.c4|c8|c6|c18|c26.labels.npy")
        found.append((match["name"], int(match["connectivity"]), path))
    return found


def time_cupy(cupy, label, volume, structure, runs, warmup, statistics=False):
    """Returns the milliseconds of each timed run and CuPy's component count; with
    `statistics`, each run also computes cupy_moments."""
    import cupyx.scipy.ndimage as ndimage
    device_volume = cupy.asarray(volume)
    start = cupy.cuda.Event()
    stop = cupy.cuda.Event()
    times = []
    count = None
    for run in range(-warmup, runs):
        start.record()
        labels, count = label(device_volume, structure=structure)
        results = cupy_moments(cupy, ndimage, labels, count) if statistics else None
        stop.record()
        stop.synchronize()
        del labels, results
        if run >= 0:
            times.append(cupy.cuda.get_elapsed_time(start, stop))
    del device_volume
    cupy.get_default_memory_pool().free_all_blocks()
    return times, count


def cupy_moments(cupy, ndimage, labels, count):
    """Count, centroid and second moments of every label, as a CuPy user gets them. Returns the
    arrays (so that nothing is skipped as unused)."""
    index = cupy.arange(1, count + 1)
    counts = cupy.bincount(labels.ravel(), minlength=count + 1)
    # float64 weights: ndimage.sum (inside center_of_mass) takes a slow path for bool input.
    ones = cupy.ones(labels.shape, dtype=cupy.float64)
    centroids = ndimage.center_of_mass(ones, labels, index)
    axes = [cupy.arange(n, dtype=cupy.float64).reshape(
        [n if a == axis else 1 for a in range(labels.ndim)])
        for axis, n in enumerate(labels.shape)]
    products = [ndimage.sum_labels(axes[i] * axes[j] * ones, labels, index)
                for i in range(labels.ndim) for j in range(i, labels.ndim)]
    return counts, centroids, products


def route_once(path, connectivity):
    """The child process of --statistics-timeout: prints the milliseconds of one run of label +
    cupy_moments on the volume at `path`, after a run on a small volume that compiles the
    kernels."""
    cupy, label, why_not = load_cupy()
    if cupy is None:
        raise SystemExit(why_not)
    structure = STRUCTURES[connectivity]
    volume = np.load(path)
    time_cupy(cupy, label, np.ascontiguousarray(volume[:8, :8, :8]), structure, 1, 0,
              statistics=True)
    times, _ = time_cupy(cupy, label, volume, structure, 1, 0, statistics=True)
    print(times[0])


def time_route_with_timeout(path, connectivity, seconds):
    """(milliseconds, False) of one run of CuPy's statistics route in a child process, or
    (seconds in ms, True) when it did not finish in `seconds`."""
    command = [sys.executable, __file__, "--route-once", str(path), str(connectivity)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds,
                              check=True)
    except subprocess.TimeoutExpired:
        return seconds * 1e3, True
    return float(done.stdout.split()[-1]), False


def number(value):
    return f"{value:.6g}"


def load_cc3d():
    """The cc3d module, or None when it is not installed."""
    try:
        import cc3d
    except ImportError:
        return None
    return cc3d


def load_opencv(threads):
    """The cv2 module with `threads` threads, or None when it is not installed."""
    try:
        import cv2
    except ImportError:
        return None
    cv2.setNumThreads(threads)
    return cv2


def read_datasets(path):
    """volume name -> dataset, from volccl bench's CSV (empty without one)."""
    if path is None:
        return {}
    with open(path, newline="") as file:
        return {row["volume"]: row["dataset"] for row in csv.DictReader(file)}


def timing_row(name, volume, connectivity, times, count, bandwidth, algorithm="cupy-label",
               device="cuda", dataset=""):
    median = statistics.median(times)
    row = {column: "" for column in COLUMNS}
    row.update(volume=name, dataset=dataset, voxels=volume.size,
               density=f"{np.count_nonzero(volume) / volume.size:.6f}",
               granularity=granularity_of(name), connectivity=connectivity,
               algorithm=algorithm, device=device,
               runs=len(times), median_ms=number(median), min_ms=number(min(times)),
               max_ms=number(max(times)), components=count)
    if bandwidth is not None and device == "cuda":
        floor_ms = volume.size * FLOOR_BYTES_PER_VOXEL / (bandwidth * 1e9) * 1e3
        row.update(floor_ms=number(floor_ms), x_floor=number(median / floor_ms))
    return row


def write_csv(path, rows):
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    temporary.replace(path)


def time_scipy(volume, connectivity):
    """scipy's labels, component count and milliseconds of one run."""
    start = time.perf_counter()
    reference, count = scipy.ndimage.label(volume, structure=STRUCTURES[connectivity])
    return reference, count, (time.perf_counter() - start) * 1e3


def time_cc3d(cc3d, volume, connectivity, runs, warmup=0):
    """cc3d's component count and the milliseconds of each timed run."""
    times = []
    for run in range(-warmup, runs):
        start = time.perf_counter()
        _, count = cc3d.connected_components(volume, connectivity=connectivity,
                                             return_N=True)
        if run >= 0:
            times.append((time.perf_counter() - start) * 1e3)
    return times, count


def time_opencv(cv2, image, connectivity, runs, warmup=0):
    """OpenCV's component count (its background label left out) and the milliseconds of each
    timed run of cv2.connectedComponents on a 2D image."""
    times = []
    for run in range(-warmup, runs):
        start = time.perf_counter()
        count, _ = cv2.connectedComponents(image, connectivity=connectivity, ltype=cv2.CV_32S)
        if run >= 0:
            times.append((time.perf_counter() - start) * 1e3)
    return times, count - 1


def check_labels(name, connectivity, volume, ours, cupy_count, reference, count):
    """Prints OK or MISMATCH lines for one volume against scipy's labels `reference` (`count`
    components); returns True when everything matched."""
    name = f"{name} c{connectivity}"
    matched = True
    if ours.shape != reference.shape or ours.dtype != np.uint32:
        print(f"MISMATCH {name}: volccl labels are {ours.dtype} {ours.shape}, "
              f"expected uint32 {reference.shape}")
        matched = False
    else:
        differing = ours != reference.astype(np.uint32)
        mismatches = int(np.count_nonzero(differing))
        if mismatches == 0:
            print(f"OK       {name}: volccl labels identical to scipy's ({count} components)")
        else:
            first = int(np.argmax(differing))
            where = ", ".join(f"{axis} {i}" for axis, i in
                              zip("zyx"[-ours.ndim:], np.unravel_index(first, ours.shape)))
            print(f"MISMATCH {name}: volccl labels differ from scipy's at {mismatches} voxels; "
                  f"first at index {first} ({where}): volccl {ours.flat[first]}, "
                  f"scipy {reference.flat[first]}; components volccl {int(ours.max())}, "
                  f"scipy {count}")
            matched = False
    if cupy_count is not None:
        if cupy_count == count:
            print(f"OK       {name}: CuPy finds {cupy_count} components, as scipy")
        else:
            print(f"MISMATCH {name}: CuPy finds {cupy_count} components, scipy {count}")
            matched = False
    return matched


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--route-once":
        route_once(sys.argv[2], int(sys.argv[3]))
        return 0
    arguments = parse_arguments()
    names = volume_names(arguments.dump_dir)
    if not names:
        print(f"peers.py: no NAME.npy volumes in {arguments.dump_dir}", file=sys.stderr)
        return 2

    datasets = read_datasets(arguments.volccl_csv)
    cupy, label, why_not = load_cupy()
    rows = []
    cupy_counts = {}
    if cupy is None:
        print(f"{why_not}: no CuPy timings; checking volccl's labels with scipy only")
    else:
        device = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
        if isinstance(device, bytes):
            device = device.decode()
        print(f"CuPy {cupy.__version__} on {device}, {arguments.connectivity}-connectivity; "
              f"{arguments.runs} runs after {arguments.warmup} warm-up runs")
        print(f"{'volume':20} {'algorithm':10} {'median ms':>10} {'min ms':>10} {'max ms':>10} "
              f"{'components':>11} {'x floor':>8}")
        for name in names:
            volume = np.load(arguments.dump_dir / f"{name}.npy")
            times, count = time_cupy(cupy, label, volume, STRUCTURES[arguments.connectivity],
                                     arguments.runs, arguments.warmup)
            cupy_counts[name, arguments.connectivity] = count
            row = timing_row(name, volume, arguments.connectivity, times, count,
                             arguments.bandwidth, dataset=datasets.get(name, ""))
            rows.append(row)
            x_floor = f"{float(row['x_floor']):.1f}" if row["x_floor"] else "-"
            print(f"{name:20} {'cupy-label':10} {statistics.median(times):10.3f} "
                  f"{min(times):10.3f} {max(times):10.3f} {count:11} {x_floor:>8}", flush=True)
            limit = arguments.statistics_max_components
            if arguments.statistics and limit is not None and count > limit:
                if arguments.statistics_timeout is None:
                    print(f"{name:20} {'+moments':10} left out: {count} components, over "
                          f"--statistics-max-components {limit}", flush=True)
                    continue
                ms, cut = time_route_with_timeout(arguments.dump_dir / f"{name}.npy",
                                                  arguments.connectivity,
                                                  arguments.statistics_timeout)
                row = timing_row(name, volume, arguments.connectivity, [ms], count,
                                 arguments.bandwidth, "cupy-label+moments",
                                 dataset=datasets.get(name, ""))
                row["lower_bound"] = 1 if cut else 0
                rows.append(row)
                print(f"{name:20} {'+moments':10} {'>' if cut else ''}{ms:.3f} "
                      f"(one run{', stopped' if cut else ''}) {count:11}", flush=True)
            elif arguments.statistics:
                times, count = time_cupy(
                    cupy, label, volume, STRUCTURES[arguments.connectivity],
                    arguments.statistics_runs, min(arguments.warmup, 1), statistics=True)
                rows.append(timing_row(name, volume, arguments.connectivity, times, count,
                                       arguments.bandwidth, "cupy-label+moments",
                                       dataset=datasets.get(name, "")))
                print(f"{name:20} {'+moments':10} {statistics.median(times):10.3f} "
                      f"{min(times):10.3f} {max(times):10.3f} {count:11}", flush=True)
    all_matched = True
    cc3d = load_cc3d()
    if cc3d is None:
        print("cc3d not installed: no cc3d timings")
    cv2 = load_opencv(arguments.threads)
    if cv2 is None:
        print("OpenCV (cv2) not installed: no OpenCV timings")
    checked = labels_files(arguments.dump_dir)
    for name, connectivity, labels_path in checked:
        volume = np.load(arguments.dump_dir / f"{name}.npy")
        ours = np.load(labels_path)
        reference, count, scipy_ms = time_scipy(volume, connectivity)
        all_matched &= check_labels(name, connectivity, volume, ours,
                                    cupy_counts.get((name, connectivity)), reference, count)
        del reference
        granularity_test = datasets.get(name) == "granularity"
        if (granularity_test and not arguments.granularity_peers) or \
                connectivity != arguments.connectivity:
            continue
        for _ in range(arguments.cpu_warmup):
            scipy_ms = time_scipy(volume, connectivity)[2]
        times = [scipy_ms] + [time_scipy(volume, connectivity)[2]
                              for _ in range(arguments.cpu_runs - 1)]
        rows.append(timing_row(name, volume, connectivity, times, count, None, "scipy-label",
                               "cpu", datasets.get(name, "")))
        print(f"{name:20} {'scipy-label':12} {statistics.median(times):10.1f} ms on the CPU",
              flush=True)
        peers = []
        if cc3d is not None:
            peers.append(("cc3d", lambda: time_cc3d(cc3d, volume, connectivity,
                                                    arguments.cpu_runs, arguments.cpu_warmup)))
        if cv2 is not None and volume.ndim == 2:
            peers.append(("opencv", lambda: time_opencv(cv2, np.ascontiguousarray(volume),
                                                        connectivity, arguments.cpu_runs,
                                                        arguments.cpu_warmup)))
        for peer, timed in peers:
            times, peer_count = timed()
            rows.append(timing_row(name, volume, connectivity, times, peer_count, None, peer,
                                   "cpu", datasets.get(name, "")))
            print(f"{name:20} {peer:12} {statistics.median(times):10.1f} ms on the CPU, "
                  f"{peer_count} components", flush=True)
            if peer_count != count:
                print(f"MISMATCH {name} c{connectivity}: {peer} finds {peer_count} components, "
                      f"scipy {count}")
                all_matched = False
    if arguments.csv is not None:
        write_csv(arguments.csv, rows)
    if not checked:
        print(f"MISMATCH: no NAME.cC.labels.npy in {arguments.dump_dir} to check")
        return 1
    print("all labels match" if all_matched else "labels MISMATCH: see above")
    return 0 if all_matched else 1


if __name__ == "__main__":
    sys.exit(main())
