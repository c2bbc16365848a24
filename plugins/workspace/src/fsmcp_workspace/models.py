"""The argument model of set_workspace (snake_case here, camelCase on the wire)."""

from __future__ import annotations

from fsmcp import ToolInput
from pydantic import Field


class SetWorkspaceInput(ToolInput):
    path: str = Field(
        description="The directory relative paths should resolve against: absolute, or relative to the current "
        "workspace; it must be an existing directory inside an allowed directory."
    )
