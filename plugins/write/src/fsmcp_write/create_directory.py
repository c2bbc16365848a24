"""create_directory: a directory, and its parents if asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ToolError, ToolResult

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import CreateDirectoryInput


def create_directory(args: CreateDirectoryInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path, Access.WRITE)
    if ctx.fs.kind(target) not in (None, "directory"):
        raise ToolError(
            ErrorCode.NOT_DIRECTORY,
            f"{target} already exists and is a file, not a directory; choose another path, or delete the file first",
        )
    created = ctx.fs.mkdir(target, parents=args.recursive)
    text = f"Successfully created directory {target}" if created else f"Directory {target} already exists; nothing changed"
    return ToolResult.text(text, {"path": str(target), "created": created})
