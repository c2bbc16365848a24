"""move_file: a file, link or directory moved or renamed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ToolError, ToolResult

from .entries import NOUN, check_destination, source_kind, transferred

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import TransferInput


def move_file(args: TransferInput, ctx: ToolContext) -> ToolResult:
    src = ctx.fs.resolve(args.source, Access.WRITE, follow_links=False)
    dst = ctx.fs.resolve(args.destination, Access.WRITE, follow_links=False)
    kind = source_kind(ctx, src)
    existing = check_destination(ctx, src, dst, kind, args)
    try:
        ctx.fs.rename(src, dst, overwrite=args.overwrite)
    except ToolError as exc:
        if exc.code is not ErrorCode.DIRECTORY_NOT_EMPTY:
            raise
        # rename(2) replaces only an empty directory; the host's advice speaks of delete_file.
        raise ToolError(
            ErrorCode.DIRECTORY_NOT_EMPTY,
            f"{dst} is a directory that is not empty, and a move replaces only an empty one; "
            f"delete it first (delete_file with recursive: true) or choose another destination. {src} was not moved",
            exc.details,
        ) from None
    if src.path == dst.path:
        return ToolResult.text(
            f"{src} is already at {dst}; nothing changed",
            {"source": str(src), "destination": str(dst), "type": NOUN[kind], "overwritten": False},
        )
    return transferred("moved", src, dst, kind, existing)
