"""get_file_info: a file's metadata, never its content."""

from __future__ import annotations

import stat as stat_mod
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from fsmcp import Access, ToolError, ToolResult, kind_of, version

if TYPE_CHECKING:
    from fsmcp import ToolContext

    from .models import PathInput


def iso(timestamp: float) -> str:
    # isoformat cuts to milliseconds as the format always did, and costs half of strftime.
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"


def get_file_info(args: PathInput, ctx: ToolContext) -> ToolResult:
    # lstat: a link is described as itself, so nothing about its target leaks out of the roots.
    path = ctx.fs.resolve(args.path, Access.READ, follow_links=False)
    st = ctx.fs.stat(path, follow_links=False)
    birth = getattr(st, "st_birthtime", None)
    facts: dict[str, Any] = {
        "type": kind_of(st.st_mode),
        "size": st.st_size,
        "created": iso(birth) if birth else "unknown",
        "modified": iso(st.st_mtime),
        "accessed": iso(st.st_atime),
        "permissions": f"{stat_mod.S_IMODE(st.st_mode):03o}",
    }
    if facts["type"] == "symlink":
        target = ctx.fs.readlink(path)
        facts["target"] = target if target is not None else "(outside the allowed directories)"
    facts["version"] = _version(ctx, args.path, st)
    text = "\n".join(f"{key}: {value}" for key, value in facts.items())
    return ToolResult.text(text, {"path": str(path), **facts})


def _version(ctx: ToolContext, raw: str, st: Any) -> str:
    # A link's version is its target's, as expectedVersion and the stale-write guard see it.
    if kind_of(st.st_mode) == "symlink":
        try:
            return version(ctx.fs.stat(raw))
        except ToolError:
            pass
    return version(st)
