"""The argument model of set_workspace (snake_case here, camelCase on the wire)."""

from __future__ import annotations

from fsmcp import ToolInput
from pydantic import Field


class SetWorkspaceInput(ToolInput):
    path: str = Field(
        description="Absolute, or relative to the current workspace."
    )
