"""The journal as both tools see it: on or off, and how a change's time and paths are shown
(the host's view lists only the changes this server may see)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from fsmcp import ErrorCode, ToolError

if TYPE_CHECKING:
    from fsmcp import JournalView, ToolContext

_SHOWN_PATHS = 5


def usable_journal(ctx: ToolContext) -> JournalView:
    journal = ctx.journal
    if journal is None:
        raise ToolError(
            ErrorCode.INTERNAL_ERROR,
            'the server\'s change journal is off (journal = "off"), so there are no changes to list or undo; the operator can turn it on',
        )
    return journal


def shown_paths(paths: list[str]) -> str:
    shown = ", ".join(paths[:_SHOWN_PATHS])
    more = len(paths) - _SHOWN_PATHS
    return f"{shown} and {more:,} more" if more > 0 else shown


def when(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
