"""Imports and exported surface of TypeScript and JavaScript modules, from tree-sitter grammars.

The grammars are compiled wheels from the package index (``tree-sitter-typescript``,
``tree-sitter-javascript``). Importing them costs about 10-20 ms, so this module is only
imported by the indexer, never on the hook path.
"""

from __future__ import annotations

import functools

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from .model import ImportSpec, Lang, Parsed, Symbol

_GRAMMARS = {
    "typescript": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
    "javascript": tree_sitter_javascript.language,
}
# Import-like constructs anywhere in the tree, matched in C by one query per grammar.
_IMPORT_QUERY = """
(import_statement source: (string) @source) @stmt
(export_statement source: (string) @source) @stmt
(call_expression function: (import) arguments: (arguments . (string) @source)) @stmt
(call_expression function: (identifier) @fn arguments: (arguments . (string) @source)) @stmt
"""
_TS_EXTRA = "(import_require_clause source: (string) @source) @stmt"


@functools.cache
def _tools(lang: str) -> tuple[Parser, Query]:
    """The parser and import query of one grammar, made on first use (a query compiles in
    10-25 ms; a Python-only repository never pays it)."""
    language = Language(_GRAMMARS[lang]())
    query = Query(language, _IMPORT_QUERY + (_TS_EXTRA if lang != "javascript" else ""))
    return Parser(language), query


def parse_typescript(source: bytes, lang: Lang) -> Parsed:
    """The imports and exported surface of one module; never raises on bad input.

    A tree with syntax errors still yields the imports found in it, but no surface: a file in
    the middle of an edit must not read as "everything removed".
    """
    try:
        parser, query = _tools(lang)
        tree = parser.parse(source)
    except Exception:  # a parser failure is a property of the input, not a bug here
        return Parsed(specs=(), surface=None, error="unparseable")
    root = tree.root_node
    specs = tuple(_imports(root, query))
    if root.has_error:
        return Parsed(specs=specs, surface=None, error="unparseable")
    return Parsed(specs=specs, surface=tuple(_surface(root)))


def _imports(root: Node, query: Query) -> list[ImportSpec]:
    specs = []
    for _, captures in QueryCursor(query).matches(root):
        fn = captures.get("fn")
        if fn and _text(fn[0]) != "require":
            continue
        spec = _string(captures["source"][0])
        if spec:
            specs.append(ImportSpec(spec, _imported_names(captures["stmt"][0])))
    return specs


def _imported_names(stmt: Node) -> tuple[str, ...]:
    """``import D, {a, b as c}`` → ``("default", "a", "b")``; ``* as ns`` and calls → ()."""
    if stmt.type not in ("import_statement", "export_statement"):
        return ()
    names: list[str] = []
    for child in stmt.named_children:
        if child.type == "import_clause":
            for part in child.named_children:
                if part.type == "identifier":
                    names.append("default")
                elif part.type == "namespace_import":
                    return ()
                elif part.type == "named_imports":
                    names.extend(_specifier_names(part, "import_specifier"))
        elif child.type == "export_clause":
            names.extend(_specifier_names(child, "export_specifier"))
    return tuple(names)


def _specifier_names(node: Node, kind: str) -> list[str]:
    return [
        _text(name)
        for spec in node.named_children
        if spec.type == kind and (name := spec.child_by_field_name("name")) is not None
    ]


# -- surface ----------------------------------------------------------------------------------

_FUNCTIONS = ("function_declaration", "generator_function_declaration", "function_signature")
_CLASSES = ("class_declaration", "abstract_class_declaration", "class")
_WHOLE_TEXT = {
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}


def _surface(root: Node) -> list[Symbol]:
    symbols: dict[str, Symbol] = {}
    for stmt in root.named_children:
        if stmt.type != "export_statement":
            continue
        for symbol in _exported(stmt):
            previous = symbols.get(symbol.name)
            if previous is not None and previous.kind == symbol.kind == "function":
                # Overloads: the signatures together are the function's shape.
                symbol = Symbol(
                    symbol.name, "function", f"{previous.signature}; {symbol.signature}"
                )
            symbols[symbol.name] = symbol
    return sorted(symbols.values(), key=lambda s: s.name)


def _exported(stmt: Node) -> list[Symbol]:
    decl = stmt.child_by_field_name("declaration")
    default = any(c.type == "default" for c in stmt.children)
    source = stmt.child_by_field_name("source")
    if decl is not None:
        if decl.type == "ambient_declaration" and decl.named_children:
            decl = decl.named_children[0]
        return _declaration(decl, default)
    clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
    if clause is not None:
        symbols = []
        for spec in clause.named_children:
            name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
            if name is None:
                continue
            exported = _text(alias or name)
            origin = f" from {_string(source)}" if source is not None else ""
            symbols.append(Symbol(exported, "export", f"export {_text(name)}{origin}"))
        return symbols
    if source is not None:  # export * from './x'
        return [Symbol(f"* from {_string(source)}", "export", f"export * from {_string(source)}")]
    value = stmt.child_by_field_name("value")
    if default and value is not None:
        if value.type in ("arrow_function", "function_expression", "function"):
            return [Symbol("default", "function", f"default{_callable(value)}")]
        return [Symbol("default", "const", "default")]
    return []


def _declaration(decl: Node, default: bool) -> list[Symbol]:
    name_node = decl.child_by_field_name("name")
    name = "default" if default else (_text(name_node) if name_node is not None else "")
    label = _text(name_node) if name_node is not None else name
    if decl.type in _FUNCTIONS:
        prefix = "async " if any(c.type == "async" for c in decl.children) else ""
        return [Symbol(name, "function", f"{prefix}{label}{_callable(decl)}")]
    if decl.type in _CLASSES:
        return _class(decl, name, label)
    if decl.type in _WHOLE_TEXT:
        return [Symbol(name, _WHOLE_TEXT[decl.type], _norm(_text(decl)))]
    if decl.type in ("lexical_declaration", "variable_declaration"):
        return [s for d in decl.named_children if (s := _variable(d)) is not None]
    if decl.type in ("module", "internal_module"):
        return [Symbol(name, "namespace", f"namespace {label}")]
    return []


def _variable(declarator: Node) -> Symbol | None:
    if declarator.type != "variable_declarator":
        return None
    name_node = declarator.child_by_field_name("name")
    if name_node is None or name_node.type != "identifier":
        return None  # destructuring: no single name to follow
    name = _text(name_node)
    value = declarator.child_by_field_name("value")
    if value is not None and value.type in ("arrow_function", "function_expression", "function"):
        prefix = "async " if any(c.type == "async" for c in value.children) else ""
        return Symbol(name, "function", f"{prefix}{name}{_callable(value)}")
    type_node = declarator.child_by_field_name("type")
    return Symbol(name, "const", name + (_norm(_text(type_node)) if type_node is not None else ""))


def _class(decl: Node, name: str, label: str) -> list[Symbol]:
    head = f"class {label}"
    for child in decl.named_children:
        if child.type in ("type_parameters", "class_heritage"):
            head += ("" if child.type == "type_parameters" else " ") + _norm(_text(child))
    symbols = [Symbol(name, "class", head)]
    body = decl.child_by_field_name("body")
    for member in body.named_children if body is not None else ():
        if member.type not in (
            "method_definition",
            "method_signature",
            "abstract_method_signature",
        ):
            continue
        modifiers = [_text(c) for c in member.named_children if c.type == "accessibility_modifier"]
        method_node = member.child_by_field_name("name")
        if method_node is None or "private" in modifiers or "protected" in modifiers:
            continue
        method = _text(method_node)
        if method.startswith("#"):
            continue
        qualified = f"{name}.{method}"
        symbols.append(Symbol(qualified, "method", f"{label}.{method}{_callable(member)}"))
    return symbols


def _callable(node: Node) -> str:
    """``<T>(a: T, b?: string): R`` for anything with parameters (and a return type)."""
    parts = []
    for field in ("type_parameters", "parameters", "return_type"):
        child = node.child_by_field_name(field)
        if child is not None:
            parts.append(_norm(_text(child)))
    if not parts:  # a single bare arrow parameter: x => ...
        param = node.child_by_field_name("parameter")
        parts.append(f"({_text(param)})" if param is not None else "()")
    return "".join(parts)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _string(node: Node) -> str:
    """The value of a string literal node (without its quotes)."""
    text = _text(node)
    return text[1:-1] if len(text) >= 2 and text[0] in "'\"`" else text


def _norm(text: str) -> str:
    return " ".join(text.split())
