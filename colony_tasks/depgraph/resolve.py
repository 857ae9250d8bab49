"""Resolve import specifiers to repository-relative file paths.

Resolution needs only the set of indexed paths and a ``Config``; it never touches the disk, so
the graph can re-resolve every file cheaply when files appear or disappear. Anything that does
not resolve to an indexed file (the standard library, ``node_modules``, a typo) is dropped.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable

from .model import Config, Edge, ImportSpec, Lang

PY_EXTS = (".py", ".pyi")
TS_EXTS = (".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
# A ``.js`` specifier in TypeScript names the file the ``.ts`` source compiles to.
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}


def resolve(
    path: str, lang: Lang, specs: Iterable[ImportSpec], files: Collection[str], config: Config
) -> tuple[Edge, ...]:
    """The edges of file ``path``: one per imported indexed file, names merged, self excluded."""
    merged: dict[str, list[str]] = {}
    whole: set[str] = set()
    for spec in specs:
        if lang == "python":
            found = resolve_python(path, spec, files, config)
        else:
            target = resolve_typescript(path, spec.spec, files, config)
            found = [(target, spec.names)] if target else []
        for target, names in found:
            if target == path:
                continue
            merged.setdefault(target, [])
            if names:
                merged[target].extend(n for n in names if n not in merged[target])
            else:
                whole.add(target)
    return tuple(
        Edge(target, () if target in whole else tuple(names))
        for target, names in sorted(merged.items())
    )


# -- Python -----------------------------------------------------------------------------------


def resolve_python(
    path: str, spec: ImportSpec, files: Collection[str], config: Config
) -> list[tuple[str, tuple[str, ...]]]:
    """``[(file, names)]`` for one import; ``from pkg import mod`` resolves to the submodule."""
    if spec.level:
        base = posixpath.dirname(path)
        for _ in range(spec.level - 1):
            if not base:
                return []  # above the repository root
            base = posixpath.dirname(base)
        bases = [base]
    else:
        # The import roots, then the importing file's own folder (a script's sys.path[0]).
        bases = list(config.python_roots) + [posixpath.dirname(path)]
    module = spec.spec.replace(".", "/") if spec.spec else ""
    for base in bases:
        module_dir = posixpath.join(base, module) if module else base
        found: list[tuple[str, tuple[str, ...]]] = []
        rest: list[str] = []
        for name in spec.names:
            sub = _python_module(posixpath.join(module_dir, name), files)
            if sub:
                found.append((sub, ()))
            else:
                rest.append(name)
        if module:
            target = _python_module(module_dir, files)
        else:  # from . import name: the names not found as submodules come from __init__
            target = _python_module(module_dir + "/__init__", files) if base else None
            if target is None and not base:
                target = _first(("__init__.py",), files)
        if target and (rest or not spec.names):
            found.append((target, tuple(rest)))
        if found:
            return found
        if spec.level:
            return []
    return []


def _python_module(stem: str, files: Collection[str]) -> str | None:
    stem = stem.lstrip("/")
    if stem.endswith("/__init__"):
        return _first((stem + ".py", stem + ".pyi"), files)
    return _first(
        (stem + ".py", stem + "/__init__.py", stem + ".pyi", stem + "/__init__.pyi"), files
    )


# -- TypeScript / JavaScript ------------------------------------------------------------------


def resolve_typescript(path: str, spec: str, files: Collection[str], config: Config) -> str | None:
    """The file a TS/JS specifier names: relative, tsconfig ``paths``, then ``baseUrl``."""
    spec = spec.split("?", 1)[0]
    if spec.startswith(("./", "../")) or spec in (".", ".."):
        return _ts_file(posixpath.join(posixpath.dirname(path), spec), files)
    if spec.startswith("/"):
        return None
    for pattern, targets in config.ts_paths:
        star = _match_pattern(pattern, spec)
        if star is None:
            continue
        for target in targets:
            found = _ts_file(target.replace("*", star, 1), files)
            if found:
                return found
    if config.ts_base_url is not None:
        return _ts_file(posixpath.join(config.ts_base_url, spec), files)
    return None


def _match_pattern(pattern: str, spec: str) -> str | None:
    if "*" not in pattern:
        return "" if pattern == spec else None
    prefix, _, suffix = pattern.partition("*")
    if spec.startswith(prefix) and spec.endswith(suffix) and len(spec) >= len(prefix + suffix):
        return spec[len(prefix) : len(spec) - len(suffix)]
    return None


def _ts_file(joined: str, files: Collection[str]) -> str | None:
    base = posixpath.normpath(joined)
    if base == ".." or base.startswith("../"):
        return None  # outside the repository
    base = "" if base == "." else base
    candidates = [base] if base else []
    stem, ext = posixpath.splitext(base)
    candidates += [stem + alt for alt in _JS_TO_TS.get(ext, ())]
    candidates += [base + e for e in TS_EXTS]
    index = posixpath.join(base, "index")
    candidates += [index + e for e in TS_EXTS]
    return _first(candidates, files)


def _first(candidates: Iterable[str], files: Collection[str]) -> str | None:
    for candidate in candidates:
        if candidate in files:
            return candidate
    return None
