"""Find how imports resolve in a repository: Python import roots and the root tsconfig."""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Collection

from .model import Config

CONFIG_FILES = frozenset(
    {"tsconfig.json", "jsconfig.json", "pyproject.toml", "setup.py", "setup.cfg"}
)
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")


def detect(root: str, files: Collection[str]) -> Config:
    """The ``Config`` of the repository at ``root`` whose indexed source files are ``files``."""
    base_url, paths = _tsconfig(root)
    return Config(python_roots=python_roots(root, files), ts_base_url=base_url, ts_paths=paths)


def python_roots(root: str, files: Collection[str]) -> tuple[str, ...]:
    """The repository root, every Python project folder (one holding ``pyproject.toml``,
    ``setup.py`` or ``setup.cfg``), and the ``src/`` of each of those (the src layout)."""
    projects = {""}
    folders = {posixpath.dirname(f) for f in files if f.endswith(".py")}
    for folder in {posixpath.dirname(f) for f in folders} | folders:
        if any(os.path.isfile(os.path.join(root, folder, m)) for m in _PROJECT_MARKERS):
            projects.add(folder)
    roots = set(projects)
    for project in projects:
        src = posixpath.join(project, "src") if project else "src"
        if os.path.isdir(os.path.join(root, src)):
            roots.add(src)
    return tuple(sorted(roots, key=lambda r: (r != "", r)))


def _tsconfig(root: str) -> tuple[str | None, tuple[tuple[str, tuple[str, ...]], ...]]:
    for name in ("tsconfig.json", "jsconfig.json"):
        options = _compiler_options(os.path.join(root, name))
        if options is not None:
            break
    else:
        return None, ()
    base_url = options.get("baseUrl")
    base = posixpath.normpath(base_url) if isinstance(base_url, str) else None
    base = "" if base == "." else base
    paths = []
    raw_paths = options.get("paths")
    if isinstance(raw_paths, dict):
        for pattern, targets in raw_paths.items():
            if isinstance(targets, list):
                joined = tuple(posixpath.join(base or "", t) for t in targets if isinstance(t, str))
                paths.append((pattern, joined))
    # Longest prefix first, as TypeScript matches.
    paths.sort(key=lambda p: -len(p[0].partition("*")[0]))
    return base, tuple(paths)


_COMMENTS = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMAS = re.compile(r",(\s*[}\]])")


def _compiler_options(path: str) -> dict | None:
    """``compilerOptions`` of a tsconfig (JSON with comments); None when absent or broken.
    ``extends`` is not followed."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1_000_000)
    except (OSError, UnicodeDecodeError):
        return None
    text = _COMMENTS.sub(lambda m: m.group(1) or "", text)
    try:
        data = json.loads(_TRAILING_COMMAS.sub(r"\1", text))
    except ValueError:
        return None
    options = data.get("compilerOptions") if isinstance(data, dict) else None
    return options if isinstance(options, dict) else {}
