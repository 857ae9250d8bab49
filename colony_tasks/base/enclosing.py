"""The function or class that encloses a line of source, named the way a warning says where an
edit lands (``def Store.save``, ``class Store``, ``function retry``, ``func Handle``,
``fn parse``, ``impl Parser``), where the language is known from the file's extension.

Python is read by its own parser (:mod:`ast`: decorators, nesting and strings are exact); a file
that does not parse (an edit half done) or is very large falls back to the line heuristic.
TypeScript/JavaScript, Go and Rust use a cheap line heuristic: the nearest preceding line at
lower indentation that starts a definition. Nothing is named when nothing is found, or for any
other language: the warning then names only the lines. Only called when a forecast found an
overlap, never per hook. Standard library only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

MAX_PARSE_CHARS = 1_000_000  # a larger Python file is read by the line heuristic
MAX_SCAN_LINES = 5_000  # how far up the heuristic looks for the enclosing definition
MAX_NAME_CHARS = 40
MAX_LINE_CHARS = 300  # a longer line (minified code) is not read as a definition: bounded work

_MODS = r"(?:(?:export|default|declare|abstract|async|public|private|protected|static|override|readonly)\s+)*"
_JS = [
    (re.compile(_MODS + r"function\s*\*?\s*([\w$]+)"), "function"),
    (re.compile(_MODS + r"(class|interface|enum|namespace)\s+([\w$]+)"), ""),
    (
        re.compile(
            _MODS + r"(?:const|let|var)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?"
            r"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[\w$]+\s*=>)"
        ),
        "function",
    ),
    (
        re.compile(
            _MODS + r"(?:get\s+|set\s+|\*\s*)?"
            r"(?!(?:if|for|while|switch|catch|return|function|else|do|new|typeof|await|with)\b)"
            r"([\w$]+)\s*(?:<[^<>()]*>)?\s*\([^()]*\)\s*(?::[^{;=]*)?\{\s*$"
        ),
        "method",
    ),
]
_GO = [
    (re.compile(r"func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)"), "func"),
    (re.compile(r"type\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b"), "type"),
]
_RUST_MODS = r"(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*"
_RUST = [
    (re.compile(_RUST_MODS + r"fn\s+([A-Za-z_]\w*)"), "fn"),
    (
        re.compile(r"(?:unsafe\s+)?impl\b(?:\s*<[^{]*?>)?\s+(?:.*?\s+for\s+)?([A-Za-z_][\w:]*)"),
        "impl",
    ),
    (re.compile(_RUST_MODS + r"(struct|enum|trait|mod|union)\s+([A-Za-z_]\w*)"), ""),
]
_PYTHON = [
    (re.compile(r"(?:async\s+)?def\s+([A-Za-z_]\w*)"), "def"),
    (re.compile(r"(class)\s+([A-Za-z_]\w*)"), ""),
]
LANGUAGES: dict[str, list[tuple[re.Pattern[str], str]]] = {
    **dict.fromkeys((".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"), _JS),
    ".go": _GO,
    ".rs": _RUST,
    **dict.fromkeys((".py", ".pyi"), _PYTHON),
}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def finder(path: str, lines: Sequence[str]) -> Callable[[int], str]:
    """``at(line)``: what encloses 1-based ``line`` of ``path`` (its text as ``lines``), or ''.
    A Python file is parsed once, at the first call."""
    dot = path.rfind(".")
    patterns = LANGUAGES.get(path[dot:].lower() if dot > path.rfind("/") else "")
    tree: list[ast.Module | None] = []

    def at(line: int) -> str:
        if patterns is None or not 1 <= line <= len(lines):
            return ""
        if patterns is _PYTHON:
            if not tree:
                tree.append(_parse(lines))
            if tree[0] is not None:
                return _clip(_in_tree(tree[0], line))
        return _clip(_by_indent(lines, line - 1, patterns))

    return at


def _clip(name: str) -> str:
    return name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - 1] + "…"


def _parse(lines: Sequence[str]) -> ast.Module | None:
    if sum(len(line) + 1 for line in lines) > MAX_PARSE_CHARS:
        return None
    try:
        return ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _in_tree(tree: ast.Module, line: int) -> str:
    """The innermost def or class around ``line``, qualified by those around it."""
    names: list[str] = []
    kind = ""
    node: ast.AST = tree
    while True:
        for child in ast.iter_child_nodes(node):
            start = getattr(child, "lineno", None)
            end = getattr(child, "end_lineno", None)
            if start is None or end is None:
                continue
            if isinstance(child, _DEFS):
                start = min([start, *(d.lineno for d in child.decorator_list)])
            if start <= line <= end:
                if isinstance(child, _DEFS):
                    names.append(child.name)
                    kind = "class" if isinstance(child, ast.ClassDef) else "def"
                node = child
                break
        else:
            return f"{kind} {'.'.join(names)}" if names else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _starts(line: str, patterns: list[tuple[re.Pattern[str], str]]) -> str:
    text = line.strip()
    if len(text) > MAX_LINE_CHARS:
        return ""
    for pattern, kind in patterns:
        found = pattern.match(text)
        if found:
            groups = [g for g in found.groups() if g]
            name = groups[-1].rsplit("::", 1)[-1]
            return f"{kind or groups[0]} {name}"
    return ""


def _by_indent(
    lines: Sequence[str], index: int, patterns: list[tuple[re.Pattern[str], str]]
) -> str:
    """The nearest line at or above ``index`` at lower indentation that starts a definition
    (the line itself when it starts one); '' when the walk reaches the top level first."""
    here = _starts(lines[index], patterns)
    if here:
        return here
    below = next((line for line in lines[index:] if line.strip()), "")
    level = _indent(below)
    for i in range(index - 1, max(-1, index - MAX_SCAN_LINES), -1):
        if level == 0:
            return ""
        line = lines[i]
        if not line.strip() or _indent(line) >= level:
            continue
        found = _starts(line, patterns)
        if found:
            return found
        level = _indent(line)
    return ""
