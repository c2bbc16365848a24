"""search_files and glob_search: ripgrep lists the files (ignore rules applied), we filter."""

from __future__ import annotations

import os
from collections.abc import Callable

import anyio

from fsmcp import ToolContext

from . import ripgrep, scope
from .models import GlobSearchInput, SearchFilesInput
from .output import no_matches, path_list, skipped_note

_NARROW = "Narrow the search with a deeper directory, more specific globs or excludeGlobs."


async def _list_files(ctx: ToolContext, where: scope.Scope, keep: Callable[[str], None]) -> None:
    """Every file ripgrep's walk yields, handed to ``keep`` as an absolute path."""
    if not where.paths and not where.files:
        return

    async def listing(where: scope.Scope) -> list[bytes]:
        listed: list[bytes] = []

        def feed(batch: list[bytes]) -> bool:
            listed.extend(batch)
            return True

        args = ["--files", "--null", "--no-messages", *where.ripgrep_args()]
        async with ripgrep.progress(ctx, lambda: f"{len(listed):,} files walked so far"), ripgrep.run(
            ctx, args, cwd=where.anchor, stdin=where.ignore_rules
        ) as rg:
            await ripgrep.drain(rg, b"\0", feed)
            code, stderr = await rg.finish()
        error = ripgrep.failure(code, stderr, "a glob")
        if error is not None:
            raise error
        return listed

    for raw in await scope.guarded(ctx, where, listing):
        keep(os.fsdecode(raw))


async def _scope(ctx: ToolContext, **kwargs) -> scope.Scope:
    return await anyio.to_thread.run_sync(lambda: scope.build(ctx, **kwargs))


async def search_files(args: SearchFilesInput, ctx: ToolContext) -> str:
    where = await _scope(ctx, directory_raw=args.directory, globs=None, exclude_globs=args.exclude_globs, include_ignored=args.include_ignored)
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

    await _list_files(ctx, where, keep)
    if not found:
        looks_like_glob = any(c in args.name_contains for c in "*?[")
        hint = "nameContains is literal text; to match a glob such as *.py use glob_search" if looks_like_glob else None
        return no_matches([], hint)
    return path_list(sorted(found), ctx.budget, _NARROW, [])


async def glob_search(args: GlobSearchInput, ctx: ToolContext) -> str:
    where = await _scope(ctx, directory_raw=args.directory, globs=args.globs, exclude_globs=args.exclude_globs, include_ignored=args.include_ignored)
    found: set[str] = set()

    def keep(path: str) -> None:
        if where.selects(path):
            found.add(path)

    await _list_files(ctx, where, keep)
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
    return path_list(matched, ctx.budget, _NARROW, notes)
