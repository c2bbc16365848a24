"""The argument models of the write tools (snake_case here, camelCase on the wire), and their outputs."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from fsmcp import ExpectedVersion, ToolInput
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

_PATH = "File path: absolute, or relative to the workspace; must lie inside an allowed directory."


class WriteFileInput(ToolInput):
    # seed 003 calls the path `file`
    aliases: ClassVar[dict[str, str]] = {"file": "path"}

    path: str = Field(description=_PATH)
    content: str = Field(description="The whole new content of the file.")
    encoding: Literal["utf-8", "base64"] = Field(
        "utf-8", description="How `content` is given: `utf-8` text, or `base64` for binary data."
    )
    line_count: Annotated[int, Field(ge=0)] | SkipJsonSchema[None] = Field(
        None,
        description="Lines `content` holds (a last line without newline counts); another count is INVALID_PARAMS, nothing written.",
        json_schema_extra=lambda schema: schema.pop("default", None),
    )
    expected_version: ExpectedVersion = None


class FileItem(WriteFileInput):
    aliases: ClassVar[dict[str, str]] = {}


class WriteFilesInput(ToolInput):
    files: list[FileItem] = Field(min_length=1, description="The files to write, each as write_file takes it.")


class AppendFileInput(ToolInput):
    path: str = Field(description=_PATH)
    content: str = Field(description="Text to add at the end of the file (UTF-8).")
    ensure_newline: bool = Field(
        True, description="End the appended text with a newline when it does not already end with one."
    )
    create: bool = Field(False, description="Create the file (and its parent directories) when it does not exist.")
    expected_version: ExpectedVersion = None


class CreateDirectoryInput(ToolInput):
    # seed 003's mkdir calls it `dir`
    aliases: ClassVar[dict[str, str]] = {"dir": "path"}

    path: str = Field(description="Directory to create, with any missing parents (like mkdir -p).")
    recursive: bool = Field(
        default=True,
        description="Create missing parent directories too (mkdir -p). False: the parent must exist, else NOT_FOUND.",
    )
    expected_version: ExpectedVersion = None


class TransferInput(ToolInput):
    """copy_file and move_file take the same arguments."""

    # seed 003's move_file uses from/to
    aliases: ClassVar[dict[str, str]] = {"from": "source", "to": "destination"}

    source: str = Field(description="The file, directory or link to take. A link is taken as a link, never its target.")
    destination: str = Field(
        description="The full new path, including the name (not just a directory to put it in); parents are created."
    )
    overwrite: bool = Field(False, description="Replace an existing destination of the same type instead of failing.")
    expected_version: ExpectedVersion = None
    versioned: ClassVar[str] = "destination"


class DeleteFileInput(ToolInput):
    path: str = Field(description="File, directory or link to delete. A link is deleted, never its target.")
    recursive: bool = Field(False, description="Delete a directory together with everything in it.")
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
