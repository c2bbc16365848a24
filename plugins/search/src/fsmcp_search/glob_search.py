"""glob_search: files matching globs; ripgrep lists the files, we filter."""

from __future__ import annotations

from fsmcp import ToolContext

from .models import GlobSearchInput
from .output import no_matches, path_list, skipped_note
from .walk import NARROW, build_scope, list_files


async def glob_search(args: GlobSearchInput, ctx: ToolContext) -> str:
    where = await build_scope(ctx, directory_raw=args.directory, globs=args.globs, exclude_globs=args.exclude_globs, include_ignored=args.include_ignored)
    found: set[str] = set()

    def keep(path: str) -> None:
        if where.selects(path):
            found.add(path)

    await list_files(ctx, where, keep)
    if not found:
        return no_matches(where.skipped)
    matched = sorted(found)
    notes = []
    if args.max_results and len(matched) > args.max_results:
        notes.append(
            f"[showing the first {args.max_results:,} of {len(matched):,} files (maxResults {args.max_results}); pass maxResults: 0 to list them all, or narrow the globs]"
        )
        matched = matched[: args.max_results]
    if where.skipped:
        notes.append(skipped_note(where.skipped))
    return path_list(matched, ctx.budget, NARROW, notes)
