"""Glob claims are matched without regular expressions, with gitignore's semantics (pathspec's,
checked here against it on generated patterns and paths), in time linear in the path."""

from __future__ import annotations

import re
import time

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colony_tasks.base import globs
from colony_tasks.base.globs import glob_match


def reference(pattern: str, path: str) -> bool:
    """pathspec's verdict, with git's rule for classes: git's wildmatch never matches a slash
    with a bracket expression (``?[!?]?`` does not match ``a/a`` in git: checked with
    ``git check-ignore``), pathspec's expression for a negated class (``[^?]``) does. The
    expression pathspec compiles is used with ``/`` added to each negated class."""
    (compiled,) = pathspec.GitIgnoreSpec.from_lines([pattern]).patterns
    if compiled.include is None or compiled.regex is None:
        return False
    regex = _NEGATED_CLASS.sub(
        lambda m: m.group(1) + "[^" + m.group(2) + "/", compiled.regex.pattern
    )
    return bool(compiled.include) and re.search(regex, path, compiled.regex.flags) is not None


# An unescaped "[^" opens a negated class in pathspec's expression (a literal bracket is "\["); a
# "]" right after it is the class's first member.
_NEGATED_CLASS = re.compile(r"(?<!\\)((?:\\\\)*)\[\^(\]?)")


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
