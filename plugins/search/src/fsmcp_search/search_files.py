"""search_files: files and directories whose name contains a text; ripgrep lists the files, we filter."""

from __future__ import annotations

from fsmcp import ToolContext

from .models import SearchFilesInput
from .output import no_matches, path_list
from .walk import NARROW, build_scope, list_files


async def search_files(args: SearchFilesInput, ctx: ToolContext) -> str:
    where = await build_scope(ctx, directory_raw=args.directory, globs=None, exclude_globs=args.exclude_globs, include_ignored=args.include_ignored)
    needle = args.name_contains.casefold()
    prefix = where.anchor.rstrip("/") + "/"
    found: set[str] = set()

    def keep(path: str) -> None:
        rel = path[len(prefix) :]
        if needle not in rel.casefold() or not where.selects(path):
            return
        parts = rel.split("/")
        # Directories are known by the files under them; each matching one is listed once.
        for depth, name in enumerate(parts, 1):
            if needle in name.casefold():
                candidate = prefix + "/".join(parts[:depth])
                if candidate not in found and (depth == len(parts) or not where.excludes.excludes(candidate)):
                    found.add(candidate)

    await list_files(ctx, where, keep)
    if not found:
        looks_like_glob = any(c in args.name_contains for c in "*?[")
        hint = "nameContains is literal text; to match a glob such as *.py use glob_search" if looks_like_glob else None
        return no_matches([], hint)
    return path_list(sorted(found), ctx.budget, NARROW, [])
