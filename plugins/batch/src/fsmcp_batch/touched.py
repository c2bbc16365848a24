"""Which paths an operation may change, so that a transactional batch can save them first.

Only tools whose effect on the file system is known are admitted: a tool that writes files it
does not name in its arguments (a command, a glob of files) could not be undone, and a
transaction that silently fails to undo is worse than none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fsmcp import Access, ErrorCode, ResolvedPath, ToolError

if TYPE_CHECKING:
    from fsmcp import Tool, ToolContext, ToolInput

    from .plan import Step

PathArg = str | ResolvedPath


@dataclass(frozen=True)
class Reach:
    fields: tuple[str, ...]
    """The arguments that name what the tool changes."""
    follows_links: bool = False
    """It changes what a link there points to, not the link."""
    adds_only: bool = False
    """It only creates what is missing: an existing directory there is left alone, so not saved."""


NAMED = {
    "write_file": Reach(("path",), follows_links=True),
    "append_file": Reach(("path",), follows_links=True),
    "create_directory": Reach(("path",), follows_links=True, adds_only=True),
    "edit_file": Reach(("path",), follows_links=True),
    "copy_file": Reach(("destination",)),
    "move_file": Reach(("source", "destination")),
    "delete_file": Reach(("path",)),
    "compress_files": Reach(("output",), follows_links=True),
    "extract_archive": Reach(("destination",), follows_links=True),
}

PREVIEWED = ("edit_files", "patch_apply")
"""Tools that expand globs or read file names from a diff: their own dry run names the files."""


def unmappable(tool: Tool, args: ToolInput) -> str | None:
    """Why a transactional batch cannot undo this operation, or None when it can."""
    if tool.name in NAMED:
        missing = [f for f in NAMED[tool.name].fields if not isinstance(getattr(args, f, None), str)]
        if missing:
            return f"a transactional batch needs {tool.name}'s {', '.join(missing)} given explicitly, to save what is there first"
        return None
    if tool.name in PREVIEWED and "dry_run" in type(args).model_fields:
        return None
    return (
        f"a transactional batch cannot tell in advance which files {tool.name} changes, so it could not undo it; "
        "run it outside the batch, or use transactional: false"
    )


def changes_nothing(args: ToolInput) -> bool:
    return getattr(args, "dry_run", False) is True


async def paths(step: Step, ctx: ToolContext) -> list[PathArg]:
    """What to save before ``step`` runs; a ToolError when the step would fail anyway."""
    if changes_nothing(step.args):
        return []
    if step.name in NAMED:
        return _named(step, ctx)
    return await _previewed(step, ctx)


def _named(step: Step, ctx: ToolContext) -> list[PathArg]:
    reach = NAMED[step.name]
    out: list[PathArg] = []
    for field in reach.fields:
        raw = getattr(step.args, field)
        if reach.adds_only and ctx.fs.kind(raw) == "directory":
            continue
        out.append(raw)
        if reach.follows_links:
            # A link at this path is kept and its target changed: save the target too.
            out.append(ctx.fs.resolve(raw, Access.WRITE))
    return out


async def _previewed(step: Step, ctx: ToolContext) -> list[PathArg]:
    arguments = {k: v for k, v in step.arguments.items() if k not in ("dryRun", "dry_run")}
    preview = await ctx.run_tool(step.name, {**arguments, "dryRun": True})
    if isinstance(preview, ToolError):
        raise preview
    files = preview.data.get("files") if isinstance(preview.data, dict) else None
    if not isinstance(files, list):
        raise ToolError(
            ErrorCode.INTERNAL_ERROR,
            f"{step.name}'s dry run did not list the files it would change, so it was not run in this transactional batch",
        )
    return [path for f in files for path in _changed(f)]


def _changed(f: Any) -> list[str]:
    """The paths one entry of a dry run's ``files`` would change (edit_files' and patch_apply's data)."""
    if not isinstance(f, dict) or "error" in f or f.get("changed") is False:
        return []
    names = [f.get("path"), f.get("source") if f.get("action") == "rename" else None]
    return [name for name in names if isinstance(name, str)]
