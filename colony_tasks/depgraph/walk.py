"""Walk a repository for source files, the way git would see them, counting what is skipped.

Skipped, and counted under these reasons: ``gitignored`` (a ``.gitignore`` at any level or
``.git/info/exclude``), ``vendored`` (``node_modules``, ``.venv``, ``dist``, ``build``, ...),
``too_large``, ``binary``, ``unreadable``, ``symlink_outside`` (leaves the repository),
``symlink_loop`` (points at a folder that contains it), ``symlink_alias`` (another name for a
file or folder inside the repository, indexed under its real path), ``broken_symlink``,
``bad_name`` (a file name that is not UTF-8).
Files of other languages are not counted.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pathspec

from .model import Lang

LANGS: dict[str, Lang] = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
VENDORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "jspm_packages",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "site-packages",
        "dist",
        "build",
        "out",
        "vendor",
        "third_party",
        ".next",
        ".nuxt",
        ".turbo",
        ".cache",
        "coverage",
        ".eggs",
    }
)
MAX_BYTES = 1_000_000  # larger sources are generated or bundled, not written by agents


def lang_of(path: str) -> Lang | None:
    if path.endswith((".min.js", ".bundle.js")):
        return None
    return LANGS.get(posixpath.splitext(path)[1])


@dataclass(frozen=True)
class Found:
    """A source file the walker accepted: repository-relative path and its ``lstat``."""

    path: str
    lang: Lang
    mtime_ns: int
    size: int


class Ignore:
    """``.gitignore`` rules, loaded per folder as the walk reaches it (and cached)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._specs: dict[str, pathspec.PathSpec | None] = {}
        exclude = self._read(os.path.join(root, ".git", "info", "exclude"))
        self._exclude = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None

    def _read(self, path: str) -> list[str]:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def spec_for(self, folder: str) -> pathspec.PathSpec | None:
        if folder not in self._specs:
            lines = self._read(os.path.join(self.root, folder, ".gitignore"))
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[folder]

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether ``rel`` is ignored by the rules of its ancestors (nearest folder wins)."""
        suffix = "/" if is_dir else ""
        if self._exclude is not None and self._exclude.match_file(rel + suffix):
            return True
        parts = rel.split("/")
        for i in range(len(parts) - 1, -1, -1):
            folder = "/".join(parts[:i])
            spec = self.spec_for(folder)
            if spec is None:
                continue
            result = spec.check_file("/".join(parts[i:]) + suffix)
            if result.include is not None:
                return bool(result.include)
        return False

    def path_ignored(self, rel: str) -> bool:
        """Whether a file or any of its folders is ignored (for single-path updates)."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if parts[i - 1] in VENDORED_DIRS or self.ignored("/".join(parts[:i]), True):
                return True
        return self.ignored(rel, False)


def walk(
    root: str, skipped: Counter[str], *, max_bytes: int = MAX_BYTES, start: str = ""
) -> Iterator[Found]:
    """Yield every indexable source file under ``root`` (or its folder ``start``); count skips
    into ``skipped``."""
    root = os.path.realpath(root)
    ignore = Ignore(root)
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(os.path.join(root, folder)) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            skipped["unreadable"] += 1
            continue
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if not _storable(rel):
                skipped["bad_name"] += 1
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                skipped["unreadable"] += 1
                continue
            if stat.S_ISLNK(st.st_mode):
                if lang_of(rel) or _is_dir(entry):
                    reason = _symlink_reason(root, rel)
                    if not ignore.ignored(rel, False):
                        skipped[reason] += 1
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in VENDORED_DIRS:
                    skipped["vendored"] += 1
                elif ignore.ignored(rel, True):
                    skipped["gitignored"] += 1
                else:
                    stack.append(rel)
                continue
            lang = lang_of(rel)
            if lang is None or not stat.S_ISREG(st.st_mode):
                continue
            if ignore.ignored(rel, False):
                skipped["gitignored"] += 1
            elif st.st_size > max_bytes:
                skipped["too_large"] += 1
            else:
                yield Found(rel, lang, st.st_mtime_ns, st.st_size)


def _storable(rel: str) -> bool:
    """A name that is not valid UTF-8 cannot be a key in the store (or a JSON string)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


def _symlink_reason(root: str, rel: str) -> str:
    link = os.path.join(root, rel)
    try:
        target = os.path.realpath(link, strict=True)
    except OSError as exc:
        # realpath(strict=True) raises for a dangling link and for a link cycle (ELOOP).
        return "symlink_loop" if exc.errno == errno.ELOOP else "broken_symlink"
    if target != root and not target.startswith(root + os.sep):
        return "symlink_outside"
    parent = os.path.dirname(link)
    if os.path.isdir(target) and (parent == target or parent.startswith(target + os.sep)):
        return "symlink_loop"
    return "symlink_alias"
