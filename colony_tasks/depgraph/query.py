"""Who is affected by a change to a module: its importers, also through re-exporting barrels."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from .model import FileRow, Graph

_BARRELS = ("__init__.py", "__init__.pyi")
_INDEX_STEMS = ("index",)


def dependents(
    graph: Graph, path: str, names: Iterable[str] | None = None, *, depth: int = 3
) -> list[tuple[str, str]]:
    """``[(importer, via)]``: the files that use ``path``, and the module each imports it by.

    ``via`` is ``path`` itself for a direct import, or a barrel (a package ``__init__.py``, an
    ``index.ts``, any module that re-exports) through which the names reach the importer, up to
    ``depth`` hops. With ``names`` (the changed symbols; ``Class.method`` counts as ``Class``),
    an importer that takes only other names from the module is left out; one that imports the
    module as a whole (``import m``, ``import * as m``, ``export * from``) always counts.
    """
    wanted = None if names is None else {n.split(".", 1)[0] for n in names}
    reverse = _reverse(graph)
    found: dict[str, str] = {}
    frontier = [path]
    seen = {path}
    for _ in range(depth):
        next_frontier = []
        for module in frontier:
            for importer, edge_names in reverse.get(module, ()):
                if wanted is not None and edge_names and not wanted & set(edge_names):
                    continue
                found.setdefault(importer, module)
                if importer not in seen and _reexports(graph.files[importer]):
                    seen.add(importer)
                    next_frontier.append(importer)
        frontier = next_frontier
    found.pop(path, None)
    return sorted(found.items())


def _reverse(graph: Graph) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    reverse: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for src, row in graph.files.items():
        for edge in row.imports:
            reverse.setdefault(edge.path, []).append((src, edge.names))
    return reverse


def _reexports(row: FileRow) -> bool:
    name = posixpath.basename(row.path)
    if name in _BARRELS or name.split(".", 1)[0] in _INDEX_STEMS:
        return True
    return any(symbol.kind == "export" for symbol in row.surface)
