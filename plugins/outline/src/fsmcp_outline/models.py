"""The argument models of the outline tools (snake_case here, camelCase on the wire)."""

from __future__ import annotations

from fsmcp import ToolInput
from pydantic import Field


class OutlineInput(ToolInput):
    path: str | list[str] = Field(description="A file or a list of files.")
    depth: int | None = Field(
        None, ge=1, description="Levels: 1 top level, 2 with members; default all."
    )


class ReadSymbolInput(ToolInput):
    path: str
    name: str = Field(description="As outline shows it (Class.method, a heading) or its last part; several: a list.")
