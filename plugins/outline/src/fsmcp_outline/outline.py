"""outline: the definitions of one or more files, one line each, indented by depth."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError, ToolResult, truncate

from .languages import symbols_of

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import OutlineInput


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
