"""set_workspace: the host keeps the workspace (per client); this tool only asks it to move."""

from __future__ import annotations

from fsmcp import ToolContext, ToolResult

from .models import SetWorkspaceInput


def set_workspace(args: SetWorkspaceInput, ctx: ToolContext) -> ToolResult:
    path = ctx.set_workspace(args.path)
    return ToolResult.text(f"Successfully set workspace root to: {path}", {"workspace": str(path)})
