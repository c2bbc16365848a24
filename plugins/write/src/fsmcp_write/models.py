"""The argument models of the write tools (snake_case here, camelCase on the wire), and their outputs."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from fsmcp import ExpectedVersion, ToolInput
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema



class WriteFileInput(ToolInput):
    # other servers call the path `file`
    aliases: ClassVar[dict[str, str]] = {"file": "path"}

    path: str
    content: str = Field(description="The whole content.")
    encoding: Literal["utf-8", "base64"] = Field(
        "utf-8", description="base64: binary content."
    )
    line_count: Annotated[int, Field(ge=0)] | SkipJsonSchema[None] = Field(
        None,
        description="Lines content must have (a last one without newline counts).",
        json_schema_extra=lambda schema: schema.pop("default", None),
    )
    expected_version: ExpectedVersion = None


class FileItem(WriteFileInput):
    aliases: ClassVar[dict[str, str]] = {}


class WriteFilesInput(ToolInput):
    items_of: ClassVar[str] = "write_file"

    files: list[FileItem] = Field(min_length=1, description="write_file's arguments each.")


class AppendFileInput(ToolInput):
    path: str
    content: str = Field(description="Text to add.")
    ensure_newline: bool = Field(
        True, description="Add a final newline if missing."
    )
    create: bool = Field(False, description="Create a missing file.")
    expected_version: ExpectedVersion = None


class CreateDirectoryInput(ToolInput):
    # other servers' mkdir calls it `dir`
    aliases: ClassVar[dict[str, str]] = {"dir": "path"}

    path: str
    recursive: bool = Field(
        default=True,
        description="Create missing parents (mkdir -p).",
    )
    expected_version: ExpectedVersion = None


class TransferInput(ToolInput):
    # No docstring: pydantic would send it to the model as the schema's description.

    # other servers' move_file uses from/to
    aliases: ClassVar[dict[str, str]] = {"from": "source", "to": "destination"}

    source: str = Field(description="File, directory or link (as a link).")
    destination: str = Field(
        description="The new path, name included."
    )
    overwrite: bool = Field(False, description="Replace a destination of the same type.")
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "destination"


class DeleteFileInput(ToolInput):
    path: str = Field(description="A link itself, not its target.")
    recursive: bool = Field(False, description="Also a directory that is not empty.")
    expected_version: ExpectedVersion = None


# Output models: the facts each tool returns as structuredContent (beside its one-line text).


class WriteFileOutput(BaseModel):
    path: str
    bytesWritten: int
    created: bool


class WriteFilesOutput(BaseModel):
    files: list[WriteFileOutput]


class AppendFileOutput(BaseModel):
    path: str
    bytesAppended: int
    size: int
    created: bool


class CreateDirectoryOutput(BaseModel):
    path: str
    created: bool


class TransferOutput(BaseModel):
    source: str
    destination: str
    type: Literal["file", "directory", "link", "special file"]
    overwritten: bool


class DeleteFileOutput(BaseModel):
    path: str
    deletedType: Literal["file", "directory", "link", "special file"]
