"""patch_apply's arguments."""

from __future__ import annotations

from fsmcp import ExpectedVersion, ToolInput
from pydantic import Field


class PatchApplyInput(ToolInput):
    patch: str = Field(
        min_length=1,
        description=(
            "diff -u, diff -ruN or git diff output, one file or many, a ```diff fence allowed. "
            "'--- /dev/null' creates a file, '+++ /dev/null' deletes one."
        ),
    )
    path: str | None = Field(
        default=None,
        description=(
            "A directory the diff's names (a/ b/ dropped) are relative to; default: the workspace. Or the file "
            "a one-file diff changes, whatever its headers say (needed without ---/+++ headers)."
        ),
    )
    dry_run: bool = Field(default=False, description="Check every hunk, report what would change, write nothing.")
    expected_version: ExpectedVersion = None
