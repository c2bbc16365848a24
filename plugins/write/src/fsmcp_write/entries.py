"""What the tools on entries share: the noun for each kind, the checks on a copy's or move's
source and destination, and its result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError, ToolResult

if TYPE_CHECKING:
    from fsmcp import ResolvedPath, ToolContext

    from .models import TransferInput


NOUN = {"file": "file", "directory": "directory", "symlink": "link", "other": "special file"}


def source_kind(ctx: ToolContext, src: ResolvedPath) -> str:
    kind = ctx.fs.kind(src, follow_links=False)
    if kind is None:
        raise ToolError(
            ErrorCode.NOT_FOUND, f"{src} does not exist; check the source path (list_directory shows what is there)"
        )
    return kind


def check_destination(
    ctx: ToolContext, src: ResolvedPath, dst: ResolvedPath, kind: str, args: TransferInput
) -> str | None:
    """Refuse a destination the caller did not mean, or cannot replace; the kind of what is there."""
    if dst.path.is_relative_to(src.path):
        return None  # the same path, or inside the source: the host refuses (or ignores) these itself
    existing = ctx.fs.kind(dst, follow_links=False)
    # Models often mean `cp a.txt dir/`; name the path that would be rather than guess it.
    inside = f"give the full destination {dst.path / src.path.name}"
    if existing is None and kind != "directory" and args.destination.endswith("/"):
        raise ToolError(
            ErrorCode.INVALID_PARAMS,
            f"{args.destination!r} ends with '/', which names a directory, and there is none; "
            f"to put {src.path.name} in a new directory, {inside}",
        )
    if existing == "directory" and (kind != "directory" or not args.overwrite):
        advice = f"to put it inside, {inside}"
        if kind == "directory":
            advice += ", or pass overwrite: true to replace that directory"
        raise ToolError(ErrorCode.ALREADY_EXISTS, f"{dst} is an existing directory; {advice}")
    if existing is not None and kind == "directory" and existing != "directory":
        raise ToolError(
            ErrorCode.ALREADY_EXISTS,
            f"{dst} is an existing {NOUN[existing]}, which a directory cannot replace; "
            "delete it first, or choose another destination",
        )
    return existing


def transferred(verb: str, src: ResolvedPath, dst: ResolvedPath, kind: str, existing: str | None) -> ToolResult:
    noun = NOUN[kind]
    text = f"Successfully {verb} {noun} {src} to {dst}"
    if existing is not None:
        text += f" (replaced the existing {NOUN[existing]})"
    return ToolResult.text(
        text, {"source": str(src), "destination": str(dst), "type": noun, "overwritten": existing is not None}
    )
