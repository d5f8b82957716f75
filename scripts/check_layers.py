#!/usr/bin/env python3
"""Checks that volccl's layers point one way (docs/design.md).

Every quoted #include of a source file is resolved to the file it names, and the layer of that
file must be the includer's own layer or a lower one. Also: kernels2d/ and kernels3d/ never
include each other (what both need lives in kernels/), CUDA sources never include ITK or VTK
headers, and the library has no thread_local state.

Usage: check_layers.py [ROOT]      (default: the repository holding this script)
       check_layers.py --self-test (plants each kind of violation in a scratch tree)
Exit status 0 when the tree is clean, 1 with one line per violation otherwise.
"""
import pathlib
import re
import sys
import tempfile

from repository_files import repository_files, repository_root

# Lowest first. A directory not listed here (docs/, scripts/, cmake/) holds no checked sources.
LAYERS = {
    "core/include": 0,
    "runtime": 1,
    "kernels": 2,
    "kernels2d": 2,
    "kernels3d": 2,
    "dispatch": 3,
    "filters": 4,
    "data": 4,
    "apps": 5,
    "bench": 5,
    "python": 5,
    "tests": 6,
}
LIBRARY = ("runtime", "kernels", "kernels2d", "kernels3d", "dispatch")
SOURCE_SUFFIXES = {".h", ".hpp", ".hxx", ".cuh", ".cpp", ".cc", ".cu"}
# Folders a quoted include may be found in besides the repository root and the includer's own.
INCLUDE_DIRS = ("core/include", "data/include", "bench", "apps/cli", "apps/vtk", "filters", "tests")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
THREAD_LOCAL = re.compile(r"\bthread_local\b")


def layer_folder(relative: str):
    """The LAYERS key that `relative` (a path from the root) lies in, or None."""
    best = None
    for folder in LAYERS:
        if relative == folder or relative.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def source_files(root: pathlib.Path):
    return [root / name for name in repository_files(root)
            if pathlib.PurePosixPath(name).suffix in SOURCE_SUFFIXES]


def resolve(root: pathlib.Path, includer: pathlib.Path, name: str):
    for base in (includer.parent, root, *(root / d for d in INCLUDE_DIRS)):
        candidate = (base / name).resolve()
        if candidate.is_file() and root.resolve() in candidate.parents:
            return candidate
    return None


def violations(root: pathlib.Path):
    root = root.resolve()
    found = []
    for path in source_files(root):
        relative = path.resolve().relative_to(root).as_posix()
        folder = layer_folder(relative)
        if folder is None:
            continue
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        cuda = path.suffix in {".cu", ".cuh"}
        for number, line in enumerate(text, 1):
            if folder in LIBRARY and THREAD_LOCAL.search(line.split("//")[0]):
                found.append(f"{relative}:{number}: thread_local state in the library; pass what "
                             "a step needs to it")
            match = INCLUDE.match(line)
            if not match:
                continue
            name = match.group(1)
            if cuda and re.match(r"(itk|vtk)", pathlib.PurePosixPath(name).name, re.IGNORECASE):
                found.append(f"{relative}:{number}: CUDA source includes {name}; nvcc never sees "
                             "ITK or VTK headers")
                continue
            target = resolve(root, path, name)
            if target is None:
                continue  # a system or third-party header
            target_relative = target.relative_to(root).as_posix()
            target_folder = layer_folder(target_relative)
            if target_folder is None:
                found.append(f"{relative}:{number}: includes {target_relative}, which is in no "
                             "layer")
                continue
            if LAYERS[target_folder] > LAYERS[folder]:
                found.append(f"{relative}:{number}: {folder} (layer {LAYERS[folder]}) includes "
                             f"{target_relative} ({target_folder}, layer "
                             f"{LAYERS[target_folder]})")
            elif {folder, target_folder} == {"kernels2d", "kernels3d"}:
                found.append(f"{relative}:{number}: {folder} includes {target_relative}; what "
                             "both dimensions share belongs in kernels/")
    return found


def self_test():
    cases = {
        "runtime/a.h": ('#include "dispatch/b.h"\n', "includes dispatch/b.h"),
        "kernels2d/c.h": ('#include "kernels3d/d.h"\n', "belongs in kernels/"),
        "kernels3d/e.cu": ('#include "itkImage.h"\n', "nvcc never sees"),
        "dispatch/f.cpp": ("thread_local int x = 0;\n", "thread_local"),
        "core/include/volccl/g.h": ('#include "runtime/h.h"\n', "includes runtime/h.h"),
    }
    targets = ["dispatch/b.h", "kernels3d/d.h", "runtime/h.h"]
    clean = {"kernels/i.h": '#include "runtime/h.h"\n', "tests/j.cpp": '#include "dispatch/b.h"\n'}
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for name in targets:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("#pragma once\n")
        for name, text in {**{k: v[0] for k, v in cases.items()}, **clean}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = violations(root)
    failures = []
    for name, (_, expected) in cases.items():
        if not any(line.startswith(name + ":") and expected in line for line in found):
            failures.append(f"self-test: the violation in {name} was not reported")
    for name in clean:
        if any(line.startswith(name + ":") for line in found):
            failures.append(f"self-test: {name} is clean but was reported")
    for line in failures:
        print(line)
    if not failures:
        print(f"check_layers.py: self-test passed ({len(cases)} planted violations found, "
              f"{len(clean)} clean files passed)")
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(argv[1]) if len(argv) > 1 else repository_root()
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"check_layers.py: {len(found)} violation(s) of the layers (docs/design.md)")
        return 1
    print(f"check_layers.py: {len(source_files(root))} sources, every include points down or "
          "sideways")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
