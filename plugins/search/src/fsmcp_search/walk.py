"""The files under a scope, as ripgrep's walk lists them (ignore rules applied): what
search_files and glob_search filter."""

from __future__ import annotations

import os
from collections.abc import Callable

import anyio

from fsmcp import ToolContext

from . import ripgrep, scope

NARROW = "Narrow the search with a deeper directory, more specific globs or excludeGlobs."


async def list_files(ctx: ToolContext, where: scope.Scope, keep: Callable[[str], None]) -> None:
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


async def build_scope(ctx: ToolContext, **kwargs) -> scope.Scope:
    return await anyio.to_thread.run_sync(lambda: scope.build(ctx, **kwargs))
