"""Which language a file is written in (by extension or ``#!`` line), and its definitions as
that language's reader finds them."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError

from .grammars import GRAMMARS, installed, tree_sitter_symbols
from .markdown_defs import markdown_symbols
from .python_defs import python_symbols
from .symbols import Symbol

if TYPE_CHECKING:
    from fsmcp import ResolvedPath, ToolContext

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
