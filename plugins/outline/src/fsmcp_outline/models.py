"""The argument models of the outline tools (snake_case here, camelCase on the wire)."""

from __future__ import annotations

from fsmcp import ToolInput
from pydantic import Field


class OutlineInput(ToolInput):
    path: str | list[str] = Field(description="A source file, or a list of them; relative to the workspace or absolute.")
    depth: int | None = Field(
        None, ge=1, description="Nesting levels shown: 1 top-level definitions only, 2 with their members; default all."
    )


class ReadSymbolInput(ToolInput):
    path: str = Field(description="The source file.")
    name: str = Field(description="Dotted name as outline shows it (Class.method, or a heading's text).")
