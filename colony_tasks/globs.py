"""Matching claim patterns (gitignore-style globs) against repo-relative paths.

Gitignore semantics come from ``pathspec``, which costs ~10 ms to import (and 64 modules):
too much for a hook. So a glob claim is compiled to its regular expression by pathspec once,
when the claim is made (:func:`glob_regex`), and stored with it; a hook matches an edited path
with that stored expression and the standard library's ``re``. A cheap literal prefilter
(:func:`_may_match`) rules out most globs before any regex runs. Only a glob claim made before
the stored expression existed (migration 8) falls back to pathspec.
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GLOB_CHARS = frozenset("*?[")
NEVER = "(?!)"  # the stored expression of a pattern that matches nothing (a negation)


def is_glob(pattern: str) -> bool:
    return any(ch in GLOB_CHARS for ch in pattern)


def glob_regex(pattern: str) -> str | None:
    """The regular expression gitignore semantics give ``pattern`` (None for a literal path)."""
    if not is_glob(pattern):
        return None
    (compiled,) = _spec(pattern).patterns
    if not compiled.include or compiled.regex is None:
        return NEVER
    return str(compiled.regex.pattern)


@functools.lru_cache(maxsize=4096)
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


@functools.lru_cache(maxsize=4096)
def _spec(pattern: str) -> Any:
    # Imported here, not at the top: pathspec must stay off the hook path (see above).
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


def _may_match(glob: str, path: str) -> bool:
    """A cheap necessary condition: the glob's literal pieces occur in ``path`` in order.

    It keeps ``pathspec`` (and its ~10 ms import) off the hook path whenever a glob claim
    cannot possibly cover the edited file, which is nearly always.
    """
    position = 0
    for piece in _literal_pieces(glob):
        found = path.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True


@functools.lru_cache(maxsize=4096)
def _literal_pieces(glob: str) -> tuple[str, ...]:
    pieces, current, i = [], [], 0
    while i < len(glob):
        ch = glob[i]
        if ch == "[":  # a bracket expression matches one unknown character
            end = glob.find("]", i + 2)
            i = end + 1 if end > 0 else len(glob)
            ch = "*"
        elif ch == "\\" and i + 1 < len(glob):
            current.append(glob[i + 1])
            i += 2
            continue
        else:
            i += 1
        if ch in "*?":
            if current:
                pieces.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        pieces.append("".join(current))
    return tuple(p.strip("/") for p in pieces if p.strip("/"))


def matches(pattern: str, path: str, regex: str | None = None) -> bool:
    """Does a claim ``pattern`` cover ``path`` (both repo-relative)? Globs overlap loosely; a
    literal folder covers what is inside it.

    ``regex`` is the pattern's stored expression (:func:`glob_regex`); with it, no pathspec.
    """
    if pattern == path:
        return True
    pattern_glob, path_glob = is_glob(pattern), is_glob(path)
    if pattern_glob and not path_glob:
        if not _may_match(pattern, path):
            return False
        if regex is not None:
            return _compiled(regex).match(path) is not None
        return bool(_spec(pattern).match_file(path))
    if path_glob and not pattern_glob:
        return _may_match(path, pattern) and bool(_spec(path).match_file(pattern))
    if pattern_glob and path_glob:
        return _literal_prefix(pattern).startswith(_literal_prefix(path)) or _literal_prefix(
            path
        ).startswith(_literal_prefix(pattern))
    # Two literal paths: a claim on a folder covers the files in it.
    return path.startswith(pattern.rstrip("/") + "/")


def _literal_prefix(glob: str) -> str:
    cut = min((glob.index(ch) for ch in GLOB_CHARS if ch in glob), default=len(glob))
    return glob[:cut]
