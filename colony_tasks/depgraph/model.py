"""The plain data the dependency graph is made of.

Everything here is a frozen dataclass of strings, ints and tuples, so a graph can be written to
any store as rows and read back without this package knowing the store (see ``rows.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Lang = Literal["python", "typescript", "tsx", "javascript"]
ChangeKind = Literal["added", "removed", "changed"]


@dataclass(frozen=True)
class Symbol:
    """One name of a module's public surface.

    ``kind`` is ``def``, ``class``, ``method``, ``name`` (listed in ``__all__`` only), or for
    TS/JS ``function``, ``class``, ``method``, ``const``, ``interface``, ``type``, ``enum``,
    ``export`` (a re-export). ``signature`` is the normalised text that identifies the shape,
    e.g. ``get_user(user_id, *, org) -> User``; a change of it is an interface change.
    """

    name: str
    kind: str
    signature: str


@dataclass(frozen=True)
class ImportSpec:
    """One import statement as written, before resolution.

    ``spec`` is the module (``pkg.mod``, ``./x``); ``level`` the number of leading dots of a
    Python relative import (0 otherwise); ``names`` the names taken from it (empty: the module
    as a whole, or ``import *``).
    """

    spec: str
    names: tuple[str, ...] = ()
    level: int = 0


@dataclass(frozen=True)
class Edge:
    """A resolved import: the repository-relative file imported and the names taken from it."""

    path: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Parsed:
    """What one parse of one source file yields. ``surface`` is None when it did not parse."""

    specs: tuple[ImportSpec, ...]
    surface: tuple[Symbol, ...] | None
    error: str | None = None


@dataclass(frozen=True)
class FileRow:
    """One indexed file: what it imports, its public surface, and how to tell it changed.

    ``error`` is ``"unparseable"`` when the last read did not parse; ``specs``/``surface``
    then keep the last good parse, so a half-typed edit neither drops edges nor reports the
    whole surface as removed.
    """

    path: str
    lang: Lang
    mtime_ns: int
    size: int
    hash: str
    specs: tuple[ImportSpec, ...]
    imports: tuple[Edge, ...]
    surface: tuple[Symbol, ...]
    error: str | None = None


@dataclass(frozen=True)
class SurfaceChange:
    """One difference between two public surfaces."""

    kind: ChangeKind
    name: str
    old: str | None
    new: str | None

    def describe(self) -> str:
        """``get_user(user_id) → get_user(user_id, *, org)``, ``added f(x)``, ``removed C``."""
        if self.kind == "changed":
            return f"{self.old} → {self.new}"
        return f"{self.kind} {self.new if self.kind == 'added' else self.old}"


@dataclass(frozen=True)
class SurfaceDiff:
    """The result of comparing two versions of one source file.

    ``status`` is ``ok`` (``changes`` may be empty: nothing public changed), ``unparseable``
    (one side did not parse; ``changes`` is empty and nothing should be announced) or
    ``unsupported`` (not a language the graph knows).
    """

    status: Literal["ok", "unparseable", "unsupported"]
    changes: tuple[SurfaceChange, ...] = ()


@dataclass(frozen=True)
class Config:
    """How imports resolve in one repository, found by the walker.

    ``python_roots``: the directories absolute Python imports are looked up from (``""`` is
    the repository root; ``src`` for a src layout). ``ts_base_url`` / ``ts_paths``: the root
    ``tsconfig.json`` (``jsconfig.json``) ``compilerOptions``, relative to the repository.
    """

    python_roots: tuple[str, ...] = ("",)
    ts_base_url: str | None = None
    ts_paths: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass
class Graph:
    """A repository's dependency graph: one row per indexed file plus what was skipped."""

    root: str
    config: Config
    files: dict[str, FileRow] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def importers(self, path: str) -> list[str]:
        """The files that import ``path`` directly."""
        return sorted(
            p for p, row in self.files.items() if any(e.path == path for e in row.imports)
        )

    def edges(self) -> list[tuple[str, str]]:
        return sorted((p, e.path) for p, row in self.files.items() for e in row.imports)
