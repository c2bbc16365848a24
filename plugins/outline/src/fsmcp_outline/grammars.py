"""Other languages through tree-sitter, each when its grammar wheel is installed (an extra of this package).

Nothing here is imported before a file of that language is outlined: start-up stays as fast
without grammars as with them.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass
from functools import cache

from .symbols import Symbol, one_line


@dataclass(frozen=True, eq=False)
class Grammar:
    language: str
    module: str  # the grammar wheel's module
    function: str  # its function that returns the language pointer
    extra: str  # the extra of fsmcp-outline that installs it
    # node type -> kind; a node of these types is a definition, named by its `name` field
    kinds: dict[str, str]
    # node types whose children may hold definitions of the same nesting level (export, a class body)
    containers: frozenset[str] = frozenset()


_JS_KINDS = {
    "class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
    "variable_declarator": "const",
}
_TS_KINDS = {
    **_JS_KINDS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "abstract_method_signature": "method",
    "method_signature": "method",
}
_JS_CONTAINERS = frozenset({"program", "export_statement", "lexical_declaration", "variable_declaration", "statement_block"})

GRAMMARS = {
    ".go": Grammar(
        "go",
        "tree_sitter_go",
        "language",
        "go",
        {"function_declaration": "func", "method_declaration": "method", "type_spec": "type"},
        frozenset({"source_file", "type_declaration"}),
    ),
    ".js": Grammar("javascript", "tree_sitter_javascript", "language", "javascript", _JS_KINDS, _JS_CONTAINERS),
    ".mjs": Grammar("javascript", "tree_sitter_javascript", "language", "javascript", _JS_KINDS, _JS_CONTAINERS),
    ".cjs": Grammar("javascript", "tree_sitter_javascript", "language", "javascript", _JS_KINDS, _JS_CONTAINERS),
    ".jsx": Grammar("javascript", "tree_sitter_javascript", "language", "javascript", _JS_KINDS, _JS_CONTAINERS),
    ".ts": Grammar("typescript", "tree_sitter_typescript", "language_typescript", "typescript", _TS_KINDS, _JS_CONTAINERS),
    ".mts": Grammar("typescript", "tree_sitter_typescript", "language_typescript", "typescript", _TS_KINDS, _JS_CONTAINERS),
    ".cts": Grammar("typescript", "tree_sitter_typescript", "language_typescript", "typescript", _TS_KINDS, _JS_CONTAINERS),
    ".tsx": Grammar("tsx", "tree_sitter_typescript", "language_tsx", "typescript", _TS_KINDS, _JS_CONTAINERS),
}
# what ends a head before its body: `{`, an arrow function's `=>`, `=`, `;`
_TAIL = re.compile(r"(\s*(\{|=>|=|;))+$")
# the bodies whose definitions are members (one level deeper)
_BODIES = frozenset({"class_body", "interface_body", "object_type", "statement_block"})


def installed(grammar: Grammar) -> bool:
    return importlib.util.find_spec("tree_sitter") is not None and importlib.util.find_spec(grammar.module) is not None


@cache
def _parser(module_name: str, function: str):
    import tree_sitter

    module = importlib.import_module(module_name)
    return tree_sitter.Parser(tree_sitter.Language(getattr(module, function)()))


def tree_sitter_symbols(grammar: Grammar, source: bytes) -> list[Symbol]:
    tree = _parser(grammar.module, grammar.function).parse(source)
    found: list[Symbol] = []
    _walk(grammar, tree.root_node, (), found, source)
    return found


def _walk(grammar: Grammar, node, parent: tuple[str, ...], found: list[Symbol], source: bytes) -> None:
    for child in node.named_children:
        kind = grammar.kinds.get(child.type)
        if kind == "const" and (value := child.child_by_field_name("value")) is not None:
            # a variable is a definition only when it holds a function or a class
            if value.type not in ("arrow_function", "function_expression", "function", "class", "generator_function"):
                continue
            kind = "function" if value.type != "class" else "class"
        elif kind == "const":
            continue
        name = child.child_by_field_name("name") if kind else None
        if kind and name is not None:
            qual = (*parent, _receiver(child, source) + _text(name, source))
            found.append(Symbol(kind, qual, _head(child, source, kind), _start_line(child), child.end_point[0] + 1))
            for body in child.named_children:
                if body.type in _BODIES and kind in ("class", "interface", "type", "namespace"):
                    _walk(grammar, body, qual, found, source)
                elif body.type in ("object_type",):
                    _walk(grammar, body, qual, found, source)
        elif child.type in grammar.containers:
            _walk(grammar, child, parent, found, source)


def _receiver(node, source: bytes) -> str:
    """A Go method's receiver type, so that `(s *Server) Close` is Server.Close."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ""
    text = _text(receiver, source).strip("()").split()[-1].lstrip("*")
    return text.split("[")[0] + "."


def _start_line(node) -> int:
    # the export keyword and decorators belong to the definition an edit replaces
    start = node
    while start.parent is not None and start.parent.type in ("export_statement", "lexical_declaration", "variable_declaration"):
        start = start.parent
    return start.start_point[0] + 1


def _head(node, source: bytes, kind: str) -> str:
    """The definition's text up to its body: its signature."""
    value = node.child_by_field_name("value")
    body = node.child_by_field_name("body") or (value.child_by_field_name("body") if value is not None else None)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    head = source[node.start_byte : end].decode("utf-8", "replace")
    if body is None:
        head = head.split("{")[0]  # a Go struct's fields, a TS object type's members
    head = _TAIL.sub("", one_line(head))
    return head if kind != "type" or head.startswith("type ") else "type " + head


def _text(node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
