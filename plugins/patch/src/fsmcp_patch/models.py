"""patch_apply's arguments."""

from __future__ import annotations

from fsmcp import ExpectedVersion, ToolInput
from pydantic import Field


class PatchApplyInput(ToolInput):
    patch: str = Field(
        min_length=1,
        description=(
            "A unified diff as diff -u, diff -ruN or git diff print it, one file or many; a markdown "
            "```diff fence around it is fine. '--- /dev/null' creates a file, '+++ /dev/null' deletes one."
        ),
    )
    path: str | None = Field(
        default=None,
        description=(
            "Optional. A directory: the diff's file names are relative to it (default: the workspace). "
            "A file: the file a one-file diff changes, whatever its headers say; required for a diff without "
            "'---'/'+++' headers."
        ),
    )
    dry_run: bool = Field(default=False, description="Check that every hunk applies and report what would change; write nothing.")
    expected_version: ExpectedVersion = None
