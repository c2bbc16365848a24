"""watch_file's arguments: the wire schema every client sees (camelCase names)."""

from __future__ import annotations

from typing import Literal

from fsmcp import ToolInput
from pydantic import Field

EventName = Literal["change", "create", "rename", "delete"]
MAX_WAIT_SECONDS = 300


class WatchFileInput(ToolInput):
    path: str = Field(description="File or directory to watch: absolute, or relative to the workspace.")
    events: list[EventName] = Field(
        ["change"],
        min_length=1,
        description="Which events to report: change (content or size of a file or link), create, rename, delete.",
    )
    recursive: bool = Field(False, description="Watch a directory's whole tree, not only its direct entries.")
    since: float | None = Field(
        None,
        ge=0,
        description="Milliseconds since the epoch: report what files' times place at or after it: modified as change, made as create (when events has it); older files are left out. "
        "Default: one second ago on the first call for this path, nothing after that (the baseline covers it).",
    )
    wait_seconds: float = Field(
        0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="When nothing matches yet, wait up to this long for the next matching change, then report. "
        "0 (default): answer at once.",
    )
