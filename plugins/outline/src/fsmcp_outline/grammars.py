"""Other languages through tree-sitter, each when its grammar wheel is installed (an extra of this package).

Nothing here is imported before a file of that language is outlined: start-up stays as fast
without grammars as with them.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from dataclasses import dataclass, field
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
    # node types whose children may hold definitions of the same nesting level (export, a template, #ifdef)
    containers: frozenset[str] = frozenset()
    # node types whose named field holds the name, where it is not `name` (Rust's `impl Type`)
    name_fields: dict[str, str] = field(default_factory=dict)
    # parents whose first line is the definition's first line (export, template <…>)
    wrappers: frozenset[str] = frozenset()
    # siblings just before a definition that belong to it, as decorators do in Python (Rust's #[…])
    prefixes: frozenset[str] = frozenset()


_JS_KINDS = {
    "class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
    "variable_declarator": "const",
    "field_definition": "const",  # `handle = (e) => {…}` in a class body: a method
    "export_statement": "default",  # only `export default <expression>`: the rest is a container
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
    "public_field_definition": "const",
}
_JS = dict(
    name_fields={"field_definition": "property"},
    containers=frozenset({"program", "export_statement", "lexical_declaration", "variable_declaration", "statement_block"}),
    wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
)
# C and C++: a function's name is inside its declarator (`*name(args)`, `Type::name(args)`)
_C_KINDS = {
    "function_definition": "function",
    "declaration": "function",  # a prototype; other declarations have no function declarator
    "field_declaration": "function",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
    "preproc_function_def": "macro",
}
_C_CONTAINERS = frozenset({"translation_unit", "preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "linkage_specification", "declaration_list"})
_C_NAMES = dict.fromkeys(("function_definition", "declaration", "field_declaration", "type_definition"), "declarator")

_LANGUAGES = [
    (
        (".go",),
        Grammar(
            "go",
            "tree_sitter_go",
            "language",
            "go",
            {"function_declaration": "func", "method_declaration": "method", "type_spec": "type"},
            frozenset({"source_file", "type_declaration"}),
        ),
    ),
    ((".js", ".mjs", ".cjs", ".jsx"), Grammar("javascript", "tree_sitter_javascript", "language", "javascript", _JS_KINDS, **_JS)),
    ((".ts", ".mts", ".cts"), Grammar("typescript", "tree_sitter_typescript", "language_typescript", "typescript", _TS_KINDS, **_JS)),
    ((".tsx",), Grammar("tsx", "tree_sitter_typescript", "language_tsx", "typescript", _TS_KINDS, **_JS)),
    (
        (".rs",),
        Grammar(
            "rust",
            "tree_sitter_rust",
            "language",
            "rust",
            {
                "function_item": "function",
                "function_signature_item": "function",
                "struct_item": "struct",
                "union_item": "struct",
                "enum_item": "enum",
                "trait_item": "trait",
                "impl_item": "impl",
                "mod_item": "module",
                "macro_definition": "macro",
                "type_item": "type",
            },
            frozenset({"source_file"}),
            name_fields={"impl_item": "type"},
            prefixes=frozenset({"attribute_item"}),
        ),
    ),
    ((".c",), Grammar("c", "tree_sitter_c", "language", "c", _C_KINDS, _C_CONTAINERS, _C_NAMES)),
    (
        # a C header is read as C++, whose grammar parses C's declarations alike
        (".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"),
        Grammar(
            "cpp",
            "tree_sitter_cpp",
            "language",
            "cpp",
            {**_C_KINDS, "class_specifier": "class", "namespace_definition": "namespace"},
            _C_CONTAINERS | {"template_declaration"},
            _C_NAMES,
            wrappers=frozenset({"template_declaration"}),
        ),
    ),
    (
        (".java",),
        Grammar(
            "java",
            "tree_sitter_java",
            "language",
            "java",
            {
                "class_declaration": "class",
                "interface_declaration": "interface",
                "enum_declaration": "enum",
                "record_declaration": "class",
                "annotation_type_declaration": "interface",
                "method_declaration": "method",
                "constructor_declaration": "method",
            },
            frozenset({"program", "enum_body_declarations"}),
        ),
    ),
    (
        (".cs",),
        Grammar(
            "csharp",
            "tree_sitter_c_sharp",
            "language",
            "csharp",
            {
                "namespace_declaration": "namespace",
                "class_declaration": "class",
                "struct_declaration": "struct",
                "interface_declaration": "interface",
                "enum_declaration": "enum",
                "record_declaration": "class",
                "method_declaration": "method",
                "constructor_declaration": "method",
                "property_declaration": "property",
            },
            frozenset({"compilation_unit", "file_scoped_namespace_declaration"}),
        ),
    ),
    (
        (".kt", ".kts"),
        Grammar(
            "kotlin",
            "tree_sitter_kotlin",
            "language",
            "kotlin",
            {
                "class_declaration": "class",
                "object_declaration": "object",
                "companion_object": "object",
                "function_declaration": "function",
                "type_alias": "type",
            },
            frozenset({"source_file"}),
            name_fields={"type_alias": "type"},
        ),
    ),
    (
        (".rb", ".rake"),
        Grammar(
            "ruby",
            "tree_sitter_ruby",
            "language",
            "ruby",
            {"module": "module", "class": "class", "method": "method", "singleton_method": "method"},
            frozenset({"program", "singleton_class", "body_statement"}),
        ),
    ),
    (
        (".php",),
        Grammar(
            "php",
            "tree_sitter_php",
            "language_php",
            "php",
            {
                "namespace_definition": "namespace",
                "class_declaration": "class",
                "interface_declaration": "interface",
                "trait_declaration": "trait",
                "enum_declaration": "enum",
                "function_definition": "function",
                "method_declaration": "method",
            },
            frozenset({"program"}),
        ),
    ),
    ((".sh", ".bash"), Grammar("shell", "tree_sitter_bash", "language", "shell", {"function_definition": "function"}, frozenset({"program"}))),
]
GRAMMARS = {suffix: grammar for suffixes, grammar in _LANGUAGES for suffix in suffixes}

# what ends a head before its body: `{`, an arrow function's `=>`, `=`, `;`, a macro's `\`
_TAIL = re.compile(r"(\s*(\{|=>|=|;|\\))+$")
# the node types that hold a definition's members (one level deeper), and that end its head
_BODIES = frozenset(
    {
        "class_body", "interface_body", "object_type", "statement_block", "declaration_list", "field_declaration_list",
        "enum_body", "enum_class_body", "enum_declaration_list", "body_statement", "compound_statement",
        "function_body", "enum_variant_list", "enumerator_list", "preproc_arg", "block",
    }
)  # fmt: skip
# kinds whose body is code, never walked for members (a function's local functions are not outlined)
_CODE = frozenset({"function", "func", "method", "macro", "property"})
# kinds inside which a function is a method
_TYPES = frozenset({"class", "struct", "interface", "trait", "impl", "object"})
_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
# a name's qualifiers: C++'s and Ruby's `::`, PHP's `\`, dotted namespaces
QUALIFIERS = re.compile(r"::|\\|\.")


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
    # a stack, not recursion: `{{{…}}}` nested 5,000 deep is a valid file, and Python's recursion
    # limit would have made it an INTERNAL_ERROR
    stack = [(iter(tree.root_node.named_children), (), 0, "")]
    while stack:
        children, parent, outer, parent_kind = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        kind = grammar.kinds.get(child.type)
        value = _value(child) if kind in ("const", "default") else None
        if kind in ("const", "default"):
            # a variable, a field or a default export is a definition only when it holds a function or a class
            kind = None if value is None else value[0]
        parts = _name(grammar, child, value, source) if kind else None
        if kind == "namespace" and child.child_by_field_name("body") is None:
            parts = None  # `namespace App;` is no block: what follows is the file's
        if kind and parts:
            if kind == "function" and parent_kind in _TYPES:
                kind = "method"
            elif kind == "class" and any(c.type == "interface" for c in child.children):
                kind = "interface"  # Kotlin writes both as a class_declaration
            qual = (*parent, *parts)
            deeper = outer + len(parts) - 1  # `Type::method` is one level, not two
            found.append(Symbol(kind, qual, _head(child, value, kind, source), _start_line(grammar, child), _end_line(child), deeper))
            if kind not in _CODE:
                holder = value[1] if value is not None else child
                members = (grand for body in holder.named_children if body.type in _BODIES for grand in body.named_children)
                stack.append((members, qual, deeper, kind))
        elif child.type in grammar.containers or child.type == "ERROR":
            # ERROR: what the parser could not place (C's `#ifdef` inside an initializer) may hold
            # definitions after it
            stack.append((iter(child.named_children), parent, outer, parent_kind))
    return found


def _value(node):
    """(kind, node) of what a JavaScript variable, class field or default export holds, when a function or a class.

    A call whose argument is a function is a function too: React's `forwardRef(function X…)`,
    `memo(() => …)`, `memo(forwardRef(…))`.
    """
    value = node.child_by_field_name("value")
    while value is not None:
        if value.type in _FUNCTIONS:
            return "function", value
        if value.type == "class":
            return "class", value
        if value.type != "call_expression" or (arguments := value.child_by_field_name("arguments")) is None:
            return None
        value = next((a for a in arguments.named_children if a.type in _FUNCTIONS | {"class", "call_expression"}), None)
    return None


def _name(grammar: Grammar, node, value, source: bytes) -> tuple[str, ...]:
    """The name's parts: `Shape::area` is ("Shape", "area"); () when the node defines nothing."""
    if value is not None and node.type == "export_statement":
        inner = value[1].child_by_field_name("name")
        return (_text(inner, source),) if inner is not None else ("default",)
    if node.type.endswith("_specifier") and node.child_by_field_name("body") is None:
        return ()  # `struct point *p` uses a type, a definition has a body
    field_name = grammar.name_fields.get(node.type, "name")
    named = _declarator_name(node) if field_name == "declarator" else node.child_by_field_name(field_name)
    if named is None:
        return ("Companion",) if node.type == "companion_object" else ()
    # `impl<T> Vec<T>`, `Stack<T>::push`; Rust's `impl ToKey for &'a T` is T's
    text = re.sub(r"<.*>|^(?:[&*]|'\w+\s+|(?:mut|dyn)\s+)+", "", _text(named, source))
    return (*_receiver(node, source), *(p for p in QUALIFIERS.split(text) if p))


def _declarator_name(node):
    """The name inside a C declarator (`*name_of(…)`, `Shape::area() const`); None for a variable."""
    is_function = node.type in ("function_definition", "type_definition")
    while (inner := node.child_by_field_name("declarator")) is not None:
        is_function = is_function or inner.type == "function_declarator"
        node = inner
    return node if is_function else None


def _receiver(node, source: bytes) -> tuple[str, ...]:
    """A Go method's receiver type, so that `(s *Server) Close` is Server.Close."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return ()
    text = _text(receiver, source).strip("()").split()[-1].lstrip("*")
    return (text.split("[")[0],)


def _start_line(grammar: Grammar, node) -> int:
    # the export keyword, a template's head and attributes belong to the definition an edit replaces
    start = node
    while start.parent is not None and start.parent.type in grammar.wrappers:
        start = start.parent
    while start.prev_named_sibling is not None and start.prev_named_sibling.type in grammar.prefixes:
        start = start.prev_named_sibling
    return start.start_point[0] + 1


def _end_line(node) -> int:
    # a `#define` ends with its newline: its end is column 0 of the next line
    row, column = node.end_point
    return row + 1 if column or row == node.start_point[0] else row


def _head(node, value, kind: str, source: bytes) -> str:
    """The definition's text up to its body: its signature."""
    holder = value[1] if value is not None else node
    body = holder.child_by_field_name("body")
    if body is None:
        body = next((c for c in holder.named_children if c.type in _BODIES), None)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    # a comment between the signature and the body (Ruby's `def f(a) #:nodoc:`) is no part of it
    end = min([end, *(c.start_byte for c in holder.named_children if c.type == "comment" and c.start_byte > node.start_byte)])
    head = source[node.start_byte : end].decode("utf-8", "replace")
    if body is None and "{" in head:
        # a Go struct's fields, a typedef's struct, a TS object type's members: `{…}` in their place
        rest = head.rsplit("}", 1)[1].strip() if "}" in head else ""
        head = head.split("{")[0] + ("{…} " + rest if rest.strip(";") else "")
    head = _TAIL.sub("", one_line(head.split(";")[0] if body is None else head))
    return head if kind != "type" or head.startswith(("type", "typedef", "typealias")) else "type " + head  # Go's type_spec


def _text(node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
