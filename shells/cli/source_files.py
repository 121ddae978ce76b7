"""Which files an ingest reads: files named as given, folders walked recursively.

In a folder, hidden files and folders (a name starting with '.') are skipped, and so is any file that is
not text (a NUL byte or not UTF-8 in its first 8 KB); `--include` globs keep only matching files and
`--exclude` globs drop matching ones. A glob without '/' matches the file name (`*.md`); one with '/'
matches the path inside the folder (`docs/*.md`, `drafts/**`; '*' also crosses '/'). A file named
explicitly is always read (a binary one is an error, not a skip).

A source found in a folder is named by its path inside the folder (`guide/install.md`), so two
`README.md` in different sub-folders stay two sources; a file named explicitly keeps its file name.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from mrpvm.shells.cli.common import CliError

SNIFF_BYTES = 8192


@dataclass(slots=True)
class SourceFile:
    path: Path
    name: str  # the source's name in the KB


@dataclass(slots=True)
class Selection:
    files: list[SourceFile] = field(default_factory=list)
    skipped_hidden: int = 0
    skipped_binary: list[str] = field(default_factory=list)
    skipped_by_glob: int = 0

    def summary(self) -> str:
        """What was left out, in one line ("" when nothing was)."""
        parts = []
        if self.skipped_hidden:
            parts.append(f"{self.skipped_hidden} hidden")
        if self.skipped_binary:
            shown = ", ".join(self.skipped_binary[:3]) + (", …" if len(self.skipped_binary) > 3 else "")
            parts.append(f"{len(self.skipped_binary)} not text ({shown})")
        if self.skipped_by_glob:
            parts.append(f"{self.skipped_by_glob} outside --include/--exclude")
        return f"skipped {'; '.join(parts)}" if parts else ""


def is_text_file(path: Path) -> bool:
    """Text as ingest reads it: no NUL byte and UTF-8 in the first 8 KB (a sequence cut at the end is fine)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start >= len(head) - 3 and len(head) == SNIFF_BYTES  # cut inside the last character
    return True


def _matches(relative: str, patterns: list[str]) -> bool:
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        target = relative if "/" in pattern else name
        if fnmatch.fnmatchcase(target, pattern) or (
            pattern.endswith("/**") and relative.startswith(pattern[:-2])
        ):
            return True
    return False


def _walk(folder: Path) -> tuple[list[Path], int]:
    """Every non-hidden file under `folder`, sorted by path, and how many hidden entries were skipped."""
    found: list[Path] = []
    hidden = 0
    for root, dirs, files in os.walk(folder):
        hidden += sum(1 for d in dirs if d.startswith("."))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                hidden += 1
            else:
                found.append(Path(root) / name)
    return found, hidden


def select_sources(paths: list[Path], include: list[str], exclude: list[str]) -> Selection:
    """The files to ingest from command-line `paths`; CliError for a missing path, a folder with nothing to
    ingest, or two sources with one name."""
    selection = Selection()
    for path in paths:
        if not path.exists():
            raise CliError(f"file not found: {path}")
        if not path.is_dir():
            selection.files.append(SourceFile(path, path.name))
            continue
        found, hidden = _walk(path)
        selection.skipped_hidden += hidden
        before = len(selection.files)
        for file in found:
            relative = file.relative_to(path).as_posix()
            if (include and not _matches(relative, include)) or _matches(relative, exclude):
                selection.skipped_by_glob += 1
            elif not is_text_file(file):
                selection.skipped_binary.append(relative)
            else:
                selection.files.append(SourceFile(file, relative))
        if len(selection.files) == before:
            left_out = selection.summary()
            raise CliError(f"no text files to ingest in {path}" + (f" ({left_out})" if left_out else ""))
    names: dict[str, Path] = {}
    for source in selection.files:
        if source.name in names:
            raise CliError(
                f"two sources would both be named '{source.name}' ({names[source.name]} and {source.path}); "
                "a KB names sources by file name (inside a folder: by path in the folder)"
            )
        names[source.name] = source.path
    return selection
