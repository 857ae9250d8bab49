"""A repository's file dependency graph and its modules' public surfaces.

Used to relay interface changes: when a session changes the public surface of a module (a
top-level ``def``/``class``/``export`` or its signature), the sessions working on files that
import it are told. This package is self-contained and runs off the hook path (the MCP server's
worker, ``colony-tasks index``): it imports tree-sitter grammars and ``pathspec``. The store
keeps the graph as plain rows (see ``rows.py``), which the hook path never reads.

- ``build(root)`` → ``Graph``: walk the repository (``.gitignore`` respected, vendored trees,
  huge, binary, unreadable files and bad symlinks skipped and counted in ``Graph.skipped``),
  parse each Python (``ast``) and TS/JS (tree-sitter) file, resolve its imports to files.
- ``update(graph, changed_paths)`` → ``Update``: re-read only those files, in place, and report
  the surface changes seen (``Update.changes``).
- ``surface_diff(old_source, new_source, path)`` → ``SurfaceDiff``: the interface changes
  between two versions of one file; never raises.
- ``dependents(graph, path, names)``: the files that use a changed module, directly or through
  a re-exporting ``__init__.py`` / ``index.ts``, narrowed to those taking the changed names.
- ``rows``: the graph as plain rows for the store, and back.
"""

from __future__ import annotations

from .index import Update, build, update
from .model import (
    Config,
    Edge,
    FileRow,
    Graph,
    ImportSpec,
    Parsed,
    SurfaceChange,
    SurfaceDiff,
    Symbol,
)
from .query import dependents
from .surface import diff_surfaces, parse_source, surface_diff

__all__ = [
    "Config",
    "Edge",
    "FileRow",
    "Graph",
    "ImportSpec",
    "Parsed",
    "SurfaceChange",
    "SurfaceDiff",
    "Symbol",
    "Update",
    "build",
    "dependents",
    "diff_surfaces",
    "parse_source",
    "surface_diff",
    "update",
]
