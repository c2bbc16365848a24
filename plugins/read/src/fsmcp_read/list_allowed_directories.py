"""list_allowed_directories: the roots a tool may reach, and whether each is writable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ToolResult

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import NoInput


def list_allowed_directories(args: NoInput, ctx: ToolContext) -> ToolResult:
    roots = ctx.roots
    described = [(str(r.path), "read-write" if roots.writable(r) else "read-only") for r in roots.usable]
    text = "\n".join(f"{path} ({mode})" for path, mode in described) or (
        roots.refusal or "(no directory is usable: the client's roots and the server's do not overlap)"
    )
    return ToolResult.text(text, {"directories": [{"path": p, "access": m} for p, m in described]})
