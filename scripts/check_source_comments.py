#!/usr/bin/env python3
"""Fails on performance-notes identifiers and run numbers in source files.

    python3 scripts/check_source_comments.py              # scan the repository
    python3 scripts/check_source_comments.py --self-test  # check the checker on a scratch tree

Source comments say why the code is as it is; the measurements behind a choice, with the
identifiers that name each change (a notes series' letters, a hyphen and the change's number)
and the numbers of the runs on the GPU machine, belong in bench/notes/. A comment that needs them points to the notes file of its
topic (bench/notes/union-find-3d.md, ...), not to a change's identifier.

The files scanned are those git knows of, tracked and untracked but not ignored
(`git ls-files --cached --others --exclude-standard`), as they are in the working tree: sources
and build files (.h .hpp .hxx .cuh .cu .cpp .cc .py .sh .cmake, CMakeLists.txt) outside
bench/results/ and bench/notes/, and README.md. A tracked file deleted from the working tree is
skipped, and so is this script. Flagged, anywhere in a line:

- a change's identifier: one of the series S, RUF, UFB, TUF and UF, a hyphen and a number;
- the old single notes file (NOTES.md in bench/) and a reference into it ("NOTES", then S-);
- a run's number: "device call", "call" or "calls" and a number (two digits or more for the
  last two).

The self-test builds its examples of each at run time, so that this file holds none.

Each hit is printed as `FILE:LINE: notes identifier 'TEXT'` and the exit status is 1; when there
is none it prints one summary line and exits 0. Benchmark figures (timings, speed-ups) are not
looked for: they cannot be told from the code's own numbers by a pattern. Python 3 standard
library only.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile

from repository_files import repository_files, repository_root

SUFFIXES = (".h", ".hpp", ".hxx", ".cuh", ".cu", ".cpp", ".cc", ".py", ".sh", ".cmake")
EXCLUDED_FOLDERS = ("bench/results/", "bench/notes/")
SELF = "scripts/check_source_comments.py"

PATTERNS = [
    re.compile(r"\b(?:S|RUF|UFB|TUF|UF)-[0-9]+\b"),
    re.compile(r"bench/NOTES\.md"),
    re.compile(r"NOTES[ ]S-"),
    re.compile(r"device[ ]call [0-9]+"),
    re.compile(r"\bcalls? [0-9]{2,}\b"),
]


def example(series: str, number: int) -> str:
    """A change's identifier for the self-test, made here so that no line of this file is one."""
    return f"{series}-{number}"


NOTES_FILE = "bench/" + "NOTES.md"


def wanted(path: str) -> bool:
    if path == SELF or path.startswith(EXCLUDED_FOLDERS):
        return False
    name = path.rsplit("/", 1)[-1]
    return path == "README.md" or name == "CMakeLists.txt" or name.endswith(SUFFIXES)


def source_files(root: pathlib.Path) -> list[str]:
    return [path for path in repository_files(root) if wanted(path)]


def hits_in_line(line: str) -> list[str]:
    """The flagged texts of a line; overlapping matches (an identifier inside a reference to the
    old notes file) are joined into one."""
    spans = sorted(match.span() for pattern in PATTERNS for match in pattern.finditer(line))
    joined: list[list[int]] = []
    for begin, end in spans:
        if joined and begin < joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], end)
        else:
            joined.append([begin, end])
    return [line[begin:end] for begin, end in joined]


def scan(root: pathlib.Path) -> tuple[int, list[str]]:
    """The number of files scanned and one report line per hit."""
    files = source_files(root)
    reports = []
    for path in files:
        text = (root / path).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for hit in hits_in_line(line):
                reports.append(f"{path}:{number}: notes identifier '{hit}'")
    return len(files), reports


def check(root: pathlib.Path) -> int:
    count, reports = scan(root)
    for report in reports:
        print(report)
    if reports:
        print(f"{len(reports)} notes identifier(s) in {count} source files: name the notes file "
              "of the topic (bench/notes/...) instead")
        return 1
    print(f"{count} source files, no notes identifiers")
    return 0


def self_test() -> int:
    """Plants one violation of each pattern in a scratch git tree, beside files that must pass."""
    run = "call"
    planted = {
        "kernels/identifier.cu": f"// tiles took 15 % off ({example('S', 28)}).\n",
        "kernels/ruf.h": f"// as measured ({example('RUF', 14)})\n",
        "kernels/ufb.cuh": f"  int x = 0;  // {example('UFB', 3)} kept it\n",
        "kernels/tuf.cpp": f"// {example('TUF', 2)} was not kept\n",
        "kernels/uf.hpp": f"// {example('UF', 1)}: the first try\n",
        "kernels/old_notes.cc": f"// see {NOTES_FILE} for why\n",
        "runtime/notes_s.cu": "// latencies overlap (NOTES " + "S-x)\n",
        "scripts/device_call.sh": f"# results of device {run} {147}\n",
        "bench/call.py": f"# the A/B run ({run} {133})\n",
        "bench/calls.cmake": f"# {run}s {137}-142 measured it\n",
        "tests/CMakeLists.txt": f"# {example('S', 1)} again\n",
        "README.md": f"{example('RUF', 12)} in the front page\n",
    }
    clean = {
        "kernels/clean.cu": (
            "// HA4-64 and BUF-IC at 8 (HA4 paper Sec. IV-E, Alg. 2, Fig. 7); the notes are in\n"
            "// bench/notes/union-find-3d.md; a device call carries 64 MiB; calls 2 kernels;\n"
            f"// call 8 threads; M{example('S', 28)}, RUF_14 and X-{example('UFB', 3)}x are not "
            "identifiers.\n"
            "int s = S - 1; int uf = UF - 2;\n"),
    }
    ignored = {
        "bench/results/run/README.md": f"{example('S', 28)}\n",
        "bench/results/run/notes.py": f"# {example('RUF', 14)}\n",
        "bench/notes/statistics.py": f"# {example('S', 28)}\n",
        "docs/notes.md": f"{example('S', 28)} in other Markdown\n",
        "data/table.txt": f"{example('UFB', 3)}\n",
        SELF: f"# {example('S', 28)} in the checker itself\n",
    }
    for variable in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):  # as under a git hook
        os.environ.pop(variable, None)
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for path, text in {**planted, **clean, **ignored}.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "kernels/identifier.cu", "kernels/clean.cu"], cwd=root,
                       check=True)
        count, reports = scan(root)
    failures = []
    flagged = {report.split(":", 1)[0] for report in reports}
    for path in planted:
        if path not in flagged:
            failures.append(f"planted violation not reported: {path}")
    for path in (*clean, *ignored):
        if path in flagged:
            failures.append(f"reported but should not be: {path}")
    if len(reports) != len(planted):
        failures.append(f"{len(reports)} reports for {len(planted)} planted violations:")
        failures.extend("  " + report for report in reports)
    expected_files = len(planted) + len(clean)
    if count != expected_files:
        failures.append(f"{count} files scanned, expected {expected_files}")
    for failure in failures:
        print(f"self-test: {failure}")
    if failures:
        return 1
    print(f"self-test passed: {len(planted)} planted violations reported, "
          f"{len(clean) + len(ignored)} other files not")
    return 0


def main(arguments: list[str]) -> int:
    if arguments == ["--self-test"]:
        return self_test()
    if arguments:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return check(repository_root())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
