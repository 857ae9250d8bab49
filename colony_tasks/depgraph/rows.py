"""A graph as plain rows, for the store to persist, and back.

The package runs no SQL (only the store does): the store keeps these rows in its own tables
(``dep_files``, ``dep_edges``, ``dep_repos``: :mod:`colony_tasks.store.schema`), written and
read through its graph facet (:class:`colony_tasks.store.depgraph.Graph`, ``store.graph``).

Rows, per repository (the lane's repository identity is the store's ``repo`` key):

- ``file_rows``: ``(path, lang, mtime_ns, size, hash, error, specs_json, surface_json)``
- ``edge_rows``: ``(src, dst, names_json)`` — ``names_json`` is ``[]`` for a whole-module import
- ``config_json``: how imports resolved (Python roots, tsconfig ``baseUrl``/``paths``)
- ``skipped``: ``{reason: count}``
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from .model import Config, Edge, FileRow, Graph, ImportSpec, Symbol

FileRowTuple = tuple[str, str, int, int, str, str | None, str, str]
EdgeRowTuple = tuple[str, str, str]


def file_rows(graph: Graph) -> list[FileRowTuple]:
    return [file_row(row) for _, row in sorted(graph.files.items())]


def file_row(row: FileRow) -> FileRowTuple:
    specs = [[s.spec, list(s.names), s.level] for s in row.specs]
    surface = [[s.name, s.kind, s.signature] for s in row.surface]
    return (
        row.path,
        row.lang,
        row.mtime_ns,
        row.size,
        row.hash,
        row.error,
        _dumps(specs),
        _dumps(surface),
    )


def edge_rows(graph: Graph, paths: Iterable[str] | None = None) -> list[EdgeRowTuple]:
    """The edges of every file, or of ``paths`` only (to replace after an ``update``)."""
    chosen = sorted(graph.files) if paths is None else sorted(p for p in paths if p in graph.files)
    return [(p, e.path, _dumps(list(e.names))) for p in chosen for e in graph.files[p].imports]


def config_json(config: Config) -> str:
    return _dumps(
        {
            "python_roots": list(config.python_roots),
            "ts_base_url": config.ts_base_url,
            "ts_paths": [[pattern, list(targets)] for pattern, targets in config.ts_paths],
        }
    )


def load(
    root: str,
    config: str,
    files: Iterable[FileRowTuple],
    edges: Iterable[EdgeRowTuple],
    skipped: dict[str, int] | None = None,
) -> Graph:
    """A ``Graph`` from stored rows, ready for ``update`` or ``build(previous=...)``."""
    raw = json.loads(config)
    graph = Graph(
        root=root,
        config=Config(
            python_roots=tuple(raw["python_roots"]),
            ts_base_url=raw["ts_base_url"],
            ts_paths=tuple((p, tuple(t)) for p, t in raw["ts_paths"]),
        ),
        skipped=dict(skipped or {}),
    )
    by_src: dict[str, list[Edge]] = {}
    for src, dst, names in edges:
        by_src.setdefault(src, []).append(Edge(dst, tuple(json.loads(names))))
    for path, lang, mtime_ns, size, digest, error, specs, surface in files:
        graph.files[path] = FileRow(
            path=path,
            lang=lang,  # type: ignore[arg-type]
            mtime_ns=mtime_ns,
            size=size,
            hash=digest,
            specs=tuple(ImportSpec(s, tuple(n), lvl) for s, n, lvl in json.loads(specs)),
            imports=tuple(sorted(by_src.get(path, ()), key=lambda e: e.path)),
            surface=tuple(Symbol(*s) for s in json.loads(surface)),
            error=error,
        )
    return graph


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
