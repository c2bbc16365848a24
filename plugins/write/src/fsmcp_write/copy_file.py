"""copy_file: a file, link or directory copied to a new path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import Access, ToolResult

from .entries import check_destination, source_kind, transferred

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import TransferInput


def copy_file(args: TransferInput, ctx: ToolContext) -> ToolResult:
    src = ctx.fs.resolve(args.source, Access.READ, follow_links=False)
    dst = ctx.fs.resolve(args.destination, Access.WRITE, follow_links=False)
    kind = source_kind(ctx, src)
    existing = check_destination(ctx, src, dst, kind, args)
    ctx.fs.copy(src, dst, overwrite=args.overwrite)
    return transferred("copied", src, dst, kind, existing)
