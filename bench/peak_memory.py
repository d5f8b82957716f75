#!/usr/bin/env python3
"""Peak resident memory of one labeling by volccl's Python module and by cc3d, each in a fresh
process, on the volumes `volccl bench --dump-dir` wrote.

    PYTHONPATH=build/python .venv/bin/python bench/peak_memory.py DIR [--connectivity 26]
        [--algorithm rts] [--threads 2] [--label-maps] [--csv peak.csv]

For every DIR/NAME.npy (2D images left out), a child process loads the volume, records its peak
resident set size (getrusage's ru_maxrss), labels once with one peer and records the peak again;
the row gives both and the labeling's own share (after - before). The labels are allocated by
the peer in both cases (volccl.connected_components and cc3d.connected_components, uint32
output), so what differs is each labeler's working memory. Volumes are masks (volccl with
binary_image=True); with --label-maps, label maps (DIR's volumes as given, every connected
region of equal non-zero value a component on both sides, cc3d's default).
"""

import argparse
import csv
import pathlib
import subprocess
import sys

CHILD = r"""
import resource, sys, numpy as np
path, peer, connectivity, algorithm, threads, binary = sys.argv[1:7]
volume = np.load(path)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if peer == "cc3d":
    import cc3d
    labels, n = cc3d.connected_components(volume, connectivity=int(connectivity), return_N=True,
                                          out_dtype=np.uint32)
else:
    import volccl
    labels, n = volccl.connected_components(volume, connectivity=int(connectivity), return_N=True,
                                            binary_image=True if binary == "1" else None,
                                            algorithm=algorithm, device="cpu",
                                            threads=int(threads))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, after, n)
"""


def measure(path, peer, connectivity, algorithm, threads, binary):
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), peer, str(connectivity),
                           algorithm, str(threads), "1" if binary else "0"],
                          capture_output=True, text=True, check=True)
    before, after, count = (int(word) for word in done.stdout.split())
    return before, after, count


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump_dir", type=pathlib.Path)
    parser.add_argument("--connectivity", type=int, default=26, choices=[6, 18, 26])
    parser.add_argument("--algorithm", default="rts")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--label-maps", action="store_true",
                        help="DIR's volumes are label maps, labeled as given")
    parser.add_argument("--csv", type=pathlib.Path)
    arguments = parser.parse_args()
    rows = []
    print(f"{'volume':24} {'peer':8} {'peak MiB':>9} {'labeling MiB':>13} {'components':>11}")
    for path in sorted(arguments.dump_dir.glob("*.npy")):
        if path.name.endswith(".labels.npy"):
            continue
        name = path.name[:-len(".npy")]
        counts = set()
        for peer in ("volccl", "cc3d"):
            before, after, count = measure(path, peer, arguments.connectivity,
                                           arguments.algorithm, arguments.threads,
                                           not arguments.label_maps)
            counts.add(count)
            rows.append({"volume": name, "peer": peer, "connectivity": arguments.connectivity,
                         "peak_kib": after, "labeling_kib": after - before,
                         "components": count})
            print(f"{name:24} {peer:8} {after / 1024:9.1f} {(after - before) / 1024:13.1f} "
                  f"{count:11}", flush=True)
        if len(counts) != 1:
            print(f"MISMATCH {name}: component counts {sorted(counts)}")
            return 1
    if arguments.csv is not None:
        with open(arguments.csv, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
