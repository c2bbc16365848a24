"""delete_file: a file, a link (not its target) or a directory removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import Access, ToolResult

from .entries import NOUN

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import DeleteFileInput


def delete_file(args: DeleteFileInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path, Access.WRITE, follow_links=False)
    kind = ctx.fs.remove(target, recursive=args.recursive)
    noun = NOUN[kind]
    text = f"Successfully deleted {noun} {target}"
    if kind == "symlink":
        text += " (the link only; its target was not touched)"
    elif kind == "directory" and args.recursive:
        text += " and everything in it"
    return ToolResult.text(text, {"path": str(target), "deletedType": noun})
