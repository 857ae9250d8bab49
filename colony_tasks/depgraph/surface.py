"""Public surfaces and their differences: what an "interface change" is."""

from __future__ import annotations

from collections.abc import Iterable

from .model import Parsed, SurfaceChange, SurfaceDiff, Symbol
from .python import parse_python
from .typescript import parse_typescript
from .walk import lang_of


def parse_source(path: str, source: bytes | str) -> Parsed | None:
    """Parse one file's source by its extension; None for a language the graph does not know."""
    lang = lang_of(path)
    if lang is None:
        return None
    if lang == "python":
        return parse_python(source)
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    return parse_typescript(data, lang)


def diff_surfaces(old: Iterable[Symbol], new: Iterable[Symbol]) -> tuple[SurfaceChange, ...]:
    """Removed, changed and added symbols (in that order, each by name)."""
    before = {s.name: s for s in old}
    after = {s.name: s for s in new}
    changes = [
        SurfaceChange("removed", name, before[name].signature, None)
        for name in sorted(before.keys() - after.keys())
    ]
    changes += [
        SurfaceChange("changed", name, before[name].signature, after[name].signature)
        for name in sorted(before.keys() & after.keys())
        if before[name].signature != after[name].signature
    ]
    changes += [
        SurfaceChange("added", name, None, after[name].signature)
        for name in sorted(after.keys() - before.keys())
    ]
    return tuple(changes)


def surface_diff(old_source: bytes | str, new_source: bytes | str, path: str) -> SurfaceDiff:
    """How the public surface of ``path`` changed between two versions of its source.

    A change only inside a body yields ``SurfaceDiff("ok", ())``. Never raises: a version that
    does not parse gives ``status="unparseable"``, an unknown extension ``"unsupported"``.
    """
    old, new = parse_source(path, old_source), parse_source(path, new_source)
    if old is None or new is None:
        return SurfaceDiff("unsupported")
    if old.surface is None or new.surface is None:
        return SurfaceDiff("unparseable")
    return SurfaceDiff("ok", diff_surfaces(old.surface, new.surface))
