"""patch_apply's arguments."""

from __future__ import annotations

from fsmcp import ExpectedVersion, ToolInput
from pydantic import Field


class PatchApplyInput(ToolInput):
    patch: str = Field(min_length=1)
    path: str | None = Field(default=None, description="Directory its paths are relative to, or the one file it changes.")
    dry_run: bool = Field(default=False, description="Only report what would change.")
    expected_version: ExpectedVersion = None
