"""Imports and public surface of a Python module, from the standard library's ``ast``."""

from __future__ import annotations

import ast
import warnings

from .model import ImportSpec, Parsed, Symbol


def parse_python(source: bytes | str) -> Parsed:
    """The imports and public surface of one module; never raises on bad input."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return Parsed(specs=(), surface=None, error="unparseable")
    return Parsed(specs=tuple(_imports(tree)), surface=tuple(_surface(tree)))


def _imports(tree: ast.Module) -> list[ImportSpec]:
    # Every import statement anywhere in the module, including those inside functions and
    # ``if TYPE_CHECKING:`` blocks: a lazy import is still a dependency. Only statement lists
    # are visited (imports are statements), which skips the expressions, most of the tree.
    specs: list[ImportSpec] = []
    stack: list[list[ast.stmt]] = [tree.body]
    while stack:
        for node in stack.pop():
            if isinstance(node, ast.Import):
                specs.extend(ImportSpec(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                names = tuple(a.name for a in node.names if a.name != "*")
                specs.append(ImportSpec(node.module or "", names, node.level))
            elif isinstance(node, _COMPOUND):
                stack.extend(_blocks(node))
    return specs


_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [
        block
        for field in ("body", "orelse", "finalbody")
        if isinstance(block := getattr(node, field, None), list)
    ]
    for handler in getattr(node, "handlers", ()):  # try / except
        blocks.append(handler.body)
    for case in getattr(node, "cases", ()):  # match
        blocks.append(case.body)
    return blocks


def _surface(tree: ast.Module) -> list[Symbol]:
    symbols: dict[str, Symbol] = {}
    exported: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if _public(node.name):
                symbols[node.name] = Symbol(node.name, "def", _def_signature(node))
        elif isinstance(node, ast.ClassDef):
            if _public(node.name):
                symbols[node.name] = Symbol(node.name, "class", _class_signature(node))
                for method in _methods(node):
                    symbols[method.name] = method
        else:
            exported.extend(_all_names(node))
    for name in exported:
        if name not in symbols:
            symbols[name] = Symbol(name, "name", name)
    return sorted(symbols.values(), key=lambda s: s.name)


def _public(name: str) -> bool:
    return not name.startswith("_")


def _def_signature(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str | None = None) -> str:
    text = f"{name or node.name}({ast.unparse(node.args)})"
    if node.returns is not None:
        text += f" -> {ast.unparse(node.returns)}"
    return ("async " if isinstance(node, ast.AsyncFunctionDef) else "") + text


def _class_signature(node: ast.ClassDef) -> str:
    bases = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
    return f"class {node.name}({', '.join(bases)})" if bases else f"class {node.name}"


def _methods(cls: ast.ClassDef) -> list[Symbol]:
    methods = []
    for node in cls.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if _public(node.name) or node.name == "__init__":
            qualified = f"{cls.name}.{node.name}"
            methods.append(Symbol(qualified, "method", _def_signature(node, qualified)))
    return methods


def _all_names(node: ast.stmt) -> list[str]:
    """The names of ``__all__ = [...]``, ``__all__ += [...]`` (literal lists and tuples)."""
    value: ast.expr | None
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets, value = [node.target], node.value
    else:
        return []
    if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
        return []
    if not isinstance(value, ast.List | ast.Tuple):
        return []
    return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
