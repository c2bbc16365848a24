"""The watch tool as the host registers it."""

from __future__ import annotations

from fsmcp import READ_ONLY, Tool

from .models import WatchFileInput

TOOLS = [
    Tool(
        name="watch_file",
        description="What changed in a file or directory since the previous call on it, or wait for the next change.",
        input_model=WatchFileInput,
        function="fsmcp_watch.watch_file:watch_file",
        annotations=READ_ONLY,
    ),
]
