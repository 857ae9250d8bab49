"""Build a repository's dependency graph, and keep it current incrementally.

``build`` walks the repository once (reusing the rows of a ``previous`` graph whose size and
mtime did not change); ``update`` re-reads only the paths it is told changed and reports the
public-surface changes it saw. When files appear or disappear, the files whose imports may now
resolve differently are re-resolved too (resolution never reads the disk).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from .config import CONFIG_FILES, detect
from .model import FileRow, Graph, SurfaceChange
from .resolve import resolve
from .surface import diff_surfaces, parse_source
from .walk import MAX_BYTES, VENDORED_DIRS, Found, Ignore, lang_of, walk

_SNIFF = 8192


@dataclass
class Update:
    """What ``update`` did: paths re-read (their content may be unchanged), added, removed, and
    the public-surface changes per path (only paths with at least one change)."""

    reparsed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changes: dict[str, tuple[SurfaceChange, ...]] = field(default_factory=dict)
    rebuilt: bool = False  # a config file changed, so the whole graph was rebuilt


def build(root: str, *, previous: Graph | None = None, max_bytes: int = MAX_BYTES) -> Graph:
    """The dependency graph of the repository at ``root``. Never raises for bad files."""
    root = os.path.realpath(root)
    skipped: Counter[str] = Counter()
    rows: dict[str, FileRow] = {}
    old = previous.files if previous is not None and previous.root == root else {}
    for found in walk(root, skipped, max_bytes=max_bytes):
        prev = old.get(found.path)
        if prev is not None and (prev.mtime_ns, prev.size) == (found.mtime_ns, found.size):
            rows[found.path] = prev
            continue
        row = _read(root, found, prev, skipped, max_bytes)
        if row is not None:
            rows[found.path] = row
    graph = Graph(root=root, config=detect(root, rows), files=rows)
    _resolve_all(graph)
    graph.skipped = _with_unparseable(skipped, rows.values())
    return graph


def update(graph: Graph, changed_paths: Iterable[str], *, max_bytes: int = MAX_BYTES) -> Update:
    """Bring ``graph`` up to date for ``changed_paths`` (relative or absolute), in place.

    Only those files are read; a folder stands for the files in it (before and after). A
    changed ``.gitignore``, ``tsconfig.json`` or Python project file changes how everything
    resolves, so it triggers a full ``build`` (reusing unchanged rows). When the caller does
    not know what changed, ``build(root, previous=graph)`` re-reads only files whose size or
    mtime moved.
    """
    paths = _expand(graph, {p for p in (_relative(graph.root, c) for c in changed_paths) if p})
    if any(posixpath.basename(p) in CONFIG_FILES | {".gitignore"} for p in paths):
        return _rebuild(graph, max_bytes)
    result = Update()
    ignore = Ignore(graph.root)
    skipped: Counter[str] = Counter(graph.skipped)
    touched: list[str] = []
    for path in paths:
        prev = graph.files.get(path)
        found = _stat(graph.root, path, ignore, skipped, max_bytes)
        row = _read(graph.root, found, prev, skipped, max_bytes) if found else None
        if row is None:
            graph.files.pop(path, None)
        else:
            graph.files[path] = row
            touched.append(path)
        _record(result, path, prev, row)
    if result.added or result.removed:
        config = detect(graph.root, graph.files)  # a new src/ or project folder is a new root
        if config != graph.config:
            graph.config = config
            _resolve_all(graph)
        else:
            for path in touched + _affected_by(graph, result.added, result.removed):
                _resolve_one(graph, path)
    else:
        for path in touched:
            _resolve_one(graph, path)
    graph.skipped = _with_unparseable(skipped, graph.files.values())
    return result


def _rebuild(graph: Graph, max_bytes: int) -> Update:
    result = Update(rebuilt=True)
    before = dict(graph.files)
    fresh = build(graph.root, previous=graph, max_bytes=max_bytes)
    graph.config, graph.files, graph.skipped = fresh.config, fresh.files, fresh.skipped
    for path in sorted(before.keys() | fresh.files.keys()):
        _record(result, path, before.get(path), fresh.files.get(path))
    return result


def _record(result: Update, path: str, prev: FileRow | None, row: FileRow | None) -> None:
    if prev is None and row is None:
        return
    if prev is None:
        result.added.append(path)
    elif row is None:
        result.removed.append(path)
    elif prev is not row:
        result.reparsed.append(path)
        never_parsed = prev.error is not None and not prev.surface
        if row.error is None and prev.surface != row.surface and not never_parsed:
            result.changes[path] = diff_surfaces(prev.surface, row.surface)


def _expand(graph: Graph, paths: set[str]) -> list[str]:
    """Folders among ``paths`` (a ``mv``, an ``rm -r``, a checkout) stand for the indexed files
    under them and the source files now in them."""
    out = set(paths)
    for path in paths:
        if lang_of(path) is not None:
            continue
        prefix = path + "/"
        out.update(p for p in graph.files if p.startswith(prefix))
        full = os.path.join(graph.root, path)
        if os.path.isdir(full) and not os.path.islink(full):
            out.update(f.path for f in walk(graph.root, Counter(), start=path))
    return sorted(out)


def _relative(root: str, path: str) -> str | None:
    if os.path.isabs(path):
        path = os.path.relpath(path, root)
    path = posixpath.normpath(path.replace(os.sep, "/"))
    if path in (".", "..") or path.startswith("../"):
        return None
    return path


def _stat(
    root: str, path: str, ignore: Ignore, skipped: Counter[str], max_bytes: int
) -> Found | None:
    """The ``Found`` for one path if the walker would have accepted it, else None (counted)."""
    lang = lang_of(path)
    if lang is None or posixpath.basename(path) in VENDORED_DIRS:
        return None
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
        real_parent = os.path.realpath(os.path.dirname(full))
    except OSError:
        return None  # deleted
    if real_parent != os.path.join(root, os.path.dirname(path)).rstrip(os.sep):
        return None  # reached through a symlinked folder: indexed under its real path
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        return None
    if ignore.path_ignored(path):
        return None
    if st.st_size > max_bytes:
        skipped["too_large"] += 1
        return None
    return Found(path, lang, st.st_mtime_ns, st.st_size)


def _read(
    root: str, found: Found, prev: FileRow | None, skipped: Counter[str], max_bytes: int
) -> FileRow | None:
    """Read and parse one file; None when it cannot be read or is binary (counted)."""
    try:
        with open(os.path.join(root, found.path), "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError:
        skipped["unreadable"] += 1
        return None
    if len(data) > max_bytes:
        skipped["too_large"] += 1
        return None
    if b"\0" in data[:_SNIFF]:
        skipped["binary"] += 1
        return None
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    size = len(data)
    if prev is not None and prev.hash == digest:
        return replace(prev, mtime_ns=found.mtime_ns, size=size)
    parsed = parse_source(found.path, data)
    if parsed is None:
        return None
    if parsed.surface is None:  # keep the last good parse; see FileRow
        specs = prev.specs if prev is not None else parsed.specs
        surface = prev.surface if prev is not None else ()
        return FileRow(
            found.path, found.lang, found.mtime_ns, size, digest, specs, (), surface, parsed.error
        )
    return FileRow(
        found.path, found.lang, found.mtime_ns, size, digest, parsed.specs, (), parsed.surface
    )


def _affected_by(graph: Graph, added: list[str], removed: list[str]) -> list[str]:
    """The files whose imports may resolve differently now that ``added`` exist and
    ``removed`` are gone: those with an edge to a removed file, and those with an import
    whose last component could name an added file (``a.b.c``, ``./c.js``, ``from a import
    c``, ``./c`` for ``c/index.ts``). Specifiers that name no file (``from . import x``,
    ``'..'``) and exact tsconfig path aliases are always re-resolved."""
    gone = set(removed)
    keys: set[str] = set()
    for path in added:
        parent, name = posixpath.split(path)
        stem = name.split(".", 1)[0]
        keys.add(stem)
        if stem in ("__init__", "index"):
            keys.add(posixpath.basename(parent))
    aliases = {pattern for pattern, _ in graph.config.ts_paths if "*" not in pattern}
    out = []
    for path, row in graph.files.items():
        if any(e.path in gone for e in row.imports):
            out.append(path)
            continue
        python = row.lang == "python"
        for spec in row.specs:
            if python:
                last = spec.spec.rpartition(".")[2]
            elif spec.spec in aliases:
                break
            else:
                last = spec.spec.rstrip("/").rpartition("/")[2].partition(".")[0]
            if not last or last == ".." or last in keys or not keys.isdisjoint(spec.names):
                break
        else:
            continue
        out.append(path)
    return out


def _resolve_all(graph: Graph) -> None:
    for path in graph.files:
        _resolve_one(graph, path)


def _resolve_one(graph: Graph, path: str) -> None:
    row = graph.files[path]
    edges = resolve(path, row.lang, row.specs, graph.files, graph.config)
    if edges != row.imports:
        graph.files[path] = replace(row, imports=edges)


def _with_unparseable(skipped: Counter[str], rows: Iterable[FileRow]) -> dict[str, int]:
    counts = Counter(skipped)
    counts["unparseable"] = sum(1 for r in rows if r.error)
    return {reason: n for reason, n in sorted(counts.items()) if n}
