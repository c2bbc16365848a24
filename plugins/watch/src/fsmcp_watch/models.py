"""watch_file's arguments: the wire schema every client sees (camelCase names)."""

from __future__ import annotations

from typing import ClassVar, Literal

from fsmcp import ToolInput
from pydantic import Field

EventName = Literal["change", "create", "rename", "delete"]
MAX_WAIT_SECONDS = 300


class WatchFileInput(ToolInput):
    # run_command calls its seconds timeout; a model reaches for that name here too.
    aliases: ClassVar[dict[str, str]] = {"timeout": "waitSeconds", "wait": "waitSeconds"}

    path: str
    events: list[EventName] = Field(
        ["change"],
        min_length=1,
        description="change: new content or size; rename: same file, new name.",
    )
    recursive: bool = Field(False, description="The whole tree.")
    since: float | None = Field(
        None,
        ge=0,
        description="Epoch ms: also files modified since. Default: 1 s ago at a path's first call.",
    )
    wait_seconds: float = Field(
        0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="Wait this long for a first match.",
    )
