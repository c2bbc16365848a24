"""The argument models of the write tools (snake_case here, camelCase on the wire), and their outputs."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from fsmcp import ExpectedVersion, ToolInput
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

_PATH = "The file."


class WriteFileInput(ToolInput):
    # seed 003 calls the path `file`
    aliases: ClassVar[dict[str, str]] = {"file": "path"}

    path: str = Field(description=_PATH)
    content: str = Field(description="The whole new content.")
    encoding: Literal["utf-8", "base64"] = Field(
        "utf-8", description="content as text, or base64 for binary data."
    )
    line_count: Annotated[int, Field(ge=0)] | SkipJsonSchema[None] = Field(
        None,
        description="Lines in content (a last one without newline counts); another count: INVALID_PARAMS.",
        json_schema_extra=lambda schema: schema.pop("default", None),
    )
    expected_version: ExpectedVersion = None


class FileItem(WriteFileInput):
    aliases: ClassVar[dict[str, str]] = {}


class WriteFilesInput(ToolInput):
    items_of: ClassVar[str] = "write_file"

    files: list[FileItem] = Field(min_length=1, description="Each as write_file takes its arguments.")


class AppendFileInput(ToolInput):
    path: str = Field(description=_PATH)
    content: str = Field(description="UTF-8 text to add.")
    ensure_newline: bool = Field(
        True, description="End the text with a newline if it has none."
    )
    create: bool = Field(False, description="Create a missing file and its parents.")
    expected_version: ExpectedVersion = None


class CreateDirectoryInput(ToolInput):
    # seed 003's mkdir calls it `dir`
    aliases: ClassVar[dict[str, str]] = {"dir": "path"}

    path: str = Field(description="The directory.")
    recursive: bool = Field(
        default=True,
        description="Create missing parents (mkdir -p); else they must exist.",
    )
    expected_version: ExpectedVersion = None


class TransferInput(ToolInput):
    """copy_file and move_file take the same arguments."""

    # seed 003's move_file uses from/to
    aliases: ClassVar[dict[str, str]] = {"from": "source", "to": "destination"}

    source: str = Field(description="File, directory or link (as a link).")
    destination: str = Field(
        description="The new path, name included; parents are created."
    )
    overwrite: bool = Field(False, description="Replace an existing destination of the same type.")
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "destination"


class DeleteFileInput(ToolInput):
    path: str = Field(description="File, directory or link (never its target).")
    recursive: bool = Field(False, description="A directory with all in it; else it must be empty.")
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
