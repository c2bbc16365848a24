"""The watch tool as the host registers it."""

from __future__ import annotations

from fsmcp import READ_ONLY, Tool

from .models import WatchFileInput

TOOLS = [
    Tool(
        name="watch_file",
        title="Watch for changes",
        description="Report what changed in a file or directory, or wait for the next change instead of polling. "
        "The server keeps a baseline per path: each call reports what differs from what the previous call on the same path saw "
        "(create, delete, rename = same file under a new name, change = new content or size), "
        "plus, with since (ms since the epoch; default one second ago on the first call), every file modified at or after it (as change, or as create when made after it and events has create); older files are left out. "
        "waitSeconds (up to 300) waits for the next matching change when nothing matches yet; cancelling the call ends the wait. "
        "Output: one event per line, '<event> <path>' or 'rename <old> -> <new>', absolute paths, or (no changes). "
        "recursive watches a directory's whole tree; links are reported as entries, never followed.",
        input_model=WatchFileInput,
        function="fsmcp_watch.watch:watch_file",
        annotations=READ_ONLY,
    ),
]
