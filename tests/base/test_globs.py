"""Glob claims are matched without regular expressions, with gitignore's semantics (pathspec's,
checked here against it on generated patterns and paths), in time linear in the path."""

from __future__ import annotations

import time

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colony_tasks.base import globs
from colony_tasks.base.globs import glob_match


def reference(pattern: str, path: str) -> bool:
    spec = pathspec.GitIgnoreSpec.from_lines([git_classes(pattern)])
    return bool(spec.match_file(path))


def git_classes(pattern: str) -> str:
    """``pattern`` with ``/`` added to every negated bracket expression: git's wildmatch never
    matches a slash with a class (``[!a]``), pathspec's expression does (``?[!?]?`` matches
    ``a/a`` there, not in git). Escaped brackets are left alone."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "[" and pattern[i + 1 : i + 2] in ("!", "^"):
            out.append(pattern[i : i + 2])
            i += 2
            if pattern[i : i + 1] == "]":  # a ']' first in the class is a member
                out.append("]")
                i += 1
            out.append("/")
            continue
        out.append(ch)
        i += 1
    return "".join(out)


CASES = [
    ("*.py", "a/b/c.py", True),
    ("*.py", "c.pyc", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/x/a.py", False),
    ("/src/*.py", "src/a.py", True),
    ("src/", "lib/src/a.py", True),
    ("src/", "src", False),
    ("**/x.py", "a/b/x.py", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b/c", True),
    ("a/**", "a", False),
    ("a/**", "a/z", True),
    ("src/**/*.py", "src/m/n/o.py", True),
    ("a**b", "x/aqqb", True),
    ("[ab]*.txt", "d/b1.txt", True),
    ("[!ab]*.txt", "d/b1.txt", False),
    ("\\*.md", "*.md", True),
    ("\\*.md", "x.md", False),
    ("docs", "docs/a/b.md", True),
    ("?.py", "ab.py", False),
    ("src/*/x", "src/y/x", True),
    ("src/*/x", "src//x", False),
    ("!keep.py", "keep.py", False),
    ("*?*?*?*?*?*?*?*?e", "a/" + "b" * 40 + "e", True),
    ("?[!?]?", "a/a", False),  # a class never matches '/' (git; pathspec's own regex would)
]


@pytest.mark.parametrize("pattern, path, expected", CASES)
def test_known_cases_agree_with_gitignore(pattern: str, path: str, expected: bool):
    assert glob_match(pattern, path) is expected
    assert reference(pattern, path) is expected


_SEGMENT = st.text(alphabet="ab*?[]!-/\\.", min_size=1, max_size=10)
# repo-relative paths as the store keeps them: no "." or ".." segments
_NAME = st.text(alphabet="ab.-", min_size=1, max_size=5).filter(lambda n: n not in (".", ".."))
_PATH = st.lists(_NAME, min_size=1, max_size=5).map("/".join)


@settings(max_examples=3000, deadline=None)
@given(pattern=_SEGMENT, path=_PATH)
def test_generated_patterns_agree_with_pathspec(pattern: str, path: str):
    try:
        expected = reference(pattern, path)
    except Exception:  # a pattern pathspec refuses (an invalid range): nothing to compare
        return
    assert glob_match(pattern, path) is expected, (pattern, path)


def best_of(function, *args, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
    return best


def test_the_backtracking_glob_grows_linearly_with_the_path():
    pattern = "*?*?*?*?*?*?*?*?e"
    short, long = "a" * 2_000, "a" * 32_000  # no 'e': the worst case, a miss
    ratio = best_of(glob_match, pattern, long) / best_of(glob_match, pattern, short)
    assert ratio < 48  # 16x longer: linear ~16, quadratic ~256
    assert not globs.matches(pattern, "src/" + "a" * 32_000)


def test_every_short_pattern_agrees_with_pathspec():
    """Every pattern of up to four characters over the glob alphabet, on paths of one to four
    segments (the generated test above found `[a\\]`, `?//` and `**/` this way)."""
    import itertools
    import warnings

    paths = ["a", "b", "a/a", "a/b", "b/a", "ab", "a-b", ".a", "a\\", "a/b/c/d"]
    differ = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pathspec's regexes warn about nested sets
        for n in range(1, 5):
            for chars in itertools.product("a*?/[]!\\-", repeat=n):
                pattern = "".join(chars)
                try:
                    spec = pathspec.GitIgnoreSpec.from_lines([pattern])
                except Exception:  # a pattern pathspec refuses: nothing to compare
                    continue
                for path in paths:
                    if glob_match(pattern, path) is not spec.match_file(path):
                        differ.append((pattern, path))
    assert differ == []
