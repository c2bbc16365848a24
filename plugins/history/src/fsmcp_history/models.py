"""The argument models of the history tools (snake_case here, camelCase on the wire), and their outputs."""

from __future__ import annotations

from fsmcp import ToolInput
from pydantic import BaseModel, Field


class ListChangesInput(ToolInput):
    path: str | None = Field(None, description="Only at or under this path.")
    limit: int = Field(20, ge=1, le=1000, description="Most changes listed.")


class UndoChangeInput(ToolInput):
    id: int | None = Field(None, ge=1, description="From list_changes; default: this session's latest.")
    force: bool = Field(False, description="Also undo over changes made since.")


class ChangeEntry(BaseModel):
    id: int
    time: str
    tool: str
    paths: list[str]
    undone: bool
    undoable: bool
    undoes: int | None = None
    interrupted: str | None = None
    """A call cut short (the server died): "kept" as it stood, or "rolled back" (a transactional batch)."""
    thisSession: bool


class ListChangesOutput(BaseModel):
    changes: list[ChangeEntry]


class UndoChangeOutput(BaseModel):
    id: int
    tool: str
    paths: list[str]
