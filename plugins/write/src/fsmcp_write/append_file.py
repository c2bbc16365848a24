"""append_file: bytes added at the end of a file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ToolError, ToolResult

from .content import byte_count, refuse_directory_syntax, utf8

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import AppendFileInput


def append_file(args: AppendFileInput, ctx: ToolContext) -> ToolResult:
    text = args.content
    if args.ensure_newline and text and not text.endswith("\n"):
        text += "\r\n" if "\r\n" in text else "\n"
    data = utf8(text)
    refuse_directory_syntax(args.path)
    target = ctx.fs.resolve(args.path, Access.WRITE)
    created = args.create and ctx.fs.kind(target) is None
    try:
        size = ctx.fs.append(target, data, create=args.create)
    except ToolError as exc:
        if exc.code is ErrorCode.NOT_FOUND and not args.create:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"{target} does not exist; append_file only adds to an existing file. "
                "Pass create: true to create it, or check the path",
                exc.details,
            ) from None
        raise
    how = "created; " if created else ""
    return ToolResult.text(
        f"Successfully appended {byte_count(len(data))} to {target} ({how}now {byte_count(size)})",
        {"path": str(target), "bytesAppended": len(data), "size": size, "created": created},
    )
