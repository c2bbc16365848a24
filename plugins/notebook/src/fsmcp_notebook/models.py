"""The argument models of the notebook tools (snake_case here, camelCase on the wire)."""

from __future__ import annotations

from typing import Literal

from fsmcp import ExpectedVersion, ToolInput
from pydantic import Field

CellType = Literal["code", "markdown", "raw"]


class ReadNotebookInput(ToolInput):
    path: str
    cells: list[int] | None = Field(None, description="0-based indexes; default all.")
    outputs: bool = Field(True, description="Code cells' outputs, summarized.")


class CellEdit(ToolInput):
    op: Literal["insert", "replace", "delete", "move"]
    index: int | None = Field(
        None, ge=0, description="0-based, after earlier edits; insert: default the end."
    )
    cell_id: str | None = Field(None, description="Instead of index.")
    source: str | None = Field(None, description="The cell's new text.")
    cell_type: CellType | None = Field(None, description="insert: default code.")
    to: int | None = Field(None, ge=0, description="move: the new index.")


class EditNotebookInput(ToolInput):
    path: str
    edits: list[CellEdit] = Field(min_length=1, description="In order.")
    dry_run: bool = False
    expected_version: ExpectedVersion = None
