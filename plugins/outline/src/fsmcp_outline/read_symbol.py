"""read_symbol: the source of one definition outline lists, found by its name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError, ToolResult, truncate

from .languages import symbols_of
from .grammars import QUALIFIERS

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import ReadSymbolInput


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
