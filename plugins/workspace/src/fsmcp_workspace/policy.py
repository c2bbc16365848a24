"""The workspace-relative path policy: relative paths only, no ``..``, inside the workspace."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fsmcp import Access, ErrorCode, ResolvedPath, Root, RootSet, ToolError

NAME = "workspace"
_PREFIX = "workspace"


def relative(raw: str, workspace: Path) -> str:
    """``raw`` as a path below ``workspace``; absolute paths elsewhere and ``..`` are refused.

    Leading ``workspace/`` segments are dropped, because models often prefix every path with
    the name they were told the directory has (``workspace/workspace/a.txt`` → ``a.txt``). An
    absolute path that already lies inside the workspace passes: the host hands the paths it
    resolved back through the policy (a parent to create, an entry of a listing), and written
    absolutely it names the same file as its relative spelling.
    """
    if not isinstance(raw, str) or raw == "":
        return raw  # the host's check says what is wrong with it
    segments = [s for s in raw.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise ToolError(
            ErrorCode.ACCESS_DENIED,
            f"{raw!r} has a '..' segment, which this server refuses; name the path from the workspace down",
        )
    if raw.startswith("~") or (raw.startswith("/") and not Path(raw).is_relative_to(workspace)):
        raise ToolError(
            ErrorCode.ACCESS_DENIED,
            f"{raw!r} is an absolute path outside the workspace; this server takes paths relative to the "
            "workspace (such as src/app.py)",
        )
    if raw.startswith("/"):
        return raw
    while segments and segments[0] == _PREFIX:
        segments.pop(0)
    path = "/".join(segments) or "."
    # A trailing slash still says "directory" to the tool that gets the path.
    return path + "/" if segments and raw.endswith("/") else path


def resolve(raw: str, access: Access, follow_links: bool, roots: RootSet) -> ResolvedPath:
    workspace = roots.workspace
    resolved = roots.confine(relative(raw, workspace), access, follow_links)
    if resolved.path != workspace and not resolved.path.is_relative_to(workspace):
        raise ToolError(
            ErrorCode.ACCESS_DENIED,
            f"{raw!r} leads outside the workspace through a symbolic link; use a path inside {workspace}",
        )
    if workspace.is_relative_to(resolved.root.path):
        # The workspace is this policy's root: like an allowed root, it is never deleted or moved.
        resolved = dataclasses.replace(resolved, root=Root(workspace, resolved.root.read_only))
    return resolved
