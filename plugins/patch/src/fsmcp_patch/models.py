"""patch_apply's arguments."""

from __future__ import annotations

from fsmcp import ExpectedVersion, ToolInput
from pydantic import Field


class PatchApplyInput(ToolInput):
    patch: str = Field(
        min_length=1,
        description=(
            "diff -u, diff -ruN or git diff output, maybe in a ```diff fence. "
            "'--- /dev/null' creates a file, '+++ /dev/null' deletes one."
        ),
    )
    path: str | None = Field(
        default=None,
        description=(
            "Directory the diff's names are relative to (default: the workspace), or the file a one-file diff "
            "changes, whatever its headers say."
        ),
    )
    dry_run: bool = Field(default=False, description="Report what would change, write nothing.")
    expected_version: ExpectedVersion = None
