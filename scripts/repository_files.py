"""The files the repository checks (scripts/check_*.py) read: those git knows of, tracked and
untracked but not ignored, as they are in the working tree (a tracked file deleted there is left
out). Outside a git checkout (a scratch tree of a self-test), every file below the root."""

from __future__ import annotations

import pathlib
import subprocess


def repository_root() -> pathlib.Path:
    """The checkout holding these scripts."""
    here = pathlib.Path(__file__).resolve().parent
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here, check=True,
                         capture_output=True, text=True).stdout.strip()
    return pathlib.Path(top)


def repository_files(root: pathlib.Path, *patterns: str) -> list[str]:
    """Paths relative to `root`, sorted, of the files matching git's pathspecs `patterns` (all
    when none)."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", *patterns],
            cwd=root, check=True, capture_output=True, text=True).stdout
        names = {name for name in listing.split("\0") if name}
    except (OSError, subprocess.CalledProcessError):
        globs = patterns or ("*",)
        names = {path.relative_to(root).as_posix()
                 for glob in globs for path in root.rglob(glob)}
    return sorted(name for name in names if (root / name).is_file())
