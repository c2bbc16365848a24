"""outline and read_symbol: a file's definitions, and the source of one of them."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError, ToolResult, truncate

from .grammars import GRAMMARS, QUALIFIERS, installed, tree_sitter_symbols
from .markdown_defs import markdown_symbols
from .python_defs import python_symbols
from .symbols import Symbol

if TYPE_CHECKING:
    from fsmcp import ResolvedPath, ToolContext

    from .models import OutlineInput, ReadSymbolInput

_BUILT_IN = {".py": "python", ".pyi": "python", ".md": "markdown", ".markdown": "markdown"}
_INTERPRETERS = {"python": ".py", "sh": ".sh", "bash": ".sh", "dash": ".sh", "ksh": ".sh", "zsh": ".sh"}


def known_languages() -> str:
    """The languages outlined here, and the extras that would add the others."""
    have = sorted({"python", "markdown", *(g.language for g in GRAMMARS.values() if installed(g))})
    missing = sorted({g.extra for g in GRAMMARS.values() if not installed(g)})
    text = "known languages: " + ", ".join(have)
    return text + (f"; install fsmcp-outline[{','.join(missing)}] for more" if missing else "")


def symbols_of(target: ResolvedPath, ctx: ToolContext) -> tuple[str, list[str], list[Symbol]]:
    """(language, the file's lines, its definitions); INVALID_PARAMS for a language not known."""
    suffix = posixpath.splitext(str(target))[1].lower()
    data = None
    if not suffix:
        # a script without an extension (bin/deploy) is known by its `#!` line
        data = ctx.fs.read_bytes(target)
        suffix = _by_shebang(data)
    grammar = GRAMMARS.get(suffix)
    language = _BUILT_IN.get(suffix) or (grammar.language if grammar and installed(grammar) else None)
    if language is None:
        raise ToolError(ErrorCode.INVALID_PARAMS, f"{target}: no outline for {suffix or 'a file without extension'}; {known_languages()}. Use read_file")
    data = ctx.fs.read_bytes(target) if data is None else data
    text = data.decode("utf-8", "replace")
    if language == "python":
        try:
            found = python_symbols(text)
        except SyntaxError as exc:
            raise ToolError(ErrorCode.INVALID_PARAMS, f"{target}: Python that does not parse (line {exc.lineno}: {exc.msg}); use read_file") from None
    elif language == "markdown":
        found = markdown_symbols(text)
    else:
        assert grammar is not None
        found = tree_sitter_symbols(grammar, data)
    return language, text.splitlines(), found


def _by_shebang(data: bytes) -> str:
    """The suffix a `#!` line's interpreter stands for (`#!/usr/bin/env bash` is .sh), or ""."""
    if not data.startswith(b"#!"):
        return ""
    words = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if words and words[0].endswith("/env"):
        words = [w for w in words[1:] if not w.startswith("-")]
    interpreter = re.sub(r"[\d.]+$", "", posixpath.basename(words[0])) if words else ""
    return _INTERPRETERS.get(interpreter, "")


def outline(args: OutlineInput, ctx: ToolContext) -> ToolResult:
    paths = [args.path] if isinstance(args.path, str) else args.path
    if not paths:
        raise ToolError(ErrorCode.INVALID_PARAMS, "path is an empty list; name at least one file")
    blocks, files = [], []
    for raw in paths:
        ctx.check_cancelled()
        target = ctx.fs.resolve(raw)
        try:
            language, lines, found = symbols_of(target, ctx)
        except ToolError as exc:
            if len(paths) == 1:
                raise
            blocks.append(f"{target}: {exc.code.value}: {exc.message}")
            continue
        shown = [s for s in found if args.depth is None or s.depth <= args.depth]
        hidden = len(found) - len(shown)
        head = f"{target} ({language}, {len(lines)} lines, {len(found)} definitions" + (f", {hidden} deeper not shown" if hidden else "") + ")"
        blocks.append("\n".join([head, *(f"{'  ' * (s.depth - 1)}{s.start}-{s.end} {s.signature}" for s in shown)]))
        files.append({"path": str(target), "language": language, "lines": len(lines), "definitions": len(found)})
    text, _ = truncate("\n\n".join(blocks), ctx.budget, "Pass depth: 1, or fewer files.")
    return ToolResult.text(text, {"files": files})


def read_symbol(args: ReadSymbolInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path)
    _, lines, found = symbols_of(target, ctx)
    wanted = args.name.strip()
    # `Shape::area` (C++, Ruby) is Shape.area; a name's last parts alone find it: `area`, `Shape.area`
    parts = tuple(p for p in QUALIFIERS.split(wanted) if p)
    matches = [s for s in found if s.name == wanted] or [s for s in found if parts and s.qualname[-len(parts) :] == parts]
    if not matches:
        parent = parts[:-1]
        near = list(dict.fromkeys(s.name for s in found if parent and s.qualname[:-1][-len(parent) :] == parent))
        near = near or sorted({s.name for s in found if parts and parts[-1].lower() in s.name.lower()})
        near = near[:10]
        hint = f"; similar: {', '.join(near)}" if near else "; run outline to see the names"
        raise ToolError(ErrorCode.NOT_FOUND, f"{target}: no definition named {wanted!r}{hint}")
    data = [{"name": s.name, "kind": s.kind, "startLine": s.start, "endLine": s.end} for s in matches]
    if len({s.name for s in matches}) > 1:
        # `__init__` in a file of thirty classes: a list to choose from, not thirty bodies
        head = f"{target}: {len(matches)} definitions named {wanted!r}; pass one's full name as name:"
        text, _ = truncate("\n".join([head, *(f"{s.start}-{s.end} {s.kind} {s.name}" for s in matches)]), ctx.budget, "Pass a longer name.")
        return ToolResult.text(text, {"definitions": data})
    # one name, one or more definitions (a property's getter and setter, overloads): each body
    blocks = [f"{target} lines {s.start}-{s.end} ({s.kind} {s.name})\n" + "\n".join(lines[s.start - 1 : s.end]) for s in matches]
    text, _ = truncate("\n\n".join(blocks), ctx.budget, "Read the rest with read_file's startLine/endLine.")
    return ToolResult.text(text, {"definitions": data})
