"""create_directory, copy_file, move_file and delete_file: the tools that add, move and remove entries."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsmcp import Access, ErrorCode, ToolError, ToolResult

if TYPE_CHECKING:
    from fsmcp import ResolvedPath, ToolContext

    from .models import CreateDirectoryInput, DeleteFileInput, TransferInput

_NOUN = {"file": "file", "directory": "directory", "symlink": "link", "other": "special file"}


def create_directory(args: CreateDirectoryInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path, Access.WRITE)
    if ctx.fs.kind(target) not in (None, "directory"):
        raise ToolError(
            ErrorCode.NOT_DIRECTORY,
            f"{target} already exists and is a file, not a directory; choose another path, or delete the file first",
        )
    created = ctx.fs.mkdir(target, parents=args.recursive)
    text = f"Successfully created directory {target}" if created else f"Directory {target} already exists; nothing changed"
    return ToolResult.text(text, {"path": str(target), "created": created})


def copy_file(args: TransferInput, ctx: ToolContext) -> ToolResult:
    src = ctx.fs.resolve(args.source, Access.READ, follow_links=False)
    dst = ctx.fs.resolve(args.destination, Access.WRITE, follow_links=False)
    kind = _source_kind(ctx, src)
    existing = _check_destination(ctx, src, dst, kind, args)
    ctx.fs.copy(src, dst, overwrite=args.overwrite)
    return _transferred("copied", src, dst, kind, existing)


def move_file(args: TransferInput, ctx: ToolContext) -> ToolResult:
    src = ctx.fs.resolve(args.source, Access.WRITE, follow_links=False)
    dst = ctx.fs.resolve(args.destination, Access.WRITE, follow_links=False)
    kind = _source_kind(ctx, src)
    existing = _check_destination(ctx, src, dst, kind, args)
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
            {"source": str(src), "destination": str(dst), "type": _NOUN[kind], "overwritten": False},
        )
    return _transferred("moved", src, dst, kind, existing)


def delete_file(args: DeleteFileInput, ctx: ToolContext) -> ToolResult:
    target = ctx.fs.resolve(args.path, Access.WRITE, follow_links=False)
    kind = ctx.fs.remove(target, recursive=args.recursive)
    noun = _NOUN[kind]
    text = f"Successfully deleted {noun} {target}"
    if kind == "symlink":
        text += " (the link only; its target was not touched)"
    elif kind == "directory" and args.recursive:
        text += " and everything in it"
    return ToolResult.text(text, {"path": str(target), "deletedType": noun})


def _source_kind(ctx: ToolContext, src: ResolvedPath) -> str:
    kind = ctx.fs.kind(src, follow_links=False)
    if kind is None:
        raise ToolError(
            ErrorCode.NOT_FOUND, f"{src} does not exist; check the source path (list_directory shows what is there)"
        )
    return kind


def _check_destination(
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
            f"{dst} is an existing {_NOUN[existing]}, which a directory cannot replace; "
            "delete it first, or choose another destination",
        )
    return existing


def _transferred(verb: str, src: ResolvedPath, dst: ResolvedPath, kind: str, existing: str | None) -> ToolResult:
    noun = _NOUN[kind]
    text = f"Successfully {verb} {noun} {src} to {dst}"
    if existing is not None:
        text += f" (replaced the existing {_NOUN[existing]})"
    return ToolResult.text(
        text, {"source": str(src), "destination": str(dst), "type": noun, "overwritten": existing is not None}
    )
