"""Python definitions through the standard ``ast``: classes, functions, methods."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .symbols import Symbol, one_line


def python_symbols(text: str) -> list[Symbol]:
    """Raises SyntaxError for a file ast cannot parse (the caller says so)."""
    return list(_walk(ast.parse(text).body, ()))


def _walk(body: list[ast.stmt], parent: tuple[str, ...]) -> Iterator[Symbol]:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # functions nested in functions are never walked, so a parent here is always a class
            yield _symbol(node, parent, "method" if parent else "def")
        elif isinstance(node, ast.ClassDef):
            yield _symbol(node, parent, "class")
            yield from _walk(node.body, (*parent, node.name))
        elif isinstance(node, (ast.If, ast.Try)):
            # definitions under `if TYPE_CHECKING:` or `try: import ... except` are still the module's
            for branch in (node.body, node.orelse, getattr(node, "finalbody", [])):
                yield from _walk(branch, parent)
            for handler in getattr(node, "handlers", []):
                yield from _walk(handler.body, parent)


def _symbol(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, parent: tuple[str, ...], kind: str) -> Symbol:
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    if isinstance(node, ast.ClassDef):
        bases = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
        head = f"class {node.name}" + (f"({', '.join(bases)})" if bases else "")
    else:
        prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
        returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
        head = f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"
    decorators = " ".join("@" + _decorator(d) for d in node.decorator_list)
    return Symbol(kind, (*parent, node.name), one_line(f"{decorators} {head}".strip()), start, node.end_lineno or node.lineno)


def _decorator(node: ast.expr) -> str:
    # a long decorator call (a deprecation message) would push the name out of the signature
    text = ast.unparse(node)
    return ast.unparse(node.func) + "(…)" if len(text) > 40 and isinstance(node, ast.Call) else text
