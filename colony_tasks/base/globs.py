"""Matching claim patterns (gitignore-style globs) against repo-relative paths.

A glob is matched by :func:`glob_match`, written here for gitignore's semantics (those of
``pathspec``, checked against it in tests/base/test_globs.py) without regular expressions: a claim
pattern is any text an agent sends, and a regular expression of a pattern such as
``*?*?*?*?*?*?*?*?e`` backtracks for minutes on a long path. Here each ``*`` piece is found
leftmost-first, which is exact for globs and never backtracks, so matching takes at most
(path length x pattern length) steps. A cheap literal prefilter (:func:`_may_match`) rules out
most globs first. :func:`glob_regex` (pathspec's expression, stored with a claim since
migration 8) only tells a pattern that matches nothing (a negation) from one that may match.
"""

from __future__ import annotations

import functools
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


# -- gitignore globs without regular expressions -----------------------------------------------

_STAR = ("*",)  # sentinels: never equal to a character token
_ANY_NAME = ("+",)
_GLOBSTAR = "**"
# A token of a segment pattern: a character, None ("?": any one), a class (characters,
# ranges, negated), or _STAR; a segment that is just "*" is (_ANY_NAME,): any non-empty name.


@functools.lru_cache(maxsize=4096)
def _compile_glob(pattern: str) -> tuple[tuple[Any, ...], ...] | None:
    """``pattern`` as groups of segment patterns separated by ``**`` (a group per run of
    segments between globstars), with flags; None for a pattern that matches nothing."""
    if pattern.startswith("!") or not pattern.strip():
        return None
    body = pattern
    dir_only = body.endswith("/") and not body.endswith("\\/")
    body = body[:-1] if dir_only else body
    anchored = body.startswith("/") or "/" in body[1:]
    body = body[1:] if body.startswith("/") else body
    if not body:
        return None
    parts = body.split("/")
    if "" in parts:
        return None  # an empty segment (`a//b`): no stored path has one
    segments: list[Any] = [] if anchored else [_GLOBSTAR]
    for part in parts:
        if part == "**":
            if not segments or segments[-1] != _GLOBSTAR:
                segments.append(_GLOBSTAR)
        else:
            segments.append(_segment(part))
    trailing = segments[-1] == _GLOBSTAR
    groups: list[tuple[Any, ...]] = []
    current: list[Any] = []
    for segment in segments:
        if segment == _GLOBSTAR:
            groups.append(tuple(current))
            current = []
        else:
            current.append(segment)
    groups.append(tuple(current))
    return (tuple(groups), (dir_only, trailing))


def _segment(part: str) -> tuple[Any, ...]:
    """The tokens of one segment pattern; a segment that is exactly ``*`` needs a character."""
    if part == "*":
        return (_ANY_NAME,)
    tokens: list[Any] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "\\" and i + 1 < len(part):
            tokens.append(part[i + 1])
            i += 2
        elif ch == "*":
            if not tokens or tokens[-1] is not _STAR:
                tokens.append(_STAR)
            i += 1
        elif ch == "?":
            tokens.append(None)
            i += 1
        elif ch == "[":
            parsed = _bracket(part, i)
            if parsed is None:
                tokens.append("[")
                i += 1
            else:
                token, i = parsed
                tokens.append(token)
        else:
            tokens.append(ch)
            i += 1
    return tuple(tokens)


def _bracket(part: str, at: int) -> tuple[Any, int] | None:
    """The class starting at ``part[at]`` ('[') and the index after it, or None if unclosed.

    As pathspec (the reference these semantics were taken from) reads it, a backslash inside
    a class is an ordinary member, not an escape: ``[a\\]`` is the class of ``a`` and ``\\``."""
    i = at + 1
    negated = i < len(part) and part[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    first = True
    while i < len(part):
        ch = part[i]
        if ch == "]" and not first:
            return (frozenset(chars), tuple(ranges), negated), i + 1
        if i + 2 < len(part) and part[i + 1] == "-" and part[i + 2] != "]":
            ranges.append((ch, part[i + 2]))
            i += 3
        else:
            chars.add(ch)
            i += 1
        first = False
    return None


def _one(token: Any, ch: str) -> bool:
    if token is None:
        return ch != "/"
    if isinstance(token, str):
        return token == ch
    chars, ranges, negated = token
    inside = ch in chars or any(low <= ch <= high for low, high in ranges)
    return inside != negated


def _chunk_at(chunk: tuple[Any, ...], text: str, at: int) -> bool:
    return all(_one(token, text[at + k]) for k, token in enumerate(chunk))


def _segment_match(tokens: tuple[Any, ...], text: str) -> bool:
    """Whether one path segment matches a segment pattern: the pieces between stars are found
    leftmost-first (exact for globs), so the work is at most len(text) x len(tokens)."""
    if tokens == (_ANY_NAME,):
        return bool(text)
    chunks: list[tuple[Any, ...]] = [()]
    for token in tokens:
        if token is _STAR:
            chunks.append(())
        else:
            chunks[-1] += (token,)
    if len(chunks) == 1:
        return len(text) == len(chunks[0]) and _chunk_at(chunks[0], text, 0)
    head, *middle, tail = chunks
    if len(head) + len(tail) > len(text):
        return False
    if not _chunk_at(head, text, 0) or not _chunk_at(tail, text, len(text) - len(tail)):
        return False
    at, stop = len(head), len(text) - len(tail)
    for chunk in middle:
        while at + len(chunk) <= stop and not _chunk_at(chunk, text, at):
            at += 1
        if at + len(chunk) > stop:
            return False
        at += len(chunk)
    return True


def _group_at(group: tuple[Any, ...], segments: list[str], at: int) -> bool:
    return all(_segment_match(tokens, segments[at + k]) for k, tokens in enumerate(group))


def glob_match(pattern: str, path: str) -> bool:
    """Whether the gitignore-style glob ``pattern`` covers the repo-relative ``path`` (the path
    itself, or a folder it is in). Linear in the path for a given pattern; no regex."""
    compiled = _compile_glob(pattern)
    if compiled is None:
        return False
    groups, (dir_only, trailing) = compiled
    segments = path.strip("/").split("/")
    # the pattern may end at a folder of the path (everything in it is covered), or at the
    # path itself unless it names folders only
    last = len(segments) - 1 if dir_only else len(segments)
    first, *rest = groups
    if not rest:  # no globstar: the segments from the start
        return 1 <= len(first) <= last and _group_at(first, segments, 0)
    if len(first) > len(segments) or not _group_at(first, segments, 0):
        return False
    at = len(first)
    *middle, final = rest
    for group in middle:
        while at + len(group) <= len(segments) and not _group_at(group, segments, at):
            at += 1
        if at + len(group) > len(segments):
            return False
        at += len(group)
    if trailing:  # a/**: at least one segment after; a bare **/ names folders: one more
        return at < (len(segments) if first else last)
    while at + len(final) <= last:
        if _group_at(final, segments, at) and at + len(final) >= 1:
            return True
        at += 1
    return False


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
        if regex == NEVER:
            return False
        return glob_match(pattern, path)
    if path_glob and not pattern_glob:
        return _may_match(path, pattern) and glob_match(path, pattern)
    if pattern_glob and path_glob:
        return _literal_prefix(pattern).startswith(_literal_prefix(path)) or _literal_prefix(
            path
        ).startswith(_literal_prefix(pattern))
    # Two literal paths: a claim on a folder covers the files in it.
    return path.startswith(pattern.rstrip("/") + "/")


def _literal_prefix(glob: str) -> str:
    cut = min((glob.index(ch) for ch in GLOB_CHARS if ch in glob), default=len(glob))
    return glob[:cut]
