"""write_file: a file's whole content, replaced atomically."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ToolResult

from .content import prepare, wrote

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import WriteFileInput


def write_file(args: WriteFileInput, ctx: ToolContext) -> ToolResult:
    target, data = prepare(args, ctx)
    created = ctx.fs.write_atomic(target, data)
    return ToolResult.text(wrote(target, data, created), {"path": str(target), "bytesWritten": len(data), "created": created})
