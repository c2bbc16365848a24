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

    path: str = Field(description="File or directory.")
    events: list[EventName] = Field(
        ["change"],
        min_length=1,
        description="change: new content or size; rename: the same file under a new name.",
    )
    recursive: bool = Field(False, description="A directory's whole tree, not only its entries.")
    since: float | None = Field(
        None,
        ge=0,
        description="Ms since the epoch: also files modified since (as change; create if made after it). "
        "Default: 1 s ago on a path's first call, then none.",
    )
    wait_seconds: float = Field(
        0,
        ge=0,
        le=MAX_WAIT_SECONDS,
        description="If nothing matches yet, wait this long for the next matching change; cancelling ends it.",
    )
