"""The journal as both tools see it: on or off, the changes this server may see, and how a
change's time and paths are shown."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsmcp import ErrorCode, ToolError

if TYPE_CHECKING:
    from fsmcp import ToolContext

_SHOWN_PATHS = 5


def usable_journal(ctx: ToolContext) -> Any:
    if ctx.journal is None:
        raise ToolError(
            ErrorCode.INTERNAL_ERROR,
            'the server\'s change journal is off (journal = "off"), so there are no changes to list or undo; the operator can turn it on',
        )
    return ctx.journal


def visible(ctx: ToolContext, meta: dict[str, Any]) -> bool:
    # A journal may be shared by servers over other roots: each sees only changes inside its own.
    return any(ctx.fs.roots.containing(Path(r["path"])) is not None for r in meta["records"]) or any(
        ctx.fs.roots.containing(Path(p)) is not None for p in meta["paths"]
    )


def shown_paths(paths: list[str]) -> str:
    shown = ", ".join(paths[:_SHOWN_PATHS])
    more = len(paths) - _SHOWN_PATHS
    return f"{shown} and {more:,} more" if more > 0 else shown


def when(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
