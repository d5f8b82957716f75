#!/usr/bin/env python3
"""Checks every relative link in the repository's Markdown files.

    python3 scripts/check_markdown_links.py

The files are those git knows of: tracked, and untracked but not ignored
(`git ls-files --cached --others --exclude-standard '*.md'`), as they are in the working tree;
a tracked file deleted from the working tree is skipped. In each, every inline link or image
`[text](target)` and every reference definition `[name]: target` outside code is checked:

- links with a scheme (http:, https:, mailto:, ...) and pure anchors (#section) are left out;
- the target's path must exist, relative to the Markdown file's folder (or to the repository
  root when it starts with /); a folder is fine;
- `path#anchor` into a Markdown file must name a heading of that file by its GitHub slug
  (lower case, punctuation dropped, spaces as hyphens, -1, -2, ... for repeated headings) or an
  HTML anchor (`<a name="...">`, `id="..."`).

Each broken link is printed as `FILE:LINE: broken link TARGET` and the exit status is 1; when
none is broken it prints one summary line and exits 0. Python 3 standard library only.
"""

from __future__ import annotations

import pathlib
import re
import sys
import unicodedata
import urllib.parse

from repository_files import repository_files, repository_root

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[(?!\^)[^\]]+\]:[ \t]*(<[^>]*>|\S+)")
HTML_ANCHOR = re.compile(r"""<a\s[^>]*\bname\s*=\s*["']([^"']+)["']|\bid\s*=\s*["']([^"']+)["']""")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def markdown_files(root: pathlib.Path) -> list[pathlib.Path]:
    return [root / name for name in repository_files(root, "*.md")]


def blank_code_spans(line: str) -> str:
    """The line with every inline code span replaced by spaces (positions kept)."""
    out = []
    i = 0
    while i < len(line):
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            ticks = line[i:j]
            end = line.find(ticks, j)
            # A closing run must be exactly as long as the opening one.
            while end != -1 and end + len(ticks) < len(line) and line[end + len(ticks)] == "`":
                end = line.find(ticks, end + len(ticks) + 1)
            if end == -1:
                out.append(line[i:j])
                i = j
                continue
            out.append(" " * (end + len(ticks) - i))
            i = end + len(ticks)
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def prose_lines(text: str, blank_code: bool = True) -> list[tuple[int, str]]:
    """(line number, line) for the lines outside fenced code blocks, with their code spans
    blanked unless `blank_code` is false."""
    lines = []
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
                continue
            lines.append((number, blank_code_spans(line) if blank_code else line))
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                and line.strip() == match.group(1):
            fence = None
    return lines


def inline_targets(line: str) -> list[str]:
    """The destinations of the inline links and images `[...](destination)` on a line."""
    targets = []
    start = 0
    while True:
        at = line.find("](", start)
        if at == -1:
            return targets
        i = at + 2
        while i < len(line) and line[i] in " \t":
            i += 1
        if i < len(line) and line[i] == "<":
            end = line.find(">", i)
            if end == -1:
                start = at + 2
                continue
            targets.append(line[i + 1:end])
            start = end + 1
            continue
        depth = 0
        j = i
        while j < len(line):
            c = line[j]
            if c == "\\":
                j += 2
                continue
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    break
                depth -= 1
            elif c in " \t":
                break  # a title follows
            j += 1
        if j > i:
            targets.append(line[i:j])
        start = max(j, at + 2)


def heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it, for its slug: inline markup removed."""
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<!\w)([*_])(.+?)\1(?!\w)", r"\2", text)
    return text.strip()


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, letters, digits, _ and -, spaces as -."""
    kept = []
    for c in text.lower():
        if c in " -_":
            kept.append("-" if c == " " else c)
        elif unicodedata.category(c)[0] == "L" or unicodedata.category(c) in ("Nd", "Mn", "Mc"):
            kept.append(c)
    return "".join(kept)


def anchors_of(path: pathlib.Path, cache: dict[pathlib.Path, set[str]]) -> set[str]:
    if path in cache:
        return cache[path]
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    previous = ""
    text = path.read_text(encoding="utf-8", errors="replace")
    for _, line in prose_lines(text, blank_code=False):
        for match in HTML_ANCHOR.finditer(line):
            anchors.add(match.group(1) or match.group(2))
        heading = None
        atx = ATX_HEADING.match(line)
        if atx:
            heading = atx.group(2) or ""
        elif SETEXT_UNDERLINE.match(line) and previous.strip() and "|" not in previous \
                and not ATX_HEADING.match(previous):
            heading = previous.strip()
        if heading is not None:
            base = slug(heading_text(heading))
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchors.add(base if count == 0 else f"{base}-{count}")
        previous = line
    cache[path] = anchors
    return anchors


def check(root: pathlib.Path) -> int:
    files = markdown_files(root)
    cache: dict[pathlib.Path, set[str]] = {}
    broken = 0
    checked = 0
    for path in files:
        relative = path.relative_to(root).as_posix()
        for number, line in prose_lines(path.read_text(encoding="utf-8", errors="replace")):
            targets = inline_targets(line)
            definition = REFERENCE_DEFINITION.match(line)
            if definition:
                targets.append(definition.group(1).strip("<>"))
            for target in targets:
                if not target or target.startswith("#") or SCHEME.match(target):
                    continue
                checked += 1
                location, _, anchor = target.partition("#")
                location = urllib.parse.unquote(location.split("?", 1)[0])
                resolved = (root / location.lstrip("/")) if location.startswith("/") \
                    else (path.parent / location)
                ok = resolved.exists()
                if ok and anchor and resolved.is_file() and resolved.suffix.lower() == ".md":
                    ok = urllib.parse.unquote(anchor).lower() in anchors_of(resolved.resolve(),
                                                                           cache)
                if not ok:
                    print(f"{relative}:{number}: broken link {target}")
                    broken += 1
    if broken:
        return 1
    print(f"check_markdown_links: {checked} relative links in {len(files)} Markdown files, "
          "none broken")
    return 0


if __name__ == "__main__":
    sys.exit(check(repository_root()))
